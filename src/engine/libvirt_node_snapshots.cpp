// Snapshots and clones' disks on a libvirt node: internal qcow2 snapshots through libvirt's
// snapshot API. libvirt takes a running domain's internal snapshot with its memory, always (it
// refuses one without); a snapshot asked for without --memory is therefore taken with the
// guest's filesystems frozen, and restored with its disks alone: reverted paused, then the
// machine is turned off, so the guest boots from disks that were consistent.
#include <sys/stat.h>
#include <sys/statvfs.h>

#include <algorithm>

#include <pugixml.hpp>

#include "engine/engine_error.hpp"
#include "engine/libvirt_node.hpp"

namespace bowline::engine {

namespace fs = std::filesystem;

namespace {

struct DomainDisks {
  std::vector<std::string> files;  // writable disk files, boot disk first
  bool pflash = false;             // UEFI variables in a pflash device
};

DomainDisks disks_of(const std::string& xml) {
  DomainDisks out;
  pugi::xml_document doc;
  if (!doc.load_string(xml.c_str())) return out;
  const auto domain = doc.child("domain");
  out.pflash =
      std::string(domain.child("os").child("loader").attribute("type").value()) == "pflash";
  for (const auto& disk : domain.child("devices").children("disk")) {
    if (std::string(disk.attribute("device").value()) != "disk" || disk.child("readonly")) continue;
    const std::string file = disk.child("source").attribute("file").value();
    if (!file.empty()) out.files.push_back(file);
  }
  return out;
}

// What the file takes on its filesystem (a qcow2's snapshots live inside it).
// QEMU says only "Error while writing VM state: Input/output error" when the disk's file system
// is full: the failure names the file system's free space when it has almost none left.
std::string room_note(const std::vector<std::string>& files) {
  constexpr std::uint64_t kLow = 64ull << 20;
  if (files.empty()) return "";
  const auto dir = fs::path(files.front()).parent_path();
  struct statvfs st {};
  if (statvfs(dir.c_str(), &st) != 0) return "";
  const auto free = static_cast<std::uint64_t>(st.f_bavail) * st.f_frsize;
  if (free >= kLow) return "";
  return " (no space left on device: the file system of " + dir.string() + " has " +
         std::to_string(free >> 20) + " MiB free)";
}

std::int64_t allocated(const std::string& file) {
  struct stat st {};
  if (::stat(file.c_str(), &st) != 0) return 0;
  return static_cast<std::int64_t>(st.st_blocks) * 512;
}

EngineError never_started(const store::Space& space) {
  return EngineError(EngineError::Kind::Conflict,
                     "the space " + space.name + " has never started: it has no disk yet");
}

}  // namespace

SnapshotTaken LibvirtNode::take_snapshot(const store::Space& space, const std::string& name,
                                         bool memory) {
  const auto domain = own_domain(space);
  const auto info = hypervisor_.lookup(domain);
  if (!info) throw never_started(space);
  SnapshotTaken taken;
  taken.running = info->status.state == libvirt::DomainState::Running ||
                  info->status.state == libvirt::DomainState::Paused;
  if (memory && !taken.running)
    throw EngineError(
        EngineError::Kind::Conflict,
        "--memory keeps a running guest's state: the space " + space.name + " is not running");
  const auto disks = disks_of(hypervisor_.domain_xml(domain, !taken.running));
  if (taken.running && disks.pflash)
    throw EngineError(EngineError::Kind::Conflict,
                      "QEMU cannot snapshot a running UEFI guest (its firmware variables are not "
                      "in qcow2): stop the space " +
                          space.name + " and take the snapshot then");
  taken.memory = memory;
  // One snapshot of a domain at a time (a clone's and its owner's): a second freeze would be
  // undone by the first one's thaw halfway through the second snapshot.
  const auto mutex = snapshot_lock(domain);
  std::lock_guard one_at_a_time(*mutex);
  Freeze freeze;
  if (taken.running && !memory) {
    freeze = freeze_guest(domain);
    taken.best_effort = !freeze.frozen;
    taken.best_effort_reason = freeze.why_not;
  }
  try {
    hypervisor_.create_snapshot(domain, name,
                                memory ? "bowline: disks and memory" : "bowline: disks");
  } catch (const std::exception& e) {
    if (freeze.frozen) thaw_guest(domain);
    if (const auto note = room_note(disks.files); !note.empty())
      throw std::runtime_error(e.what() + note);
    throw;
  } catch (...) {
    if (freeze.frozen) thaw_guest(domain);
    throw;
  }
  // The snapshot is there and consistent: a thaw that fails does not undo it, it is told.
  if (freeze.frozen)
    if (const auto why = thaw_guest(domain))
      taken.warning = "the guest's filesystems could not be thawed after the snapshot (" + *why +
                      "): they stay frozen until the guest agent answers a thaw, or the space "
                      "restarts";
  for (const auto& file : disks.files) taken.size_bytes += allocated(file);
  return taken;
}

// Bounded by the hypervisor's wait for the agent (LibvirtOptions::agent_timeout): a guest
// whose agent never answers costs the snapshot that long, then it is taken best effort.
LibvirtNode::Freeze LibvirtNode::freeze_guest(const std::string& domain) {
  try {
    if (hypervisor_.freeze_filesystems(domain) > 0) return {true, ""};
    return {false, "the guest agent froze no filesystem"};
  } catch (const libvirt::HypervisorError& e) {
    std::string why = "the guest's filesystems could not be frozen: " + e.cause();
    // A freeze that timed out may still be done in the guest later: thawed at once, so the
    // guest is never left frozen by a snapshot taken without it.
    if (const auto thaw = thaw_guest(domain); thaw && *thaw != e.cause())
      why += "; the thaw after it failed too: " + *thaw;
    return {false, why};
  }
}

// Why the thaw failed; nullopt when it did not.
std::optional<std::string> LibvirtNode::thaw_guest(const std::string& domain) {
  try {
    hypervisor_.thaw_filesystems(domain);
    return std::nullopt;
  } catch (const libvirt::HypervisorError& e) {
    return e.cause().empty() ? std::string(e.what()) : e.cause();
  }
}

std::shared_ptr<std::mutex> LibvirtNode::snapshot_lock(const std::string& domain) {
  std::lock_guard lock(snapshot_locks_mutex_);
  auto& mutex = snapshot_locks_[domain];
  if (!mutex) mutex = std::make_shared<std::mutex>();
  return mutex;
}

Observation LibvirtNode::restore_snapshot(const store::Space& space, const std::string& name,
                                          bool resume) {
  const auto domain = own_domain(space);
  const auto found = hypervisor_.snapshots(domain);
  const auto it = std::find_if(found.begin(), found.end(),
                               [&](const libvirt::SnapshotInfo& s) { return s.name == name; });
  if (it == found.end())
    throw EngineError(EngineError::Kind::NotFound,
                      "libvirt has no snapshot " + name + " of the domain " + domain);
  // Pulled, not shut down: the restore discards whatever the guest would save, and a guest
  // shutting down releases its DHCP lease, which a resumed memory snapshot still holds.
  if (const auto info = hypervisor_.lookup(domain);
      info && info->status.state != libvirt::DomainState::Shutoff)
    hypervisor_.destroy(domain);
  const bool comes_back_running = it->state != libvirt::DomainState::Shutoff;
  if (comes_back_running && resume) ensure_guarded(domain);
  hypervisor_.revert_snapshot(domain, name, comes_back_running && !resume);
  if (comes_back_running && resume) return {MachineState::Running, ""};
  // Reverted paused (or shut off): the disks are the snapshot's; the machine stays off.
  if (comes_back_running) hypervisor_.destroy(domain);
  return {MachineState::Stopped, ""};
}

void LibvirtNode::delete_snapshot(const store::Space& space, const std::string& name) {
  const auto domain = own_domain(space);
  if (hypervisor_.lookup(domain)) hypervisor_.delete_snapshot(domain, name);
}

void LibvirtNode::delete_snapshots_named(const store::Space& space, std::string_view prefix) {
  if (!hypervisor_.lookup(space.domain_name)) return;
  for (const auto& s : hypervisor_.snapshots(own_domain(space)))
    if (s.name.starts_with(prefix)) hypervisor_.delete_snapshot(space.domain_name, s.name);
}

void LibvirtNode::wait_for_jobs(const store::Space& space) {
  const auto deadline = timer_.now() + std::chrono::minutes(10);
  while (hypervisor_.job_active(space.domain_name) && timer_.now() < deadline)
    timer_.sleep_for(std::chrono::milliseconds(500));
}

std::optional<std::vector<std::string>> LibvirtNode::snapshot_names(const store::Space& space) {
  if (!hypervisor_.lookup(space.domain_name)) return std::nullopt;
  // A snapshot that was being taken is listed only once libvirt has finished it.
  wait_for_jobs(space);
  std::vector<std::string> names;
  for (const auto& s : hypervisor_.snapshots(own_domain(space))) names.push_back(s.name);
  return names;
}

void LibvirtNode::delete_all_snapshots(const std::string& domain) {
  std::vector<libvirt::SnapshotInfo> found;
  try {
    found = hypervisor_.snapshots(domain);
  } catch (const libvirt::HypervisorError&) {
    return;  // no domain, or a driver without snapshots: nothing to remove
  }
  // Newest first: each deletion then merges into nothing.
  for (auto it = found.rbegin(); it != found.rend(); ++it)
    hypervisor_.delete_snapshot(domain, it->name);
}

void LibvirtNode::copy_disk_at(const store::Space& space, const std::string& name,
                               const fs::path& target, bool full) {
  const auto domain = own_domain(space);
  if (!hypervisor_.lookup(domain)) throw never_started(space);
  const auto disks = disks_of(hypervisor_.domain_xml(domain, true));
  if (disks.files.empty())
    throw EngineError(EngineError::Kind::Conflict, "the space " + space.name + " has no disk");
  const auto& boot = disks.files.front();
  std::optional<fs::path> base;
  if (!full)
    if (const auto backing = disks_.info(boot).backing_file; backing && !backing->empty())
      base = fs::path(*backing);
  const auto part = fs::path(target.string() + ".part");
  std::error_code ec;
  fs::remove(part, ec);
  disks_.copy_at_snapshot(boot, name, part, base, std::chrono::hours(2));
  fs::permissions(part, fs::perms::owner_read | fs::perms::owner_write, fs::perm_options::replace,
                  ec);
  fs::rename(part, target, ec);
  if (ec) {
    fs::remove(part, ec);
    throw std::runtime_error("cannot move the clone's disk into " + target.string());
  }
}

}  // namespace bowline::engine
