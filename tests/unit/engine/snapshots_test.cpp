// Snapshots and clones through the engine: libvirt's test driver keeps snapshot
// metadata (its data is the real QEMU driver's business, proven on the Debian guest in
// e2e.debian_state), a real SQLite file and real qcow2 files. Suites are lowercase so that
// `ctest -R 'snapshot|clone'` runs them.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <set>

#include "engine/event_kinds.hpp"
#include "engine_fixture.hpp"

namespace bowline::engine {
namespace {

namespace fs = std::filesystem;

class snapshots : public fixture::EngineFixture {
 protected:
  // A started space of a NAT-less bridged template, and its id.
  std::string running_space(const std::string& name = "dev") {
    const auto tmpl = add_template("image: tiny\n");
    const auto made = create(tmpl, name);
    EXPECT_EQ(space(made.space.id).state, store::SpaceState::Running) << space(made.space.id).error;
    return made.space.id;
  }

  // The operation's state once the engine is idle, with its error.
  std::pair<store::OperationState, std::string> outcome(std::int64_t op) {
    engine_->wait_idle();
    const auto o = store_->operations().get(op);
    return {o->state, o->error};
  }

  std::set<std::string> libvirt_snapshots(const std::string& id) {
    std::set<std::string> names;
    for (const auto& s : hypervisor_->snapshots(space(id).domain_name)) names.insert(s.name);
    return names;
  }

  std::vector<std::string> event_kinds_of(const std::string& id) {
    std::vector<std::string> kinds;
    for (const auto& e : store_->events().events_since(0, 100000))
      if (e.space_id && *e.space_id == id) kinds.push_back(e.kind);
    return kinds;
  }
};

// libvirt finishes a snapshot that a killed server asked for, after the store last heard of it
// (the crash campaign, seed 2086319934): at the next start the snapshot the store never recorded
// goes, the recorded one stays, and the operation ends failed, saying it was cut short.
TEST_F(snapshots, ASnapshotCutShortByARestartLeavesNoneTheStoreDoesNotKnow) {
  const auto id = running_space();
  const auto kept = engine_->snapshot_space(id, "kept", false);
  ASSERT_EQ(outcome(kept).first, store::OperationState::Succeeded) << outcome(kept).second;
  hypervisor_->create_snapshot(space(id).domain_name, "finished-unrecorded", "");
  const auto cut = store_->operations().create(id, "snapshot").id;
  start_engine();
  engine_->wait_idle();
  EXPECT_EQ(libvirt_snapshots(id), std::set<std::string>{"kept"});
  ASSERT_EQ(engine_->snapshots_of(id).size(), 1u);
  EXPECT_EQ(outcome(cut).first, store::OperationState::Failed);
  EXPECT_NE(outcome(cut).second.find("interrupted"), std::string::npos) << outcome(cut).second;
}

// The other way round: libvirt had deleted the snapshot when the server was killed, the store
// still had its record. The record goes.
TEST_F(snapshots, ASnapshotDeletionCutShortDropsTheRecordLibvirtNoLongerHas) {
  const auto id = running_space();
  const auto taken = engine_->snapshot_space(id, "gone", false);
  ASSERT_EQ(outcome(taken).first, store::OperationState::Succeeded) << outcome(taken).second;
  hypervisor_->delete_snapshot(space(id).domain_name, "gone");
  store_->operations().create(id, "snapshot-delete");
  start_engine();
  engine_->wait_idle();
  EXPECT_TRUE(engine_->snapshots_of(id).empty());
  EXPECT_TRUE(libvirt_snapshots(id).empty());
}

TEST_F(snapshots, ARunningSpacesSnapshotIsFrozenRecordedAndEvented) {
  const auto id = running_space();
  const auto op = engine_->snapshot_space(id, "before", false);
  EXPECT_EQ(outcome(op).first, store::OperationState::Succeeded) << outcome(op).second;
  const auto list = engine_->snapshots_of(id);
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0].name, "before");
  EXPECT_TRUE(list[0].running);
  EXPECT_FALSE(list[0].memory);
  // The test driver's agent freezes: not best effort.
  EXPECT_FALSE(list[0].best_effort);
  EXPECT_EQ(list[0].template_revision, space(id).applied_template_revision);
  EXPECT_EQ(libvirt_snapshots(id), std::set<std::string>{"before"});
  const auto kinds = event_kinds_of(id);
  EXPECT_NE(std::find(kinds.begin(), kinds.end(), std::string(event::kSnapshotCreated.name)),
            kinds.end());
  EXPECT_EQ(space(id).state, store::SpaceState::Running);
}

