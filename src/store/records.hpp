// What the store keeps: plain structs, one per table row. Times are Unix milliseconds from the
// store's Clock; IPv4 addresses are host-order integers (198.51.100.7 = 0xC6336407).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace bowline::store {

// ---- users --------------------------------------------------------------------------------

// use-ssh: port 22 of one's spaces through the tunnel; use-ports: the other ports a template
// lists in ports:.
enum class Permission { Admin, UseVnc, UseWebTerminal, UseSsh, UsePorts };
const char* to_string(Permission);  // admin | use-vnc | use-web-terminal | use-ssh | use-ports
std::optional<Permission> parse_permission(std::string_view);  // nullopt when unknown
std::string permission_names();  // "admin, use-vnc, ...", for messages

// Limits on what one user may hold: spaces, their vCPUs, memory and disk (bytes), stopped
// spaces and pool claims included. nullopt: the server's default; a negative value: no limit.
struct Quota {
  std::optional<std::int64_t> spaces;
  std::optional<std::int64_t> cpus;
  std::optional<std::int64_t> memory;
  std::optional<std::int64_t> disk;
  bool operator==(const Quota&) const = default;
};

struct User {
  std::int64_t id = 0;
  std::string username;
  std::string email;
  std::string timezone;  // e.g. "Europe/Berlin"; empty: the image's
  // The guest account's password as SHA-512 crypt ("$6$..."), the form the guest gets; the
  // clear text is never kept. nullopt: none (SSH keys only).
  std::optional<std::string> service_password_hash;
  std::string password_hash;          // web login (argon2id); empty: no password login
  std::vector<std::string> ssh_keys;  // OpenSSH public keys, in the order added
  std::set<Permission> permissions;
  std::int64_t created_at = 0;
  bool disabled = false;  // no login, token, session or socket works while set
  Quota quota;            // this user's own limits; unset ones are the server's defaults

  bool has(Permission permission) const { return permissions.count(permission) != 0; }
};

// What create() needs; id and created_at come from the store.
struct NewUser {
  std::string username;
  std::string email;
  std::string timezone;
  std::optional<std::string> service_password_hash;
  std::string password_hash;
  std::vector<std::string> ssh_keys;
  std::set<Permission> permissions;
};

struct ApiToken {
  std::int64_t id = 0;
  std::int64_t user_id = 0;
  std::string token_sha256;  // lowercase hex of SHA-256 of the secret; the secret is never kept
  std::string name;
  std::int64_t created_at = 0;
  std::optional<std::int64_t> last_used;
  std::optional<std::int64_t> expires_at;  // nullopt: never

  bool expired(std::int64_t now_unix_ms) const { return expires_at && *expires_at <= now_unix_ms; }
};

// ---- templates and pools ------------------------------------------------------------------

struct Template {
  std::int64_t id = 0;
  std::string name;
  std::string yaml;
  std::int64_t revision = 1;  // 1 at creation, +1 on every update
  // Who created it (reads its YAML as admins do); nullopt: made before authors were kept, or
  // its author was deleted.
  std::optional<std::int64_t> author_id;
  std::int64_t created_at = 0;
  std::int64_t updated_at = 0;
};

struct Pool {
  std::int64_t id = 0;
  std::string name;
  std::int64_t template_id = 0;
  std::int64_t size = 0;  // members to keep ready
  std::int64_t created_at = 0;
  std::int64_t updated_at = 0;
};

// ---- spaces -------------------------------------------------------------------------------

// Suspended: idle, its memory saved to disk with libvirt's managed save (no QEMU process); a
// start, a console, display, tunnel or terminal, or a claim resumes it where it was.
enum class SpaceState {
  Pending,
  Creating,
  Running,
  Stopping,
  Stopped,
  Starting,
  Deleting,
  Error,
  Suspending,
  Suspended
};
const char* to_string(SpaceState);
std::optional<SpaceState> parse_space_state(std::string_view);
// The states an operation owns (it sets the next one itself): events and drift checks leave a
// space in one of them alone.
bool operation_owns(SpaceState state);
// The states in which a space's domain holds its node's resources (devices, dedicated CPUs).
bool holds_node_resources(SpaceState state);

