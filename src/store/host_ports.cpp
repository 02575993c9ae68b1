#include "store/host_ports.hpp"

#include <string>

namespace bowline::store {

namespace {

HostPort read_port(const Statement& row) {
  HostPort port;
  port.protocol = row.column_text(0);
  port.host_port = static_cast<std::uint16_t>(row.column_int64(1));
  port.space_id = row.column_text(2);
  port.guest_port = static_cast<std::uint16_t>(row.column_int64(3));
  port.created_at = row.column_int64(4);
  return port;
}

constexpr const char* kSelect =
    "SELECT protocol, host_port, space_id, guest_port, created_at FROM host_ports WHERE ";

}  // namespace

std::optional<HostPort> HostPortRepository::allocate(std::string_view space_id,
                                                     std::string_view protocol,
                                                     std::uint16_t guest_port, std::uint16_t first,
                                                     std::uint16_t last) {
  if (first > last)
    throw StoreError("empty port range " + std::to_string(first) + "-" + std::to_string(last));
  Transaction transaction(db_);
  {
    auto existing =
        db_.cached(std::string(kSelect) + "space_id = ? AND protocol = ? AND guest_port = ?");
    if (existing->bind_all(space_id, protocol, guest_port).step()) return read_port(*existing);
  }
  // The first gap in the taken ports of the range, ascending.
  std::uint32_t candidate = first;
  {
    auto taken = db_.cached(
        "SELECT host_port FROM host_ports WHERE protocol = ? AND host_port BETWEEN ? AND ? "
        "ORDER BY host_port");
    taken->bind_all(protocol, first, last);
    while (taken->step() && static_cast<std::uint32_t>(taken->column_int64(0)) == candidate)
      ++candidate;
  }
  if (candidate > last) return std::nullopt;
  const auto when = now();
  try {
    db_.cached(
           "INSERT INTO host_ports (protocol, host_port, space_id, guest_port, created_at) "
           "VALUES (?, ?, ?, ?, ?)")
        ->bind_all(protocol, candidate, space_id, guest_port, when)
        .run();
  } catch (const SqliteError& e) {
    if (violates_foreign_key(e))
      throw NotFoundError("cannot give a host port to space '" + std::string(space_id) +
                          "': no such space");
    throw;
  }
  transaction.commit();
  return HostPort{std::string(protocol), static_cast<std::uint16_t>(candidate),
                  std::string(space_id), guest_port, when};
}

std::vector<HostPort> HostPortRepository::of_space(std::string_view space_id) {
  auto guard = db_.lock();
  auto select = db_.cached(std::string(kSelect) + "space_id = ? ORDER BY guest_port, protocol");
  select->bind(1, space_id);
  std::vector<HostPort> out;
  while (select->step()) out.push_back(read_port(*select));
  return out;
}

int HostPortRepository::release(std::string_view space_id) {
  auto guard = db_.lock();
  return db_.cached("DELETE FROM host_ports WHERE space_id = ?")->bind(1, space_id).run();
}

void HostPortRepository::release_one(std::string_view space_id, std::string_view protocol,
                                     std::uint16_t guest_port) {
  auto guard = db_.lock();
  db_.cached("DELETE FROM host_ports WHERE space_id = ? AND protocol = ? AND guest_port = ?")
      ->bind_all(space_id, protocol, guest_port)
      .run();
}

}  // namespace bowline::store
