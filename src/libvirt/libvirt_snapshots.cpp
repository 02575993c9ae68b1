// Internal qcow2 snapshots through libvirt's snapshot API: the snapshot's XML is made with
// pugixml (names and descriptions are escaped), and libvirt's own XML is read back the same way.
// Also LibvirtHypervisor's calls that keep a domain's state: snapshots, freezing and thawing the
// guest's filesystems around one, and the managed save of a domain's memory.
#include <pugixml.hpp>

#include <algorithm>
#include <cstdlib>
#include <sstream>

#include "libvirt/libvirt_connection.hpp"
#include "libvirt/libvirt_handles.hpp"
#include "libvirt/libvirt_hypervisor.hpp"

namespace bowline::libvirt::detail {

namespace {

std::string snapshot_subject(const std::string& domain, const std::string& snapshot) {
  return domain_subject(domain) + " snapshot \"" + snapshot + "\"";
}

SnapshotInfo parse_snapshot(const char* xml) {
  pugi::xml_document doc;
  SnapshotInfo info;
  if (!doc.load_string(xml)) return info;
  const auto root = doc.child("domainsnapshot");
  info.name = root.child_value("name");
  info.description = root.child_value("description");
  const std::string state = root.child_value("state");
  info.state = state == "shutoff"   ? DomainState::Shutoff
               : state == "running" ? DomainState::Running
               : state == "paused"  ? DomainState::Paused
                                    : DomainState::Unknown;
  const std::string memory = root.child("memory").attribute("snapshot").value();
  // Older drivers write no <memory>: a running snapshot holds the memory.
  info.memory = memory.empty() ? info.state != DomainState::Shutoff : memory != "no";
  info.created_at = std::strtoll(root.child_value("creationTime"), nullptr, 10);
  return info;
}

SnapshotInfo info_of(virDomainSnapshotPtr snapshot, const std::string& domain,
                     const std::string& name) {
  const CString xml(virDomainSnapshotGetXMLDesc(snapshot, 0));
  if (!xml) throw last_error(snapshot_subject(domain, name), "read");
  return parse_snapshot(xml.get());
}

Snapshot find_snapshot(virDomainPtr domain, const std::string& name, const std::string& snapshot,
                       std::string_view action) {
  virDomainSnapshotPtr raw = virDomainSnapshotLookupByName(domain, snapshot.c_str(), 0);
  if (!raw) throw last_error(snapshot_subject(name, snapshot), action);
  return Snapshot(raw);
}

}  // namespace

SnapshotInfo create_snapshot(virDomainPtr domain, const std::string& name,
                             const std::string& snapshot, const std::string& description) {
  pugi::xml_document doc;
  auto root = doc.append_child("domainsnapshot");
  root.append_child("name").text().set(snapshot.c_str());
  if (!description.empty()) root.append_child("description").text().set(description.c_str());
  std::ostringstream xml;
  doc.save(xml, "", pugi::format_raw | pugi::format_no_declaration);
  // Atomic: libvirt removes what it made when a disk's snapshot fails.
  virDomainSnapshotPtr raw =
      virDomainSnapshotCreateXML(domain, xml.str().c_str(), VIR_DOMAIN_SNAPSHOT_CREATE_ATOMIC);
  if (!raw) {
    auto error = last_error(snapshot_subject(name, snapshot), "take");
    if (error.code() != VIR_ERR_INVALID_ARG ||
        error.cause().find("unsupported flags") == std::string::npos)
      throw error;
    raw = virDomainSnapshotCreateXML(domain, xml.str().c_str(), 0);  // the test driver
    if (!raw) throw last_error(snapshot_subject(name, snapshot), "take");
  }
  const Snapshot made(raw);
  return info_of(made.get(), name, snapshot);
}

std::vector<SnapshotInfo> list_snapshots(virDomainPtr domain, const std::string& name) {
  virDomainSnapshotPtr* raw = nullptr;
  const int n = virDomainListAllSnapshots(domain, &raw, 0);
  if (n < 0) throw last_error(domain_subject(name), "list snapshots");
  std::vector<Snapshot> owned;
  for (int i = 0; i < n; ++i) owned.emplace_back(raw[i]);
  std::free(raw);
  std::vector<SnapshotInfo> out;
  for (auto& s : owned) {
    const char* snapshot = virDomainSnapshotGetName(s.get());
    out.push_back(info_of(s.get(), name, snapshot ? snapshot : ""));
  }
  std::stable_sort(out.begin(), out.end(), [](const SnapshotInfo& a, const SnapshotInfo& b) {
    return a.created_at < b.created_at;
  });
  return out;
}

void revert_snapshot(virDomainPtr domain, const std::string& name, const std::string& snapshot,
                     bool paused) {
  const auto s = find_snapshot(domain, name, snapshot, "revert to");
  const unsigned int flags = paused ? VIR_DOMAIN_SNAPSHOT_REVERT_PAUSED : 0;
  if (virDomainRevertToSnapshot(s.get(), flags) < 0)
    throw last_error(snapshot_subject(name, snapshot), "revert to");
}

bool delete_snapshot(virDomainPtr domain, const std::string& name, const std::string& snapshot) {
  virDomainSnapshotPtr raw = virDomainSnapshotLookupByName(domain, snapshot.c_str(), 0);
  if (!raw) {
    auto error = last_error(snapshot_subject(name, snapshot), "delete");
    if (error.code() == VIR_ERR_NO_DOMAIN_SNAPSHOT) return false;
    throw error;
  }
  const Snapshot s(raw);
  if (virDomainSnapshotDelete(s.get(), 0) < 0)
    throw last_error(snapshot_subject(name, snapshot), "delete");
  return true;
}

}  // namespace bowline::libvirt::detail

