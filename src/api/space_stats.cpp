#include "api/space_stats.hpp"

#include <cmath>

namespace bowline::api {

namespace {

using engine::StatsPoint;

// A figure of a point: its JSON key and how many decimals are worth sending.
struct Figure {
  const char* key;
  float StatsPoint::*member;
  int decimals;
};
constexpr Figure kFigures[] = {
    {"cpuPercent", &StatsPoint::cpu_percent, 2},
    {"memoryUsedBytes", &StatsPoint::memory_used, 0},
    {"memoryAvailableBytes", &StatsPoint::memory_available, 0},
    {"memoryRssBytes", &StatsPoint::memory_rss, 0},
    {"diskReadBytesPerSecond", &StatsPoint::disk_read_bps, 0},
    {"diskWriteBytesPerSecond", &StatsPoint::disk_write_bps, 0},
    {"diskReadsPerSecond", &StatsPoint::disk_reads_ps, 2},
    {"diskWritesPerSecond", &StatsPoint::disk_writes_ps, 2},
    {"networkReceiveBytesPerSecond", &StatsPoint::net_rx_bps, 0},
    {"networkTransmitBytesPerSecond", &StatsPoint::net_tx_bps, 0},
};

nlohmann::json figure_json(float value, int decimals) {
  if (std::isnan(value) || std::isinf(value)) return nullptr;
  if (decimals == 0) return std::llround(value);
  const double scale = std::pow(10.0, decimals);
  return std::round(static_cast<double>(value) * scale) / scale;
}

nlohmann::json counter_json(const std::optional<std::uint64_t>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

nlohmann::json totals_json(const engine::MachineSample& t) {
  return {{"cpuSeconds", t.cpu_ns ? nlohmann::json(static_cast<double>(*t.cpu_ns) / 1e9)
                                  : nlohmann::json(nullptr)},
          {"diskReadBytes", counter_json(t.disk_read_bytes)},
          {"diskWriteBytes", counter_json(t.disk_write_bytes)},
          {"diskReads", counter_json(t.disk_reads)},
          {"diskWrites", counter_json(t.disk_writes)},
          {"networkReceiveBytes", counter_json(t.net_rx_bytes)},
          {"networkTransmitBytes", counter_json(t.net_tx_bytes)}};
}

nlohmann::json history_json(const std::vector<StatsPoint>& points) {
  nlohmann::json out = {{"time", nlohmann::json::array()}};
  for (const auto& f : kFigures) out[f.key] = nlohmann::json::array();
  for (const auto& p : points) {
    out["time"].push_back(p.time_ms);
    for (const auto& f : kFigures) out[f.key].push_back(figure_json(p.*f.member, f.decimals));
  }
  return out;
}

// Why a space has no current figures; null when it has them.
nlohmann::json reason_for(const engine::StatsSampler& sampler, const store::Space& space,
                          const std::string& node, const std::optional<engine::SpaceStats>& seen,
                          const engine::NodeCapabilities* capabilities) {
  if (!sampler.enabled()) return "statistics are off on this server (server.stats.interval 0)";
  if (seen && seen->running && seen->latest) return nullptr;
  if (const auto problem = sampler.node_problem(node))
    return "the node " + node + " could not be asked: " + *problem;
  if (capabilities && !capabilities->supports(engine::Capability::Stats))
    return "the " + capabilities->kind() + " node " + node +
           " reports no figures: " + capabilities->reason(engine::Capability::Stats);
  if (space.state != store::SpaceState::Running) return "the space is not running";
  return "no figures from the node " + node + " for this space yet (they come every " +
         std::to_string(sampler.settings().interval.count()) + " s)";
}

}  // namespace

nlohmann::json stats_point_json(const StatsPoint& point) {
  nlohmann::json out = {{"time", point.time_ms}};
  for (const auto& f : kFigures) out[f.key] = figure_json(point.*f.member, f.decimals);
  return out;
}

nlohmann::json current_stats_json(const engine::SpaceStats& stats) {
  if (!stats.running || !stats.latest) return nullptr;
  auto out = stats_point_json(*stats.latest);
  out["vcpus"] = stats.totals.vcpus ? nlohmann::json(stats.totals.vcpus) : nlohmann::json(nullptr);
  return out;
}

nlohmann::json space_stats_json(const engine::StatsSampler& sampler, const store::Space& space,
                                const std::string& node, std::int64_t since_ms,
                                const engine::NodeCapabilities* capabilities) {
  const auto seen = sampler.space(space.id, since_ms);
  const bool current = seen && seen->running && seen->latest;
  return {{"space", space.id},
          {"node", node},
          {"enabled", sampler.enabled()},
          {"intervalSeconds", sampler.settings().interval.count()},
          {"historySeconds", sampler.enabled() ? sampler.settings().history.count() : 0},
          {"running", seen && seen->running},
          {"reason", reason_for(sampler, space, node, seen, capabilities)},
          {"current", current ? current_stats_json(*seen) : nlohmann::json(nullptr)},
          {"totals", current ? totals_json(seen->totals) : nlohmann::json(nullptr)},
          {"history", history_json(seen ? seen->history : std::vector<StatsPoint>{})}};
}

std::shared_ptr<const CurrentStatsTexts::Texts> CurrentStatsTexts::get(
    const engine::StatsSampler& sampler) {
  std::lock_guard lock(mutex_);
  const auto generation = sampler.generation();
  if (generation_ == generation) return texts_;
  auto texts = std::make_shared<Texts>();
  for (const auto& stats : sampler.running())
    if (auto json = current_stats_json(stats); !json.is_null())
      texts->emplace(stats.space_id, json.dump());
  generation_ = generation;
  texts_ = std::move(texts);
  return texts_;
}

}  // namespace bowline::api
