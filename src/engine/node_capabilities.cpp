#include "engine/node_capabilities.hpp"

#include <vector>

#include "engine/engine_error.hpp"
#include "engine/kubevirt_node.hpp"
#include "engine/libvirt_node.hpp"

namespace bowline::engine {

namespace {

struct Row {
  const char* name;
  const char* words;
};

// In Capability's order.
constexpr std::array<Row, kCapabilities.size()> kRows{{
    {"console", "the serial console"},
    {"vnc", "the graphical display (VNC)"},
    {"terminal", "the web terminal"},
    {"tunnel", "tunnels to a guest's port"},
    {"external_ports", "external ports"},
    {"readiness", "cloud-init's progress"},
    {"stats", "statistics"},
    {"snapshots", "snapshots"},
    {"memory_snapshots", "snapshots with the running state"},
    {"clone", "clones"},
    {"suspend", "suspend and resume"},
    {"export", "export"},
    {"import", "import"},
    {"disks", "disk objects"},
    {"move", "moves between nodes"},
}};

const Row& row(Capability capability) {
  return kRows.at(static_cast<std::size_t>(capability));
}

// A table cell holds no pipe and no line break.
std::string cell(std::string text) {
  std::string out;
  for (char c : text) {
    if (c == '|')
      out += "\\|";
    else if (c == '\n')
      out += ' ';
    else
      out += c;
  }
  return out;
}

}  // namespace

const char* to_string(Capability capability) {
  return row(capability).name;
}

const char* describe(Capability capability) {
  return row(capability).words;
}

NodeCapabilities& NodeCapabilities::lacks(Capability capability, std::string reason) {
  missing_[capability] = std::move(reason);
  return *this;
}

std::string NodeCapabilities::reason(Capability capability) const {
  const auto found = missing_.find(capability);
  return found == missing_.end() ? std::string() : found->second;
}

void NodeCapabilities::require(Capability capability, const std::string& node) const {
  if (supports(capability)) return;
  throw EngineError(EngineError::Kind::Invalid, std::string(describe(capability)) +
                                                    ": not available on the " + kind_ + " node " +
                                                    node + ": " + reason(capability));
}

nlohmann::json NodeCapabilities::to_json() const {
  auto out = nlohmann::json::array();
  for (const auto capability : kCapabilities) {
    const bool supported = supports(capability);
    out.push_back(
        {{"name", to_string(capability)},
         {"supported", supported},
         {"reason", supported ? nlohmann::json(nullptr) : nlohmann::json(reason(capability))}});
  }
  return out;
}

std::string backends_markdown() {
  const std::vector<const NodeCapabilities*> kinds{&LibvirtNode::kind_capabilities(),
                                                   &LibvirtNode::elsewhere_capabilities(),
                                                   &KubevirtNode::kind_capabilities()};
  std::string out = "| capability |";
  std::string rule = "|---|";
  for (const auto* kind : kinds) {
    out += " " + kind->kind() + " |";
    rule += "---|";
  }
  out += "\n" + rule + "\n";
  for (const auto capability : kCapabilities) {
    out += std::string("| `") + to_string(capability) + "` (" + describe(capability) + ") |";
    for (const auto* kind : kinds)
      out +=
          kind->supports(capability) ? " yes |" : " no: " + cell(kind->reason(capability)) + " |";
    out += "\n";
  }
  return out;
}

}  // namespace bowline::engine
