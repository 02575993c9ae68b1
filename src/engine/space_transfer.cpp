// Export and import: what a stopped space's archive says of it, and a new space made
// from a checked archive, with a new identity or the archived one (--keep-identity).
#include <nlohmann/json.hpp>

#include "engine/engine.hpp"
#include "engine/host_keys.hpp"
#include "engine/identifiers.hpp"
#include "engine/space_archive.hpp"
#include "plan/plan.hpp"
#include "spec/boot_disk.hpp"
#include "util/strings.hpp"

namespace bowline::engine {

namespace fs = std::filesystem;

ExportSource Engine::export_source(const std::string& space_id) {
  const auto space = require(space_id);
  auto& node = node_of(space);
  node.capabilities().require(Capability::Export, node.name());
  // A running guest keeps writing its disk: what a reader sees would be no point in time.
  if (space.state != store::SpaceState::Stopped)
    throw EngineError(EngineError::Kind::Conflict,
                      "the space " + space.name + " is " + store::to_string(space.state) +
                          ": export reads a stopped space's disk, so that it does not change "
                          "underneath (bowline space stop " +
                          space.name + ")");
  const auto disk = boot_disk_of(space);
  std::error_code ec;
  if (!fs::exists(disk, ec))
    throw EngineError(EngineError::Kind::Conflict,
                      "the space " + space.name + " has no disk yet (it has never started)");
  const auto tmpl = store_.templates().get(space.template_id);
  if (!tmpl) throw EngineError(EngineError::Kind::NotFound, "the space's template is gone");
  std::string owner;
  if (space.owner_id)
    if (const auto user = store_.users().get(*space.owner_id)) owner = user->username;
  const auto spec = space_spec(space);
  nlohmann::ordered_json disks = nlohmann::ordered_json::array();
  for (const auto& d : spec.disks) disks.push_back(d.name);
  nlohmann::ordered_json facts = {
      {"format", archive::kFormat},
      {"version", 1},
      {"name", space.name},
      {"owner", owner},
      {"domain", space.domain_name},
      {"template", {{"name", tmpl->name}, {"revision", tmpl->revision}}},
      {"appliedTemplateRevision", space.applied_template_revision},
      // The archive's disk is disks[0] when the template has no image.
      {"bootsFromDisk", spec::boots_from_disk(spec)},
      {"disks", disks},
      {"identity",
       {{"id", space.id},
        {"uuid", space.uuid},
        {"hostKey", space.host_key},
        {"hostKeyPublic", space.host_key_public}}},
      {"exportedAt", store_.clock().now_unix_ms()}};
  return {facts.dump(2) + "\n", tmpl->yaml, disk, space.name};
}

Accepted Engine::import_space(const ImportRequest& r) {
  std::error_code ec;
  std::optional<store::Disk> adopted;
  try {
    check_space_name(r.name);
    const auto tmpl = store_.templates().find_by_name(r.template_name);
    if (!tmpl)
      throw EngineError(EngineError::Kind::NotFound, "no template named " + r.template_name);
    const auto owner = store_.users().get(r.owner_id);
    if (!owner) throw EngineError(EngineError::Kind::NotFound, "no such user");
    if (store_.spaces().find_by_name(owner->id, r.name))
      throw EngineError(EngineError::Kind::Conflict,
                        owner->username + " already has a space named " + r.name);
    if (r.identity) {
      if (!util::looks_like_uuid(r.identity->id) || !util::looks_like_uuid(r.identity->uuid))
        throw EngineError(EngineError::Kind::Invalid, "the archive's identity is not valid");
      for (const auto& other : store_.spaces().list())
        if (other.id == r.identity->id || other.uuid == r.identity->uuid)
          throw EngineError(EngineError::Kind::Conflict,
                            "--keep-identity: the archive's identity (instance id " +
                                r.identity->id + ") is in use by the space " + other.name +
                                " on this server; import it without --keep-identity to get a "
                                "new one");
      // A deleted space's id still names its operations and events, which its owner reads:
      // taken again, that history would be the new space's, and the new space's the old
      // owner's.
      if (!store_.operations().list_for_space(r.identity->id).empty())
        throw EngineError(EngineError::Kind::Conflict,
                          "--keep-identity: the archive's instance id " + r.identity->id +
                              " was a space's on this server, whose history is kept; import it "
                              "without --keep-identity to get a new one");
      if (const auto problem =
              host_key_problem({r.identity->host_key, r.identity->host_key_public});
          !problem.empty())
        throw EngineError(EngineError::Kind::Invalid, "the archive's identity: " + problem);
    }
    auto& node = node_named("");
    node.capabilities().require(Capability::Import, node.name());
    if (!disk_files_)
      throw EngineError(EngineError::Kind::Invalid, "this server keeps no disk files to import to");
    store::Space probe;
    probe.id = r.identity ? r.identity->id : random_uuid();
    probe.name = r.name;
    probe.owner_id = owner->id;
    probe.template_id = tmpl->id;
    probe.node = node.name();
    const auto spec = space_spec(probe);
    // Booting from disks[0]: the archive's disk becomes the owner's disk of that name.
    if (spec::boots_from_disk(spec))
      adopted = adopt_disk(owner->id, spec.disks[0].name, r.staged_disk, "import of " + r.name);
    auto made = make_space(owner, std::nullopt, *tmpl, r.name, std::nullopt, false, node,
                           r.identity ? &*r.identity : nullptr);
    if (!adopted) {
      // Made, not started: its directory does not exist yet; the disk goes in before the start.
      const auto disk = disk_files_->space_disk(made.space.domain_name);
      try {
        fs::create_directories(disk.parent_path());
        fs::permissions(disk.parent_path(),
                        fs::perms::owner_all | fs::perms::group_exec | fs::perms::others_exec,
                        fs::perm_options::replace);
        fs::rename(r.staged_disk, disk);
        fs::permissions(disk, fs::perms::owner_read | fs::perms::owner_write,
                        fs::perm_options::replace);
      } catch (...) {
        delete_space(made.space.id);
        throw;
      }
    }
    made.operation_id = start_space(made.space.id);
    return made;
  } catch (...) {
    fs::remove(r.staged_disk, ec);
    if (adopted) {
      disk_files_->remove(adopted->path);
      disk_rows_.remove(adopted->id);
    }
    throw;
  }
}

}  // namespace bowline::engine
