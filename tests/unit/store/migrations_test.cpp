#include "store/migrations.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <mutex>
#include <thread>
#include <vector>

#include "store_test_support.hpp"
#include "util/sha512_crypt.hpp"

namespace bowline::store {
namespace {

using ::testing::HasSubstr;

class MigrationTest : public testing::StoreTest {
 protected:
  std::vector<std::string> columns(Db& db, const std::string& table) {
    std::vector<std::string> out;
    auto select = db.prepare("SELECT name FROM pragma_table_info('" + table + "') ORDER BY cid");
    while (select.step()) out.push_back(select.column_text(0));
    return out;
  }
  std::vector<std::string> tables(Db& db) {
    std::vector<std::string> out;
    auto select = db.prepare(
        "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
        "ORDER BY name");
    while (select.step()) out.push_back(select.column_text(0));
    return out;
  }
  std::string schema(Db& db) {
    std::string out;
    auto select = db.prepare("SELECT sql FROM sqlite_schema WHERE sql IS NOT NULL ORDER BY name");
    while (select.step()) out += select.column_text(0) + ";\n";
    return out;
  }
};

TEST_F(MigrationTest, StepsAreNumberedOneByOne) {
  int expected = 1;
  for (const auto& step : migrations()) {
    EXPECT_EQ(step.version, expected++) << step.name;
    EXPECT_FALSE(step.name.empty());
  }
  EXPECT_EQ(latest_schema_version(), 20);
}

TEST_F(MigrationTest, EmptyDatabaseReachesTheLatestSchema) {
  {
    Db db(file());
    EXPECT_EQ(schema_version(db), 0);
  }
  auto& db = store().db();
  EXPECT_EQ(schema_version(db), latest_schema_version());
  EXPECT_EQ(tables(db),
            (std::vector<std::string>{
                "api_tokens", "audit_log", "disks", "downloads", "events", "host_ports",
                "ip_leases", "node_states", "operations", "pools", "snapshots", "space_changes",
                "space_shares", "spaces", "sso_identities", "templates", "users", "web_sessions"}));
  EXPECT_THAT(columns(db, "api_tokens"), ::testing::Contains("expires_at"));
  EXPECT_EQ(db.pragma_int("foreign_keys"), 1) << "foreign keys are back on after migrating";
}

// A deleted user's id belongs to nobody after them: what still names it (operations, events,
// the API's memory of who owned a deleted space) must never become a newcomer's to read. Also
// for a database migrated from before AUTOINCREMENT, whose highest user had been deleted.
class security_user_ids : public MigrationTest {};

TEST_F(security_user_ids, ADeletedUsersIdIsNeverGivenAgain) {
  {
    Db db(file());
    migrate(db, 12);
    db.exec(R"sql(
INSERT INTO users (id, username, created_at) VALUES (1, 'admin', 1), (2, 'alice', 2),
                                                    (3, 'mallory', 3);
INSERT INTO templates (id, name, yaml, revision, created_at, updated_at)
  VALUES (5, 'dev', 'name: dev', 1, 1, 1);
INSERT INTO spaces (id, name, owner_id, template_id, applied_template_revision, desired_state,
                    state, error, ip, uuid, vnc_password, domain_name, node, pool_id,
                    created_at, updated_at)
  VALUES ('s-1', 'box', 3, 5, 1, 'stopped', 'stopped', '', NULL, 'u-1', 'v', 'mallory-box',
          'local', NULL, 1, 1);
DELETE FROM spaces;
DELETE FROM users WHERE id = 3;
)sql");
  }
  auto& users = store().users();
  // Before the migration the next user would have been 3 again; the spaces' owners say 3 was
  // somebody's only while a space named it, so what counts is the rows that name it now.
  const auto bob = users.create({"bob", "", "", std::nullopt, "", {}, {}});
  EXPECT_GE(bob.id, 3);
  users.remove(bob.id);
  const auto carol = users.create({"carol", "", "", std::nullopt, "", {}, {}});
  EXPECT_GT(carol.id, bob.id) << "a deleted user's id came back";
  EXPECT_EQ(users.get(2)->username, "alice");  // the rows kept their ids
  // The rename trigger came back with the table: a renamed owner's spaces are listed again.
  EXPECT_THAT(schema(store().db()), HasSubstr("CREATE TRIGGER space_owner_renamed"));
}

// Leases were kept per bridge and range: two overlapping ranges of one bridge could give one
// address twice. Migrated, the first lease keeps it and the other space takes a new one.
TEST_F(security_user_ids, LeasesOfOneBridgeBecomeOneAddressSpace) {
  {
    Db db(file());
    migrate(db, 14);
    db.exec(R"sql(
INSERT INTO users (id, username, created_at) VALUES (1, 'alice', 1);
INSERT INTO templates (id, name, yaml, revision, created_at, updated_at)
  VALUES (5, 'dev', 'name: dev', 1, 1, 1);
INSERT INTO spaces (id, name, owner_id, template_id, applied_template_revision, desired_state,
                    state, error, ip, uuid, vnc_password, domain_name, node, pool_id,
                    created_at, updated_at)
  VALUES ('s-1', 'one', 1, 5, 1, 'stopped', 'stopped', '', '198.51.100.10', 'u-1', 'v', 'a-one',
          'local', NULL, 1, 1),
         ('s-2', 'two', 1, 5, 1, 'stopped', 'stopped', '', '198.51.100.10', 'u-2', 'v', 'a-two',
          'local', NULL, 1, 1),
         ('s-3', 'three', 1, 5, 1, 'stopped', 'stopped', '', '198.51.100.30', 'u-3', 'v',
          'a-three', 'local', NULL, 1, 1);
INSERT INTO ip_leases (network_key, ip, space_id, created_at)
  VALUES ('bridge:br0:198.51.100.0/24', 3325256714, 's-1', 1),
         ('bridge:br0:198.51.100.0/25', 3325256714, 's-2', 2),
         ('bridge:br0:198.51.100.0/24', 3325256734, 's-3', 3);
)sql");
  }
  auto& s = store();
  const auto leases = s.leases().list("bridge:br0");
  ASSERT_EQ(leases.size(), 2u);
  EXPECT_EQ(leases[0].space_id, "s-1");
  EXPECT_EQ(leases[1].space_id, "s-3");
  EXPECT_EQ(s.spaces().get("s-1")->ip, "198.51.100.10");
  EXPECT_FALSE(s.spaces().get("s-2")->ip.has_value());  // a new address at its next start
}

TEST_F(MigrationTest, OpeningAgainChangesNothing) {
  std::string before = schema(store().db());
  close();
  EXPECT_EQ(schema(store().db()), before);
  EXPECT_EQ(schema_version(store().db()), latest_schema_version());
}

// A database written by the first release, with a row in every table, migrated by this one:
// every row survives and reads back through today's repositories.
TEST_F(MigrationTest, VersionOneDatabaseWithDataReachesTheLatestAndKeepsItsData) {
  {
    Db db(file());
    migrate(db, 1);
    ASSERT_EQ(schema_version(db), 1);
    EXPECT_THAT(columns(db, "api_tokens"), ::testing::Not(::testing::Contains("expires_at")));
    db.exec(R"sql(
INSERT INTO users (id, username, email, timezone, service_password, password_hash, ssh_keys,
                   permissions, created_at)
  VALUES (7, 'alice', 'alice@example.org', 'Europe/Berlin', 'secret', 'hash',
          '["ssh-ed25519 AAAA alice@laptop"]', '["admin","use-vnc"]', 1000);
INSERT INTO api_tokens (id, user_id, token_sha256, name, created_at, last_used)
  VALUES (3, 7, 'abc123', 'cli', 1001, 1500);
INSERT INTO templates (id, name, yaml, revision, created_at, updated_at)
  VALUES (5, 'dev', 'name: dev', 4, 1002, 1400);
INSERT INTO pools (id, name, template_id, size, created_at, updated_at)
  VALUES (2, 'ready', 5, 3, 1003, 1003);
INSERT INTO spaces (id, name, owner_id, template_id, applied_template_revision, desired_state,
                    state, error, ip, uuid, vnc_password, domain_name, node, pool_id,
                    created_at, updated_at)
  VALUES ('s-1', 'box', 7, 5, 3, 'running', 'running', '', '198.51.100.10', 'u-1', 'vncpass1',
          'bowline-box', 'node-a', NULL, 1004, 1300);
INSERT INTO ip_leases (network_key, ip, space_id, created_at)
  VALUES ('bridge:br0', 3325256714, 's-1', 1005);
INSERT INTO operations (id, space_id, kind, state, step, progress, error, created_at,
                        updated_at, finished_at)
  VALUES (9, 's-1', 'create', 'succeeded', 'started', 100, '', 1006, 1200, 1200);
INSERT INTO events (seq, time, kind, space_id, payload)
  VALUES (41, 1007, 'space.state', 's-1', '{"state":"running"}');
)sql");
  }

  auto& s = store();
  EXPECT_EQ(schema_version(s.db()), latest_schema_version());

  auto alice = s.users().get(7);
  ASSERT_TRUE(alice);
  EXPECT_EQ(alice->username, "alice");
  EXPECT_EQ(alice->timezone, "Europe/Berlin");
  // v8 keeps the clear service password only as its crypt hash, which still verifies.
  ASSERT_TRUE(alice->service_password_hash);
  EXPECT_TRUE(util::is_sha512_crypt(*alice->service_password_hash))
      << *alice->service_password_hash;
  EXPECT_EQ(util::sha512_crypt("secret", alice->service_password_hash->substr(
                                             3, alice->service_password_hash->find('$', 3) - 3)),
            *alice->service_password_hash);
  EXPECT_FALSE(alice->disabled);
  EXPECT_EQ(alice->ssh_keys, (std::vector<std::string>{"ssh-ed25519 AAAA alice@laptop"}));
  EXPECT_EQ(alice->permissions, (std::set<Permission>{Permission::Admin, Permission::UseVnc}));

  auto token = s.tokens().find_by_hash("abc123");
  ASSERT_TRUE(token);
  EXPECT_EQ(token->user_id, 7);
  EXPECT_EQ(token->last_used, 1500);
  EXPECT_EQ(token->expires_at, std::nullopt) << "tokens from v1 never expire";
  EXPECT_TRUE(s.tokens().authenticate("abc123"));

  auto dev = s.templates().get(5);
  ASSERT_TRUE(dev);
  EXPECT_EQ(dev->revision, 4);
  EXPECT_EQ(s.templates().update(5, "name: dev2").revision, 5);

  EXPECT_EQ(s.pools().get(2)->size, 3);

  auto box = s.spaces().get("s-1");
  ASSERT_TRUE(box);
  EXPECT_EQ(box->state, SpaceState::Running);
  EXPECT_EQ(box->applied_template_revision, 3);
  EXPECT_EQ(box->ip, "198.51.100.10");
  EXPECT_EQ(box->domain_name, "bowline-box");

  // The list cache's journal starts with every space in it.
  auto journal =
      s.db().prepare("SELECT s.id FROM space_changes c JOIN spaces s ON s.rowid = c.space_rowid");
  ASSERT_TRUE(journal.step());
  EXPECT_EQ(journal.column_text(0), "s-1");
  EXPECT_FALSE(journal.step());

  auto lease = s.leases().lease_of("s-1", "bridge:br0");
  ASSERT_TRUE(lease);
  EXPECT_EQ(format_ipv4(lease->ip), "198.51.100.10");

  EXPECT_EQ(s.operations().get(9)->state, OperationState::Succeeded);

  auto events = s.events().events_since(0, 10);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].seq, 41);
  EXPECT_EQ(events[0].payload["state"], "running");
  EXPECT_EQ(s.events().append("space.state", "s-1").seq, 42) << "seq carries on";

