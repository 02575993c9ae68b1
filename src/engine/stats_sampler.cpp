#include "engine/stats_sampler.hpp"

#include <time.h>

#include <algorithm>
#include <exception>

namespace bowline::engine {

namespace {

double thread_cpu_seconds() {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

}  // namespace

StatsSampler::StatsSampler(store::Store& store, const std::vector<Node*>& nodes,
                           StatsSettings settings, util::Timer& timer)
    : store_(store), nodes_(nodes), settings_(settings), timer_(timer) {}

StatsSampler::~StatsSampler() {
  stop();
}

std::size_t StatsSampler::capacity() const {
  if (!enabled()) return 0;
  return static_cast<std::size_t>(
      std::max<std::int64_t>(1, settings_.history.count() / settings_.interval.count()));
}

void StatsSampler::start() {
  if (!enabled() || thread_.joinable()) return;
  stopping_ = false;
  thread_ = std::thread([this] { loop(); });
}

void StatsSampler::stop() {
  {
    std::lock_guard lock(wake_mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void StatsSampler::loop() {
  const auto round = [this] {
    try {
      sample();
      if (after_round_) after_round_();
    } catch (const std::exception&) {
      // A store that cannot be read now is asked again next round.
    }
  };
  round();  // the baseline: rates from the next round on
  std::unique_lock lock(wake_mutex_);
  auto next = timer_.now() + settings_.interval;
  while (!stopping_) {
    if (!timer_.wait_until(lock, wake_, next) || stopping_) continue;
    lock.unlock();
    round();
    lock.lock();
    // A round that took longer than the interval is not made up for: the next is due later.
    next += settings_.interval;
    if (const auto now = timer_.now(); next <= now) next = now + settings_.interval;
  }
}

StatsSampler::Directory StatsSampler::directory() {
  std::map<std::int64_t, std::string> usernames;
  for (auto& user : store_.read_users().list()) usernames[user.id] = std::move(user.username);
  const std::string default_node = nodes_.empty() ? std::string() : nodes_.front()->name();
  Directory out;
  for (auto& space : store_.read_spaces().list()) {
    Known known{std::move(space.id), std::move(space.name), {}, space.owner_id};
    if (space.owner_id)
      if (const auto it = usernames.find(*space.owner_id); it != usernames.end())
        known.owner = it->second;
    out.emplace(
        std::pair{space.node.empty() ? default_node : space.node, std::move(space.domain_name)},
        std::move(known));
  }
  return out;
}

void StatsSampler::sample() {
  std::lock_guard round(round_mutex_);
  const double cpu_start = thread_cpu_seconds();
  const auto started = timer_.now();
  // The nodes first, the store after, all of it before taking mutex_: readers of the
  // statistics never wait for libvirt or SQLite.
  // Each node's answer is timed as it comes: the rates' time base is when the counters were
  // read, not when the round got round to them.
  struct Answer {
    std::string node;
    std::vector<MachineSample> samples;
    util::Timer::TimePoint at;
    std::int64_t at_ms;
  };
  std::vector<Answer> answers;
  std::map<std::string, std::string> problems;
  for (auto* node : nodes_) {
    try {
      auto samples = node->machine_samples();
      answers.push_back(
          {node->name(), std::move(samples), timer_.now(), store_.clock().now_unix_ms()});
    } catch (const std::exception& e) {
      problems[node->name()] = e.what();
    }
  }
  const auto known = directory();
  const auto now = timer_.now();
  std::lock_guard lock(mutex_);
  std::set<std::string> seen, answered;
  for (auto& answer : answers) {
    answered.insert(answer.node);
    for (auto& sample : answer.samples) {
      const auto it = known.find({answer.node, sample.machine});
      if (it == known.end()) continue;  // not a space of this server
      seen.insert(it->second.id);
      record(it->second, answer.node, std::move(sample), answer.at, answer.at_ms);
    }
  }
  forget(seen, answered, known, now);
  node_problems_ = std::move(problems);
  ++cost_.rounds;
  cost_.cpu_seconds += thread_cpu_seconds() - cpu_start;
  cost_.wall_seconds += std::chrono::duration<double>(timer_.now() - started).count();
  cost_.spaces = entries_.size();
  cost_.bytes = entries_.size() * PointRing::bytes_for(capacity());
}

void StatsSampler::record(const Known& known, const std::string& node, MachineSample sample,
                          util::Timer::TimePoint now, std::int64_t now_ms) {
  auto it = entries_.find(known.id);
  const bool fresh = it == entries_.end();
  if (fresh) it = entries_.emplace(known.id, Entry{{}, PointRing(capacity()), now}).first;
  auto& entry = it->second;
  // A space that was not running last round starts a new run: no rate across the gap.
  const bool continues = !fresh && entry.view.running;
  const auto point = continues
                         ? rates_between(entry.view.totals, sample, now - entry.read_at, now_ms)
                         : memory_point(sample, now_ms);
  auto& view = entry.view;
  view.space_id = known.id;
  view.space_name = known.name;
  view.owner = known.owner;
  view.owner_id = known.owner_id;
  view.node = node;
  view.running = true;
  view.totals = std::move(sample);
  view.latest = point;
  entry.read_at = now;
  entry.ring.push(point);
}

void StatsSampler::forget(const std::set<std::string>& seen, const std::set<std::string>& answered,
                          const Directory& known, util::Timer::TimePoint now) {
  std::set<std::string> ids;
  for (const auto& [key, space] : known) ids.insert(space.id);
  for (auto it = entries_.begin(); it != entries_.end();) {
    auto& entry = it->second;
    const bool gone = !ids.count(it->first);
    const bool stale = now - entry.read_at > settings_.history;
    if (gone || stale) {
      it = entries_.erase(it);
      continue;
    }
    if (!seen.count(it->first) && answered.count(entry.view.node)) entry.view.running = false;
    ++it;
  }
}

std::optional<SpaceStats> StatsSampler::space(const std::string& id, std::int64_t since_ms) const {
  std::lock_guard lock(mutex_);
  const auto it = entries_.find(id);
  if (it == entries_.end()) return std::nullopt;
  auto out = it->second.view;
  out.history = it->second.ring.since(since_ms);
  return out;
}

std::vector<SpaceStats> StatsSampler::running() const {
  std::lock_guard lock(mutex_);
  std::vector<SpaceStats> out;
  for (const auto& [id, entry] : entries_)
    if (entry.view.running) out.push_back(entry.view);
  return out;
}

std::optional<std::string> StatsSampler::node_problem(const std::string& node) const {
  std::lock_guard lock(mutex_);
  const auto it = node_problems_.find(node);
  if (it == node_problems_.end()) return std::nullopt;
  return it->second;
}

SamplerCost StatsSampler::cost() const {
  std::lock_guard lock(mutex_);
  return cost_;
}

std::uint64_t StatsSampler::generation() const {
  std::lock_guard lock(mutex_);
  return cost_.rounds;
}

}  // namespace bowline::engine
