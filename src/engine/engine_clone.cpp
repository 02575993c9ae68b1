// Clones: a new space of the source's template whose boot disk is copied from the
// source's at a snapshot. A clone of the space as it is now reads a short-lived snapshot taken
// for it (the source keeps running: what is read is a point in time, not a disk being
// written). The copy is an overlay on the same cached base image (only what the source changed
// is copied) or, with --full, standalone. Everything else is the clone's own: its seed gives
// it a new instance-id, hostname, MAC, address and SSH host keys, and the owner boot script a
// new machine-id.
#include <filesystem>

#include "engine/engine.hpp"
#include "engine/event_kinds.hpp"
#include "engine/identifiers.hpp"
#include "spec/boot_disk.hpp"

namespace bowline::engine {

namespace fs = std::filesystem;
using store::SpaceState;

namespace {
constexpr std::string_view kClonePointPrefix = "bowline-clone-";
}  // namespace

void Engine::refuse_while_cloned(const store::Space& space, const std::string& what) {
  std::lock_guard lock(clones_mutex_);
  if (const auto it = cloned_.find(space.id); it != cloned_.end() && it->second > 0)
    throw EngineError(EngineError::Kind::Conflict, "a clone is copying the disk of the space " +
                                                       space.name + ": " + what +
                                                       " waits until it is done");
}

// A clone's short-lived snapshot left on its source by a server that stopped mid-copy goes
// (never while a clone of this server reads the source).
void Engine::drop_clone_points(const store::Space& space) {
  {
    std::lock_guard lock(clones_mutex_);
    if (cloned_.count(space.id)) return;
  }
  try {
    if (auto* node = find_node(space.node)) node->delete_snapshots_named(space, kClonePointPrefix);
  } catch (const std::exception&) {
    // Tried again at the next start; a leftover costs disk, never correctness.
  }
}

// What a clone needs of its source, checked before anything is made.
store::Space Engine::cloneable_source(const CloneRequest& r) {
  auto source = require(r.source_id);
  auto& node = node_of(source);
  check_space_name(r.name);
  node.capabilities().require(Capability::Clone, node.name());
  if (!disk_files_)
    throw EngineError(EngineError::Kind::Invalid, "this server keeps no disk files to clone");
  if (source.state != SpaceState::Running && source.state != SpaceState::Stopped)
    throw EngineError(EngineError::Kind::Conflict, "the space " + source.name + " is " +
                                                       store::to_string(source.state) +
                                                       ": a clone needs it running or stopped");
  if (source.applied_template_revision == 0)
    throw EngineError(EngineError::Kind::Conflict,
                      "the space " + source.name + " has never started: it has no disk to clone");
  const auto spec = space_spec(source);
  if (!spec.disks.empty())
    throw EngineError(EngineError::Kind::Invalid,
                      "the space " + source.name + " uses the disk object " + spec.disks[0].name +
                          ": a clone copies a space's own disk; copy a disk object with "
                          "bowline disk create NAME --from-space " +
                          source.name);
  if (r.snapshot) require_snapshot(source, *r.snapshot);
  return source;
}

Accepted Engine::clone_space(const CloneRequest& r) {
  const auto source = cloneable_source(r);
  auto& node = node_of(source);
  const auto tmpl = store_.templates().get(source.template_id);
  if (!tmpl) throw EngineError(EngineError::Kind::NotFound, "the space's template is gone");
  const auto owner = store_.users().get(r.owner_id);
  if (!owner) throw EngineError(EngineError::Kind::NotFound, "no such user");

  const auto point = r.snapshot.value_or(std::string(kClonePointPrefix) + random_hex(8));
  {
    std::lock_guard lock(clones_mutex_);
    ++cloned_[source.id];
  }
  auto release = [this, id = source.id] {
    std::lock_guard lock(clones_mutex_);
    if (--cloned_[id] <= 0) cloned_.erase(id);
  };
  try {
    return make_space(
        owner, std::nullopt, *tmpl, r.name, std::nullopt, true, node, nullptr,
        [this, r, point, release, source_id = source.id](const std::string& id, std::int64_t op) {
          bool made_point = false;
          auto& on = node_of(require(source_id));
          try {
            const auto from = require(source_id);
            if (!r.snapshot) {
              progress(op, id, "taking a snapshot of " + from.name, 5);
              on.take_snapshot(from, point, false);
              made_point = true;
            }
            progress(op, id, "copying the disk of " + from.name, 15);
            const auto target = disk_files_->space_disk(require(id).domain_name);
            fs::create_directories(target.parent_path());
            fs::permissions(target.parent_path(),
                            fs::perms::owner_all | fs::perms::group_exec | fs::perms::others_exec,
                            fs::perm_options::replace);
            on.copy_disk_at(from, point, target, r.full);
            if (made_point) on.delete_snapshot(from, point);
            made_point = false;
            events_.publish(event::kSpaceCloned, id,
                            {{"source", from.name},
                             {"sourceId", from.id},
                             {"snapshot", r.snapshot ? nlohmann::json(*r.snapshot) : nullptr},
                             {"full", r.full}});
          } catch (...) {
            if (made_point) {
              try {
                on.delete_snapshot(require(source_id), point);
              } catch (...) {
              }
            }
            release();
            throw;
          }
          release();
        });
  } catch (...) {
    release();
    throw;
  }
}

}  // namespace bowline::engine
