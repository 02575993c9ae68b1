// A libvirt connection as a node: each space is a domain with a qcow2 overlay on a cached base
// image and a cloud-init seed, in <images>/<domain>/. This host's libvirt is one; another URI
// is another LibvirtNode, by configuration.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "engine/guest_address.hpp"
#include "engine/guest_guard.hpp"
#include "engine/host_probe.hpp"
#include "engine/node.hpp"
#include "engine/node_files.hpp"
#include "image/cache.hpp"
#include "image/overlay.hpp"
#include "libvirt/hypervisor.hpp"
#include "plan/plan.hpp"
#include "util/timer.hpp"

namespace bowline::engine {

struct LibvirtNodeSettings {
  std::string name = "local";
  plan::NodeSettings node;  // domain type, images path, resolvers, the server's URL
  // How long a guest has to power off after ACPI before it is forced off.
  std::chrono::seconds stop_timeout{60};
  // Before a suspend, drop the guest's clean page cache through its agent (libvirt_node_suspend).
  bool trim_guest_cache = true;
  // Host CPUs set aside for spaces whose instance type dedicates CPUs (server.kvm.dedicated_cpus).
  std::vector<unsigned> dedicated_cpus;
  // Filters the guests' NICs on this host (engine/guest_guard.hpp); unset: libvirt's nwfilter
  // does (a libvirt elsewhere, libvirt's test driver). It must outlive the node.
  GuestGuard* guard = nullptr;
  // What the stop timeout waits with; unset: real time. It must outlive the node.
  util::Timer* timer = nullptr;
  // The node's record for GET /api/v1/nodes (the server's node check); unset: name and kind.
  std::function<nlohmann::json()> report;
  // This host's IPv4 addresses, never a guest's (engine/guest_address.hpp); unset: getifaddrs.
  std::function<std::set<std::uint32_t>()> host_addresses;
  // Where the spaces' files are (engine/node_files.hpp); unset: this server's file system,
  // under node.images_path. It must outlive the node.
  NodeFiles* files = nullptr;
  // A host elsewhere: what the node cannot do there (elsewhere_capabilities()).
  bool elsewhere = false;
  // How TCP to a guest's address is opened (a host elsewhere: through its sshd); unset: from
  // this host (util::tcp_connect).
  std::function<int(const std::string& address, std::uint16_t port,
                    std::chrono::milliseconds timeout)>
      connect;
  // Memory placement leaves to the host itself (server.nodes' reserve).
  std::uint64_t reserve_memory = 0;
};

class LibvirtNode final : public Node {
 public:
  // Each must outlive the node.
  LibvirtNode(libvirt::Hypervisor& hypervisor, image::ImageCache& images, image::Disks& disks,
              const HostProbe& host, LibvirtNodeSettings settings);
  ~LibvirtNode() override;

  const std::string& name() const override { return s_.name; }
  const std::string& images_path() const { return s_.node.images_path; }
  const char* kind() const override { return "libvirt"; }
  // Every capability: the spaces' disks, consoles and displays are on this host's libvirt.
  static const NodeCapabilities& kind_capabilities();
  // A libvirt host elsewhere, reached through its libvirt alone (libvirt_node_capabilities.cpp).
  static const NodeCapabilities& elsewhere_capabilities();
  const NodeCapabilities& capabilities() const override {
    return s_.elsewhere ? elsewhere_capabilities() : kind_capabilities();
  }

  std::vector<std::string> refusals(const spec::Spec& spec) override;
  void check_machine_name(const std::string& machine) override;
  std::optional<std::string> fixed_address_refusal(const spec::Spec& spec) const override;
  bool publishes_host_ports() const override { return true; }

  Applied apply(const NodeSpace& space, const Progress& progress, bool run) override;
  Observation shut_down(const store::Space& space, const Progress& progress) override;
  Observation restart(const NodeSpace& space, const Progress& progress) override;
  void stay_off(const store::Space& space) override;
  void tear_down(const store::Space& space) override;
  void personalise(const NodeSpace& space, const std::string& previous_user) override;

  // Internal qcow2 snapshots through libvirt (libvirt_node_snapshots.cpp).
  SnapshotTaken take_snapshot(const store::Space& space, const std::string& name,
                              bool memory) override;
  Observation restore_snapshot(const store::Space& space, const std::string& name,
                               bool resume) override;
  void delete_snapshot(const store::Space& space, const std::string& name) override;
  void delete_snapshots_named(const store::Space& space, std::string_view prefix) override;
  std::optional<std::vector<std::string>> snapshot_names(const store::Space& space) override;
  void wait_for_jobs(const store::Space& space) override;
  void copy_disk_at(const store::Space& space, const std::string& name,
                    const std::filesystem::path& target, bool full) override;

  // Moves (libvirt_node_move.cpp).
  void export_files(const store::Space& space, const std::filesystem::path& dir) override;
  void import_files(const NodeSpace& space, const std::filesystem::path& dir,
                    const Progress& progress) override;

