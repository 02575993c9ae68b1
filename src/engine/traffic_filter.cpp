#include "engine/traffic_filter.hpp"

#include <unistd.h>

#include <fstream>
#include <mutex>

#include "libvirt/nwfilter.hpp"

namespace bowline::engine {

namespace {

constexpr const char* kDriverFix =
    "libvirt's nwfilter driver must run, with ebtables to apply its rules: on Debian 12 "
    "apt-get install libvirt-daemon-system iptables (iptables brings ebtables-nft; libvirtd loads "
    "the driver, or with libvirt's modular daemons: systemctl enable --now virtnwfilterd.socket); "
    "`virsh nwfilter-list` then answers";

std::string first_line(const std::string& text) {
  return text.substr(0, text.find('\n'));
}

// One define at a time in this process: two first starts would both find no filter and the
// second define would fail on the first's UUID.
std::mutex& define_mutex() {
  static std::mutex mutex;
  return mutex;
}

}  // namespace

bool is_local(const std::string& uri) {
  const auto at = uri.find("://");
  return at != std::string::npos && uri.compare(at + 3, 1, "/") == 0;
}

bool is_test_driver(const std::string& uri) {
  return uri.rfind("test://", 0) == 0 || uri.rfind("test+", 0) == 0;
}

void ensure_traffic_filter(libvirt::Hypervisor& hypervisor) {
  try {
    std::lock_guard lock(define_mutex());
    hypervisor.ensure_nwfilter(libvirt::kTrafficFilter, libvirt::traffic_filter_xml());
  } catch (const libvirt::HypervisorError& e) {
    if (e.is_unsupported() && is_test_driver(hypervisor.uri())) return;  // no guests to filter
    throw libvirt::HypervisorError(std::string(e.what()) + "; guests do not start unfiltered: " +
                                       kDriverFix + " (bowline node check)",
                                   e.code(), e.error_domain(), e.cause());
  }
}

void add_dhcp_servers(plan::Plan& plan, libvirt::Hypervisor& hypervisor) {
  for (auto& nic : plan.nics) {
    if (nic.type != plan::NicType::Network || nic.ip) continue;
    nic.dhcp_servers.clear();
    // A network that is missing fails the start in libvirt's own words.
    const auto network = hypervisor.lookup_network(nic.source);
    if (!network) continue;
    for (const auto& server : network->dhcp_servers)
      if (const auto address = spec::Ipv4Address::parse(server))
        nic.dhcp_servers.push_back(*address);
  }
}

Check check_traffic_filter(const NodeCheckContext& context, const std::string& ebtables) {
  Check c;
  c.name = "nwfilter";
  c.title = "libvirt filters guests' traffic (no spoofed MAC, IP or ARP, no DHCP server)";
  if (!context.hypervisor) {
    c.status = CheckStatus::Missing;
    c.detail = "not checked: libvirt is not reachable";
    c.fix = "make libvirt reachable first";
    return c;
  }
  std::optional<std::string> ours;
  try {
    ours = context.hypervisor->nwfilter_xml(libvirt::kTrafficFilter);
  } catch (const libvirt::HypervisorError& e) {
    c.status = CheckStatus::Missing;
    c.detail = e.what();
    c.fix = kDriverFix;
    if (e.is_unsupported() && is_test_driver(context.uri)) {
      c.status = CheckStatus::Warn;
      c.required = false;
      c.detail = "libvirt's test driver has no network filters (and runs no guests)";
      c.fix.clear();
    }
    return c;
  }
  std::string tool;
  if (context.runner && is_local(context.uri)) {
    const auto result = context.runner->run({ebtables, "--version"}, std::chrono::seconds(10));
    if (result.exit_code != 0) {
      c.status = CheckStatus::Missing;
      c.detail = ebtables + (result.exit_code == 127 ? " not found" : " --version failed") +
                 ": libvirt cannot apply the filter, so spaces would not start";
      c.fix = kDriverFix;
      return c;
    }
    tool = "; " + first_line(result.out);
  }
  const bool current = ours && libvirt::same_filter(*ours, libvirt::traffic_filter_xml());
  c.detail = "the nwfilter driver answers; " + std::string(libvirt::kTrafficFilter) +
             (!ours     ? " is defined at the first start"
              : current ? " defined"
                        : " differs from this bowline's: redefined at the next start") +
             tool;
  return c;
}

bool may_manage_nftables() {
  if (::geteuid() == 0) return true;
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.starts_with("CapEff:")) {
      constexpr unsigned kCapNetAdmin = 12;  // linux/capability.h
      const auto bits = std::stoull(line.substr(7), nullptr, 16);
      return (bits >> kCapNetAdmin) & 1;
    }
  return false;
}

