// Disks as objects: a user's disk by name, made from an image, blank, copied from a stopped
// space, a snapshot or another of the owner's disks; attached by the templates' `disks:` of that
// user's spaces, kept when those spaces go; counted against the owner's disk quota at its virtual
// size.
#include "engine/engine.hpp"
#include "engine/identifiers.hpp"
#include "spec/boot_disk.hpp"
#include "spec/quantity.hpp"
#include "spec/validators.hpp"
#include "util/host_paths.hpp"

namespace bowline::engine {

namespace {

std::string disk_names(const spec::Spec& spec) {
  std::string out;
  for (const auto& d : spec.disks) out += (out.empty() ? "" : ", ") + d.name;
  return out;
}

bool names_disk(const spec::Spec& spec, const std::string& name) {
  for (const auto& d : spec.disks)
    if (d.name == name) return true;
  return false;
}

}  // namespace

std::vector<std::string> Engine::resolve_disks(const store::Space& space, const spec::Spec& spec) {
  std::vector<std::string> files;
  if (spec.disks.empty()) return files;
  // On KubeVirt disks[i] is the DataVolume vm-disk-NAME in the cluster, not a disk object here.
  if (auto* node = find_node(space.node); node && !node->capabilities().supports(Capability::Disks))
    return files;
  if (!space.owner_id)
    throw EngineError(EngineError::Kind::Invalid,
                      "disks: names the owner's disks (" + disk_names(spec) +
                          "), and a pool's unclaimed member has no owner");
  for (std::size_t i = 0; i < spec.disks.size(); ++i) {
    const auto& name = spec.disks[i].name;
    const auto disk = disk_rows_.find(*space.owner_id, name);
    if (!disk) {
      const auto owner = store_.users().get(*space.owner_id);
      const auto who = owner ? owner->username : "the owner";
      throw EngineError(EngineError::Kind::NotFound,
                        "disks[" + std::to_string(i) + "]: " + who + " has no disk named " + name +
                            " (bowline disk create " + name + " --image IMAGE | --size SIZE)");
    }
    files.push_back(disk->path);
  }
  return files;
}

std::vector<store::Space> Engine::disk_users(std::int64_t owner_id, const std::string& name) {
  std::vector<store::Space> out;
  for (auto& space : store_.spaces().list_for_owner(owner_id)) {
    try {
      if (names_disk(space_spec(space), name)) out.push_back(std::move(space));
    } catch (const std::exception&) {  // a template that no longer expands names nothing now
    }
  }
  return out;
}

void Engine::check_disks_free(const store::Space& space, const spec::Spec& spec) {
  if (spec.disks.empty() || !space.owner_id) return;
  for (const auto& other : store_.spaces().list_for_owner(*space.owner_id)) {
    if (other.id == space.id || !store::holds_node_resources(other.state)) continue;
    spec::Spec theirs;
    try {
      theirs = space_spec(other);
    } catch (const std::exception&) {
      continue;
    }
    for (const auto& d : spec.disks)
      if (names_disk(theirs, d.name))
        throw EngineError(EngineError::Kind::Conflict,
                          "the disk " + d.name + " is in use by the running space " + other.name +
                              ": two running spaces never write one disk; stop " + other.name +
                              " first");
  }
}

void Engine::check_disk_quota(std::int64_t owner_id, std::uint64_t bytes) {
  const auto owner = store_.users().get(owner_id);
  if (!owner) throw EngineError(EngineError::Kind::NotFound, "no such user");
  const auto used = count_usage(store_.spaces().list_for_owner(owner_id), store_.templates(),
                                store_.users(), snapshot_rows_)[owner_id];
  Usage with_disks = used;
  for (const auto& d : disk_rows_.list_for_owner(owner_id)) with_disks.disk += d.size_bytes;
  with_disks.disk += download_rows_.bytes_of(owner_id);
  Usage asked{0, 0, 0, static_cast<std::int64_t>(bytes)};
  if (const auto why = quota_refusal(owner->username, with_disks, asked, limits_of(*owner)))
    throw EngineError(EngineError::Kind::Forbidden, *why);
}

std::filesystem::path Engine::boot_disk_of(const store::Space& space) {
  auto* node = find_node(space.node);
  if (!node || !disk_files_)
    throw EngineError(EngineError::Kind::Invalid,
                      "the space " + space.name + " has no disk file on this server");
  node->capabilities().require(Capability::Disks, node->name());
  const auto spec = space_spec(space);
  if (spec::boots_from_disk(spec)) return resolve_disks(space, spec).at(0);
  return disk_files_->space_disk(space.domain_name);
}

namespace {

void check_disk_sources(const CreateDiskRequest& request) {
  const int sources = (request.image ? 1 : 0) + (request.from_space ? 1 : 0) +
                      (request.from_disk ? 1 : 0) + (request.size_bytes && !request.image ? 1 : 0);
  if (sources != 1)
    throw EngineError(EngineError::Kind::Invalid,
                      "a disk is made from exactly one of --image IMAGE (optionally grown with "
                      "--size), --size SIZE, --from-space SPACE [--snapshot NAME] or --from-disk "
                      "DISK");
  if ((request.from_space || request.from_disk) && request.size_bytes)
    throw EngineError(EngineError::Kind::Invalid,
                      "--from-space and --from-disk copy a disk as it is: no --size");
  if (request.snapshot && !request.from_space)
    throw EngineError(EngineError::Kind::Invalid, "--snapshot names a snapshot of --from-space");
  if (request.image && request.image->kind == spec::ImageKind::Path && !request.may_name_paths)
    throw EngineError(EngineError::Kind::Invalid,
                      "image: a host path is not taken from users: name an image of the library "
                      "or an https:// URL, or copy one of your disks (--from-disk) or a space's "
                      "snapshot (--from-space SPACE --snapshot NAME)");
}

}  // namespace

std::shared_ptr<void> Engine::hold_disk_name(const store::User& owner, const std::string& name) {
  std::lock_guard lock(disks_mutex_);
  if (disk_rows_.find(owner.id, name) || disks_being_made_.count({owner.id, name}))
    throw EngineError(EngineError::Kind::Conflict,
                      owner.username + " already has a disk named " + name);
  disks_being_made_.emplace(owner.id, name);
  return std::shared_ptr<void>(this, [key = std::pair(owner.id, name)](Engine* engine) {
    std::lock_guard released(engine->disks_mutex_);
    engine->disks_being_made_.erase(key);
  });
}

store::Disk Engine::create_disk(const CreateDiskRequest& request) {
  if (!disk_files_)
    throw EngineError(EngineError::Kind::Invalid, "this server keeps no disks (no libvirt node)");
  if (auto problem = spec::check_dns_label(request.name); !problem.empty())
    throw EngineError(EngineError::Kind::Invalid, "disk name: " + problem);
  check_disk_sources(request);
  const auto owner = store_.users().get(request.owner_id);
  if (!owner) throw EngineError(EngineError::Kind::NotFound, "no such user");
  const auto held = hold_disk_name(*owner, request.name);
  const auto file = disk_files_->path_of(owner->id, request.name);
  // An image's download goes at its server's pace, which a user may choose: only the name is
  // held meanwhile, so that no one else's disks wait for it. A copy of a disk here is bounded
  // and keeps the lock (its source is not deleted underneath).
  std::unique_lock lock(disks_mutex_, std::defer_lock);
  if (!request.image) lock.lock();
  const auto [size, source] = make_disk_file(*owner, file, request);
  if (!lock.owns_lock()) lock.lock();
  try {
    // The image's own size is known once it is there: checked again with the real figure.
    check_disk_quota(owner->id, size);
    return disk_rows_.create(owner->id, request.name, file.string(),
                             static_cast<std::int64_t>(size), source);
  } catch (...) {
    disk_files_->remove(file);  // a failed create leaves nothing
    throw;
  }
}

// The file of a new disk, from what the request names; its virtual size and where it came
// from, in words for `disk info`.
std::pair<std::uint64_t, std::string> Engine::make_disk_file(const store::User& owner,
                                                             const std::filesystem::path& file,
                                                             const CreateDiskRequest& request) {
  if (request.from_space) {
    const auto space = require(*request.from_space);
    if (request.snapshot) {
      if (!snapshot_rows_.find(space.id, *request.snapshot))
        throw EngineError(EngineError::Kind::NotFound,
                          "the space " + space.name + " has no snapshot " + *request.snapshot);
      const auto from = boot_disk_of(space);
      check_disk_quota(owner.id, disk_files_->virtual_size(from));
      return {disk_files_->make_at_snapshot(file, from, *request.snapshot),
              "snapshot " + *request.snapshot + " of space " + space.name};
    }
    if (space.state != store::SpaceState::Stopped)
      throw EngineError(EngineError::Kind::Conflict,
                        "the space " + space.name + " is " + store::to_string(space.state) +
                            ": --from-space copies a stopped space's disk (bowline space stop " +
                            space.name + "), or one of its snapshots (--snapshot NAME)");
    const auto from = boot_disk_of(space);
    check_disk_quota(owner.id, disk_files_->virtual_size(from));
    return {disk_files_->make_copy(file, from), "space " + space.name};
  }
  if (request.from_disk) {
    const auto other = disk_rows_.find(owner.id, *request.from_disk);
    if (!other)
      throw EngineError(EngineError::Kind::NotFound,
                        owner.username + " has no disk named " + *request.from_disk);
    check_disk_quota(owner.id, static_cast<std::uint64_t>(other->size_bytes));
    return {disk_files_->make_copy(file, other->path), "disk " + other->name};
  }
  if (request.image) {
    if (request.size_bytes) check_disk_quota(owner.id, *request.size_bytes);
    try {
      // Said without the host's directories: a path is an admin's file, named by its name.
      const auto& ref = request.image->reference;
      const bool was_here = disk_files_->images().local_file(*request.image).has_value();
      const auto size = disk_files_->make_from_image(file, *request.image, request.size_bytes);
      charge_download(owner.id, *request.image, was_here);
      return {size, request.image->kind == spec::ImageKind::Path
                        ? "image file " + std::filesystem::path(ref).filename().string()
                        : "image " + ref};
    } catch (const image::ImageError& e) {
      throw EngineError(EngineError::Kind::Invalid, std::string("image: ") + e.what());
    } catch (const image::DiskError& e) {
      // The image is there but cannot back a disk (not qcow2, backed by another file).
      throw EngineError(EngineError::Kind::Invalid,
                        "image: it cannot back a disk: " + util::redact_host_paths(e.what()));
    }
  }
  check_disk_quota(owner.id, *request.size_bytes);
  return {disk_files_->make_blank(file, *request.size_bytes),
          "size " + spec::format_binary_size(*request.size_bytes)};
}

store::Disk Engine::adopt_disk(std::int64_t owner_id, const std::string& name,
                               const std::filesystem::path& staged, const std::string& source) {
  if (!disk_files_)
    throw EngineError(EngineError::Kind::Invalid, "this server keeps no disks (no libvirt node)");
  if (auto problem = spec::check_dns_label(name); !problem.empty())
    throw EngineError(EngineError::Kind::Invalid, "disk name: " + problem);
  const auto owner = store_.users().get(owner_id);
  if (!owner) throw EngineError(EngineError::Kind::NotFound, "no such user");
  const auto held = hold_disk_name(*owner, name);
  std::lock_guard lock(disks_mutex_);
  check_disk_quota(owner_id, disk_files_->virtual_size(staged));
  const auto file = disk_files_->path_of(owner_id, name);
  const auto size = disk_files_->adopt(file, staged);
  try {
    return disk_rows_.create(owner_id, name, file.string(), static_cast<std::int64_t>(size),
                             source);
  } catch (...) {
    disk_files_->remove(file);
    throw;
  }
}

DiskView Engine::view_of(const store::Disk& disk) {
  DiskView view{disk, {}, disk_users(disk.owner_id, disk.name)};
  if (const auto owner = store_.users().get(disk.owner_id)) view.owner = owner->username;
  return view;
}

std::vector<DiskView> Engine::list_disks(std::optional<std::int64_t> owner_id) {
  std::vector<DiskView> out;
  for (const auto& disk : owner_id ? disk_rows_.list_for_owner(*owner_id) : disk_rows_.list())
    out.push_back(view_of(disk));
  return out;
}

DiskView Engine::disk_info(std::int64_t owner_id, const std::string& name) {
  const auto disk = disk_rows_.find(owner_id, name);
  if (!disk) throw EngineError(EngineError::Kind::NotFound, "no disk named " + name);
  return view_of(*disk);
}

void Engine::delete_disk(std::int64_t owner_id, const std::string& name) {
  std::lock_guard lock(disks_mutex_);
  const auto disk = disk_rows_.find(owner_id, name);
  if (!disk) throw EngineError(EngineError::Kind::NotFound, "no disk named " + name);
  // A running space writes it; a stopped one would fail at its next start. Either way the
  // space is named, and deleting the space (which keeps the disk) frees it.
  if (const auto users = disk_users(owner_id, name); !users.empty()) {
    const auto& space = users.front();
    throw EngineError(EngineError::Kind::Conflict,
                      "the disk " + name + " is attached to the " +
                          (store::holds_node_resources(space.state) ? "running" : "stopped") +
                          " space " + space.name +
                          " (its template's disks:): delete that space "
                          "first (its named disks are kept)");
  }
  if (disk_files_) disk_files_->remove(disk->path);
  disk_rows_.remove(disk->id);
}

}  // namespace bowline::engine