  void watch(std::function<void(const MachineEvent&)> on_event) override;
  void unwatch() override;
  Observation observe(const store::Space& space) override;
  Observation suspend(const store::Space& space, const Progress& progress) override;
  // Whether libvirt keeps a managed save of the domain (false where the driver has none).
  bool has_saved_state(const std::string& domain);
  void discard_saved_state(const std::string& domain);
  // Before a start: QEMU truncates the console log, and a start that restores a managed save
  // is no new boot, so what the log said is kept for readiness (engine/readiness.hpp); before
  // a cold start it is forgotten. Returns whether there is a managed save.
  bool carry_console_over(const std::string& domain, const std::string& console_log);
  std::string trim_guest_cache(const std::string& domain);
  std::optional<std::uint64_t> resident_kib(const std::string& domain);
  Observation resume(const store::Space& space, const Progress& progress) override;
  std::vector<Orphan> orphans(const std::set<std::string>& known) override;
  std::optional<std::string> address(const store::Space& space) override;
  std::map<std::string, std::string> addresses(const std::vector<store::Space>& spaces) override;
  std::optional<Readiness> readiness(const store::Space& space) override;
  std::optional<std::map<std::string, std::string>> parts(const NodeSpace& space) override;
  // From libvirt's statistics of every running domain (virConnectGetAllDomainStats).
  std::vector<MachineSample> machine_samples() override;
  std::optional<std::int64_t> free_memory() override;

  std::unique_ptr<util::ByteStream> open_console(const store::Space& space) override;
  int open_display(const store::Space& space) override;
  // From this host to the guest's address (bridged: bowline's; NAT: its own DHCP lease),
  // decided again at each connection (libvirt_node_addresses.cpp).
  int open_port(const store::Space& space, std::uint16_t port,
                std::chrono::milliseconds timeout) override;
  std::optional<std::string> unreachable() override;
  nlohmann::json report() override;

 private:
  // The address bowline connects to, or why there is none (libvirt_node_addresses.cpp).
  struct FoundAddress {
    std::optional<std::string> address;
    std::string why_not;
  };
  FoundAddress find_address(const store::Space& space);
  FoundAddress leased_address(const store::Space& space, const std::string& network,
                              const std::string& mac);
  // Every network's DHCP leases, read once; nullopt where the driver keeps no list of them
  // (libvirt's test driver).
  std::optional<std::vector<libvirt::DhcpLease>> all_leases();
  // The lease a NAT NIC (`mac` in `network`) holds, from `leases`, or without them what
  // libvirt reports from its leases for the domain's NIC: what space info and the list show.
  std::optional<std::string> lease_address(
      const std::string& domain, const std::optional<std::vector<libvirt::DhcpLease>>& leases,
      const std::string& network, const std::string& mac);
  AddressBarriers barriers(const std::string& network);
  // The libvirt network of the domain's first NIC (nullopt: none, or a bridge).
  std::optional<std::string> nic_network(const std::string& domain);
  void remember_network(const std::string& domain, const std::string& network);
  plan::Plan plan_for(const NodeSpace& space) const;
  std::string resolve_image(const spec::Spec& spec, const Progress& progress);
  // `made_before`: the space ran before, so a missing disk is refused rather than made blank.
  void prepare_disk(const plan::Plan& plan, const BaseImage& base, const spec::Spec& spec,
                    bool made_before);
  void guard(plan::Plan& plan);
  void define(const NodeSpace& space, plan::Plan& plan);
  void start_domain(const plan::Plan& plan);
  // Before the domain runs: its guard's rules are in place (engine/guest_guard.hpp), or this
  // throws and it does not run.
  void ensure_guarded(const std::string& domain);
  // Dedicated CPUs and resource-named GPUs for this start (libvirt_node_place.cpp); called
  // with placement_mutex_ held until the domain is defined, so two starts never take the same.
  plan::Placed place(const NodeSpace& space, const plan::Plan& plan);
  bool wait_for_shutoff(const std::string& domain);
  // The space's domain, checked to be this space's (not another space's of the same name).
  std::string own_domain(const store::Space& space);
  // Every snapshot of the space's domain goes, with its data in the disks (tear_down).
  void delete_all_snapshots(const std::string& domain);
  // The guest's filesystems frozen for a snapshot, or why not (libvirt_node_snapshots.cpp).
  struct Freeze {
    bool frozen = false;
    std::string why_not;
  };
  Freeze freeze_guest(const std::string& domain);
  std::optional<std::string> thaw_guest(const std::string& domain);
  std::shared_ptr<std::mutex> snapshot_lock(const std::string& domain);
  std::chrono::seconds agent_patience(const std::string& domain);
  bool agent_connected(const std::string& domain);

  libvirt::Hypervisor& hypervisor_;
  image::ImageCache& images_;
  image::Disks& disks_;
  const HostProbe& host_;
  LibvirtNodeSettings s_;
  std::unique_ptr<NodeFiles> own_files_;  // LocalNodeFiles, unless the settings name others
  NodeFiles& files_;
  util::Timer& timer_;
  std::mutex placement_mutex_;
  std::mutex shutoff_mutex_;
  std::condition_variable shutoff_;
  libvirt::Subscription subscription_;
  std::mutex snapshot_locks_mutex_;
  std::map<std::string, std::shared_ptr<std::mutex>> snapshot_locks_;  // by domain
  std::mutex restored_mutex_;
  // When a domain's memory was last restored from disk (a resume), until its agent is used.
  std::map<std::string, std::chrono::steady_clock::time_point> restored_at_;
  std::set<std::string> agent_before_save_;  // saved while their agent was connected
  std::mutex networks_mutex_;
  std::map<std::string, std::string> nic_networks_;  // domain -> its first NIC's network
};

}  // namespace bowline::engine