  // New columns work on migrated rows.
  auto fresh = s.tokens().create(7, "def456", "web", clock_.now_unix_ms() + 1000);
  EXPECT_EQ(fresh.expires_at, clock_.now_unix_ms() + 1000);
  EXPECT_EQ(s.spaces().get("s-1")->applied_parts, "{}") << "no parts known from an old start";
  s.spaces().set_applied("s-1", 3, R"({"size":"0123456789abcdef"})");
  EXPECT_EQ(s.spaces().get("s-1")->applied_parts, R"({"size":"0123456789abcdef"})");
  EXPECT_EQ(s.spaces().get("s-1")->applied_template_revision, 3);

  // v9: no terminal key, author or quota on old rows; each can be set.
  EXPECT_EQ(s.spaces().get("s-1")->terminal_key, "");
  s.spaces().set_terminal_key("s-1", "-----BEGIN OPENSSH PRIVATE KEY-----", "ssh-ed25519 AAAA t");
  EXPECT_EQ(s.spaces().get("s-1")->terminal_key_public, "ssh-ed25519 AAAA t");
  EXPECT_EQ(s.templates().get(5)->author_id, std::nullopt);
  EXPECT_EQ(s.templates().create("mine", "name: mine", 7).author_id, 7);
  EXPECT_EQ(s.users().get(7)->quota, Quota{});
  s.users().set_quota(7, {.spaces = 3, .cpus = std::nullopt, .memory = 8LL << 30, .disk = -1});
  EXPECT_EQ(s.users().get(7)->quota, (Quota{3, std::nullopt, 8LL << 30, -1}));
}

