// What each space uses as the API shows it (docs/api.md, "What a space uses"): the body of
// GET /api/v1/spaces/{id}/stats, the "stats" object of a running space in GET /spaces and
// GET /spaces/{id}, and the bowline_space_* series of /metrics. All of it from the engine's
// stats sampler, in memory: none of these asks libvirt.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/node_capabilities.hpp"
#include "engine/stats_sampler.hpp"
#include "store/records.hpp"

namespace bowline::api {

// One point's figures: {time, cpuPercent, memoryUsedBytes, ..., networkTransmitBytesPerSecond},
// null where not known.
nlohmann::json stats_point_json(const engine::StatsPoint& point);
// A running space's latest figures with its vCPUs, for lists; null when it has none.
nlohmann::json current_stats_json(const engine::SpaceStats& stats);
// GET /spaces/{id}/stats: the sampler's settings, the current figures, the counters and the
// history (one array per figure, oldest first) after `since_ms`. `capabilities`: the node's,
// whose reason says why a node without statistics has none.
nlohmann::json space_stats_json(const engine::StatsSampler& sampler, const store::Space& space,
                                const std::string& node, std::int64_t since_ms,
                                const engine::NodeCapabilities* capabilities = nullptr);

// The running spaces' "stats" objects as JSON text by space id, made once per sampler round
// (the list writes them into its cached objects; thousands of spaces need no new JSON).
class CurrentStatsTexts {
 public:
  using Texts = std::unordered_map<std::string, std::string>;
  // The texts of the sampler's latest round.
  std::shared_ptr<const Texts> get(const engine::StatsSampler& sampler);

 private:
  std::mutex mutex_;
  std::optional<std::uint64_t> generation_;
  std::shared_ptr<const Texts> texts_ = std::make_shared<Texts>();
};

// Prometheus text for `spaces` (labels space, owner, node; counters as *_total) and the
// sampler's own cost.
std::string space_metrics_text(const std::vector<engine::SpaceStats>& spaces,
                               const engine::SamplerCost& cost);

}  // namespace bowline::api
