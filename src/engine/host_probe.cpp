#include "engine/host_probe.hpp"

#include <algorithm>
#include <filesystem>

namespace bowline::engine {

namespace fs = std::filesystem;

namespace {
bool safe_name(const std::string& name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos;
}
}  // namespace

bool SysfsHostProbe::bridge_exists(const std::string& name) const {
  std::error_code ec;
  return safe_name(name) && fs::is_directory(fs::path(root_) / name / "bridge", ec);
}

std::vector<std::string> SysfsHostProbe::bridge_ports(const std::string& name) const {
  std::vector<std::string> ports;
  if (!safe_name(name)) return ports;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(fs::path(root_) / name / "brif", ec))
    ports.push_back(entry.path().filename().string());
  std::sort(ports.begin(), ports.end());
  return ports;
}

// cpuN/nodeM, the link the kernel makes for CPU N on NUMA node M.
std::optional<unsigned> SysfsHostProbe::cpu_numa_node(unsigned cpu) const {
  std::error_code ec;
  for (const auto& entry :
       fs::directory_iterator(fs::path(cpu_root_) / ("cpu" + std::to_string(cpu)), ec)) {
    const auto name = entry.path().filename().string();
    if (name.size() > 4 && name.rfind("node", 0) == 0 &&
        name.find_first_not_of("0123456789", 4) == std::string::npos)
      return static_cast<unsigned>(std::stoul(name.substr(4)));
  }
  return std::nullopt;
}

}  // namespace bowline::engine
