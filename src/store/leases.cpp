#include "store/leases.hpp"

#include <algorithm>
#include <string>

namespace bowline::store {

namespace {

constexpr const char* kLeaseColumns = "network_key, ip, space_id, created_at";

IpLease read_lease(const Statement& row) {
  IpLease lease;
  lease.network_key = row.column_text(0);
  lease.ip = static_cast<std::uint32_t>(row.column_int64(1));
  lease.space_id = row.column_text(2);
  lease.created_at = row.column_int64(3);
  return lease;
}

// The leases WHERE `condition` (with its ? bound to `args`), as one or as a list.
template <typename... Args>
std::optional<IpLease> one_lease(Db& db, const char* condition, const Args&... args) {
  auto select =
      db.cached(std::string("SELECT ") + kLeaseColumns + " FROM ip_leases WHERE " + condition);
  if (!select->bind_all(args...).step()) return std::nullopt;
  return read_lease(*select);
}

template <typename... Args>
std::vector<IpLease> leases_where(Db& db, const char* condition, const Args&... args) {
  auto select =
      db.cached(std::string("SELECT ") + kLeaseColumns + " FROM ip_leases WHERE " + condition);
  select->bind_all(args...);
  std::vector<IpLease> out;
  while (select->step()) out.push_back(read_lease(*select));
  return out;
}

std::string describe_holder(Db& db, const IpLease& lease) {
  auto select = db.cached("SELECT name FROM spaces WHERE id = ?");
  if (!select->bind(1, lease.space_id).step()) return "space " + lease.space_id;
  return "space '" + select->column_text(0) + "' (" + lease.space_id + ")";
}

}  // namespace

std::optional<IpLease> LeaseRepository::allocate_ip(std::string_view network_key,
                                                    std::string_view space_id, std::uint32_t first,
                                                    std::uint32_t last,
                                                    const std::set<std::uint32_t>& excluded) {
  if (first > last)
    throw StoreError("empty address range " + format_ipv4(first) + "-" + format_ipv4(last));
  Transaction transaction(db_);
  if (auto existing = lease_of(space_id, network_key)) return existing;

  // Every taken address in the range, ascending: leased ones merged with excluded ones.
  std::vector<std::uint32_t> taken;
  {
    auto select = db_.cached(
        "SELECT ip FROM ip_leases WHERE network_key = ? AND ip BETWEEN ? AND ? ORDER BY ip");
    select->bind_all(network_key, first, last);
    while (select->step()) taken.push_back(static_cast<std::uint32_t>(select->column_int64(0)));
  }
  std::vector<std::uint32_t> merged;
  merged.reserve(taken.size() + excluded.size());
  std::set_union(taken.begin(), taken.end(), excluded.lower_bound(first),
                 excluded.upper_bound(last), std::back_inserter(merged));

  // The first gap: walk the sorted taken addresses while they are contiguous from `first`.
  // Counting in 64 bits keeps last = 255.255.255.255 from wrapping.
  std::uint64_t candidate = first;
  for (auto ip : merged) {
    if (ip != candidate) break;
    ++candidate;
  }
  if (candidate > last) return std::nullopt;

  auto ip = static_cast<std::uint32_t>(candidate);
  auto when = now();
  try {
    db_.cached("INSERT INTO ip_leases (network_key, ip, space_id, created_at) VALUES (?, ?, ?, ?)")
        ->bind_all(network_key, ip, space_id, when)
        .run();
  } catch (const SqliteError& e) {
    if (violates_foreign_key(e))
      throw NotFoundError("cannot lease an address to space '" + std::string(space_id) +
                          "': no such space");
    throw;
  }
  transaction.commit();
  return IpLease{std::string(network_key), ip, std::string(space_id), when};
}

IpLease LeaseRepository::change_ip(std::string_view network_key, std::string_view space_id,
                                   std::uint32_t ip) {
  Transaction transaction(db_);
  if (auto current = holder(network_key, ip)) {
    if (current->space_id == space_id) return *current;
    throw ConflictError(format_ipv4(ip) + " is already held by " + describe_holder(db_, *current));
  }
  db_.cached("DELETE FROM ip_leases WHERE space_id = ? AND network_key = ?")
      ->bind_all(space_id, network_key)
      .run();
  auto when = now();
  try {
    db_.cached("INSERT INTO ip_leases (network_key, ip, space_id, created_at) VALUES (?, ?, ?, ?)")
        ->bind_all(network_key, ip, space_id, when)
        .run();
  } catch (const SqliteError& e) {
    if (violates_foreign_key(e))
      throw NotFoundError("cannot lease an address to space '" + std::string(space_id) +
                          "': no such space");
    throw;
  }
  transaction.commit();
  return IpLease{std::string(network_key), ip, std::string(space_id), when};
}

int LeaseRepository::release_ips(std::string_view space_id) {
  auto guard = db_.lock();
  return db_.cached("DELETE FROM ip_leases WHERE space_id = ?")->bind(1, space_id).run();
}

std::optional<IpLease> LeaseRepository::lease_of(std::string_view space_id,
                                                 std::string_view network_key) {
  auto guard = db_.lock();
  return one_lease(db_, "space_id = ? AND network_key = ?", space_id, network_key);
}

std::vector<IpLease> LeaseRepository::leases_of(std::string_view space_id) {
  auto guard = db_.lock();
  return leases_where(db_, "space_id = ? ORDER BY network_key", space_id);
}

std::optional<IpLease> LeaseRepository::holder(std::string_view network_key, std::uint32_t ip) {
  auto guard = db_.lock();
  return one_lease(db_, "network_key = ? AND ip = ?", network_key, ip);
}

std::vector<IpLease> LeaseRepository::list(std::string_view network_key) {
  auto guard = db_.lock();
  return leases_where(db_, "network_key = ? ORDER BY ip", network_key);
}

}  // namespace bowline::store
