// bowline's guest guard: what stops a guest on this host from spoofing its neighbours or the
// LAN (another MAC, another address, ARP for someone else, a DHCP server of its own), in the
// nftables table `bridge bowline_<tag>` (guest_guard_rules.hpp has the rules), keyed by the fixed
// name of each NIC's host-side device (plan::tap_name).
//
// Why not libvirt's nwfilter, which the libvirt node used before and still uses for a libvirt
// that is not on this host: nwfilter builds a NIC's rules afresh at every start and every
// resume of its domain, with one iptables, ip6tables or ebtables process per step, most of them
// tearing down chains that do not exist (133 processes and 1.2-1.5 s of each resume of a NAT
// space here, of about 3.5 s in all). The guard's rules are written once, when the domain is
// defined, and stay while the space exists: a start or a resume costs nothing, and a device
// that appears meets its rules at once.
//
// The rules do not go away while a space is stopped, and they are saved beside the store
// (guest-guard.nft, without learnt addresses) for a boot-time unit to load before libvirt
// starts any domain (packaging/bowline-guard.service). A bowline device without its rules is
// cut off, never let through.
//
// Addresses: a bridged NIC's is the one bowline chose. A NIC on a libvirt network learns its
// address from that network's DHCP server: the lease its own MAC holds there (one: the one that
// lasts longest, as engine/guest_address.hpp chooses), read again whenever dnsmasq's lease files
// change (inotify) and at least every few seconds. Until it has a lease the guest may send only
// DHCP requests, for its own hardware address. A learnt address stays the NIC's after its lease
// ran out (a guest resumed after a long suspend renews from it) until another guest is leased
// it.
//
// The table stays: the watcher looks at it every few seconds and writes it again when it has
// gone (`nft flush ruleset`, a firewall service reloading its rules) or lost a NIC's chains,
// and says so (on_restored); a start, resume or restore of a domain first makes sure its rules
// are there (ensure), and fails when they cannot be.
#pragma once

#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "engine/guest_guard_rules.hpp"
#include "libvirt/hypervisor.hpp"
#include "util/clock.hpp"
#include "util/process.hpp"

namespace bowline::engine {

// This server's tag (plan::NodeSettings::guard_tag; its table is bowline_<tag>), kept in
// DIR/guest-guard.tag so that it stays with the data, wherever the directory moves: chosen at
// the first start as one that no bowline table on this host has. Throws std::runtime_error when
// the file cannot be written.
std::string guard_tag_in(const std::filesystem::path& dir, util::ProcessRunner& runner);

struct GuestGuardOptions {
  // This server's tag (guard_tag_in).
  std::string tag = "000";
  // Where the registry (guest-guard.json) and the boot-time script (guest-guard.nft) are kept,
  // and where nft reads its scripts from: bowline's data directory.
  std::filesystem::path dir;
  // dnsmasq's lease files, as libvirt writes them: a change there is a lease to learn.
  std::filesystem::path lease_dir = "/var/lib/libvirt/dnsmasq";
  // How often the leases are read even when no change was seen (a lease that ran out, a host
  // without inotify), and the table is looked at (it is written again when it went away).
  std::chrono::milliseconds lease_poll{3000};
  // Told (on the watcher's thread, or a start's) when the table had gone or been damaged and
  // was written again: `why` in words for people.
  std::function<void(const std::string& why)> on_restored;
};

class GuestGuard {
 public:
  using Leases = std::function<std::vector<libvirt::DhcpLease>()>;
  // Each must outlive the guard.
  GuestGuard(util::ProcessRunner& runner, const util::Clock& clock, Leases leases,
             GuestGuardOptions options);
  ~GuestGuard();
  GuestGuard(const GuestGuard&) = delete;
  GuestGuard& operator=(const GuestGuard&) = delete;

  // Builds the table anew from the registry kept in the directory, keeping only the domains in
  // `domains` (those libvirt still has), with what the leases say now. Throws
  // std::runtime_error with nft's words when the host refuses.
  void load(const std::set<std::string>& domains);
  // The domain's NICs are guarded as given (before it is defined): NICs it no longer has lose
  // their rules, new or changed ones get theirs. Nothing happens when nothing changed.
  void put(const std::string& domain, const std::vector<GuardedNic>& nics);
  // The domain's NICs lose their rules (after it is undefined).
  void remove(const std::string& domain);
  // Before the domain runs (a start, a resume, a restore): its rules are in the table now, or
  // written again; throws std::runtime_error (the start must fail) when they cannot be, or when
  // the guard holds no rules for it.
  void ensure(const std::string& domain);
  // The table is whole (it is gone after `nft flush ruleset` or a firewall service's reload),
  // or written again; false when it could not be.
  bool check_table();
  // Whether the table was written whole the last time it was written.
  bool healthy() const { return healthy_; }
  // Reads the leases and updates the learnt addresses that changed.
  void learn();
  // Learns on a thread of its own until stop() or the destructor.
  void watch_leases();
  void stop();

  const GuardScripts& scripts() const { return scripts_; }
  // What the guard holds now: the NICs of each domain, the addresses each tap may use.
  std::map<std::string, std::vector<GuardedNic>> domains() const;
  std::vector<spec::Ipv4Address> addresses(const std::string& tap) const;
  // Whether one of the guarded domains has a NIC on `tap`.
  bool guards(const std::string& tap) const;

 private:
  void apply(const std::string& script, const std::string& what);
  void rebuild();  // with mutex_ held
  // What is missing of the table: its base chains and every guarded NIC's chains ("" when
  // nothing). With mutex_ held.
  std::string damage_locked();
  // Writes the table again unless it is intact; what happened, for on_restored ("" when it was
  // intact). Throws when it cannot be written. With mutex_ held.
  std::string restore_locked();
  void save();  // with mutex_ held
  std::vector<spec::Ipv4Address> allowed(const GuardedNic& nic) const;
  std::map<std::string, std::vector<spec::Ipv4Address>> learnt_from(
      const std::vector<libvirt::DhcpLease>& leases) const;

  util::ProcessRunner& runner_;
  const util::Clock& clock_;
  Leases leases_;
  GuestGuardOptions o_;
  GuardScripts scripts_;
  mutable std::mutex mutex_;
  std::map<std::string, std::vector<GuardedNic>> domains_;
  std::map<std::string, std::vector<spec::Ipv4Address>> learnt_;  // by tap
  std::atomic<bool> stopping_{false};
  std::atomic<bool> healthy_{false};
  int wake_fd_ = -1;  // eventfd: stop() wakes the watcher
  std::thread watcher_;
};

}  // namespace bowline::engine
