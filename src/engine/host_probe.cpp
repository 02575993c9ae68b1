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

}  // namespace bowline::engine
