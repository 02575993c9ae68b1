// Moving a stopped space between nodes: its disk (every cluster it holds, pointed at the new
// node's copy of its base image) and its NVRAM are copied through a spool directory on the
// server, the space's row names the new node, and only then do its first node's domain and files
// go. Its next start writes its seed and defines its domain on the new node. A failure before
// the row changes leaves the space whole on its first node and nothing on the other.
#include <filesystem>

#include "engine/engine.hpp"
#include "engine/event_kinds.hpp"
#include "engine/identifiers.hpp"

namespace bowline::engine {

namespace fs = std::filesystem;
using store::SpaceState;

namespace {

// The spool of one move, removed with everything in it however the move ends.
struct Spool {
  fs::path dir;
  explicit Spool(const fs::path& root) {
    const auto base = root.empty() ? fs::temp_directory_path() : root;
    fs::create_directories(base);
    dir = base / ("move-" + random_hex(8));
    fs::create_directory(dir);
    fs::permissions(dir, fs::perms::owner_all, fs::perm_options::replace);
  }
  ~Spool() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};

}  // namespace

std::int64_t Engine::move_space(const std::string& id, const std::string& to) {
  const auto space = require(id);
  auto& target = node_named(to);
  check_movable(space, target, false);
  return enqueue_move(space, target);
}

void Engine::check_movable(const store::Space& space, Node& target, bool stopped_first) {
  const auto& id = space.id;
  const auto& to = target.name();
  auto& from = node_of(space);
  if (&from == &target)
    throw EngineError(EngineError::Kind::Conflict,
                      "the space " + space.name + " is on node " + to + " already");
  from.capabilities().require(Capability::Move, from.name());
  target.capabilities().require(Capability::Move, target.name());
  if (const auto why = cordoned(to))
    throw EngineError(EngineError::Kind::Conflict, "node " + to + " is cordoned" +
                                                       (why->empty() ? "" : " (" + *why + ")") +
                                                       ": it takes no new space");
  const bool stops = stopped_first && space.state == SpaceState::Running;
  if (space.state != SpaceState::Stopped && !stops)
    throw EngineError(EngineError::Kind::Conflict,
                      "the space " + space.name + " is " + store::to_string(space.state) +
                          ": only a stopped space moves (stop it first; live moves are not "
                          "built yet)");
  if (!store_.snapshots().list_for_space(id).empty())
    throw EngineError(EngineError::Kind::Conflict,
                      "the space " + space.name +
                          " has snapshots, which live in its disk with records on its node: "
                          "delete them first");
  const auto spec = space_spec(space);
  if (const auto why = target.refusals(spec); !why.empty()) {
    std::string text = "node " + to + " cannot run the space " + space.name + ":";
    for (const auto& w : why) text += " " + w + ";";
    text.pop_back();
    throw EngineError(EngineError::Kind::Conflict, text);
  }
}

std::int64_t Engine::enqueue_move(const store::Space& space, Node& target) {
  auto& from = node_of(space);
  return enqueue(
      space, "move",
      [this, id = space.id, &from, &target](std::int64_t op) {
        auto loaded = load(require(id));
        if (loaded.space.state != SpaceState::Stopped)
          throw EngineError(EngineError::Kind::Conflict,
                            "the space became " +
                                std::string(store::to_string(loaded.space.state)) +
                                " before its move began");
        const auto progress = progress_for({op}, id);
        if (loaded.space.applied_template_revision == 0) {
          // Never started: nothing of it is on its node yet, so only the row changes.
          store_.spaces().set_node(id, target.name());
          events_.publish(event::kSpaceMoved, id, {{"from", from.name()}, {"to", target.name()}});
          progress.step("moved to " + target.name() + " (it had never started)", 100);
          return;
        }
        Spool spool(settings_.spool_dir);
        progress.step("copying the disk from " + from.name(), 10);
        from.export_files(loaded.space, spool.dir);
        loaded.space.node = target.name();
        target.import_files(node_space(loaded), spool.dir, progress.part(20, 90));
        store_.spaces().set_node(id, target.name());
        events_.publish(event::kSpaceMoved, id, {{"from", from.name()}, {"to", target.name()}});
        progress.step("removing it from " + from.name(), 95);
        auto before = loaded.space;
        before.node = from.name();
        try {
          from.tear_down(before);
        } catch (const std::exception& e) {
          // The space is whole on its new node; what is left on the old one is reported.
          events_.publish(event::kReconcileError, id,
                          {{"error", "the move left the space's domain or files on node " +
                                         from.name() + ": " + e.what()}});
        }
        progress.step("moved to " + target.name(), 100);
      },
      /*failure_is_error=*/false);
}

}  // namespace bowline::engine