namespace bowline::libvirt {

using namespace detail;

// ---- LibvirtHypervisor -------------------------------------------------------------------

SnapshotInfo LibvirtHypervisor::create_snapshot(const std::string& domain, const std::string& name,
                                                const std::string& description) {
  const auto connection = impl_->connection();
  const auto d = find_domain(connection.get(), domain, "take a snapshot");
  return detail::create_snapshot(d.get(), domain, name, description);
}

std::vector<SnapshotInfo> LibvirtHypervisor::snapshots(const std::string& domain) {
  const auto connection = impl_->connection();
  const auto d = find_domain(connection.get(), domain, "list snapshots");
  return detail::list_snapshots(d.get(), domain);
}

bool LibvirtHypervisor::job_active(const std::string& domain) {
  const auto connection = impl_->connection();
  virDomainPtr d = virDomainLookupByName(connection.get(), domain.c_str());
  if (!d) {
    virResetLastError();
    return false;
  }
  virDomainJobInfo info{};
  const bool active = virDomainGetJobInfo(d, &info) == 0 && info.type != VIR_DOMAIN_JOB_NONE;
  virResetLastError();  // a shut-off domain has no job to report: not an error here
  virDomainFree(d);
  return active;
}

void LibvirtHypervisor::revert_snapshot(const std::string& domain, const std::string& name,
                                        bool paused) {
  const auto connection = impl_->connection();
  const auto d = find_domain(connection.get(), domain, "revert to a snapshot");
  detail::revert_snapshot(d.get(), domain, name, paused);
}

bool LibvirtHypervisor::delete_snapshot(const std::string& domain, const std::string& name) {
  const auto connection = impl_->connection();
  const auto d = find_domain(connection.get(), domain, "delete a snapshot");
  return detail::delete_snapshot(d.get(), domain, name);
}

unsigned LibvirtHypervisor::freeze_filesystems(const std::string& domain) {
  const auto connection = impl_->agent_connection();
  const auto d = find_domain(connection.get(), domain, "freeze the guest's filesystems");
  return detail::freeze_filesystems(d.get(), domain, impl_->options().agent_timeout);
}

void LibvirtHypervisor::thaw_filesystems(const std::string& domain) {
  const auto connection = impl_->agent_connection();
  const auto d = find_domain(connection.get(), domain, "thaw the guest's filesystems");
  detail::thaw_filesystems(d.get(), domain, impl_->options().agent_timeout);
}

void LibvirtHypervisor::managed_save(const std::string& name) {
  const auto connection = impl_->connection();
  const auto d = find_domain(connection.get(), name, "save its state");
  if (virDomainManagedSave(d.get(), 0) < 0)
    throw last_error(domain_subject(name), "save its state");
}

bool LibvirtHypervisor::has_managed_save(const std::string& name) {
  const auto connection = impl_->connection();
  const auto d = find_domain(connection.get(), name, "look for a saved state");
  const int has = virDomainHasManagedSaveImage(d.get(), 0);
  if (has < 0) throw last_error(domain_subject(name), "look for a saved state");
  return has == 1;
}

bool LibvirtHypervisor::remove_managed_save(const std::string& name) {
  const auto connection = impl_->connection();
  const auto d = find_domain(connection.get(), name, "remove its saved state");
  const int has = virDomainHasManagedSaveImage(d.get(), 0);
  if (has < 0) throw last_error(domain_subject(name), "look for a saved state");
  if (has == 0) return false;
  if (virDomainManagedSaveRemove(d.get(), 0) < 0)
    throw last_error(domain_subject(name), "remove its saved state");
  return true;
}

}  // namespace bowline::libvirt
