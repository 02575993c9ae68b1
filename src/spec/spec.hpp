// The typed, validated VM spec of a template: knot's fields and Cozystack's parameters in
// one document. Produced by load_spec() (loader.hpp); consumed by plan/ and kubevirt/.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "spec/ipv4.hpp"

namespace bowline::spec {

enum class NetworkMode { Bridged, Nat };
enum class Bootloader { Bios, Uefi };
enum class RunStrategy { Always, Halted, Manual, RerunOnFailure, Once };
enum class ExternalMethod { PortList, WholeIP };
enum class ImageKind { Library, Url, Path };
enum class DeviceKind { Pci, Usb, VendorProduct };

struct Network {
  NetworkMode mode = NetworkMode::Bridged;
  std::string bridge;  // host bridge (bridged) or libvirt network (nat)
  // Bridged only:
  std::optional<Ipv4Network> cidr;
  std::optional<Ipv4Address> range_start;  // filled with the first usable address
  std::optional<Ipv4Address> range_end;    // filled with the last usable address
  std::optional<Ipv4Address> gateway;      // empty: the network's first address at boot
};

struct Image {
  ImageKind kind = ImageKind::Library;
  std::string reference;              // bare name, URL or absolute path as written
  std::optional<std::string> sha256;  // lowercase hex, from imageChecksum
};

// A host device, as a template names it.
struct PciAddress {  // pci_0000_01_00_0
  std::uint32_t domain = 0, bus = 0, slot = 0, function = 0;
  bool operator==(const PciAddress&) const = default;
};
struct UsbAddress {  // usb_002_003: where it is plugged in now
  std::uint32_t bus = 0, device = 0;
  bool operator==(const UsbAddress&) const = default;
};
struct UsbId {  // 046d:c52b: whichever such USB device is plugged in
  std::uint32_t vendor = 0, product = 0;
  bool operator==(const UsbId&) const = default;
};
// In the order of DeviceKind.
using DeviceAddress = std::variant<PciAddress, UsbAddress, UsbId>;

struct Device {
  std::string text;  // as written, e.g. "pci_0000_01_00_0"
  DeviceAddress address;
  DeviceKind kind() const { return static_cast<DeviceKind>(address.index()); }
  bool same(const Device& other) const { return address == other.address; }
};

struct EnvVar {
  std::string name;
  std::string value;
};

struct Firmware {
  std::optional<Bootloader> bootloader;  // empty: the preference's default
  bool secure_boot = false;
  bool efi_persistent = false;
};

// resources: as given. sizes_vm() tells whether the block sizes the VM by itself.
struct Resources {
  std::optional<std::uint32_t> cpu;  // cores per socket
  std::optional<std::uint32_t> sockets;
  std::optional<std::uint64_t> memory_bytes;
  std::optional<std::string> memory_text;  // the quantity as written, e.g. "8Gi"
  bool sizes_vm() const { return cpu && sockets && memory_bytes; }
  bool empty() const { return !cpu && !sockets && !memory_bytes; }
};

struct NamedDisk {
  std::string name;
  std::optional<std::string> bus;  // virtio | sata | scsi | usb
};

// Where the VM's size came from, after defaults and overrides are resolved.
enum class SizingSource { Default, Knot, Resources, InstanceType };

struct Sizing {
  SizingSource source = SizingSource::Default;
  std::uint64_t memory_bytes = 0;
  std::uint32_t sockets = 1;
  std::uint32_t cores = 1;  // per socket
  std::uint32_t vcpus() const { return sockets * cores; }
};

// Who may open a port's preview URL (https://PORT--SPACE--OWNER.PREVIEW_DOMAIN/): nobody (no
// preview), the owner and those the space is shared with, or any logged-in user.
enum class Preview { None, Private, Team };
const char* to_string(Preview);

// A guest port the template offers through the tunnel: `8000` or `{port: 3000, name: web}`;
// `{port: 3000, http: true}` or `preview: private|team` also gives it a preview URL.
struct ServicePort {
  std::uint16_t port = 0;
  std::string name;  // optional; what the UI and `bowline forward` call it
  Preview preview = Preview::None;
  bool operator==(const ServicePort&) const = default;
};

struct Spec {
  std::string name;      // libvirt domain name, sanitised
  std::string hostname;  // RFC 1123
  // What the template is for, in a line or two: what everyone may read of it (its YAML is for
  // admins and its author).
  std::string description;
  Image image;
  std::optional<std::uint64_t> disk_bytes;  // empty: keep the base image's size
  // knot's sizing fields as written (empty when absent); see `sizing` for the result.
  std::optional<std::uint64_t> memory_bytes;
  std::optional<std::uint32_t> cpus;
  std::vector<EnvVar> environment;
  std::vector<Device> devices;
  Network network;

  // Cozystack parameters.
  std::optional<std::string> instance_type;
  std::optional<std::string> instance_profile;
  Resources resources;
  Sizing sizing;  // resolved: resources > instanceType > knot memory/cpus > defaults
  Firmware firmware;
  std::optional<std::string> cpu_model;
  std::vector<std::string> gpus;
  std::vector<NamedDisk> disks;
  std::vector<std::string> networks;  // extra NICs; deprecated `subnets` folds in here
  std::vector<std::string> ssh_keys;
  std::optional<std::string> cloud_init;
  bool netplan_dhcp = false;
  std::optional<std::string> cloud_init_seed;
  RunStrategy run_strategy = RunStrategy::Always;
  // `idleSuspend`: how long the space may sit idle before it is suspended; 0 ("off"): never;
  // nullopt: the server's default (server.idle.suspend_after).
  std::optional<std::chrono::seconds> idle_suspend;
  bool external = false;
  ExternalMethod external_method = ExternalMethod::PortList;
  std::vector<std::uint16_t> external_ports{22};
  bool external_allow_icmp = true;

  // Guest ports people may reach through the server's tunnel (`ports:`), besides SSH's 22.
  std::vector<ServicePort> ports;

  // Template switches.
  bool display = false;  // VM Display over VNC
  bool console = false;  // serial console in the browser

  // Where resolved values came from, by field ("instanceType", "instanceProfile", "sizing",
  // "firmware.bootloader"): "template", "default", "instance type u1.medium (default)",
  // "preference ubuntu", or why a default was not applied.
  std::map<std::string, std::string> origins;
};

const char* to_string(NetworkMode);
const char* to_string(Bootloader);
const char* to_string(RunStrategy);
const char* to_string(ExternalMethod);
const char* to_string(ImageKind);
const char* to_string(DeviceKind);
const char* to_string(SizingSource);

}  // namespace bowline::spec
