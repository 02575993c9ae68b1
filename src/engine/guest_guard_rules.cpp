#include "engine/guest_guard_rules.hpp"

#include <regex>
#include <stdexcept>

namespace bowline::engine {

namespace {

const std::regex kTag("[0-9a-f]{3}");
const std::regex kTapTail("[0-9a-f]{10}");
const std::regex kUnicastMac("[0-9a-f][02468ace](:[0-9a-f]{2}){5}");
// libvirt's network names, less what nft would read as syntax: the name only ever appears in
// bowline's registry, never in a script, but a stray one is a bug to show.
const std::regex kNetwork("[A-Za-z0-9_.+-]*");

// 52:54:00:aa:bb:cc as the number nft compares 48 bits with: 0x525400aabbcc.
std::string mac_number(const std::string& mac) {
  std::string out = "0x";
  for (const char c : mac)
    if (c != ':') out += c;
  return out;
}

std::string elements(const std::vector<spec::Ipv4Address>& addresses) {
  std::string out;
  for (const auto& a : addresses) out += (out.empty() ? "" : ", ") + a.to_string();
  return out;
}

}  // namespace

std::string guard_out_chain(const std::string& tap) {
  return "out_" + tap;
}
std::string guard_in_chain(const std::string& tap) {
  return "in_" + tap;
}
std::string guard_address_set(const std::string& tap) {
  return "addr_" + tap;
}

GuardScripts::GuardScripts(std::string tag) : tag_(std::move(tag)) {
  if (!std::regex_match(tag_, kTag))
    throw std::invalid_argument("guest guard: the tag \"" + tag_ + "\" is not 3 hex digits");
  table_ = "bowline_" + tag_;
}

void GuardScripts::check_tap(const std::string& tap) const {
  const auto prefix = "bw" + tag_;
  if (!tap.starts_with(prefix) || !std::regex_match(tap.substr(prefix.size()), kTapTail))
    throw std::invalid_argument("guest guard: the device \"" + tap + "\" is not this server's (" +
                                prefix + " and 10 hex digits)");
}

void GuardScripts::check(const GuardedNic& nic) const {
  check_tap(nic.tap);
  if (!std::regex_match(nic.mac, kUnicastMac))
    throw std::invalid_argument("guest guard: the MAC address \"" + nic.mac + "\" of " + nic.tap +
                                " is not a lower-case unicast MAC");
  if (!std::regex_match(nic.network, kNetwork))
    throw std::invalid_argument("guest guard: the network name \"" + nic.network + "\" of " +
                                nic.tap + " is not one libvirt makes");
}

std::string GuardScripts::create() const {
  // "table" first: deleting a table that does not exist fails the whole transaction.
  const auto t = "bridge " + table_;
  const auto ours = "\"bw" + tag_ + "*\"";
  std::string out = "table " + t + "\ndelete table " + t + "\ntable " + t + " {\n";
  out += "  map from_guest {\n    type ifname : verdict\n  }\n";
  out += "  map to_guest {\n    type ifname : verdict\n  }\n";
  // Before anything else on the bridge (libvirt's and br_netfilter's hooks come later).
  out +=
      "  chain prerouting {\n"
      "    type filter hook prerouting priority -300; policy accept;\n"
      "    iifname vmap @from_guest\n"
      "    iifname " +
      ours +
      " counter drop comment \"a bowline device without its rules\"\n"
      "  }\n";
  out +=
      "  chain postrouting {\n"
      "    type filter hook postrouting priority -300; policy accept;\n"
      "    oifname vmap @to_guest\n"
      "    oifname " +
      ours +
      " counter drop comment \"a bowline device without its rules\"\n"
      "  }\n}\n";
  return out;
}

std::string GuardScripts::put(const GuardedNic& nic,
                              const std::vector<spec::Ipv4Address>& addresses) const {
  check(nic);
  const auto t = "bridge " + table_;
  const auto out_chain = guard_out_chain(nic.tap), in_chain = guard_in_chain(nic.tap);
  const auto set = guard_address_set(nic.tap);
  std::string s;
  s += "add set " + t + " " + set + " { type ipv4_addr; }\n";
  s += "add chain " + t + " " + out_chain + "\nflush chain " + t + " " + out_chain + "\n";
  s += "add chain " + t + " " + in_chain + "\nflush chain " + t + " " + in_chain + "\n";
  const auto out = [&](const std::string& rule) {
    s += "add rule " + t + " " + out_chain + " " + rule + "\n";
  };
  // What the guest sends: its own MAC only; no DHCP server's answer (by ports alone, so one
  // from 0.0.0.0 is dropped too); IPv4 only from its own addresses, or a DHCP client's request
  // from 0.0.0.0; ARP only for its own MAC and address; RARP only as QEMU announces a restored
  // guest (to everyone, from its MAC); nothing else, IPv6 included. The drops count, so an
  // operator (and the e2e test) can see what was stopped.
  out("ether saddr != " + nic.mac + " counter drop comment \"not its MAC\"");
  out("ether type ip udp sport 67 udp dport 68 counter drop comment \"a DHCP server's answer\"");
  // What it asks a DHCP server: a BOOTREQUEST for an Ethernet address, its own (chaddr, at
  // byte 28 of the BOOTP message), at a client's pace: it cannot lease addresses for MACs it
  // makes up and empty the pool, nor take a neighbour's lease by asking with its address.
  out("ether type ip udp dport 67 @th,64,8 != 1 counter drop comment \"not a DHCP request\"");
  out("ether type ip udp dport 67 @th,72,16 != 0x0106 counter drop comment "
      "\"not an Ethernet DHCP request\"");
  out("ether type ip udp dport 67 @th,288,48 != " + mac_number(nic.mac) +
      " counter drop comment \"a DHCP request for another hardware address\"");
  out("ether type ip udp dport 67 limit rate over 30/minute burst 30 packets counter drop "
      "comment \"DHCP requests faster than a client's\"");
  out("ip saddr 0.0.0.0 udp sport 68 udp dport 67 counter accept comment "
      "\"a DHCP client's request\"");
  out("ip saddr @" + set + " accept");
  out("ether type ip counter drop comment \"IPv4 from another address\"");
  out("arp saddr ether " + nic.mac + " arp saddr ip @" + set + " accept");
  out("ether type 0x8035 ether daddr ff:ff:ff:ff:ff:ff accept comment \"QEMU's announcement\"");
  out("counter drop comment \"anything else\"");
  // What reaches it: IPv4, ARP and those announcements; nothing else.
  const auto in = [&](const std::string& rule) {
    s += "add rule " + t + " " + in_chain + " " + rule + "\n";
  };
  in("ether type { ip, arp } accept");
  in("ether type 0x8035 ether daddr ff:ff:ff:ff:ff:ff accept");
  in("counter drop comment \"anything else\"");
  s += this->addresses(nic.tap, addresses);
  s += "add element " + t + " from_guest { \"" + nic.tap + "\" : jump " + out_chain + " }\n";
  s += "add element " + t + " to_guest { \"" + nic.tap + "\" : jump " + in_chain + " }\n";
  return s;
}

std::string GuardScripts::addresses(const std::string& tap,
                                    const std::vector<spec::Ipv4Address>& addresses) const {
  check_tap(tap);
  const auto t = "bridge " + table_;
  const auto set = guard_address_set(tap);
  std::string s = "flush set " + t + " " + set + "\n";
  if (!addresses.empty())
    s += "add element " + t + " " + set + " { " + elements(addresses) + " }\n";
  return s;
}

std::string GuardScripts::remove(const std::string& tap) const {
  check_tap(tap);
  const auto t = "bridge " + table_;
  std::string s;
  s += "delete element " + t + " from_guest { \"" + tap + "\" }\n";
  s += "delete element " + t + " to_guest { \"" + tap + "\" }\n";
  // A chain goes only once it is empty and nothing jumps to it; the set once no rule names it.
  for (const auto& chain : {guard_out_chain(tap), guard_in_chain(tap)})
    s += "flush chain " + t + " " + chain + "\ndelete chain " + t + " " + chain + "\n";
  s += "delete set " + t + " " + guard_address_set(tap) + "\n";
  return s;
}

}  // namespace bowline::engine
