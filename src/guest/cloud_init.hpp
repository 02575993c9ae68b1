// The cloud-init NoCloud seed of a space: user-data, meta-data and network-config rendered
// from a space's guest plan (plan/guest_plan.hpp: what cloud-init must do), and the seed ISO.
//
// Every document is produced by yaml-cpp's emitter from a value tree, never by pasting values
// into text, so a value with newlines, quotes, ": ", '#', '{', a leading '*', '&' or '!', or
// any Unicode stays data. The output is pure ASCII: non-ASCII characters are written as
// escapes. Scalars are written plain only when every YAML reader (yaml-cpp, PyYAML's YAML 1.1
// resolver, which is what cloud-init uses, and YAML 1.2 readers) resolves them as the string
// they are; otherwise they are double-quoted, or written as a literal block when that is
// exactly equivalent (see cloud_init_yaml.hpp).
//
// Everything is deterministic: the same guest plan gives byte-identical documents and ISO.
//
// user-data (`#cloud-config`)
// ---------------------------
//   hostname, manage_etc_hosts: true, ssh_pwauth: false, timezone (when set),
//   users: exactly one user, guest.username, with passwordless sudo, /bin/bash,
//     ssh_authorized_keys = guest.ssh_keys, `lock_passwd: false` + `passwd: <hash>` when
//     password_hash is set, else `lock_passwd: true`. No `groups`: a group missing on the image
//     (`sudo` does not exist on RHEL) makes cloud-init fail to create the user; the sudo rule
//     alone grants sudo.
//   bootcmd (every boot): the owner's account, keys, password hash, environment and time zone
//     as the seed says now (owner_boot_script.hpp): the users module runs once per instance and
//     the instance-id is the space's for life. The environment is a profile.d script with one
//     `export NAME='value'` line per variable (single-quoted, ' as '\'' : exact for any value,
//     newlines included), readable by root and the owner only.
//   updates.network.when: [boot-new-instance, boot]: the network-config is applied at every
//     boot, so a new address (set-ip) or resolvers arrive with the next start.
//   runcmd: qemu-guest-agent, installed only when the image lacks it with whichever package
//     manager the guest has (apt-get, dnf, yum, zypper, apk, pacman; with a time limit), then
//     enabled and started; every step is guarded so that neither an offline guest nor a
//     missing tool fails the boot. cloud-init's `packages:` module is not used: it runs
//     `apt-get update` whenever packages are listed, and an offline guest then ends cloud-init
//     in error.
//
// The user's cloudInit (guest.user_cloud_init) is combined with ours so both take effect:
//   * `#cloud-config` (recognised as cloud-init does: case-insensitive, after leading blanks):
//     parsed and deep-merged into ours, giving one document:
//       - mappings merge key by key, recursively; keys only they have follow ours, in their order;
//       - sequences concatenate, ours first (our runcmd runs before theirs, our write_files are
//         written first);
//       - anything else (scalars, type mismatches, tagged values): theirs win; a null of theirs
//         (`key:` with no value) erases nothing;
//       - except `users`: our user always stays, first. Their users follow it (a list is
//         appended; a string such as "default" or "bob, carol" becomes one item; the mapping form
//         {name: {...}} is turned into list items as cloud-init would). cloud-init merges
//         same-named entries with the first one winning, so our settings for our user hold.
//     Their scalars are re-emitted so that PyYAML reads the same values as from their text:
//     plain scalars stay plain (`yes`, `0755`, `2024-01-01` keep their YAML 1.1 types), quoted
//     ones stay strings, explicit tags are kept (verbatim); anchors and aliases are expanded;
//     of duplicate keys the last wins, as in PyYAML.
//   * anything else: a multipart MIME message (multipart/mixed) with our part text/cloud-config
//     first, then theirs: a `#!` script as text/x-shellscript; their own MIME message (a header
//     first, and Content-Type: first or "MIME-Version:" in the first 4096 bytes, as cloud-init
//     detects it) nested as it is, its content type passed through (cloud-init walks nested
//     multiparts); anything else as text/plain, which cloud-init types by its first line
//     (#cloud-boothook, #include, ## template: jinja...; a cloud-config that arrives this way,
//     as #cloud-config-archive or a jinja template, is merged by cloud-init's own default rule:
//     its top-level keys replace ours). A part that is not plain 7-bit text is
//     base64-encoded (cloud-init would otherwise mangle non-ASCII text). The boundary is derived
//     from a hash of the parts and checked not to occur in any of them.
//
// network-config (version 2)
// --------------------------
//   * guest.address set (bridged): the primary NIC, matched by guest.primary_mac and
//     renamed eth0 (set-name), gets the static address/prefix, the gateway as `gateway4` (the
//     one form every renderer turns into a default route: on Debian 12's ifupdown a `routes`
//     entry needs net-tools, and "to: default" fails cloud-init 22.4's network stage) and
//     nameservers = guest.resolvers (also written to /etc/resolv.conf at boot where
//     nothing manages that file: see owner_boot_script.hpp).
//     Each further NIC (guest.extra_macs) is matched by MAC, renamed eth1, eth2... and gets
//     `dhcp4: true` with `optional: true` (boot does not wait for it); its DHCP routes come at
//     the default DHCP metric, after the static default route. set-name is what makes a MAC
//     match work with every cloud-init renderer: without it, renderers other than netplan
//     (sysconfig, networkd, eni) take the entry's id for the interface name.
//     A static address wins over dhcp_everywhere: the en*/eth* entries would shadow it.
//   * dhcp_everywhere (netplanDhcp) without an address: two entries matching the names en* and
//     eth*, each `dhcp4: true` with `dhcp4-overrides: {use-domains: true}` (keeps the DNS
//     search domains DHCP offers). They cover the extra NICs too, which get no entry of their
//     own (two entries matching one link conflict in netplan).
//   * neither: no network-config (std::nullopt): cloud-init falls back to DHCP on the first NIC.
//     Extra NICs are then left unconfigured, as on Cozystack without netplanDhcp.
//
// meta-data: instance-id (guest.instance_id), local-hostname (guest.hostname).
//
// Errors: std::invalid_argument when the plan cannot be rendered faithfully: no guest user
// name, an environment variable name that is not a shell name or a value holding NUL, text
// that is not valid UTF-8 (or holds a Unicode noncharacter), a static address without its
// network or without the primary MAC, a user `#cloud-config` that is not one YAML mapping (the
// spec loader reports most of these earlier), or one too large or too deeply nested to merge.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "plan/guest_plan.hpp"

namespace bowline::guest {

struct SeedDocuments {
  std::string user_data;
  std::string meta_data;
  std::optional<std::string> network_config;  // empty: no network-config file
};

SeedDocuments render_seed(const plan::GuestPlan& guest);

std::string render_user_data(const plan::GuestPlan& guest);
std::string render_meta_data(const plan::GuestPlan& guest);
std::optional<std::string> render_network_config(const plan::GuestPlan& guest);

// For KubeVirt: the user-data Cozystack synthesises when a spec gives sshKeys and no cloudInit:
// `#cloud-config` with a top-level ssh_authorized_keys list (the image's default user), each key
// double-quoted as Cozystack writes it.
std::string render_keys_only_user_data(const std::vector<std::string>& keys);

// The NoCloud seed image: ISO 9660 + Joliet, volume id `cidata`, holding user-data, meta-data
// and, when there is one, network-config (see iso9660_writer.hpp).
std::string seed_iso(const plan::GuestPlan& guest);

}  // namespace bowline::guest
