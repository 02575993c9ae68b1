// What cloud-init is to make of a space's guest, whatever runs it: guest/ renders it as the
// NoCloud seed of a libvirt domain and as the cloud-init Secret of a KubeVirt VirtualMachine.
// It needs the space, its owner and its address, never a node's settings.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "spec/spec.hpp"

namespace bowline::plan {

// The space's owner as the guest gets them: the account bowline's user-data makes. (The store
// keeps users as accounts of the server; the engine turns one into this, in one place.)
struct Owner {
  std::string username;  // also the guest user's name
  std::string email;
  std::string timezone;  // e.g. "Europe/Berlin"; empty: leave the image's
  std::string id;
  std::string service_password_hash;  // SHA-512 crypt, as the store keeps it; empty: none
  // The owner's own keys, then those of colleagues it is shared with as user or admin.
  std::vector<std::string> ssh_keys;
};

// A bridged space's address, as the node's network gives it.
struct StaticAddress {
  spec::Ipv4Network network;
  spec::Ipv4Address address;
  std::optional<spec::Ipv4Address> gateway;  // the default route
  std::vector<std::string> resolvers;        // nameservers
};

// The guest's SSH host key, made by bowline (engine/host_keys.hpp), in OpenSSH's formats.
struct HostKeyPair {
  std::string private_key;
  std::string public_line;
  bool operator==(const HostKeyPair&) const = default;
};

struct GuestPlan {
  std::string hostname;
  // cloud-init's instance-id: the space's first (base_instance_id) until its template's
  // cloudInit changes, then a new one per change (next_instance_id), so that the next start
  // applies the new cloudInit. cloud-init makes host keys once per instance, so bowline
  // supplies them (host_key).
  std::string instance_id;
  // The space's for life, whatever its cloudInit: the boot script tells a clone (another
  // identity on a copied disk: a new machine-id) from a cloudInit change by it.
  std::string identity;
  std::string username;
  std::optional<std::string> password_hash;  // SHA-512 crypt; empty: password locked
  std::vector<std::string> ssh_keys;         // the owner's keys, then the spec's sshKeys
  std::string timezone;                      // empty: leave the image's
  std::vector<spec::EnvVar> environment;
  std::optional<std::string> user_cloud_init;  // the spec's cloudInit, combined with ours
  // Network: a static address (bridged), DHCP on every en*/eth* (netplanDhcp), or nothing
  // (cloud-init's own DHCP fallback on the first NIC).
  std::optional<spec::Ipv4Network> network;  // bridged: the subnet
  std::optional<spec::Ipv4Address> address;  // bridged: the space's address
  std::optional<spec::Ipv4Address> gateway;  // bridged: default route
  std::vector<std::string> resolvers;        // bridged: nameservers
  std::string primary_mac;
  std::vector<std::string> extra_macs;  // the spec's `networks`, in order
  bool dhcp_everywhere = false;
  // cloud-init installs it as the guest's only host key; none: the guest makes its own (a
  // space an older server made, `bowline render`).
  std::optional<HostKeyPair> host_key;
};

// The line the owner's authorized_keys gets for the browser terminal's key (the server's SSH
// client into the guest): `restrict,pty` lets it open a shell with a terminal and nothing else
// (no port, agent or X11 forwarding), whatever the owner's own keys may do.
std::string terminal_authorized_key(const std::string& public_line);
// Adds the browser terminal's key to the owner's keys; nothing when `public_line` is empty.
void add_terminal_key(GuestPlan& guest, const std::string& public_line);

// The MAC of the space's NIC number `nic_index` (0: its network, then each of `networks`).
std::string mac_for(const std::string& space_id, unsigned nic_index);
// SHA-512 crypt of the password with a salt derived from the space id, for renders made
// offline from a clear password (bowline render): a stable hash keeps them byte-identical.
std::string password_hash(const std::string& password, const std::string& space_id);

// The instance-id a space is made with, derived from its id.
std::string base_instance_id(const std::string& space_id);
// The instance-id of the seed this start writes: `current` (empty: the base) while the
// template's cloudInit is the one the last start applied (`applied_fingerprint`, empty when
// no start recorded one), else a new one derived from the new cloudInit's fingerprint.
std::string next_instance_id(const std::string& space_id, const std::string& current,
                             const std::string& applied_fingerprint,
                             const std::string& now_fingerprint);

// `space_id` keys everything derived (MACs, instance-id); `address`: the
// bridged space's, none on a network that hands out addresses (NAT, a pod network).
GuestPlan make_guest_plan(const spec::Spec& spec, const Owner& owner, const std::string& space_id,
                          const std::optional<StaticAddress>& address);

}  // namespace bowline::plan