TEST_F(snapshots, NamesAndStatesAreCheckedBeforeAnythingIsQueued) {
  const auto id = running_space();
  message_of([&] { engine_->snapshot_space(id, "Bad_Name", false); }, EngineError::Kind::Invalid);
  EXPECT_NE(message_of([&] { engine_->snapshot_space(id, "bowline-x", false); },
                       EngineError::Kind::Invalid)
                .find("bowline's own"),
            std::string::npos);
  EXPECT_EQ(outcome(engine_->snapshot_space(id, "one", false)).first,
            store::OperationState::Succeeded);
  EXPECT_NE(
      message_of([&] { engine_->snapshot_space(id, "one", false); }, EngineError::Kind::Conflict)
          .find("already has a snapshot named one"),
      std::string::npos);
  EXPECT_NE(
      message_of([&] { engine_->restore_space(id, "nope", false); }, EngineError::Kind::NotFound)
          .find("no snapshot named nope"),
      std::string::npos);

  // A space that never started has no disk to snapshot.
  const auto never = create(add_template("image: tiny\n"), "never", false).space.id;
  EXPECT_NE(
      message_of([&] { engine_->snapshot_space(never, "x", false); }, EngineError::Kind::Conflict)
          .find("never started"),
      std::string::npos);
}

TEST_F(snapshots, MemoryNeedsARunningSpace) {
  const auto id = running_space();
  engine_->stop_space(id);
  engine_->wait_idle();
  ASSERT_EQ(space(id).state, store::SpaceState::Stopped);
  const auto [state, error] = outcome(engine_->snapshot_space(id, "mem", true));
  EXPECT_EQ(state, store::OperationState::Failed);
  EXPECT_NE(error.find("is not running"), std::string::npos) << error;
  // The failure is the operation's: the space is as it was, and nothing is left.
  EXPECT_EQ(space(id).state, store::SpaceState::Stopped);
  EXPECT_TRUE(engine_->snapshots_of(id).empty());
  EXPECT_TRUE(libvirt_snapshots(id).empty());
}

TEST_F(snapshots, ARestoreOfARunningSpaceNeedsStopAndRunsItAgain) {
  const auto id = running_space();
  ASSERT_EQ(outcome(engine_->snapshot_space(id, "base", false)).first,
            store::OperationState::Succeeded);
  EXPECT_NE(
      message_of([&] { engine_->restore_space(id, "base", false); }, EngineError::Kind::Conflict)
          .find("--stop"),
      std::string::npos);
  const auto [state, error] = outcome(engine_->restore_space(id, "base", true));
  EXPECT_EQ(state, store::OperationState::Succeeded) << error;
  // Restored from a disk snapshot, it boots again from the restored disks.
  EXPECT_EQ(space(id).state, store::SpaceState::Running) << space(id).error;
  const auto kinds = event_kinds_of(id);
  EXPECT_NE(std::find(kinds.begin(), kinds.end(), std::string(event::kSnapshotRestored.name)),
            kinds.end());
}

TEST_F(snapshots, AMemorySnapshotComesBackRunningWithItsRevision) {
  const auto id = running_space();
  const auto revision = space(id).applied_template_revision;
  ASSERT_EQ(outcome(engine_->snapshot_space(id, "live", true)).first,
            store::OperationState::Succeeded);
  EXPECT_TRUE(engine_->snapshots_of(id)[0].memory);
  engine_->stop_space(id);
  engine_->wait_idle();
  const auto [state, error] = outcome(engine_->restore_space(id, "live", false));
  EXPECT_EQ(state, store::OperationState::Succeeded) << error;
  EXPECT_EQ(space(id).state, store::SpaceState::Running);
  EXPECT_EQ(space(id).applied_template_revision, revision);
  EXPECT_EQ(hypervisor_->state(space(id).domain_name).state, libvirt::DomainState::Running);
}