enum class DesiredState { Running, Stopped };
const char* to_string(DesiredState);
std::optional<DesiredState> parse_desired_state(std::string_view);

struct Space {
  std::string id;  // a UUID, chosen by the caller
  std::string name;
  std::optional<std::int64_t> owner_id;  // nullopt: an unclaimed pool member
  std::int64_t template_id = 0;
  std::int64_t applied_template_revision = 0;  // 0: never defined
  // JSON object: part -> fingerprint of what the last start applied (plan/change_parts.hpp);
  // "{}" until then, and for spaces an older server started.
  std::string applied_parts = "{}";
  DesiredState desired_state = DesiredState::Stopped;
  SpaceState state = SpaceState::Pending;
  std::string error;              // why the space is in state error; empty otherwise
  std::optional<std::string> ip;  // last known address, for display (leases hold the truth)
  std::string uuid;               // the domain's SMBIOS UUID
  std::string vnc_password;
  std::string domain_name;  // unique on the host
  std::string node;
  std::optional<std::int64_t> pool_id;
  // The guest's SSH host key (OpenSSH private key format) and its public line; empty for a
  // space an older server made.
  std::string host_key;
  std::string host_key_public;
  // The server's SSH client key into the guest for the browser terminal (OpenSSH private key
  // format) and its public line, which the guest's owner account authorizes; empty until the
  // space's first start by a server that makes them.
  std::string terminal_key;
  std::string terminal_key_public;
  std::int64_t created_at = 0;
  std::int64_t updated_at = 0;
  // When (Unix ms) and why the space was last suspended ("idle for 30m", "asked by al"); what
  // the API shows while its state is suspended.
  std::int64_t suspended_at = 0;
  std::string suspend_reason;
  // The virtual size of the space's own disk as its node made it (0: not known yet).
  std::int64_t disk_bytes = 0;
  // The cloud-init instance-id of its seed since its template's cloudInit last changed;
  // empty: the one it was made with (plan/guest_plan.hpp).
  std::string instance_id;
};

struct NewSpace {
  std::string id;
  std::string name;
  std::optional<std::int64_t> owner_id;
  std::int64_t template_id = 0;
  DesiredState desired_state = DesiredState::Running;
  SpaceState state = SpaceState::Pending;
  std::string uuid;
  std::string vnc_password;
  std::string domain_name;
  std::string node;
  std::optional<std::int64_t> pool_id;
  std::string host_key;
  std::string host_key_public;
  std::string terminal_key;
  std::string terminal_key_public;
};

// ---- addresses ----------------------------------------------------------------------------

struct IpLease {
  std::string network_key;  // which address space (e.g. "bridge:br0")
  std::uint32_t ip = 0;
  std::string space_id;
  std::int64_t created_at = 0;
};

std::string format_ipv4(std::uint32_t ip);  // dotted quad

// A port of the host that publishes a port of a space's guest (template `external`).
struct HostPort {
  std::string protocol;  // tcp | udp
  std::uint16_t host_port = 0;
  std::string space_id;
  std::uint16_t guest_port = 0;
  std::int64_t created_at = 0;
};

// ---- operations and events ----------------------------------------------------------------

enum class OperationState { Pending, Running, Succeeded, Failed };
const char* to_string(OperationState);
std::optional<OperationState> parse_operation_state(std::string_view);

struct Operation {
  std::int64_t id = 0;
  std::optional<std::string> space_id;
  std::string kind;  // create | start | stop | restart | delete | set-ip | claim | ...
  OperationState state = OperationState::Pending;
  std::string step;   // what it is doing now ("downloading image")
  int progress = 0;   // 0..100
  std::string error;  // why it failed
  std::int64_t created_at = 0;
  std::int64_t updated_at = 0;
  std::optional<std::int64_t> finished_at;

  bool finished() const { return finished_at.has_value(); }
};

struct Event {
  std::int64_t seq = 0;  // increases with every event, never reused
  std::int64_t time = 0;
  std::string kind;  // e.g. space.state, operation.progress
  std::optional<std::string> space_id;
  nlohmann::json payload = nlohmann::json::object();
};

}  // namespace bowline::store
