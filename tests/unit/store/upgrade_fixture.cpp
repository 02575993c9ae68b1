#include "upgrade_fixture.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "store/migrations.hpp"
#include "util/sha512_crypt.hpp"

namespace bowline::store::testing {
namespace {

constexpr std::int64_t kFarFuture = 9'000'000'000'000;  // an expiry that never comes in a test

// What the first release could hold: a row in each of its tables.
void write_version_one_records(Db& db) {
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

// From v8 on a server kept only the hash of the service password.
void hash_service_password(Db& db) {
  db.prepare("UPDATE users SET service_password = ? WHERE id = 7")
      .bind_all(util::sha512_crypt("secret", "fixturesalt"))
      .run();
}

// Rows and columns of the versions after the first, each set at the version that added it.
void write_later_records(Db& db, int version) {
  auto at = [&](int v, const char* sql) {
    if (version >= v) db.exec(sql);
  };
  at(2, "UPDATE api_tokens SET expires_at = 9000000000000 WHERE id = 3");
  at(3,
     "INSERT INTO web_sessions (id, user_id, cookie_sha256, csrf, created_at, last_seen, "
     "expires_at) VALUES (4, 7, 'cookie1', 'csrf1', 1010, 1011, 9000000000000)");
  at(5, R"(UPDATE spaces SET applied_parts = '{"size":"0123"}')");
  at(6, "INSERT INTO host_ports VALUES ('tcp', 2222, 's-1', 22, 1012)");
  at(7, "UPDATE spaces SET host_key = 'HK', host_key_public = 'ssh-ed25519 HKPUB'");
  at(8, "UPDATE users SET disabled = 1");
  if (version >= 8) hash_service_password(db);
  at(9, R"sql(
UPDATE spaces SET terminal_key = 'TK', terminal_key_public = 'ssh-ed25519 TKPUB';
UPDATE templates SET author_id = 7;
UPDATE users SET quota_spaces = 3, quota_memory = 8589934592, quota_disk = -1;
)sql");
  at(10,
     "INSERT INTO disks VALUES (11, 7, 'data', '/var/lib/bowline/disks/data.qcow2', "
     "10737418240, 'size 10Gi', 1013)");
  at(11,
     "INSERT INTO snapshots VALUES (12, 's-1', 'before', 1, 0, 1, 3, '{\"size\":\"0123\"}', "
     "4096, 1014)");
  at(12, "UPDATE spaces SET suspended_at = 1015, suspend_reason = 'idle for 30m'");
  at(14, "UPDATE spaces SET disk_bytes = 21474836480");
  at(16,
     "INSERT INTO downloads VALUES ('debian-12.qcow2', 'https://example.org/debian-12.qcow2', "
     "1048576, 7, 1016)");
  at(18, R"sql(
INSERT INTO space_shares VALUES ('s-1', 7, 'user', 1017);
INSERT INTO audit_log (id, time, user_id, username, peer, action, space_id, status)
  VALUES (13, 1018, 7, 'alice', '198.51.100.7', 'POST /api/v1/spaces/{id}/start', 's-1', 202);
)sql");
  at(19, "INSERT INTO sso_identities VALUES ('https://id.example', 'sub-alice', 7, 1019)");
}

// Single sign-on identities came with v19.
void expect_sso_identity(Store& s, int version) {
  EXPECT_EQ(s.sso_identities().user_of("https://id.example", "sub-alice"),
            version >= 19 ? std::optional<std::int64_t>(7) : std::nullopt);
  EXPECT_EQ(s.sso_identities().linked(7), version >= 19);
}

// Shares and the audit log came with v18; an upgrade from before starts with neither.
void expect_shares_and_audit(Store& s, int version) {
  const auto shares = s.shares().of_space("s-1");
  ASSERT_EQ(shares.size(), version >= 18 ? 1u : 0u);
  const auto log = s.audit().list({});
  ASSERT_EQ(log.size(), version >= 18 ? 1u : 0u);
  if (version < 18) return;
  EXPECT_EQ(shares[0].role, ShareRole::User);
  EXPECT_EQ(log[0].action, "POST /api/v1/spaces/{id}/start");
  EXPECT_EQ(log[0].peer, "198.51.100.7");
  EXPECT_EQ(log[0].status, 202);
}

void expect_user(Store& s, int version) {
  auto alice = s.users().get(7);
  ASSERT_TRUE(alice);
  EXPECT_EQ(alice->username, "alice");
  EXPECT_EQ(alice->email, "alice@example.org");
  EXPECT_EQ(alice->timezone, "Europe/Berlin");
  EXPECT_EQ(alice->password_hash, "hash");
  EXPECT_EQ(alice->created_at, 1000);
  EXPECT_EQ(alice->ssh_keys, (std::vector<std::string>{"ssh-ed25519 AAAA alice@laptop"}));
  EXPECT_EQ(alice->permissions, (std::set<Permission>{Permission::Admin, Permission::UseVnc}));
  // A clear password (before v8) is hashed on the way; either hash still verifies.
  ASSERT_TRUE(alice->service_password_hash);
  const auto& hash = *alice->service_password_hash;
  ASSERT_TRUE(util::is_sha512_crypt(hash)) << hash;
  EXPECT_EQ(util::sha512_crypt("secret", hash.substr(3, hash.find('$', 3) - 3)), hash);
  EXPECT_EQ(alice->disabled, version >= 8);
  const Quota quota = version >= 9 ? Quota{3, std::nullopt, 8LL << 30, -1} : Quota{};
  EXPECT_EQ(alice->quota, quota);
  // Ids are never reused (v13): the next user comes after every one there was.
  EXPECT_GT(s.users().create({"newcomer", "", "", std::nullopt, "", {}, {}}).id, 7);
}

void expect_credentials(Store& s, int version) {
  auto token = s.tokens().find_by_hash("abc123");
  ASSERT_TRUE(token);
  EXPECT_EQ(token->id, 3);
  EXPECT_EQ(token->user_id, 7);
  EXPECT_EQ(token->name, "cli");
  EXPECT_EQ(token->last_used, 1500);
  EXPECT_EQ(token->expires_at, version >= 2 ? std::optional(kFarFuture) : std::nullopt);
  auto session = s.sessions().use("cookie1", kFarFuture, kFarFuture);
  EXPECT_EQ(session.has_value(), version >= 3);
  if (session) {
    EXPECT_EQ(session->user_id, 7);
    EXPECT_EQ(session->csrf, "csrf1");
  }
}

void expect_template_and_pool(Store& s, int version) {
  auto dev = s.templates().get(5);
  ASSERT_TRUE(dev);
  EXPECT_EQ(dev->name, "dev");
  EXPECT_EQ(dev->yaml, "name: dev");
  EXPECT_EQ(dev->revision, 4);
  EXPECT_EQ(dev->author_id, version >= 9 ? std::optional<std::int64_t>(7) : std::nullopt);
  auto pool = s.pools().get(2);
  ASSERT_TRUE(pool);
  EXPECT_EQ(pool->template_id, 5);
  EXPECT_EQ(pool->size, 3);
}

void expect_space(Store& s, int version) {
  auto box = s.spaces().get("s-1");
  ASSERT_TRUE(box);
  EXPECT_EQ(box->name, "box");
  EXPECT_EQ(box->owner_id, 7);
  EXPECT_EQ(box->template_id, 5);
  EXPECT_EQ(box->applied_template_revision, 3);
  EXPECT_EQ(box->desired_state, DesiredState::Running);
  EXPECT_EQ(box->state, SpaceState::Running);
  EXPECT_EQ(box->ip, "198.51.100.10");
  EXPECT_EQ(box->uuid, "u-1");
  EXPECT_EQ(box->vnc_password, "vncpass1");
  EXPECT_EQ(box->domain_name, "bowline-box");
  EXPECT_EQ(box->node, "node-a");
  EXPECT_EQ(box->created_at, 1004);
  EXPECT_EQ(box->applied_parts, version >= 5 ? R"({"size":"0123"})" : "{}");
  EXPECT_EQ(box->host_key_public, version >= 7 ? "ssh-ed25519 HKPUB" : "");
  EXPECT_EQ(box->terminal_key_public, version >= 9 ? "ssh-ed25519 TKPUB" : "");
  EXPECT_EQ(box->suspended_at, version >= 12 ? 1015 : 0);
  EXPECT_EQ(box->suspend_reason, version >= 12 ? "idle for 30m" : "");
  EXPECT_EQ(box->disk_bytes, version >= 14 ? 21474836480 : 0);
  EXPECT_EQ(box->instance_id, "");
}

void expect_space_belongings(Store& s, int version) {
  auto lease = s.leases().lease_of("s-1", "bridge:br0");
  ASSERT_TRUE(lease);
  EXPECT_EQ(format_ipv4(lease->ip), "198.51.100.10");
  auto ports = s.host_ports().of_space("s-1");
  ASSERT_EQ(ports.size(), version >= 6 ? 1u : 0u);
  if (!ports.empty()) {
    EXPECT_EQ(ports[0].host_port, 2222);
  }
  auto snapshot = s.snapshots().find("s-1", "before");
  ASSERT_EQ(snapshot.has_value(), version >= 11);
  if (snapshot) {
    EXPECT_TRUE(snapshot->memory);
    EXPECT_EQ(snapshot->template_revision, 3);
    EXPECT_EQ(snapshot->size_bytes, 4096);
  }
  EXPECT_EQ(s.operations().get(9)->state, OperationState::Succeeded);
  auto events = s.events().events_since(0, 10);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].seq, 41);
  EXPECT_EQ(events[0].payload["state"], "running");
}

void expect_owner_belongings(Store& s, int version) {
  auto disk = s.disks().find(7, "data");
  ASSERT_EQ(disk.has_value(), version >= 10);
  if (disk) {
    EXPECT_EQ(disk->path, "/var/lib/bowline/disks/data.qcow2");
    EXPECT_EQ(disk->size_bytes, 10737418240);
    EXPECT_EQ(disk->source, "size 10Gi");
  }
  EXPECT_EQ(s.downloads().charged("debian-12.qcow2"), version >= 16);
  EXPECT_EQ(s.downloads().bytes_of(7), version >= 16 ? 1048576 : 0);
}

}  // namespace

void write_records_at(Db& db, int version) {
  ASSERT_EQ(schema_version(db), version);
  write_version_one_records(db);
  write_later_records(db, version);
}

void expect_records_intact(Store& s, int version) {
  ASSERT_EQ(schema_version(s.db()), latest_schema_version());
  EXPECT_EQ(s.db().pragma_text("integrity_check"), "ok");
  EXPECT_FALSE(s.db().prepare("PRAGMA foreign_key_check").step());
  expect_user(s, version);
  expect_credentials(s, version);
  expect_template_and_pool(s, version);
  expect_space(s, version);
  expect_space_belongings(s, version);
  expect_owner_belongings(s, version);
  expect_shares_and_audit(s, version);
  expect_sso_identity(s, version);
}

std::filesystem::path fixture_file(int version) {
  char name[32];
  std::snprintf(name, sizeof name, "schema-%02d.sqlite", version);
  return std::filesystem::path(BOWLINE_SOURCE_DIR) / "tests/data/store" / name;
}

}  // namespace bowline::store::testing