// An admin changed the template after a memory snapshot (say, took a device away): the
// restore does not bring back the old definition with the memory; it restores the disks and
// starts the machine with today's definition, and says so.
class security_snapshot_restore : public snapshots {};

TEST_F(security_snapshot_restore, AChangedTemplateIsNotUndoneByAMemorySnapshot) {
  const auto id = running_space();
  ASSERT_EQ(outcome(engine_->snapshot_space(id, "live", true)).first,
            store::OperationState::Succeeded);
  const auto tmpl = *store_->templates().get(space(id).template_id);
  const auto changed = store_->templates().update(tmpl.id, tmpl.yaml + "cpus: 2\n");
  ASSERT_GT(changed.revision, tmpl.revision);
  const auto [state, error] = outcome(engine_->restore_space(id, "live", true));
  EXPECT_EQ(state, store::OperationState::Succeeded) << error;
  EXPECT_EQ(space(id).state, store::SpaceState::Running) << space(id).error;
  EXPECT_EQ(space(id).applied_template_revision, changed.revision);
  bool said = false;
  for (const auto& e : store_->events().events_since(0, 100000))
    if (e.space_id && *e.space_id == id && e.kind == event::kSnapshotRestored.name) {
      const auto& payload = e.payload;
      EXPECT_EQ(payload["memory"], false);
      said = payload.value("note", "").find("the template changed") != std::string::npos;
    }
  EXPECT_TRUE(said);
}

TEST_F(snapshots, ARestoreOfAStoppedSpaceLeavesItStopped) {
  const auto id = running_space();
  engine_->stop_space(id);
  engine_->wait_idle();
  ASSERT_EQ(outcome(engine_->snapshot_space(id, "cold", false)).first,
            store::OperationState::Succeeded);
  EXPECT_FALSE(engine_->snapshots_of(id)[0].running);
  EXPECT_EQ(outcome(engine_->restore_space(id, "cold", false)).first,
            store::OperationState::Succeeded);
  EXPECT_EQ(space(id).state, store::SpaceState::Stopped);
  EXPECT_EQ(hypervisor_->state(space(id).domain_name).state, libvirt::DomainState::Shutoff);
}

TEST_F(snapshots, DeleteRemovesTheRowAndLibvirtsSnapshot) {
  const auto id = running_space();
  ASSERT_EQ(outcome(engine_->snapshot_space(id, "a", false)).first,
            store::OperationState::Succeeded);
  ASSERT_EQ(outcome(engine_->snapshot_space(id, "b", false)).first,
            store::OperationState::Succeeded);
  EXPECT_EQ(outcome(engine_->delete_snapshot(id, "a")).first, store::OperationState::Succeeded);
  ASSERT_EQ(engine_->snapshots_of(id).size(), 1u);
  EXPECT_EQ(engine_->snapshots_of(id)[0].name, "b");
  EXPECT_EQ(libvirt_snapshots(id), std::set<std::string>{"b"});
}

TEST_F(snapshots, DeletingTheSpaceDeletesItsSnapshots) {
  const auto id = running_space();
  ASSERT_EQ(outcome(engine_->snapshot_space(id, "a", false)).first,
            store::OperationState::Succeeded);
  const auto domain = space(id).domain_name;
  engine_->delete_space(id);
  engine_->wait_idle();
  EXPECT_FALSE(store_->spaces().get(id));
  EXPECT_TRUE(store_->snapshots().list_for_space(id).empty());
  EXPECT_FALSE(hypervisor_->lookup(domain));
}

