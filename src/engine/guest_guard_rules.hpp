// The nftables text of bowline's guest guard (engine/guest_guard.hpp says what it stops and
// why it replaces libvirt's nwfilter on this host). Pure: each function returns an `nft -f`
// script, validated here so that nothing but a device name, a MAC and IPv4 addresses of the
// shapes bowline makes can reach it.
//
// The table `bridge bowline` has two base chains, on the bridge's prerouting (what a guest
// sends, whether the bridge forwards it or the host takes it) and postrouting (what reaches a
// guest, forwarded or from the host). Each looks the device up in a verdict map and jumps to
// that NIC's own chain; a device named like bowline's that has no entry meets a drop, so a
// guest whose rules are missing is cut off rather than let through.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "spec/ipv4.hpp"

namespace bowline::engine {

struct GuardedNic {
  std::string tap;  // plan::tap_name: bw, the server's tag, 10 hex digits
  std::string mac;  // the guest's, 52:54:00:...
  // The address it may use when bowline chose it (bridged); otherwise what its network's DHCP
  // server leases it, learnt (engine/guest_guard.hpp).
  std::optional<spec::Ipv4Address> ip;
  std::string network;  // the libvirt network it learns its address on (empty: a bridge)
  bool operator==(const GuardedNic&) const = default;
};

// The scripts of one server's table, `bridge bowline_<tag>`: each bowline server on a host has
// its own, and cuts off only devices of its own tag.
class GuardScripts {
 public:
  // Throws std::invalid_argument unless the tag is three hex digits.
  explicit GuardScripts(std::string tag);
  const std::string& table() const { return table_; }  // "bowline_<tag>" (family bridge)
  const std::string& tag() const { return tag_; }

  // Throws std::invalid_argument naming the field when the NIC is not one this server makes.
  void check(const GuardedNic& nic) const;
  // The table anew with no NIC in it: the whole table is replaced in one transaction.
  std::string create() const;
  // Adds the NIC's chains, its address set (holding `addresses`) and its map entries, or puts
  // them back as they should be; applied twice it changes nothing.
  std::string put(const GuardedNic& nic, const std::vector<spec::Ipv4Address>& addresses) const;
  // The NIC's address set holds exactly `addresses` (in one transaction: never empty between).
  std::string addresses(const std::string& tap,
                        const std::vector<spec::Ipv4Address>& addresses) const;
  // Removes the NIC's entries, chains and set (each must be there).
  std::string remove(const std::string& tap) const;

 private:
  void check_tap(const std::string& tap) const;
  std::string tag_, table_;
};

// The names of a NIC's objects in the table.
std::string guard_out_chain(const std::string& tap);  // what the guest sends
std::string guard_in_chain(const std::string& tap);   // what reaches it
std::string guard_address_set(const std::string& tap);

}  // namespace bowline::engine
