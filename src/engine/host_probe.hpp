// Facts about the host that libvirt does not own: Linux bridges and their ports.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace bowline::engine {

class HostProbe {
 public:
  virtual ~HostProbe() = default;
  virtual bool bridge_exists(const std::string& name) const = 0;
  // The bridge's ports (physical NICs and taps); empty: a bridge that passes no traffic.
  virtual std::vector<std::string> bridge_ports(const std::string& name) const = 0;
  // The NUMA node a host CPU belongs to; nullopt when the host does not say.
  virtual std::optional<unsigned> cpu_numa_node(unsigned) const { return std::nullopt; }
};

// Reads /sys/class/net (or another root, for tests).
class SysfsHostProbe final : public HostProbe {
 public:
  explicit SysfsHostProbe(std::string sys_class_net = "/sys/class/net",
                          std::string sys_cpu = "/sys/devices/system/cpu")
      : root_(std::move(sys_class_net)), cpu_root_(std::move(sys_cpu)) {}
  bool bridge_exists(const std::string& name) const override;
  std::vector<std::string> bridge_ports(const std::string& name) const override;
  std::optional<unsigned> cpu_numa_node(unsigned cpu) const override;

 private:
  std::string root_;
  std::string cpu_root_;
};

}  // namespace bowline::engine
