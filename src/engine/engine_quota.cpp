// The engine's side of quotas (quota.hpp): what each owner holds, from their spaces' specs,
// and the check a create or a claim runs inside the transaction that writes the space.
#include <algorithm>

#include "engine/engine.hpp"

namespace bowline::engine {
namespace {

// Disks, snapshots and downloads as committed, on the store's reader: what a request shows of
// a user's use (whoami, user info) never waits for an engine transaction on the writer.
store::DiskRepository& read_disks_of(store::Store& store) {
  return store.read_disks();
}
store::SnapshotRepository& read_snapshots_of(store::Store& store) {
  return store.read_snapshots();
}
store::DownloadRepository& read_downloads_of(store::Store& store) {
  return store.read_downloads();
}

}  // namespace

// The server's default quotas are for users; an admin is held only to a quota of their own.
Limits Engine::limits_of(const store::User& user) const {
  return effective_limits(
      user.quota, user.has(store::Permission::Admin) ? store::Quota{} : settings_.default_quota);
}

std::map<std::int64_t, Usage> Engine::count_usage(const std::vector<store::Space>& spaces,
                                                  store::TemplateRepository& templates,
                                                  store::UserRepository& users,
                                                  store::SnapshotRepository& snapshots) {
  // Snapshots count what their disks held when they were taken.
  std::map<std::string, std::int64_t> kept;
  for (const auto& s : snapshots.list()) kept[s.space_id] += s.size_bytes;
  std::map<std::int64_t, std::optional<store::Template>> tmpls;
  std::map<std::int64_t, std::optional<store::User>> owners;
  std::map<std::int64_t, Usage> out;
  for (const auto& space : spaces) {
    if (!space.owner_id) continue;  // an unclaimed pool member is nobody's
    auto t = tmpls.find(space.template_id);
    if (t == tmpls.end())
      t = tmpls.emplace(space.template_id, templates.get(space.template_id)).first;
    auto o = owners.find(*space.owner_id);
    if (o == owners.end()) o = owners.emplace(*space.owner_id, users.get(*space.owner_id)).first;
    // A space whose template is gone or no longer expands still holds its place and its disk:
    // it counts as a space, with no size (it cannot start until its template is fixed).
    Usage usage{1, 0, 0, 0};
    if (t->second) {
      const auto key = UsageMemo::key(space, *t->second, o->second);
      if (const auto known = usage_memo_.find(key)) {
        usage = *known;
      } else {
        try {
          usage = usage_of(expand_spec(space, *t->second, o->second));
        } catch (const std::exception&) {
        }
        usage_memo_.put(key, usage);
      }
    }
    // Without a size in its template a space's disk is its image's size, known once made.
    usage.disk = std::max(usage.disk, space.disk_bytes);
    if (const auto k = kept.find(space.id); k != kept.end()) usage.disk += k->second;
    out[*space.owner_id] += usage;
  }
  return out;
}

// Disk objects count at their virtual size, whatever uses them.
Usage Engine::usage_of_owner(std::int64_t owner_id) {
  auto& snapshots = read_snapshots_of(store_);
  auto usage = count_usage(store_.read_spaces().list_for_owner(owner_id), store_.read_templates(),
                           store_.read_users(), snapshots)[owner_id];
  for (const auto& d : read_disks_of(store_).list_for_owner(owner_id)) usage.disk += d.size_bytes;
  usage.disk += read_downloads_of(store_).bytes_of(owner_id);
  return usage;
}

std::map<std::int64_t, Usage> Engine::usage_by_owner() {
  auto& snapshots = read_snapshots_of(store_);
  auto out = count_usage(store_.read_spaces().list(), store_.read_templates(), store_.read_users(),
                         snapshots);
  for (const auto& d : read_disks_of(store_).list()) out[d.owner_id].disk += d.size_bytes;
  for (const auto& [user, bytes] : read_downloads_of(store_).bytes_by_user())
    out[user].disk += bytes;
  return out;
}

void Engine::record_disk_size(const store::Space& space) {
  auto* node = find_node(space.node);
  if (!disk_files_ || !node || !node->capabilities().supports(Capability::Disks)) return;
  try {
    const auto bytes = disk_files_->header_virtual_size(boot_disk_of(space));
    if (bytes && static_cast<std::int64_t>(*bytes) != space.disk_bytes)
      store_.spaces().set_disk_bytes(space.id, static_cast<std::int64_t>(*bytes));
  } catch (const std::exception&) {
    // Counted by its template's size until the next start records it.
  }
}

// The first user whose create or disk made `image` download carries it (store/downloads.hpp).
void Engine::charge_download(const std::optional<std::int64_t>& owner, const spec::Image& image,
                             bool was_here) {
  if (!owner || was_here || !disk_files_ || image.kind != spec::ImageKind::Url) return;
  const auto file = disk_files_->images().local_file(image);
  if (!file) return;
  std::error_code ec;
  const auto bytes = std::filesystem::file_size(*file, ec);
  if (!ec)
    download_rows_.charge(file->string(), image.reference, static_cast<std::int64_t>(bytes),
                          *owner);
}

std::uint64_t Engine::disk_room(std::int64_t owner_id) {
  const auto owner = store_.read_users().get(owner_id);
  if (!owner) throw EngineError(EngineError::Kind::NotFound, "no such user");
  const auto limit = limits_of(*owner).disk.value;
  if (!limit) return UINT64_MAX;
  const auto used = usage_of_owner(owner_id).disk;
  return *limit > used ? static_cast<std::uint64_t>(*limit - used) : 0;
}

void Engine::check_quota(std::int64_t owner_id, const std::string& space_id,
                         const spec::Spec& spec) {
  // Read here, in the caller's transaction: a quota set a moment ago counts, and so does a
  // space another create wrote just before.
  const auto owner = store_.users().get(owner_id);
  if (!owner) throw EngineError(EngineError::Kind::NotFound, "no such user");
  // No limit at all (an admin, or quotas switched off): nothing to count against.
  const auto limits = limits_of(*owner);
  if (!limits.spaces.value && !limits.cpus.value && !limits.memory.value && !limits.disk.value)
    return;
  auto others = store_.spaces().list_for_owner(owner_id);
  std::erase_if(others, [&](const store::Space& s) { return s.id == space_id; });
  auto used = count_usage(others, store_.templates(), store_.users(), snapshot_rows_)[owner_id];
  for (const auto& d : disk_rows_.list_for_owner(owner_id)) used.disk += d.size_bytes;
  used.disk += download_rows_.bytes_of(owner_id);
  auto asked = usage_of(spec);
  if (!spec.disk_bytes && disk_files_)
    asked.disk = std::max<std::int64_t>(asked.disk, disk_files_->image_size_hint(spec.image));
  if (const auto why = quota_refusal(owner->username, used, asked, limits))
    throw EngineError(EngineError::Kind::Forbidden, *why);
}

}  // namespace bowline::engine
