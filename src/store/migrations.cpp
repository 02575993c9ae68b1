#include "store/migrations.hpp"

#include <string>
#include <utility>
#include <vector>

#include "util/sha512_crypt.hpp"

namespace bowline::store {

namespace {

// v1: the first real schema. Times are Unix milliseconds (INTEGER); IPv4 addresses are
// host-order integers; lists and sets are JSON arrays in TEXT columns.
void create_initial_schema(Db& db) {
  db.exec(R"sql(
CREATE TABLE users (
  id               INTEGER PRIMARY KEY,
  username         TEXT NOT NULL UNIQUE,
  email            TEXT NOT NULL DEFAULT '',
  timezone         TEXT NOT NULL DEFAULT '',
  service_password TEXT,
  password_hash    TEXT NOT NULL DEFAULT '',
  ssh_keys         TEXT NOT NULL DEFAULT '[]',
  permissions      TEXT NOT NULL DEFAULT '[]',
  created_at       INTEGER NOT NULL
) STRICT;

CREATE TABLE api_tokens (
  id           INTEGER PRIMARY KEY,
  user_id      INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  token_sha256 TEXT NOT NULL UNIQUE,
  name         TEXT NOT NULL DEFAULT '',
  created_at   INTEGER NOT NULL,
  last_used    INTEGER
) STRICT;
CREATE INDEX api_tokens_by_user ON api_tokens(user_id);

CREATE TABLE templates (
  id         INTEGER PRIMARY KEY,
  name       TEXT NOT NULL UNIQUE,
  yaml       TEXT NOT NULL,
  revision   INTEGER NOT NULL DEFAULT 1,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
) STRICT;

CREATE TABLE pools (
  id          INTEGER PRIMARY KEY,
  name        TEXT NOT NULL UNIQUE,
  template_id INTEGER NOT NULL REFERENCES templates(id),
  size        INTEGER NOT NULL CHECK (size >= 0),
  created_at  INTEGER NOT NULL,
  updated_at  INTEGER NOT NULL
) STRICT;

CREATE TABLE spaces (
  id                        TEXT PRIMARY KEY,
  name                      TEXT NOT NULL,
  owner_id                  INTEGER REFERENCES users(id),
  template_id               INTEGER NOT NULL REFERENCES templates(id),
  applied_template_revision INTEGER NOT NULL DEFAULT 0,
  desired_state             TEXT NOT NULL,
  state                     TEXT NOT NULL,
  error                     TEXT NOT NULL DEFAULT '',
  ip                        TEXT,
  uuid                      TEXT NOT NULL,
  vnc_password              TEXT NOT NULL DEFAULT '',
  domain_name               TEXT NOT NULL UNIQUE,
  node                      TEXT NOT NULL DEFAULT '',
  pool_id                   INTEGER REFERENCES pools(id) ON DELETE SET NULL,
  created_at                INTEGER NOT NULL,
  updated_at                INTEGER NOT NULL,
  UNIQUE (owner_id, name)
) STRICT;
CREATE INDEX spaces_by_template ON spaces(template_id);
CREATE INDEX spaces_by_pool ON spaces(pool_id);

CREATE TABLE ip_leases (
  network_key TEXT NOT NULL,
  ip          INTEGER NOT NULL CHECK (ip BETWEEN 0 AND 4294967295),
  space_id    TEXT NOT NULL REFERENCES spaces(id) ON DELETE CASCADE,
  created_at  INTEGER NOT NULL,
  PRIMARY KEY (network_key, ip),
  UNIQUE (space_id, network_key)
) STRICT;

-- Operations and events are history: they keep a deleted space's id, so no foreign key.
CREATE TABLE operations (
  id          INTEGER PRIMARY KEY,
  space_id    TEXT,
  kind        TEXT NOT NULL,
  state       TEXT NOT NULL,
  step        TEXT NOT NULL DEFAULT '',
  progress    INTEGER NOT NULL DEFAULT 0 CHECK (progress BETWEEN 0 AND 100),
  error       TEXT NOT NULL DEFAULT '',
  created_at  INTEGER NOT NULL,
  updated_at  INTEGER NOT NULL,
  finished_at INTEGER
) STRICT;
CREATE INDEX operations_by_space ON operations(space_id);

CREATE TABLE events (
  seq      INTEGER PRIMARY KEY AUTOINCREMENT,
  time     INTEGER NOT NULL,
  kind     TEXT NOT NULL,
  space_id TEXT,
  payload  TEXT NOT NULL DEFAULT '{}'
) STRICT;
)sql");
}

// v2: API tokens may expire (web sessions and short-lived CLI logins); NULL never expires.
void add_token_expiry(Db& db) {
  db.exec("ALTER TABLE api_tokens ADD COLUMN expires_at INTEGER");
}

// v3: browser logins. Only the cookie's SHA-256 is kept; the CSRF token is not a credential on
// its own (it is useless without the HttpOnly cookie).
void add_web_sessions(Db& db) {
  db.exec(R"sql(
CREATE TABLE web_sessions (
  id            INTEGER PRIMARY KEY,
  user_id       INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  cookie_sha256 TEXT NOT NULL UNIQUE,
  csrf          TEXT NOT NULL,
  created_at    INTEGER NOT NULL,
  last_seen     INTEGER NOT NULL,
  expires_at    INTEGER NOT NULL
) STRICT;
CREATE INDEX web_sessions_by_user ON web_sessions(user_id);
)sql");
}

// v4: a journal of which spaces changed, for the API's list cache (api/spaces_list). A row
// per space (by rowid, the list's creation order) that was made, changed or deleted, with a
// sequence number that only grows; renaming an owner or changing a template's name or
// revision touches their spaces, since the list shows those too. Triggers keep it, so no
// writer (repository, engine, a test writing behind the API) has to remember to.
void add_space_changes(Db& db) {
  db.exec(R"sql(
CREATE TABLE space_changes (
  space_rowid INTEGER PRIMARY KEY,
  seq         INTEGER NOT NULL
) STRICT;
CREATE INDEX space_changes_by_seq ON space_changes(seq);
INSERT INTO space_changes (space_rowid, seq) SELECT rowid, 1 FROM spaces;
CREATE TRIGGER space_made AFTER INSERT ON spaces BEGIN
  INSERT INTO space_changes (space_rowid, seq)
    VALUES (NEW.rowid, (SELECT coalesce(max(seq), 0) + 1 FROM space_changes))
    ON CONFLICT (space_rowid) DO UPDATE SET seq = excluded.seq;
END;
CREATE TRIGGER space_changed AFTER UPDATE ON spaces BEGIN
  INSERT INTO space_changes (space_rowid, seq)
    VALUES (NEW.rowid, (SELECT coalesce(max(seq), 0) + 1 FROM space_changes))
    ON CONFLICT (space_rowid) DO UPDATE SET seq = excluded.seq;
END;
CREATE TRIGGER space_deleted AFTER DELETE ON spaces BEGIN
  INSERT INTO space_changes (space_rowid, seq)
    VALUES (OLD.rowid, (SELECT coalesce(max(seq), 0) + 1 FROM space_changes))
    ON CONFLICT (space_rowid) DO UPDATE SET seq = excluded.seq;
END;
CREATE TRIGGER space_owner_renamed AFTER UPDATE OF username ON users
  WHEN NEW.username IS NOT OLD.username BEGIN
  INSERT INTO space_changes (space_rowid, seq)
    SELECT rowid, (SELECT coalesce(max(seq), 0) + 1 FROM space_changes) FROM spaces
    WHERE owner_id = NEW.id
    ON CONFLICT (space_rowid) DO UPDATE SET seq = excluded.seq;
END;
CREATE TRIGGER space_template_changed AFTER UPDATE OF name, revision ON templates
  WHEN NEW.name IS NOT OLD.name OR NEW.revision IS NOT OLD.revision BEGIN
  INSERT INTO space_changes (space_rowid, seq)
    SELECT rowid, (SELECT coalesce(max(seq), 0) + 1 FROM space_changes) FROM spaces
    WHERE template_id = NEW.id
    ON CONFLICT (space_rowid) DO UPDATE SET seq = excluded.seq;
END;
)sql");
}

// v5: what the last start of a space applied, part by part (plan/change_parts.hpp), so that
// `space info` can say which template changes are pending and when they arrive.
void add_applied_parts(Db& db) {
  db.exec("ALTER TABLE spaces ADD COLUMN applied_parts TEXT NOT NULL DEFAULT '{}'");
}

// v6: host ports that publish spaces' guest ports (template external: PortList on libvirt).
void add_host_ports(Db& db) {
  db.exec(R"sql(
CREATE TABLE host_ports (
  protocol   TEXT NOT NULL CHECK (protocol IN ('tcp', 'udp')),
  host_port  INTEGER NOT NULL CHECK (host_port BETWEEN 1 AND 65535),
  space_id   TEXT NOT NULL REFERENCES spaces(id) ON DELETE CASCADE,
  guest_port INTEGER NOT NULL CHECK (guest_port BETWEEN 1 AND 65535),
  created_at INTEGER NOT NULL,
  PRIMARY KEY (protocol, host_port),
  UNIQUE (space_id, protocol, guest_port)
) STRICT;
)sql");
}

// v7: each space's SSH host key, made by bowline and given to the guest by cloud-init, so that
// clients know it before the first connection. Spaces an older server made have none.
void add_host_keys(Db& db) {
  db.exec("ALTER TABLE spaces ADD COLUMN host_key TEXT NOT NULL DEFAULT ''");
  db.exec("ALTER TABLE spaces ADD COLUMN host_key_public TEXT NOT NULL DEFAULT ''");
}

// v8: accounts can be disabled, and a service password is kept only as its SHA-512 crypt hash
// (the form the guest gets): the clear passwords older servers stored are hashed in place.
void disable_users_and_hash_service_passwords(Db& db) {
  db.exec("ALTER TABLE users ADD COLUMN disabled INTEGER NOT NULL DEFAULT 0");
  std::vector<std::pair<std::int64_t, std::string>> clear;
  auto select =
      db.prepare("SELECT id, service_password FROM users WHERE service_password IS NOT NULL");
  while (select.step()) clear.emplace_back(select.column_int64(0), select.column_text(1));
  auto update = db.prepare("UPDATE users SET service_password = ? WHERE id = ?");
  for (const auto& [id, password] : clear) {
    if (util::is_sha512_crypt(password)) continue;
    update.reset();
    update.bind_all(util::sha512_crypt(password, util::random_crypt_salt()), id).run();
  }
}

// v9: what a team's server needs to be shared. Each space's key pair for the browser terminal
// (the server's SSH client key into the guest: its public half goes to the owner's
// authorized_keys through cloud-init, its private half never leaves the server); who wrote a
// template (its author reads its YAML as admins do); each user's quota (NULL: the server's
// default, a negative number: no limit).
void add_terminal_keys_authors_and_quotas(Db& db) {
  db.exec(R"sql(
ALTER TABLE spaces ADD COLUMN terminal_key TEXT NOT NULL DEFAULT '';
ALTER TABLE spaces ADD COLUMN terminal_key_public TEXT NOT NULL DEFAULT '';
ALTER TABLE templates ADD COLUMN author_id INTEGER REFERENCES users(id) ON DELETE SET NULL;
ALTER TABLE users ADD COLUMN quota_spaces INTEGER;
ALTER TABLE users ADD COLUMN quota_cpus INTEGER;
ALTER TABLE users ADD COLUMN quota_memory INTEGER;
ALTER TABLE users ADD COLUMN quota_disk INTEGER;
)sql");
}

// v10: disks as objects of their own: each is a user's, by a name unique among
// theirs, with its file's path and virtual size (what it counts against the owner's quota) and
// where it came from, for people ("image debian-12", "size 10Gi", "space dev").
void add_disks(Db& db) {
  db.exec(R"sql(
CREATE TABLE disks (
  id         INTEGER PRIMARY KEY,
  owner_id   INTEGER NOT NULL REFERENCES users(id),
  name       TEXT NOT NULL,
  path       TEXT NOT NULL UNIQUE,
  size_bytes INTEGER NOT NULL CHECK (size_bytes >= 0),
  source     TEXT NOT NULL DEFAULT '',
  created_at INTEGER NOT NULL,
  UNIQUE (owner_id, name)
) STRICT;
)sql");
}

// v11: snapshots of spaces. libvirt holds their data and metadata; the row is what
// bowline says of each: whether it holds the running state, whether the guest's filesystems
// were frozen for it ("best effort" when its agent did not answer), the template revision the
// space ran then, and the bytes its disks held (what it counts against the owner's quota).
void add_snapshots(Db& db) {
  db.exec(R"sql(
CREATE TABLE snapshots (
  id          INTEGER PRIMARY KEY,
  space_id    TEXT NOT NULL REFERENCES spaces(id) ON DELETE CASCADE,
  name        TEXT NOT NULL,
  memory      INTEGER NOT NULL DEFAULT 0,
  best_effort INTEGER NOT NULL DEFAULT 0,
  running     INTEGER NOT NULL DEFAULT 0,
  template_revision INTEGER NOT NULL DEFAULT 0,
  applied_parts TEXT NOT NULL DEFAULT '',
  size_bytes  INTEGER NOT NULL DEFAULT 0 CHECK (size_bytes >= 0),
  created_at  INTEGER NOT NULL,
  UNIQUE (space_id, name)
) STRICT;
)sql");
}

// v12: when and why a space was suspended (idle suspend); the state column takes
// the new names "suspending" and "suspended" as it is.
void add_suspend_facts(Db& db) {
  db.exec(R"sql(
ALTER TABLE spaces ADD COLUMN suspended_at INTEGER NOT NULL DEFAULT 0;
ALTER TABLE spaces ADD COLUMN suspend_reason TEXT NOT NULL DEFAULT '';
)sql");
}

// v13: a user's id is never given to another user. Without AUTOINCREMENT SQLite reuses the
// highest id once its row is gone, and what still names that id (operations, events, the
// API's memory of who owned a deleted space) would be the newcomer's to read. The table is
// made again (SQLite cannot add AUTOINCREMENT in place), its rows and its trigger with it;
// the sequence starts past every id a space or a disk ever named.
void never_reuse_user_ids(Db& db) {
  db.exec(R"sql(
CREATE TABLE users_autoincrement (
  id               INTEGER PRIMARY KEY AUTOINCREMENT,
  username         TEXT NOT NULL UNIQUE,
  email            TEXT NOT NULL DEFAULT '',
  timezone         TEXT NOT NULL DEFAULT '',
  service_password TEXT,
  password_hash    TEXT NOT NULL DEFAULT '',
  ssh_keys         TEXT NOT NULL DEFAULT '[]',
  permissions      TEXT NOT NULL DEFAULT '[]',
  created_at       INTEGER NOT NULL,
  disabled         INTEGER NOT NULL DEFAULT 0,
  quota_spaces     INTEGER,
  quota_cpus       INTEGER,
  quota_memory     INTEGER,
  quota_disk       INTEGER
) STRICT;
INSERT INTO users_autoincrement
  SELECT id, username, email, timezone, service_password, password_hash, ssh_keys, permissions,
         created_at, disabled, quota_spaces, quota_cpus, quota_memory, quota_disk FROM users;
DROP TABLE users;
ALTER TABLE users_autoincrement RENAME TO users;
INSERT INTO sqlite_sequence (name, seq)
  SELECT 'users', max(coalesce((SELECT max(id) FROM users), 0),
                      coalesce((SELECT max(owner_id) FROM spaces), 0),
                      coalesce((SELECT max(owner_id) FROM disks), 0))
  WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'users');
UPDATE sqlite_sequence
  SET seq = max(seq, coalesce((SELECT max(owner_id) FROM spaces), 0),
                     coalesce((SELECT max(owner_id) FROM disks), 0))
  WHERE name = 'users';
CREATE TRIGGER space_owner_renamed AFTER UPDATE OF username ON users
  WHEN NEW.username IS NOT OLD.username BEGIN
  INSERT INTO space_changes (space_rowid, seq)
    SELECT rowid, (SELECT coalesce(max(seq), 0) + 1 FROM space_changes) FROM spaces
    WHERE owner_id = NEW.id
    ON CONFLICT (space_rowid) DO UPDATE SET seq = excluded.seq;
END;
)sql");
}

// v14: the virtual size of each space's own disk as its node made it: what the space counts
// against its owner's disk quota when its template names no size (the image's size then).
void add_space_disk_sizes(Db& db) {
  db.exec("ALTER TABLE spaces ADD COLUMN disk_bytes INTEGER NOT NULL DEFAULT 0");
}

// v15: leases of bridged addresses are kept per bridge ("bridge:br0"), no longer per bridge and
// range ("bridge:br0:198.51.100.0/24"), so that two templates whose ranges overlap on one
// bridge cannot give one address to two spaces. Where that happened already, the first lease
// keeps the address; the other space loses it and takes a free one at its next start.
void key_leases_by_bridge(Db& db) {
  db.exec(R"sql(
UPDATE OR IGNORE ip_leases SET network_key = substr(network_key, 1, instr(substr(network_key, 8), ':') + 6)
  WHERE network_key LIKE 'bridge:%:%';
UPDATE spaces SET ip = NULL
  WHERE id IN (SELECT space_id FROM ip_leases WHERE network_key LIKE 'bridge:%:%');
DELETE FROM ip_leases WHERE network_key LIKE 'bridge:%:%';
)sql");
}

// v16: who each download of the base image cache is charged to (store/downloads.hpp); a user
// who goes leaves their downloads charged to nobody.
void add_downloads(Db& db) {
  db.exec(R"sql(
CREATE TABLE downloads (
  file       TEXT PRIMARY KEY,
  url        TEXT NOT NULL,
  size_bytes INTEGER NOT NULL CHECK (size_bytes >= 0),
  user_id    INTEGER REFERENCES users(id) ON DELETE SET NULL,
  created_at INTEGER NOT NULL
) STRICT;
CREATE INDEX downloads_by_user ON downloads(user_id);
)sql");
}

// v17: the cloud-init instance-id a space's seed carries; empty: the one it was made with.
// A new one makes cloud-init apply a changed template cloudInit at the next start.
void add_instance_ids(Db& db) {
  db.exec("ALTER TABLE spaces ADD COLUMN instance_id TEXT NOT NULL DEFAULT ''");
}

// v18: spaces shared with other users, each with a role (store/shares.hpp), and the audit log
// (store/audit.hpp): rows the server only appends, and deletes by age alone. A trigger refuses
// any change to a row written, so that no code path, present or future, rewrites history.
void add_shares_and_audit(Db& db) {
  db.exec(R"sql(
CREATE TABLE space_shares (
  space_id   TEXT NOT NULL REFERENCES spaces(id) ON DELETE CASCADE,
  user_id    INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  role       TEXT NOT NULL CHECK (role IN ('viewer', 'user', 'admin')),
  created_at INTEGER NOT NULL,
  PRIMARY KEY (space_id, user_id)
) STRICT;
CREATE INDEX space_shares_by_user ON space_shares(user_id);
CREATE TABLE audit_log (
  id       INTEGER PRIMARY KEY AUTOINCREMENT,
  time     INTEGER NOT NULL,
  user_id  INTEGER,
  username TEXT NOT NULL,
  peer     TEXT NOT NULL,
  action   TEXT NOT NULL,
  space_id TEXT,
  status   INTEGER NOT NULL
) STRICT;
CREATE INDEX audit_log_by_time ON audit_log(time);
CREATE TRIGGER audit_log_append_only BEFORE UPDATE ON audit_log
BEGIN
  SELECT RAISE(ABORT, 'the audit log is append-only');
END;
)sql");
}

// v19: users who log in through single sign-on, by their identity at the provider (issuer and
// subject, which never change) rather than by a name the provider might give someone else.
void add_sso_identities(Db& db) {
  db.exec(R"sql(
CREATE TABLE sso_identities (
  issuer     TEXT NOT NULL,
  subject    TEXT NOT NULL,
  user_id    INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (issuer, subject)
) STRICT;
CREATE INDEX sso_identities_by_user ON sso_identities(user_id);
)sql");
}

// v20: what operators set on nodes (a cordon) outlives a server restart.
void add_node_states(Db& db) {
  db.exec(R"sql(
CREATE TABLE node_states (
  name       TEXT PRIMARY KEY,
  cordoned   INTEGER NOT NULL DEFAULT 0 CHECK (cordoned IN (0, 1)),
  reason     TEXT NOT NULL DEFAULT '',
  updated_at INTEGER NOT NULL
) STRICT;
)sql");
}

void check_foreign_keys(Db& db, const Migration& step) {
  auto statement = db.prepare("PRAGMA foreign_key_check");
  if (statement.step())
    throw StoreError("schema migration " + std::to_string(step.version) + " (" +
                     std::string(step.name) + ") left a row in table '" + statement.column_text(0) +
                     "' pointing at a missing row of '" + statement.column_text(2) + "'");
}

}  // namespace

