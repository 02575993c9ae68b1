// The Hypervisor over the libvirt C API: one connection per object, opened on first use, with
// keepalive and a close callback; a connection that broke is replaced on the next call and
// the event subscribers carry over to the new one. Calls to guest agents go over a second
// connection (not on test://, whose state may be the connection's own): libvirtd serves at
// most a few calls of one connection at a time (max_client_requests, 5 by default), so guests
// whose agents stall cannot hold every call of the server.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "libvirt/hypervisor.hpp"

namespace bowline::libvirt {

struct LibvirtOptions {
  std::string uri = "qemu:///system";
  // virConnectSetKeepAlive: a ping after `keepalive_interval` of silence; the connection is
  // closed after `keepalive_count` unanswered pings. Interval 0 turns keepalive off.
  std::chrono::seconds keepalive_interval{5};
  unsigned keepalive_count = 3;
  // define() validates the XML against libvirt's schema (VIR_DOMAIN_DEFINE_VALIDATE). That
  // costs ~40-100 ms a define (libvirt loads the schema each time); bulk benchmarks on the
  // test driver may turn it off.
  bool validate = true;
  // How long libvirt waits for the guest agent's answer to a freeze or a thaw
  // (virDomainAgentSetResponseTimeout, set before each): a guest whose agent never answers
  // holds a call for at most this (plus libvirt's own 5 s for the agent's guest-sync).
  // agent_command() has a timeout of its own.
  std::chrono::seconds agent_timeout{15};
};

// Not final: tests add what libvirt's test driver lacks (CPU counters) to its answers.
class LibvirtHypervisor : public Hypervisor {
 public:
  // Connects at once, so a bad URI or an unreachable daemon fails here.
  explicit LibvirtHypervisor(LibvirtOptions options = {});
  ~LibvirtHypervisor() override;
  LibvirtHypervisor(const LibvirtHypervisor&) = delete;
  LibvirtHypervisor& operator=(const LibvirtHypervisor&) = delete;

  // Drops the connection and opens a new one (what a broken connection gets on its next
  // use). Subscriptions stay; events that happened in between are lost.
  void reconnect();
  // How many connections this object has opened (1 after construction).
  unsigned long connection_count() const;

  std::string uri() const override;

  DomainInfo define(const std::string& xml) override;
  void start(const std::string& name, StartOptions options = {}) override;
  void resume(const std::string& name) override;
  void shutdown(const std::string& name) override;
  bool destroy(const std::string& name) override;
  bool undefine(const std::string& name) override;
  DomainInfo create_transient(const std::string& xml) override;

  std::optional<DomainInfo> lookup(const std::string& name) override;
  std::vector<DomainInfo> list() override;
  std::vector<DomainStats> all_domain_stats() override;
  DomainStatus state(const std::string& name) override;
  void set_autostart(const std::string& name, bool autostart) override;
  std::string domain_xml(const std::string& name, bool inactive = false) override;

  std::vector<InterfaceAddress> interface_addresses(const std::string& name,
                                                    AddressSource source) override;
  std::string agent_command(const std::string& name, const std::string& json,
                            std::chrono::seconds timeout) override;

  Subscription subscribe(LifecycleCallback callback) override;

  std::optional<NetworkInfo> lookup_network(const std::string& name) override;
  std::vector<NetworkInfo> list_networks() override;
  std::vector<DhcpLease> dhcp_leases() override;

  std::optional<std::string> nwfilter_xml(const std::string& name) override;
  bool ensure_nwfilter(const std::string& name, const std::string& xml) override;

  std::vector<NodeDevice> node_devices() override;
  std::optional<std::uint64_t> free_memory() override;
  DomainCapabilities domain_capabilities(const std::string& domain_type) override;

  std::unique_ptr<util::ByteStream> open_console(const std::string& name,
                                                 const std::string& device = {},
                                                 bool force = true) override;
  int open_graphics(const std::string& name, unsigned index = 0, bool skip_auth = true) override;
  SnapshotInfo create_snapshot(const std::string& domain, const std::string& name,
                               const std::string& description) override;
  std::vector<SnapshotInfo> snapshots(const std::string& domain) override;
  bool job_active(const std::string& domain) override;
  void revert_snapshot(const std::string& domain, const std::string& name, bool paused) override;
  bool delete_snapshot(const std::string& domain, const std::string& name) override;
  unsigned freeze_filesystems(const std::string& domain) override;
  void thaw_filesystems(const std::string& domain) override;
  void managed_save(const std::string& name) override;
  bool has_managed_save(const std::string& name) override;
  bool remove_managed_save(const std::string& name) override;
  // Storage pools and volumes (libvirt_volumes.cpp).
  std::string pool_path(const std::string& pool) override;
  std::vector<VolumeInfo> volumes(const std::string& pool) override;
  std::optional<VolumeInfo> volume(const std::string& pool, const std::string& name) override;
  VolumeInfo create_volume(const std::string& pool, const NewVolume& volume) override;
  void upload_volume(const std::string& pool, const std::string& name, std::uint64_t size,
                     const std::function<std::size_t(char*, std::size_t)>& read) override;
  std::string download_volume(const std::string& pool, const std::string& name,
                              std::uint64_t offset, std::uint64_t length) override;
  void download_volume(const std::string& pool, const std::string& name,
                       const std::function<void(const char*, std::size_t)>& sink) override;
  void resize_volume(const std::string& pool, const std::string& name,
                     std::uint64_t capacity) override;
  bool delete_volume(const std::string& pool, const std::string& name) override;

  class Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// Initialises libvirt for this process once: virInitialize, errors kept off stderr (they
// reach callers as HypervisorError), and the default event loop registered with a thread
// running virEventRunDefaultImpl. LibvirtHypervisor calls it; anything else in the process
// that opens libvirt connections should too, before opening them.
void ensure_libvirt_event_loop();

// Parsers for the XML libvirt returns, exposed for tests. parse_node_device returns nullopt
// for devices that are neither PCI nor USB devices, or XML it cannot read.
std::optional<NodeDevice> parse_node_device(std::string_view xml);
DomainCapabilities parse_domain_capabilities(std::string_view xml);
// The IPv4 addresses of a network's DHCP servers: each IPv4 <ip> that has a <dhcp>.
std::vector<std::string> parse_dhcp_servers(std::string_view network_xml);
// Whether the network's XML gives its dnsmasq the option dhcp-ignore-clid
// (<dnsmasq:options><dnsmasq:option value='dhcp-ignore-clid'/>).
bool parse_one_lease_per_mac(std::string_view network_xml);

// One typed parameter of a domain's statistics record under libvirt's name for it
// ("state.state", "cpu.time", "block.0.rd.bytes", "net.1.name"): a number or a text.
struct StatField {
  std::string key;
  std::uint64_t number = 0;
  std::string text;
};
// A domain's statistics from its record's fields (libvirt_stats.cpp; exposed for tests).
// Fields it does not know are ignored; a device without a name is still counted.
DomainStats parse_domain_stats(std::string name, const std::vector<StatField>& fields);

}  // namespace bowline::libvirt
