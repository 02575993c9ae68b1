// Which connections the HTTP server keeps when it must choose. Every open connection is
// counted under its client's address (address_prefix: an IPv6 address by its /64), and
// strangers (connections that have not yet sent a request with a valid credential) apart
// from the authenticated. Strangers waiting for a request are shed oldest first, so that
// connections that never finish a request cannot keep a fresh client out: when one address
// holds more of them than its share, when all strangers together reach what is left after the
// reserve kept for authenticated clients, and when descriptors run out. A stranger whose
// request is being answered is not shed meanwhile. Thread-safe; it knows no sockets.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace bowline::api {

struct ConnectionLimits {
  std::size_t max_connections = 8192;        // in all
  std::size_t authenticated_reserve = 1024;  // of those, never taken by strangers
  std::size_t max_per_address = 1024;        // from one address, of either kind
  std::size_t max_strangers_per_address = 256;
};

// The limits for `max_connections` under `descriptors` (the open-files limit): a quarter of
// the descriptors (at least 64) stays for everything else (files, libvirt, the guests' side of
// tunnels), an eighth of the connections for authenticated clients.
ConnectionLimits connection_limits(std::size_t max_connections, std::size_t descriptors);

class ConnectionLedger {
 public:
  using Id = std::uint64_t;
  explicit ConnectionLedger(ConnectionLimits limits) : limits_(limits) {}

  struct Admission {
    Id id = 0;             // 0: refused, close the new connection at once
    std::vector<Id> shed;  // strangers to close now, to make room (no longer counted)
  };
  // A connection just accepted from `address` (an IP address, without the port).
  Admission admit(const std::string& address);
  // It sent a request with a valid credential: it is shed only when it closes itself.
  void authenticated(Id id);
  // A complete request of it is being answered (not shed meanwhile); then it waits again.
  void busy(Id id);
  void waiting(Id id);
  void release(Id id);  // it closed; nothing for one that was shed or is unknown
  // The descriptors ran out: the oldest stranger, to close now (no longer counted).
  std::optional<Id> shed_oldest_stranger();

  std::size_t open() const;
  std::size_t strangers() const;
  const ConnectionLimits& limits() const { return limits_; }

 private:
  struct Entry {
    std::string key;
    bool authenticated = false;
    bool busy = false;
  };
  struct PerAddress {
    std::size_t all = 0;
    std::set<Id> strangers;  // waiting ones, by id: oldest first
  };
  void drop(Id id);  // with the mutex held
  void shed(Id id, Admission& out);

  const ConnectionLimits limits_;
  mutable std::mutex mutex_;
  Id next_ = 1;
  std::map<Id, Entry> entries_;
  std::set<Id> strangers_;  // waiting for a request, by id: oldest first
  std::size_t busy_strangers_ = 0;
  std::map<std::string, PerAddress> addresses_;
};

}  // namespace bowline::api