TEST_F(snapshots, SnapshotsCountAgainstTheOwnersDiskQuota) {
  const auto id = running_space();
  // The test driver makes no file: give the overlay some bytes to count.
  const auto overlay = files_->space_disk(space(id).domain_name);
  ASSERT_TRUE(fs::exists(overlay));
  {
    std::ofstream grow(overlay, std::ios::app | std::ios::binary);
    const std::string block(1 << 20, 'x');
    for (int i = 0; i < 4; ++i) grow << block;
  }
  ASSERT_EQ(outcome(engine_->snapshot_space(id, "counted", false)).first,
            store::OperationState::Succeeded);
  const auto size = engine_->snapshots_of(id)[0].size_bytes;
  EXPECT_GE(size, 4 << 20);
  const auto before = engine_->usage_of_owner(alice_).disk;
  // A disk quota just above what alice holds now: the next snapshot does not fit.
  auto quota = store::Quota{};
  quota.disk = before + 1;
  store_->users().set_quota(alice_, quota);
  const auto [state, error] = outcome(engine_->snapshot_space(id, "over", false));
  EXPECT_EQ(state, store::OperationState::Failed);
  EXPECT_NE(error.find("quota"), std::string::npos) << error;
  EXPECT_EQ(engine_->snapshots_of(id).size(), 1u);
  EXPECT_EQ(libvirt_snapshots(id), std::set<std::string>{"counted"});
  EXPECT_EQ(space(id).state, store::SpaceState::Running);
}

class clones : public snapshots {};

TEST_F(clones, AClonesDiskIsTheSourcesAtTheSnapshotOnTheSameBase) {
  const auto id = running_space("src");
  const auto source_disk = files_->space_disk(space(id).domain_name);
  // The test driver keeps snapshots as metadata only: the qcow2's own snapshot is made here,
  // with data only it holds, as the QEMU driver would.
  ASSERT_EQ(std::system(("qemu-io -f qcow2 -c 'write -P 0x5a 1M 64k' " + source_disk.string() +
                         " >/dev/null")
                            .c_str()),
            0);
  ASSERT_EQ(outcome(engine_->snapshot_space(id, "point", false)).first,
            store::OperationState::Succeeded);
  ASSERT_EQ(std::system(("qemu-img snapshot -c point " + source_disk.string()).c_str()), 0);
  ASSERT_EQ(std::system(("qemu-io -f qcow2 -c 'write -P 0x11 1M 64k' " + source_disk.string() +
                         " >/dev/null")
                            .c_str()),
            0);

  CloneRequest r{id, alice_, "copy", std::string("point"), false};
  const auto made = engine_->clone_space(r);
  engine_->wait_idle();
  const auto clone = space(made.space.id);
  ASSERT_EQ(clone.state, store::SpaceState::Running) << clone.error;
  EXPECT_NE(clone.id, id);
  EXPECT_NE(clone.uuid, space(id).uuid);
  EXPECT_NE(clone.host_key_public, space(id).host_key_public);
  EXPECT_NE(clone.ip, space(id).ip);
  const auto clone_disk = files_->space_disk(clone.domain_name);
  // An overlay on the source's base, with the snapshot's data, not what came after.
  const auto info = disks_->info(clone_disk);
  ASSERT_TRUE(info.backing_file);
  EXPECT_EQ(*info.backing_file, *disks_->info(source_disk).backing_file);
  EXPECT_EQ(std::system(("qemu-io -r -f qcow2 -U -c 'read -P 0x5a 1M 64k' " + clone_disk.string() +
                         " | grep -q 'Pattern verification failed'")
                            .c_str()) != 0,
            true);
  EXPECT_EQ(std::system(("qemu-io -r -f qcow2 -U -c 'read -P 0x5a 1M 64k' " + clone_disk.string() +
                         " | grep -q 'read 65536/65536'")
                            .c_str()),
            0);
  // The source is untouched and running.
  EXPECT_EQ(space(id).state, store::SpaceState::Running);
  const auto kinds = event_kinds_of(clone.id);
  EXPECT_NE(std::find(kinds.begin(), kinds.end(), std::string(event::kSpaceCloned.name)),
            kinds.end());

  // --full: standalone.
  CloneRequest full{id, alice_, "whole", std::string("point"), true};
  const auto whole = engine_->clone_space(full);
  engine_->wait_idle();
  ASSERT_EQ(space(whole.space.id).state, store::SpaceState::Running) << space(whole.space.id).error;
  EXPECT_FALSE(disks_->info(files_->space_disk(space(whole.space.id).domain_name)).backing_file);
}