TEST_F(MigrationTest, MigratedAndFreshSchemasAreTheSame) {
  std::string fresh = schema(store().db());
  close();
  testing::TempDir other;
  {
    Db db(other.path() / "old.db");
    migrate(db, 1);
  }
  Db db(other.path() / "old.db");
  migrate(db);
  EXPECT_EQ(schema(db), fresh);
}

TEST_F(MigrationTest, RefusesADatabaseFromANewerBowline) {
  {
    Db db(file());
    db.exec("PRAGMA user_version=99");
  }
  try {
    store();
    FAIL() << "opened a database from the future";
  } catch (const StoreError& e) {
    EXPECT_THAT(e.what(), HasSubstr("schema version 99"));
    EXPECT_THAT(e.what(), HasSubstr("newer"));
  }
}

TEST_F(MigrationTest, FailedStepLeavesThePreviousVersion) {
  {
    Db db(file());
    migrate(db, 1);
    // Sabotage: make step 2's ALTER TABLE collide with an existing column.
    db.exec("ALTER TABLE api_tokens ADD COLUMN expires_at INTEGER");
  }
  try {
    store();
    FAIL() << "broken migration succeeded";
  } catch (const StoreError& e) {
    EXPECT_THAT(e.what(), HasSubstr("schema migration 2 (api tokens may expire) failed"));
    EXPECT_THAT(e.what(), HasSubstr("duplicate column name"));
  }
  Db db(file());
  EXPECT_EQ(schema_version(db), 1);
}

TEST_F(MigrationTest, TwoConnectionsOpeningAnEmptyFileAtOnceBothSucceed) {
  std::vector<std::thread> threads;
  std::atomic<int> opened{0};
  std::mutex mutex;
  std::vector<std::string> errors;
  for (int i = 0; i < 4; ++i)
    threads.emplace_back([&] {
      try {
        Store s(file(), clock_);
        if (schema_version(s.db()) == latest_schema_version()) ++opened;
      } catch (const std::exception& e) {
        std::lock_guard lock(mutex);
        errors.emplace_back(e.what());
      }
    });
  for (auto& thread : threads) thread.join();
  EXPECT_THAT(errors, ::testing::IsEmpty());
  EXPECT_EQ(opened, 4);
}

}  // namespace
}  // namespace bowline::store
