// bowline's traffic filter on a libvirt host (libvirt/nwfilter.hpp says what it stops): the
// node defines it before each domain it defines, and node check says whether the host can
// apply it. A host whose libvirt cannot filter gets an error with the fix, never a guest that
// runs unfiltered. The one exception is libvirt's test driver, which has no network filters and
// runs no guests, so that nothing there has traffic to filter.
#pragma once

#include <string>

#include "engine/node_check.hpp"
#include "libvirt/hypervisor.hpp"
#include "plan/plan.hpp"

namespace bowline::engine {

// test:///default, test:///path/to/node.xml, test+unix://...
bool is_test_driver(const std::string& uri);
// A libvirt on this host: after the scheme the URI has no host (qemu:///system,
// qemu+unix:///system).
bool is_local(const std::string& uri);

// Makes sure libvirt has bowline's filter as this bowline defines it.
// Throws libvirt::HypervisorError, its message saying what to do (node check's fix).
void ensure_traffic_filter(libvirt::Hypervisor& hypervisor);

// Each NIC on a libvirt network believes only that network's own DHCP server (when it has
// one), so that a lease from any other server never becomes an address the guest may use.
void add_dhcp_servers(plan::Plan& plan, libvirt::Hypervisor& hypervisor);

// The `nwfilter` check: the nwfilter driver answers and (for a
// libvirt on this host) ebtables runs. `ebtables` is the program to try.
Check check_traffic_filter(const NodeCheckContext& context, const std::string& ebtables);

// Whether this process may write nftables rules, as bowline's guard does: root, or
// CAP_NET_ADMIN in its effective set. A knot-style install (an ordinary user in the libvirt
// group) has neither.
bool may_manage_nftables();

// Whether the guard (engine/guest_guard.hpp) filters guests for this URI and setting (auto |
// guard | nwfilter): on this host's libvirt, unless nwfilter is asked for, or unless `auto`
// finds that bowline may not write nftables rules (`capable`), where libvirt's nwfilter
// (applied by libvirtd itself) filters instead.
bool guarded_by_bowline(const std::string& uri, const std::string& guest_filter,
                        bool capable = may_manage_nftables());
// Why `auto` chose libvirt's nwfilter for a libvirt on this host; empty when it did not.
std::string nwfilter_fallback_reason(const std::string& uri, const std::string& guest_filter,
                                     bool capable = may_manage_nftables());

// The check of whatever filters guests here: `nwfilter` (check_traffic_filter) or
// `guest-guard`: nft runs, the kernel takes a bridge table, and the server's table is there.
Check check_guest_filter(const NodeCheckContext& context, const NodeCheckOptions& options);

}  // namespace bowline::engine