bool guarded_by_bowline(const std::string& uri, const std::string& guest_filter, bool capable) {
  if (guest_filter == "nwfilter" || is_test_driver(uri) || !is_local(uri)) return false;
  return guest_filter == "guard" || capable;
}

std::string nwfilter_fallback_reason(const std::string& uri, const std::string& guest_filter,
                                     bool capable) {
  if (guest_filter != "auto" || capable || is_test_driver(uri) || !is_local(uri)) return {};
  return "bowline runs as uid " + std::to_string(::geteuid()) +
         " without CAP_NET_ADMIN, so its own guard cannot write nftables rules: libvirt's "
         "nwfilter (applied by libvirtd) filters guests instead";
}

Check check_guest_filter(const NodeCheckContext& context, const NodeCheckOptions& options) {
  if (!guarded_by_bowline(context.uri, options.guest_filter)) {
    auto c = check_traffic_filter(context, options.ebtables);
    if (const auto why = nwfilter_fallback_reason(context.uri, options.guest_filter); !why.empty())
      c.detail = "guest_filter auto: " + why + "; " + c.detail;
    return c;
  }
  Check c;
  c.name = "guest-guard";
  c.title = "bowline's guard filters guests' traffic (no spoofed MAC, IP or ARP, no DHCP server)";
  const std::string fix =
      "the guard writes nftables rules (family bridge): apt-get install nftables, on a kernel with "
      "nf_tables (Debian's has it); or set server.kvm.guest_filter nwfilter to use libvirt's";
  if (!context.runner) {
    c.status = CheckStatus::Warn;
    c.required = false;
    c.detail = "not checked here";
    return c;
  }
  const auto timeout = std::chrono::seconds(10);
  const auto version = context.runner->run({options.nft, "--version"}, timeout);
  if (version.exit_code != 0) {
    c.status = CheckStatus::Missing;
    c.detail = options.nft + (version.exit_code == 127 ? " not found" : " --version failed") +
               ": spaces would not start (nothing runs unfiltered)";
    c.fix = fix;
    return c;
  }
  // Check mode: the kernel judges the table, nothing is kept.
  const auto probe =
      context.runner->run({options.nft, "-c", "add", "table", "bridge", "bowline_check"}, timeout);
  if (probe.exit_code != 0) {
    c.status = CheckStatus::Missing;
    c.detail = "the kernel refuses a bridge table: " +
               first_line(probe.err.empty() ? probe.out : probe.err);
    c.fix = fix;
    return c;
  }
  c.detail = first_line(version.out);
  if (!options.guard_table.empty()) {
    const auto listed =
        context.runner->run({options.nft, "list", "table", "bridge", options.guard_table}, timeout);
    if (listed.exit_code != 0) {
      c.status = CheckStatus::Missing;
      c.detail = "the guard's table bridge " + options.guard_table +
                 " is not there, so this server's guests reach nothing: " + first_line(listed.err);
      c.fix = "restart the server, which writes it anew (its log says why it could not)";
      return c;
    }
    std::size_t nics = 0;
    for (auto at = listed.out.find(": jump out_"); at != std::string::npos;
         at = listed.out.find(": jump out_", at + 1))
      ++nics;
    c.detail = "table bridge " + options.guard_table + " guards " + std::to_string(nics) +
               (nics == 1 ? " NIC; " : " NICs; ") + c.detail;
  }
  return c;
}

}  // namespace bowline::engine
