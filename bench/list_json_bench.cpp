// The text of GET /api/v1/spaces without HTTP (Google Benchmark): one query over a store of
// 10,000 spaces written straight to JSON, for every space (an admin's ?all=1) and for one
// owner's 1,000, built from scratch and through the API's cache after one change. `bench/run`
// prints the figures over HTTP; this isolates the store's share.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <filesystem>
#include <memory>

#include "api/spaces_list.hpp"
#include "store/store.hpp"
#include "util/clock.hpp"

namespace {

namespace fs = std::filesystem;
using namespace bowline;

struct Fixture {
  fs::path dir;
  util::SystemClock clock;
  std::unique_ptr<store::Store> store;
  std::int64_t owner = 0;

  Fixture() {
    dir = fs::temp_directory_path() / ("bwbench-list-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    store = std::make_unique<store::Store>(dir / "bowline.db", clock);
    const auto tmpl = store->templates().create("dev", "name: dev\n").id;
    std::vector<std::int64_t> owners;
    for (int u = 0; u < 10; ++u) {
      store::NewUser user;
      user.username = "user" + std::to_string(u);
      owners.push_back(store->users().create(user).id);
    }
    owner = owners.front();
    auto transaction = store->transaction();
    for (int i = 0; i < 10000; ++i) {
      store::NewSpace s;
      s.id = "space-" + std::to_string(i);
      s.name = "s" + std::to_string(i);
      s.owner_id = owners[static_cast<std::size_t>(i % 10)];
      s.template_id = tmpl;
      s.uuid = s.id;
      s.domain_name = "bwbench-" + s.id;
      s.node = "local";
      s.state = store::SpaceState::Running;
      store->spaces().create(s);
    }
    transaction.commit();
  }
  ~Fixture() {
    store.reset();
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};

Fixture& fixture() {
  static Fixture f;
  return f;
}

void BM_SpacesListAll(benchmark::State& state) {
  auto& f = fixture();
  std::size_t bytes = 0;
  for (auto _ : state) {
    auto text = api::spaces_list_json(*f.store, std::nullopt);
    bytes = text.size();
    benchmark::DoNotOptimize(text);
  }
  state.counters["bytes"] = static_cast<double>(bytes);
}
BENCHMARK(BM_SpacesListAll)->Unit(benchmark::kMillisecond);

void BM_SpacesListOneOwner(benchmark::State& state) {
  auto& f = fixture();
  for (auto _ : state) {
    auto text = api::spaces_list_json(*f.store, f.owner);
    benchmark::DoNotOptimize(text);
  }
}
BENCHMARK(BM_SpacesListOneOwner)->Unit(benchmark::kMillisecond);

void change_one(Fixture& f, int i) {
  f.store->spaces().set_state("space-" + std::to_string(i % 10000),
                              i % 2 ? store::SpaceState::Stopped : store::SpaceState::Running);
}

// What GET /spaces?all=1 costs through the API's cache when one space changed since the
// last list (the common case under writes): one journal read, one object, the concatenation.
void BM_CachedListAllAfterOneChange(benchmark::State& state) {
  auto& f = fixture();
  api::SpacesListCache cache;
  cache.list(*f.store, std::nullopt);
  int i = 0;
  for (auto _ : state) {
    state.PauseTiming();
    change_one(f, i++);
    state.ResumeTiming();
    auto text = cache.list(*f.store, std::nullopt);
    benchmark::DoNotOptimize(text);
  }
}
BENCHMARK(BM_CachedListAllAfterOneChange)->Unit(benchmark::kMillisecond);

// A user's own 1,000 cut from the same cache after one change.
void BM_CachedListOneOwnerAfterOneChange(benchmark::State& state) {
  auto& f = fixture();
  api::SpacesListCache cache;
  cache.list(*f.store, f.owner);
  int i = 0;
  for (auto _ : state) {
    state.PauseTiming();
    change_one(f, i++);
    state.ResumeTiming();
    auto text = cache.list(*f.store, f.owner);
    benchmark::DoNotOptimize(text);
  }
}
BENCHMARK(BM_CachedListOneOwnerAfterOneChange)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
