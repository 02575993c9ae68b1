// Internal to src/libvirt: owning handles for libvirt objects and libvirt's last error as a
// HypervisorError. Not for use outside this folder (it pulls in the libvirt C headers).
#pragma once

#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "libvirt/hypervisor.hpp"
#include "util/byte_stream.hpp"

namespace bowline::libvirt::detail {

struct ConnectClose {
  void operator()(virConnectPtr p) const noexcept { virConnectClose(p); }
};
struct DomainFree {
  void operator()(virDomainPtr p) const noexcept { virDomainFree(p); }
};
struct NetworkFree {
  void operator()(virNetworkPtr p) const noexcept { virNetworkFree(p); }
};
struct NWFilterFree {
  void operator()(virNWFilterPtr p) const noexcept { virNWFilterFree(p); }
};
struct NodeDeviceFree {
  void operator()(virNodeDevicePtr p) const noexcept { virNodeDeviceFree(p); }
};
struct StreamFree {
  void operator()(virStreamPtr p) const noexcept { virStreamFree(p); }
};
struct MallocFree {
  void operator()(void* p) const noexcept { std::free(p); }
};

using Connection = std::unique_ptr<virConnect, ConnectClose>;  // one reference
using Domain = std::unique_ptr<virDomain, DomainFree>;
using Network = std::unique_ptr<virNetwork, NetworkFree>;
using NWFilter = std::unique_ptr<virNWFilter, NWFilterFree>;
using NodeDev = std::unique_ptr<virNodeDevice, NodeDeviceFree>;
using Stream = std::unique_ptr<virStream, StreamFree>;
using CString = std::unique_ptr<char, MallocFree>;  // strings libvirt hands over to us

// libvirt's last error on this thread as `<subject>: cannot <action>: <libvirt's message>`;
// resets it.
HypervisorError last_error(std::string_view subject, std::string_view action);

// `domain "alice-dev"`
std::string domain_subject(std::string_view name);

// Our DomainState for libvirt's virDomainState.
DomainState domain_state(int state);

// Every running domain's statistics on `connection` in one virConnectGetAllDomainStats call
// (libvirt_stats.cpp); `uri` names the host in errors.
std::vector<DomainStats> read_all_domain_stats(virConnectPtr connection, const std::string& uri);

// A domain's serial console over a non-blocking libvirt stream (virDomainOpenConsole has
// already been called on it). Bytes arrive through a stream callback on the event loop.
// `connection` is the stream's: the console ends when it dies, which no stream event reports.
std::unique_ptr<util::ByteStream> make_console_stream(Stream stream, Connection connection,
                                                      std::string subject);

struct SnapshotFree {
  void operator()(virDomainSnapshotPtr p) const noexcept { virDomainSnapshotFree(p); }
};
using Snapshot = std::unique_ptr<virDomainSnapshot, SnapshotFree>;

// The guest agent's calls (libvirt_agent.cpp): each bounded by `timeout`; `name` is the
// domain's, for errors.
unsigned freeze_filesystems(virDomainPtr domain, const std::string& name,
                            std::chrono::seconds timeout);
void thaw_filesystems(virDomainPtr domain, const std::string& name, std::chrono::seconds timeout);
std::string agent_command(virDomainPtr domain, const std::string& name, const std::string& json,
                          std::chrono::seconds timeout);

// The domain of that name on `connection`; throws last_error naming `action`.
Domain find_domain(virConnectPtr connection, const std::string& name, std::string_view action);

// Snapshots of `domain` (libvirt_snapshots.cpp); `name` is the domain's, for errors.
SnapshotInfo create_snapshot(virDomainPtr domain, const std::string& name,
                             const std::string& snapshot, const std::string& description);
std::vector<SnapshotInfo> list_snapshots(virDomainPtr domain, const std::string& name);
void revert_snapshot(virDomainPtr domain, const std::string& name, const std::string& snapshot,
                     bool paused);
bool delete_snapshot(virDomainPtr domain, const std::string& name, const std::string& snapshot);

}  // namespace bowline::libvirt::detail
