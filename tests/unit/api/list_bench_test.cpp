// Figures, not assertions (run with --gtest_also_run_disabled_tests): create throughput for
// 1,000 spaces through the API on the test driver, and GET /api/v1/spaces latency with 10,000
// spaces in the store.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <algorithm>

#include "api/spaces_list.hpp"
#include "api_test_support.hpp"

namespace bowline::api::testing {
namespace {

double percentile(std::vector<double> samples, double p) {
  std::sort(samples.begin(), samples.end());
  return samples[static_cast<std::size_t>(p * static_cast<double>(samples.size() - 1))];
}

TEST(ListBench, DISABLED_CreateThroughputAndListLatency) {
  ApiStack stack;
  HttpClient client(stack.port());
  // A /16 range: room for every space.
  auto yaml = bridged_template("br-bench", "10.20.0.10", "10.20.255.250");
  for (const auto* from : {"198.51.100.0/24", "198.51.100.1"}) {
    const std::string to = std::string(from) == "198.51.100.0/24" ? "10.20.0.0/16" : "10.20.0.1";
    yaml.replace(yaml.find(from), std::string(from).size(), to);
  }
  ASSERT_EQ(client.post("/api/v1/templates", stack.admin_token(), {{"name", "dev"}, {"yaml", yaml}})
                .status,
            201);
  const auto alice = stack.make_user(unique("alice"));

  // 1,000 creates from 8 clients.
  constexpr int kCreates = 1000, kClients = 8;
  std::atomic<int> next{0}, failed{0};
  const auto t0 = std::chrono::steady_clock::now();
  {
    std::vector<std::thread> threads;
    for (int c = 0; c < kClients; ++c)
      threads.emplace_back([&] {
        HttpClient mine(stack.port());
        for (int i = next++; i < kCreates; i = next++) {
          const auto r =
              mine.post("/api/v1/spaces", alice,
                        {{"template", "dev"}, {"name", "s" + std::to_string(i)}, {"start", false}});
          if (r.status != 202) ++failed;
        }
      });
    for (auto& t : threads) t.join();
  }
  const double accept_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  stack.engine().wait_idle();
  const double done_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(failed, 0);
  std::printf("create: %d spaces accepted in %.2f s (%.0f/s), all operations done in %.2f s\n",
              kCreates, accept_s, kCreates / accept_s, done_s);

  // 9,000 more straight into the store (another owner), for 10,000 in all.
  const auto bob_token = stack.make_user(unique("bob"));
  const auto bob = stack.store().users().list().back().id;
  const auto tmpl = stack.store().templates().find_by_name("dev")->id;
  {
    auto tx = stack.store().transaction();
    for (int i = 0; i < 9000; ++i) {
      store::NewSpace s;
      s.id = "bulk-" + std::to_string(i);
      s.name = "b" + std::to_string(i);
      s.owner_id = bob;
      s.template_id = tmpl;
      s.uuid = s.id;
      s.domain_name = "bulk-" + std::to_string(i);
      s.node = "local";
      s.state = store::SpaceState::Stopped;
      stack.store().spaces().create(s);
    }
    tx.commit();
  }
  ASSERT_EQ(stack.store().spaces().count(), 10000);

  {
    // The list's text without HTTP: one query, written straight to JSON (best of 10).
    double best = 1e9;
    std::size_t size = 0;
    for (int i = 0; i < 10; ++i) {
      const auto a = std::chrono::steady_clock::now();
      const auto text = spaces_list_json(stack.store(), std::nullopt);
      best = std::min(
          best,
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - a).count());
      size = text.size();
    }
    std::printf("10,000 spaces to JSON text: %.1f ms (%zu bytes)\n", best, size);
  }

  auto measure = [&](const std::string& target, const std::string& token, int n) {
    std::vector<double> ms;
    std::size_t bytes = 0;
    for (int i = 0; i < n; ++i) {
      const auto a = std::chrono::steady_clock::now();
      const auto r = client.get(target, token);
      ms.push_back(
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - a).count());
      EXPECT_EQ(r.status, 200);
      bytes = r.body.size();
    }
    std::printf("GET %s: p50 %.2f ms, p99 %.2f ms (%zu bytes)\n", target.c_str(),
                percentile(ms, 0.5), percentile(ms, 0.99), bytes);
  };
  measure("/api/v1/spaces", alice, 200);                             // 1,000 of the 10,000
  measure("/api/v1/spaces?all=1", stack.admin_token(), 100);         // all 10,000
  measure("/api/v1/spaces", stack.make_user(unique("carol")), 200);  // none of them
  (void)bob_token;

  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  std::printf("max RSS of the test process (server and client): %ld MiB\n", usage.ru_maxrss / 1024);
}

}  // namespace
}  // namespace bowline::api::testing