const std::vector<Migration>& migrations() {
  static const std::vector<Migration> steps{
      {1, "initial schema", create_initial_schema},
      {2, "api tokens may expire", add_token_expiry},
      {3, "web sessions", add_web_sessions},
      {4, "space change journal", add_space_changes},
      {5, "parts applied at a space's last start", add_applied_parts},
      {6, "host ports of external spaces", add_host_ports},
      {7, "spaces' SSH host keys", add_host_keys},
      {8, "disabled users, service passwords as hashes", disable_users_and_hash_service_passwords},
      {9, "terminal keys, template authors, user quotas", add_terminal_keys_authors_and_quotas},
      {10, "disks", add_disks},
      {11, "snapshots", add_snapshots},
      {12, "when and why a space was suspended", add_suspend_facts},
      {13, "user ids never reused", never_reuse_user_ids},
      {14, "spaces' disk sizes", add_space_disk_sizes},
      {15, "bridged leases per bridge", key_leases_by_bridge},
      {16, "downloads charged to users", add_downloads},
      {17, "cloud-init instance ids", add_instance_ids},
      {18, "space shares and the audit log", add_shares_and_audit},
      {19, "single sign-on identities", add_sso_identities},
      {20, "node states (cordons)", add_node_states},
  };
  return steps;
}

