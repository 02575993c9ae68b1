// What each space uses: every `interval` the sampler asks each node once for all its running
// machines' counters (Node::machine_samples: one virConnectGetAllDomainStats on libvirt, no
// call per space; a KubeVirt node reports none for now), finds each machine's space by its
// domain name in the store, and keeps per space the counters last read and a ring of rates
// (stats_point.hpp) covering `history`. Memory only: a restarted server starts afresh.
//
// Memory: history / interval points of 48 bytes per space that ran within the last
// `history` (the defaults: 360 points, 17 KiB), plus ~0.5 KiB of names and counters; 200
// running spaces hold about 3.5 MiB. A deleted space's ring goes at the next round.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "engine/node.hpp"
#include "engine/stats_point.hpp"
#include "store/store.hpp"
#include "util/timer.hpp"

namespace bowline::engine {

struct StatsSettings {
  std::chrono::seconds interval{10};   // 0: no sampling at all (server.stats.interval)
  std::chrono::seconds history{3600};  // how far back each space's ring reaches
};

// A space as the sampler last saw it.
struct SpaceStats {
  std::string space_id, space_name;
  std::string owner;                     // the owner's username; empty for a pool member
  std::optional<std::int64_t> owner_id;  // nullopt for a pool member
  std::string node;
  bool running = false;  // its machine was in the last round of its node
  MachineSample totals;  // the counters as last read
  std::optional<StatsPoint> latest;
  std::vector<StatsPoint> history;  // oldest first; filled by space() only
};

// The sampler's own cost, for /metrics and the bench.
struct SamplerCost {
  std::uint64_t rounds = 0;
  double cpu_seconds = 0;   // CPU time of the rounds, on the thread that ran them
  double wall_seconds = 0;  // their elapsed time (node calls included)
  std::size_t spaces = 0;   // spaces with a ring now
  std::size_t bytes = 0;    // what their rings hold at most
};

class StatsSampler {
 public:
  // `nodes` is the engine's list (read at each round, so nodes added before start count);
  // everything must outlive the sampler.
  StatsSampler(store::Store& store, const std::vector<Node*>& nodes, StatsSettings settings,
               util::Timer& timer);
  ~StatsSampler();
  StatsSampler(const StatsSampler&) = delete;
  StatsSampler& operator=(const StatsSampler&) = delete;

  // A round at once, then one every interval on a thread of its own; nothing when off.
  void start();
  void stop();  // waits for a round in progress
  bool enabled() const { return settings_.interval.count() > 0; }
  const StatsSettings& settings() const { return settings_; }
  // Points each ring holds.
  std::size_t capacity() const;

  // One round now (the thread's; tests call it themselves with a ManualTimer).
  void sample();
  // Run on the sampler's thread after each of its rounds (the engine's idle look); before
  // start().
  void set_after_round(std::function<void()> after) { after_round_ = std::move(after); }

  // The space with its history after `since_ms`; nullopt when the sampler has not seen it
  // (stopped for longer than the history, never started, or off).
  std::optional<SpaceStats> space(const std::string& id, std::int64_t since_ms = 0) const;
  // Every space whose machine was in the last round, without history, in space id order.
  std::vector<SpaceStats> running() const;
  // Why the node's machines have no statistics now (the node's last error); nullopt: none.
  std::optional<std::string> node_problem(const std::string& node) const;
  SamplerCost cost() const;
  // Bumped by every round: what a cache of running() compares.
  std::uint64_t generation() const;

 private:
  // Which space a (node, domain) is, from the store.
  struct Known {
    std::string id, name, owner;
    std::optional<std::int64_t> owner_id;
  };
  using Directory = std::map<std::pair<std::string, std::string>, Known>;
  struct Entry {
    SpaceStats view;  // without history
    PointRing ring;
    util::Timer::TimePoint read_at{};  // steady time of `view.totals`
  };
  Directory directory();
  void record(const Known& known, const std::string& node, MachineSample sample,
              util::Timer::TimePoint now, std::int64_t now_ms);
  // After a round: spaces of the nodes that answered and were not in it are not running;
  // rings of deleted spaces, and of spaces stopped longer than the history, go.
  void forget(const std::set<std::string>& seen, const std::set<std::string>& answered,
              const Directory& known, util::Timer::TimePoint now);
  void loop();

  store::Store& store_;
  const std::vector<Node*>& nodes_;
  const StatsSettings settings_;
  util::Timer& timer_;

  std::mutex round_mutex_;                            // one round at a time
  mutable std::mutex mutex_;                          // guards the members below
  std::map<std::string, Entry> entries_;              // by space id
  std::map<std::string, std::string> node_problems_;  // by node name
  SamplerCost cost_;

  std::function<void()> after_round_;
  std::mutex wake_mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace bowline::engine
