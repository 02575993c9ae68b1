// The store: one SQLite database file (WAL) holding bowline's state, migrated to the latest
// schema when opened, with one repository per table family.
//
//   util::SystemClock clock;
//   store::Store store(data_dir / "bowline.db", clock);
//   auto tmpl = store.templates().create("dev", yaml);
//   {
//     auto transaction = store.transaction();  // several calls as one
//     auto space = store.spaces().create({...});
//     auto lease = store.leases().allocate_ip(key, space.id, first, last, excluded);
//     if (!lease) throw ...;                    // rolled back: the space row goes too
//     transaction.commit();
//   }
//
// Thread-safe: every call holds the connection's lock; a transaction holds it until it ends
// (on the thread that began it). Repository references live as long as the Store.
#pragma once

#include <chrono>
#include <filesystem>
#include <memory>

#include "store/audit.hpp"
#include "store/disks.hpp"
#include "store/downloads.hpp"
#include "store/host_ports.hpp"
#include "store/leases.hpp"
#include "store/migrations.hpp"
#include "store/node_states.hpp"
#include "store/operations.hpp"
#include "store/sessions.hpp"
#include "store/shares.hpp"
#include "store/snapshots.hpp"
#include "store/space_list_rows.hpp"
#include "store/spaces.hpp"
#include "store/sqlite.hpp"
#include "store/sso_identities.hpp"
#include "store/templates.hpp"
#include "store/users.hpp"
#include "util/clock.hpp"

namespace bowline::store {

class Store {
 public:
  struct Options {
    std::chrono::milliseconds busy_timeout{10'000};  // how long a writer waits for another
  };

  // Opens or creates the file and migrates it to the latest schema. Throws StoreError when
  // the file cannot be opened or its schema is newer than this program.
  Store(const std::filesystem::path& file, const util::Clock& clock) : Store(file, clock, {}) {}
  Store(const std::filesystem::path& file, const util::Clock& clock, Options options);
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // BEGIN IMMEDIATE on this connection; repository calls made before it ends are part of it.
  Transaction transaction() { return Transaction(db_); }

  UserRepository& users() { return users_; }
  TokenRepository& tokens() { return tokens_; }
  SessionRepository& sessions() { return sessions_; }
  TemplateRepository& templates() { return templates_; }
  PoolRepository& pools() { return pools_; }
  SpaceRepository& spaces() { return spaces_; }
  LeaseRepository& leases() { return leases_; }
  HostPortRepository& host_ports() { return host_ports_; }
  OperationRepository& operations() { return operations_; }
  EventRepository& events() { return events_; }
  DiskRepository& disks() { return disks_; }
  SnapshotRepository& snapshots() { return snapshots_; }
  DownloadRepository& downloads() { return downloads_; }
  ShareRepository& shares() { return shares_; }
  SsoIdentityRepository& sso_identities() { return sso_identities_; }
  AuditRepository& audit() { return audit_; }
  NodeStateRepository& node_states() { return node_states_; }

  Db& db() { return db_; }
  // A second connection, for long reads (the list of every space): in WAL mode it neither
  // waits for a writer on db() nor makes one wait, so a big list is not queued behind the
  // engine's writes and does not hold them up. It sees committed data only, never what an
  // open transaction on db() has written so far. Read-only.
  Db& reader() { return *reader_; }
  // Users and tokens on reader(), for the reads of every request (authentication), so that
  // none waits for the engine's writes on db(). Reads only; committed data only.
  UserRepository& read_users() { return *read_users_; }
  TokenRepository& read_tokens() { return *read_tokens_; }
  // Spaces and templates on reader(), for what a request shows of them (a user's quota usage)
  // without waiting for the engine's writes. Reads only; committed data only.
  SpaceRepository& read_spaces() { return *read_spaces_; }
  TemplateRepository& read_templates() { return *read_templates_; }
  // Disks, snapshots and downloads on reader(), for what a request shows (quota usage).
  DiskRepository& read_disks() { return *read_disks_; }
  SnapshotRepository& read_snapshots() { return *read_snapshots_; }
  DownloadRepository& read_downloads() { return *read_downloads_; }
  // The rows of the list of spaces, on reader(): the list neither waits for the engine's
  // writes nor holds them up.
  SpaceListRows& read_space_list() { return *read_space_list_; }
  const util::Clock& clock() const { return clock_; }

 private:
  const util::Clock& clock_;
  Db db_;
  std::unique_ptr<Db> reader_;  // opened once the schema is migrated
  UserRepository users_{db_, clock_};
  TokenRepository tokens_{db_, clock_};
  SessionRepository sessions_{db_, clock_};
  TemplateRepository templates_{db_, clock_};
  PoolRepository pools_{db_, clock_};
  SpaceRepository spaces_{db_, clock_};
  LeaseRepository leases_{db_, clock_};
  HostPortRepository host_ports_{db_, clock_};
  OperationRepository operations_{db_, clock_};
  EventRepository events_{db_, clock_};
  DiskRepository disks_{db_, clock_};
  SnapshotRepository snapshots_{db_, clock_};
  DownloadRepository downloads_{db_, clock_};
  ShareRepository shares_{db_, clock_};
  SsoIdentityRepository sso_identities_{db_, clock_};
  NodeStateRepository node_states_{db_, clock_};
  AuditRepository audit_{db_, clock_};
  std::unique_ptr<UserRepository> read_users_;
  std::unique_ptr<TokenRepository> read_tokens_;
  std::unique_ptr<SpaceRepository> read_spaces_;
  std::unique_ptr<TemplateRepository> read_templates_;
  std::unique_ptr<DiskRepository> read_disks_;
  std::unique_ptr<SnapshotRepository> read_snapshots_;
  std::unique_ptr<DownloadRepository> read_downloads_;
  std::unique_ptr<SpaceListRows> read_space_list_;
};

}  // namespace bowline::store
