// External access to NAT spaces on libvirt (template `external: true`, `externalMethod:
// PortList`): each listed port of the guest is published on a port of the host, taken from a
// range and kept for the space's life. Forwarded while the space runs, removed when it stops or
// is deleted.
//
// How: bowline owns the nftables table `ip bowline`. Its prerouting and output chains DNAT a
// host port to the guest's address and mark the connection; its postrouting chain masquerades
// marked connections onto the guest's network, so the guest answers the host whatever its routes
// (libvirt's isolated networks give guests none). libvirt rejects new connections into its
// networks in the iptables filter FORWARD chain (LIBVIRT_FWI/FWO), which no rule in another
// table can overrule: one iptables chain BOWLINE_FORWARD, jumped to first from FORWARD, accepts
// exactly the marked connections. The whole table is replaced in one `nft -f` transaction each
// time the set changes, so the kernel never holds half of it.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "util/process.hpp"

namespace bowline::engine {

struct PortForward {
  std::string space_id;
  std::string protocol = "tcp";  // tcp | udp
  std::uint16_t host_port = 0;
  std::string guest_address;  // IPv4
  std::uint16_t guest_port = 0;
};

// The connection mark of forwarded connections ("bowl").
constexpr std::uint32_t kForwardMark = 0x626f776c;

// The nft script that replaces table ip bowline with these forwards (pure; tested on its own),
// published on `address` of this host only, or on every address but loopback when it is "any".
std::string nft_ruleset(const std::vector<PortForward>& forwards, const std::string& address);

// The seam: the engine hands the complete set of active forwards every time it changes.
class PortForwarder {
 public:
  virtual ~PortForwarder() = default;
  // Throws std::runtime_error with the tool's words when the host refuses.
  virtual void apply(const std::vector<PortForward>& forwards) = 0;
  // Whether what the last apply() wrote is still in the host's firewall (`nft flush ruleset`
  // or a firewall service's reload takes it away); true where nothing was written.
  virtual bool in_place() { return true; }
};

// nft and iptables through a ProcessRunner; `scratch_dir` holds the script nft reads. The host
// must forward IPv4 (libvirt's NAT networks turn it on; bowline does not change a host-wide
// setting behind the operator's back): with ip_forward off, apply() fails saying so.
class NftPortForwarder final : public PortForwarder {
 public:
  NftPortForwarder(util::ProcessRunner& runner, std::string scratch_dir, std::string address,
                   std::string ip_forward_file = "/proc/sys/net/ipv4/ip_forward");
  void apply(const std::vector<PortForward>& forwards) override;
  // The table ip bowline and the jump to BOWLINE_FORWARD, while there are forwards.
  bool in_place() override;

 private:
  void accept_in_forward_chain();
  util::ProcessRunner& runner_;
  std::string scratch_dir_;
  std::string address_;
  std::string ip_forward_file_;
  std::mutex mutex_;
  bool forwarding_ = false;  // the last apply() wrote forwards
};

}  // namespace bowline::engine