TEST_F(clones, AFailedCloneLeavesNoDiskOrDomainAndTheSourceAsItWas) {
  const auto id = running_space("src");
  // libvirt's test driver holds the snapshot, the qcow2 does not: the copy fails.
  ASSERT_EQ(outcome(engine_->snapshot_space(id, "meta-only", false)).first,
            store::OperationState::Succeeded);
  CloneRequest r{id, alice_, "copy", std::string("meta-only"), false};
  const auto made = engine_->clone_space(r);
  engine_->wait_idle();
  const auto clone = space(made.space.id);
  EXPECT_EQ(clone.state, store::SpaceState::Error);
  EXPECT_NE(clone.error.find("clone failed"), std::string::npos) << clone.error;
  EXPECT_FALSE(fs::exists(files_->space_disk(clone.domain_name)));
  EXPECT_FALSE(fs::exists(files_->space_disk(clone.domain_name).string() + ".part"));
  EXPECT_FALSE(hypervisor_->lookup(clone.domain_name));
  EXPECT_FALSE(clone.ip);
  EXPECT_EQ(space(id).state, store::SpaceState::Running);
  // A clone of "now" removes the short-lived snapshot it took, also when it fails.
  CloneRequest now{id, alice_, "copy2", std::nullopt, false};
  engine_->clone_space(now);
  engine_->wait_idle();
  EXPECT_EQ(libvirt_snapshots(id), std::set<std::string>{"meta-only"});
  // Nothing holds the source: it can be deleted.
  engine_->delete_space(id);
  engine_->wait_idle();
  EXPECT_FALSE(store_->spaces().get(id));
}

TEST_F(clones, RulesAreCheckedBeforeAnythingIsMade) {
  const auto id = running_space("src");
  const auto before = store_->spaces().list().size();
  EXPECT_NE(message_of(
                [&] {
                  engine_->clone_space({id, alice_, "x", std::string("none"), false});
                },
                EngineError::Kind::NotFound)
                .find("no snapshot named none"),
            std::string::npos);
  message_of(
      [&] {
        engine_->clone_space({id, alice_, "Not A Name", std::nullopt, false});
      },
      EngineError::Kind::Invalid);
  const auto never = create(add_template("image: tiny\n"), "never", false).space.id;
  EXPECT_NE(message_of(
                [&] {
                  engine_->clone_space({never, alice_, "x", std::nullopt, false});
                },
                EngineError::Kind::Conflict)
                .find("never started"),
            std::string::npos);
  EXPECT_EQ(store_->spaces().list().size(), before + 1);  // only `never`
}

}  // namespace
}  // namespace bowline::engine

namespace bowline::engine {
namespace {

class clones_restart : public fixture::EngineFixture {};

// A server stopped mid-copy: at the next start the clone is not booted from the base image
// under its name; it is undone and says why, and the source's short-lived snapshot goes.
TEST_F(clones_restart, AnInterruptedCloneIsUndoneAndItsSourcesClonePointDropped) {
  const auto tmpl = add_template("image: tiny\n");
  const auto source = create(tmpl, "src").space.id;
  ASSERT_EQ(space(source).state, store::SpaceState::Running) << space(source).error;
  hypervisor_->create_snapshot(space(source).domain_name, "bowline-clone-0123abcd", "");
  const auto clone = create(tmpl, "copy", false).space.id;
  store_->spaces().set_state(clone, store::SpaceState::Creating);
  const auto op = store_->operations().create(clone, "clone").id;
  const auto dir = files_->space_disk(space(clone).domain_name).parent_path();
  fs::create_directories(dir);
  std::ofstream(dir / "disk.qcow2.part") << "half";

  engine_.reset();  // the server stops...
  EngineSettings settings;
  settings.timer = &timer_;
  engine_ = std::make_unique<Engine>(*store_, *bus_, settings);  // ...and starts again
  engine_->add_node(*node_);
  engine_->set_disk_files(*files_);
  engine_->start();
  engine_->wait_idle();

  EXPECT_EQ(space(clone).state, store::SpaceState::Error);
  EXPECT_NE(space(clone).error.find("clone interrupted"), std::string::npos) << space(clone).error;
  EXPECT_EQ(store_->operations().get(op)->state, store::OperationState::Failed);
  EXPECT_FALSE(fs::exists(dir));
  EXPECT_FALSE(hypervisor_->lookup(space(clone).domain_name));
  EXPECT_TRUE(hypervisor_->snapshots(space(source).domain_name).empty());
  EXPECT_EQ(space(source).state, store::SpaceState::Running);
}

}  // namespace
}  // namespace bowline::engine
