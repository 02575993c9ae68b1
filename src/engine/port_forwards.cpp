#include "engine/port_forwards.hpp"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "engine/guest_address.hpp"
#include "spec/ipv4.hpp"

namespace bowline::engine {

namespace {

std::string mark() {
  char text[16];
  std::snprintf(text, sizeof text, "0x%08x", kForwardMark);
  return text;
}

std::string dnat(const PortForward& f) {
  return f.protocol + " dport " + std::to_string(f.host_port) + " ct mark set " + mark() +
         " dnat to " + f.guest_address + ":" + std::to_string(f.guest_port) + " comment \"space " +
         f.space_id + "\"";
}

std::string first_line(const std::string& text) {
  return text.substr(0, text.find('\n'));
}

}  // namespace

std::string nft_ruleset(const std::vector<PortForward>& forwards, const std::string& address) {
  // A last line behind the engine's choice of address (engine/guest_address.hpp): a DNAT to
  // an address no guest has would hand the host's port to whatever listens there.
  for (const auto& f : forwards)
    if (const auto why = guest_address_refusal(f.guest_address, {}))
      throw std::invalid_argument("the external ports of space " + f.space_id +
                                  " are not forwarded: " + *why);
  // "table" first: deleting a table that does not exist fails the whole transaction.
  std::string out = "table ip bowline\ndelete table ip bowline\n";
  if (forwards.empty()) return out;
  out += "table ip bowline {\n";
  // Only connections to this host's own addresses, never traffic it routes for others; and
  // only to the address the operator set aside, where the web UI's cookies are not sent.
  const std::string to = address == "any" ? "fib daddr type local ip daddr != 127.0.0.0/8 "
                                          : "fib daddr type local ip daddr " + address + " ";
  if (address != "any" && !spec::Ipv4Address::parse(address))
    throw std::invalid_argument("external ports are published on an IPv4 address, not \"" +
                                address + "\"");
  out += "  chain prerouting {\n    type nat hook prerouting priority dstnat; policy accept;\n";
  for (const auto& f : forwards) out += "    " + to + dnat(f) + "\n";
  out += "  }\n";
  // Connections the host opens to one of its own addresses (not loopback: the kernel drops
  // packets from 127.0.0.1 that leave through another interface).
  out += "  chain output {\n    type nat hook output priority -100; policy accept;\n";
  for (const auto& f : forwards) out += "    " + to + dnat(f) + "\n";
  out += "  }\n";
  out += "  chain postrouting {\n    type nat hook postrouting priority srcnat; policy accept;\n";
  out += "    ct mark " + mark() + " masquerade\n  }\n}\n";
  return out;
}

NftPortForwarder::NftPortForwarder(util::ProcessRunner& runner, std::string scratch_dir,
                                   std::string address, std::string ip_forward_file)
    : runner_(runner),
      scratch_dir_(std::move(scratch_dir)),
      address_(std::move(address)),
      ip_forward_file_(std::move(ip_forward_file)) {}

void NftPortForwarder::accept_in_forward_chain() {
  const std::chrono::seconds timeout(10);
  const auto ipt = [&](std::vector<std::string> args) {
    args.insert(args.begin(), {"iptables", "-w"});
    return runner_.run(args, timeout);
  };
  ipt({"-N", "BOWLINE_FORWARD"});  // fails when it exists: fine
  const std::vector<std::string> rule{"-m", "connmark", "--mark", mark(), "-j", "ACCEPT"};
  auto check = rule;
  check.insert(check.begin(), {"-C", "BOWLINE_FORWARD"});
  if (ipt(check).exit_code != 0) {
    auto add = rule;
    add.insert(add.begin(), {"-A", "BOWLINE_FORWARD"});
    if (const auto r = ipt(add); r.exit_code != 0)
      throw std::runtime_error("iptables: cannot accept forwarded connections: " +
                               first_line(r.err));
  }
  // First in FORWARD, before libvirt's chains, which reject new connections into its networks
  // (libvirt may have put its own jumps above ours since).
  while (ipt({"-D", "FORWARD", "-j", "BOWLINE_FORWARD"}).exit_code == 0) {
  }
  if (const auto r = ipt({"-I", "FORWARD", "1", "-j", "BOWLINE_FORWARD"}); r.exit_code != 0)
    throw std::runtime_error("iptables: cannot add BOWLINE_FORWARD to FORWARD: " +
                             first_line(r.err));
}

void NftPortForwarder::apply(const std::vector<PortForward>& forwards) {
  std::lock_guard lock(mutex_);
  const AddressBarriers host{host_ipv4_addresses(), {}};
  for (const auto& f : forwards)
    if (const auto why = guest_address_refusal(f.guest_address, host))
      throw std::runtime_error("the external ports of space " + f.space_id +
                               " are not forwarded: " + *why);
  if (!forwards.empty()) {
    std::string forwarding;
    std::ifstream(ip_forward_file_) >> forwarding;
    if (forwarding == "0")
      throw std::runtime_error(
          "this host does not forward IPv4 (net.ipv4.ip_forward is 0), so no external port "
          "reaches a guest: sysctl -w net.ipv4.ip_forward=1 (and net.ipv4.ip_forward=1 in "
          "/etc/sysctl.d/ to keep it)");
    accept_in_forward_chain();
  }
  const auto file = scratch_dir_ + "/bowline-forwards." + std::to_string(::getpid()) + ".nft";
  {
    std::ofstream out(file, std::ios::trunc);
    out << nft_ruleset(forwards, address_);
    if (!out) throw std::runtime_error("cannot write " + file);
  }
  const auto result = runner_.run({"nft", "-f", file}, std::chrono::seconds(10));
  std::error_code ec;
  std::filesystem::remove(file, ec);
  if (result.exit_code != 0)
    throw std::runtime_error("nft: cannot publish the spaces' external ports: " +
                             first_line(result.err.empty() ? result.out : result.err));
  forwarding_ = !forwards.empty();
}

bool NftPortForwarder::in_place() {
  std::lock_guard lock(mutex_);
  if (!forwarding_) return true;
  const std::chrono::seconds timeout(10);
  return runner_.run({"nft", "list", "table", "ip", "bowline"}, timeout).exit_code == 0 &&
         runner_.run({"iptables", "-w", "-C", "FORWARD", "-j", "BOWLINE_FORWARD"}, timeout)
                 .exit_code == 0;
}

}  // namespace bowline::engine