int latest_schema_version() {
  return migrations().back().version;
}

int schema_version(Db& db) {
  return static_cast<int>(db.pragma_int("user_version"));
}

namespace {

// Every step in one IMMEDIATE transaction: an upgrade that fails at any step leaves the file
// exactly as it was, so the bowline it came from still opens it (to that one, a half-done
// upgrade would be a schema from the future it refuses).
void apply_steps(Db& db, int goal) {
  Transaction transaction(db);
  for (const auto& step : migrations()) {
    if (step.version > goal) break;
    // Another connection may have applied this step since we looked.
    if (schema_version(db) >= step.version) continue;
    try {
      step.apply(db);
      check_foreign_keys(db, step);
      db.exec("PRAGMA user_version=" + std::to_string(step.version));
    } catch (const StoreError& e) {
      throw StoreError("schema migration " + std::to_string(step.version) + " (" +
                       std::string(step.name) + ") failed: " + e.what());
    }
  }
  transaction.commit();
}

}  // namespace

void migrate(Db& db, std::optional<int> target) {
  const int latest = latest_schema_version();
  const int goal = target.value_or(latest);
  if (goal < 0 || goal > latest)
    throw StoreError("no schema version " + std::to_string(goal) + " (latest is " +
                     std::to_string(latest) + ")");

  auto guard = db.lock();
  if (int current = schema_version(db); current > latest)
    throw StoreError("the database " + db.file().string() + " has schema version " +
                     std::to_string(current) + ", newer than this bowline understands (" +
                     std::to_string(latest) + "); run a newer bowline");
  if (schema_version(db) >= goal) return;

  // PRAGMA foreign_keys is ignored inside a transaction, so switch it off around the steps.
  db.exec("PRAGMA foreign_keys=OFF");
  try {
    apply_steps(db, goal);
  } catch (...) {
    db.exec("PRAGMA foreign_keys=ON");
    throw;
  }
  db.exec("PRAGMA foreign_keys=ON");
}

}  // namespace bowline::store
