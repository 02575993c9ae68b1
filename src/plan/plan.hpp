// A Plan: everything one space needs from a libvirt node, as pure data. Built from a validated
// Spec plus the space's facts (owner, id, address, node settings) by make_plan(): the domain's
// part here, the guest's part (what cloud-init makes of it, which a KubeVirt node needs too) in
// guest_plan.hpp. Realised by the libvirt node (seed ISO + domain XML). No I/O, no clock, no
// randomness: the same inputs give the same plan, byte for byte.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "plan/guest_plan.hpp"
#include "spec/spec.hpp"

namespace bowline::plan {

enum class DomainType { Kvm, Qemu };
const char* to_string(DomainType);

// What the space is, beyond its template.
struct SpaceFacts {
  std::string id;                       // stable for the space's life (a UUID)
  std::string name;                     // the space's name
  std::optional<spec::Ipv4Address> ip;  // bridged: the address IPAM chose
  // The UUID used when the spec has no cloudInitSeed: chosen once at creation, kept.
  std::string uuid;
  // Password of the VNC display (8 characters: VNC's limit), chosen once, kept.
  std::string vnc_password;
  std::string template_name;
  std::string template_id;
  std::optional<HostKeyPair> host_key;  // the guest's SSH host key, when bowline made one
  std::string terminal_key_public;      // the browser terminal's key; empty: none yet
  std::string instance_id;              // cloud-init's (guest_plan.hpp); empty: the first
};

// What the node running the space provides.
struct NodeSettings {
  DomainType domain_type = DomainType::Kvm;
  std::vector<std::string> resolvers{"1.1.1.1", "1.0.0.1"};
  std::string images_path = "/var/lib/libvirt/images/bowline";  // one directory per space
  // Every space's files side by side in images_path, named <domain>.<file> instead of
  // <domain>/<file>: a libvirt storage pool, which has no subdirectories (a node elsewhere).
  bool side_by_side = false;
  // Three hex digits that tell this server's NIC devices from another's on the same host
  // (tap_name): each bowline server guards only its own.
  std::string guard_tag = "000";
  std::string server_url;
  // OVMF from Debian's ovmf package.
  std::string ovmf_code = "/usr/share/OVMF/OVMF_CODE_4M.fd";
  std::string ovmf_vars = "/usr/share/OVMF/OVMF_VARS_4M.fd";
  std::string ovmf_secure_code = "/usr/share/OVMF/OVMF_CODE_4M.secboot.fd";
  std::string ovmf_secure_vars = "/usr/share/OVMF/OVMF_VARS_4M.ms.fd";  // Microsoft keys enrolled
};

struct Firmware {
  spec::Bootloader bootloader = spec::Bootloader::Bios;
  bool secure_boot = false;
  bool smm = false;
  // UEFI only:
  std::string loader;                // OVMF code (read-only pflash)
  std::string vars_template;         // OVMF vars the NVRAM starts from
  std::string nvram;                 // the space's NVRAM file
  bool reset_nvram_on_start = true;  // false with efiPersistent
};

struct Disk {
  std::string path;
  std::string bus;     // virtio | sata | scsi | usb
  std::string target;  // vda, sda, ...
};

enum class NicType { Bridge, Network };

// Every NIC is filtered: it may send only from its MAC and its own address, and never as a
// DHCP server. Its own address is `ip` when the plan knows it (a bridged space's); otherwise
// whatever its network's DHCP server leases it. Who filters is the node's choice (`filter`):
// libvirt's nwfilter (libvirt/nwfilter.hpp), which believes only `dhcp_servers` when there are
// any (the node fills them in from the libvirt network at define time), or bowline's own guard
// on this host (engine/guest_guard.hpp), which knows the NIC by its host-side device `tap`.
enum class NicFilter { Nwfilter, Guard };

struct Nic {
  NicType type = NicType::Bridge;
  std::string source;  // bridge or libvirt network name
  std::string mac;     // 52:54:00:xx:xx:xx
  std::string model;   // virtio, e1000, ...
  std::optional<spec::Ipv4Address> ip = std::nullopt;
  std::vector<spec::Ipv4Address> dhcp_servers = {};
  std::string tap = {};  // the host-side device: tap_name(domain, index)
  NicFilter filter = NicFilter::Nwfilter;
};

// The host-side device of a domain's NIC: "bw", the server's guard tag (NodeSettings), 8 hex
// digits of the domain name's SHA-256 and the NIC's index in two: 15 characters (Linux's
// limit), the same at every start, so a filter can name it before the domain exists. libvirt
// keeps "vnet" for the names it chooses.
std::string tap_name(const std::string& guard_tag, const std::string& domain, std::size_t index);

// A host device passed through: as the spec names it (text), or as the node resolved a GPU
// named by its device-plugin resource (text is the resource name, address the device's).
using HostDevice = spec::Device;

// Instance-type traits and what became of them on this backend.
struct Placement {
  std::string hugepages_size;  // "", "2Mi", "1Gi"
  bool dedicated_cpu = false;
  bool isolate_emulator_thread = false;
  bool vnuma = false;
  bool realtime = false;
  // What the node chose at start (place()): host CPUs for the vCPUs in order, the emulator's,
  // and the host NUMA nodes they sit on. Empty: not pinned.
  std::vector<unsigned> vcpu_pins;
  std::optional<unsigned> emulator_pin;
  std::vector<unsigned> numa_nodes;
};

// What a node chooses for a space when it starts it: dedicated host CPUs, and the host PCI
// devices for GPUs named by a device-plugin resource (nvidia.com/GA102GL_A10).
struct Placed {
  std::vector<unsigned> cpus;        // the vCPUs' in order, then the emulator's when isolated
  std::vector<unsigned> numa_nodes;  // of those CPUs
  std::vector<spec::Device> gpus;    // one per resource-named gpu, in the spec's order
};

struct Plan {
  std::string domain_name;
  std::string uuid;  // domain UUID and SMBIOS system UUID
  DomainType domain_type = DomainType::Kvm;
  std::uint64_t memory_bytes = 0;
  std::uint32_t sockets = 1;
  std::uint32_t cores = 1;
  std::optional<std::string> cpu_model;  // empty: host-model on kvm, the default on qemu
  Firmware firmware;
  std::string machine = "q35";
  std::string space_dir;  // <images>/<domain>
  Disk system_disk;       // the qcow2 overlay
  std::vector<Disk> data_disks;
  std::string seed_iso;     // path of the NoCloud seed
  std::string console_log;  // serial console, written by virtlogd
  std::vector<Nic> nics;    // the spec's network first, then each `networks` entry
  std::optional<spec::Ipv4Address> ip;
  bool display = false;
  std::string vnc_password;
  std::vector<HostDevice> host_devices;
  Placement placement;
  std::vector<std::string> notes;  // what the backend cannot express, said once
  GuestPlan guest;                 // hostname, instance-id, account, network: the seed's
  // Facts kept for the backend and for KubeVirt rendering.
  spec::RunStrategy run_strategy = spec::RunStrategy::Always;
};

// The images path's layout: one directory per space, named after its domain, beside the
// directories bowline keeps its images in, whose names no space may take.
bool is_reserved_directory(std::string_view name);  // base, cloud-images, volumes
std::string space_dir(const std::string& images_path, const std::string& domain);
std::string console_log_of(const std::string& space_dir);
// The path of a space's file `leaf` ("disk.qcow2", "seed.iso", "console.log", "nvram.fd") on
// the node, in the node's layout.
std::string space_file(const NodeSettings& node, const std::string& domain,
                       const std::string& leaf);

// Cozystack's SMBIOS UUID from cloudInitSeed: sha256("<namespace>-<name>-<seed>") laid out
// as 8-4-4-4-12 with the version digit 4 and the variant digit 9.
std::string uuid_from_seed(const std::string& ns, const std::string& name, const std::string& seed);
// Throws std::invalid_argument when the facts do not fit the spec (bridged without an IP).
Plan make_plan(const spec::Spec& spec, const Owner& owner, const SpaceFacts& space,
               const NodeSettings& node);

// How many dedicated host CPUs the plan's placement needs (0: none).
unsigned dedicated_cpus_needed(const Plan& plan);
// GPUs of the spec named by a device-plugin resource, which the node must resolve.
std::vector<std::string> resource_gpus(const spec::Spec& spec);
// Puts what the node chose into the plan (pins, NUMA nodes, resolved GPUs) and drops the notes
// that said it was missing. Throws std::invalid_argument when it does not fit.
void place(Plan& plan, const spec::Spec& spec, const Placed& placed);

}  // namespace bowline::plan
