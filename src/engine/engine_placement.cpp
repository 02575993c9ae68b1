// Where a new space goes when its create names no node: the node with the most memory free
// beyond its reserve, among those that can run the space's template now (its network or bridge,
// devices, and memory for it). Placement happens once, at create; a space stays on its node.
#include <limits>

#include "engine/engine.hpp"

namespace bowline::engine {

namespace {

std::string mebibytes(std::int64_t bytes) {
  return std::to_string(bytes / (1024 * 1024)) + " MiB";
}

}  // namespace

Node& Engine::place_space(const store::User& owner, const store::Template& tmpl,
                          const std::string& name) {
  return place_spec(
      tmpl,
      [&] {
        store::Space probe;
        probe.name = name;
        probe.owner_id = owner.id;
        probe.template_id = tmpl.id;
        return expand_spec(probe, tmpl, owner);
      }(),
      nullptr);
}

Node& Engine::place_spec(const store::Template& tmpl, const spec::Spec& spec, const Node* not_on) {
  const auto memory = static_cast<std::int64_t>(spec.sizing.memory_bytes);
  Node* best = nullptr;
  std::int64_t best_free = std::numeric_limits<std::int64_t>::min();
  std::string reasons;
  const auto cordons = store_.node_states().cordoned();
  for (auto* node : nodes_) {
    if (node == not_on) continue;
    std::vector<std::string> why;
    std::optional<std::int64_t> free;
    if (const auto c = cordons.find(node->name()); c != cordons.end()) {
      reasons +=
          "\n  " + node->name() + ": cordoned" + (c->second.empty() ? "" : " (" + c->second + ")");
      continue;
    }
    // Not asked again on the request's thread: a host that did not answer may make it wait.
    if (const auto away = node_unreachable(node->name())) {
      reasons += "\n  " + node->name() + ": unreachable (" + *away + ")";
      continue;
    }
    try {
      why = node->refusals(spec);
      free = node->free_memory();
    } catch (const std::exception& e) {
      why = {std::string("unreachable: ") + e.what()};
    }
    if (why.empty() && free && *free < memory)
      why.push_back("needs " + mebibytes(memory) + " of memory, " +
                    mebibytes(std::max<std::int64_t>(*free, 0)) + " free beyond its reserve");
    if (!why.empty()) {
      reasons += "\n  " + node->name() + ":";
      for (const auto& w : why) reasons += " " + w + ";";
      reasons.pop_back();
      continue;
    }
    // A node that does not say how much is free comes after every one that does.
    const auto score = free.value_or(std::numeric_limits<std::int64_t>::min() + 1);
    if (!best || score > best_free) {
      best = node;
      best_free = score;
    }
  }
  if (!best)
    throw EngineError(EngineError::Kind::Conflict,
                      "no node can run template " + tmpl.name + " now:" + reasons);
  return *best;
}

}  // namespace bowline::engine
