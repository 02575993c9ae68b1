#include "plan/guest_plan.hpp"

#include <algorithm>
#include <stdexcept>

#include "util/hash.hpp"
#include "util/sha512_crypt.hpp"

namespace bowline::plan {

namespace {

std::string hex_byte(std::uint8_t b) {
  static constexpr char kHex[] = "0123456789abcdef";
  return {kHex[b >> 4], kHex[b & 15]};
}

}  // namespace

std::string mac_for(const std::string& space_id, unsigned nic_index) {
  const auto digest = util::sha256(space_id + "/nic/" + std::to_string(nic_index));
  return "52:54:00:" + hex_byte(digest[0]) + ":" + hex_byte(digest[1]) + ":" + hex_byte(digest[2]);
}

std::string password_hash(const std::string& password, const std::string& space_id) {
  static constexpr char kSaltAlphabet[] =
      "./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  const auto digest = util::sha256("bowline-password-salt/" + space_id);
  std::string salt;
  for (int i = 0; i < 16; ++i) salt += kSaltAlphabet[digest[static_cast<std::size_t>(i)] % 64];
  return util::sha512_crypt(password, salt);
}

std::string terminal_authorized_key(const std::string& public_line) {
  return "restrict,pty " + public_line;
}

void add_terminal_key(GuestPlan& guest, const std::string& public_line) {
  if (!public_line.empty()) guest.ssh_keys.push_back(terminal_authorized_key(public_line));
}

std::string base_instance_id(const std::string& space_id) {
  return "iid-" + util::sha256_hex("bowline-instance/" + space_id).substr(0, 16);
}

std::string next_instance_id(const std::string& space_id, const std::string& current,
                             const std::string& applied_fingerprint,
                             const std::string& now_fingerprint) {
  const auto kept = current.empty() ? base_instance_id(space_id) : current;
  if (applied_fingerprint.empty() || applied_fingerprint == now_fingerprint) return kept;
  auto next = base_instance_id(space_id) + "-" + now_fingerprint.substr(0, 12);
  // Back to a cloudInit applied before: still a new instance for cloud-init, which compares
  // with the last one only.
  return next == kept ? next + "a" : next;
}

GuestPlan make_guest_plan(const spec::Spec& spec, const Owner& owner, const std::string& space_id,
                          const std::optional<StaticAddress>& address) {
  if (space_id.empty()) throw std::invalid_argument("the space has no id");
  GuestPlan g;
  g.hostname = spec.hostname;
  // cloud-init runs the template's per-instance cloud-config once per instance-id: a new one
  // only when the cloudInit changes (make_plan takes the space's current one). What must
  // follow every other change is applied at every boot instead (the owner's bootcmd,
  // network-config with updates.network.when: boot).
  g.identity = base_instance_id(space_id);
  g.instance_id = g.identity;
  g.username = owner.username;
  if (!owner.service_password_hash.empty()) g.password_hash = owner.service_password_hash;
  for (const auto& list : {owner.ssh_keys, spec.ssh_keys})
    for (const auto& key : list)
      if (std::find(g.ssh_keys.begin(), g.ssh_keys.end(), key) == g.ssh_keys.end())
        g.ssh_keys.push_back(key);
  g.timezone = owner.timezone;
  g.environment = spec.environment;
  g.user_cloud_init = spec.cloud_init;
  g.primary_mac = mac_for(space_id, 0);
  for (std::size_t i = 0; i < spec.networks.size(); ++i)
    g.extra_macs.push_back(mac_for(space_id, static_cast<unsigned>(i + 1)));
  g.dhcp_everywhere = spec.netplan_dhcp;
  if (address) {
    g.network = address->network;
    g.address = address->address;
    g.gateway = address->gateway;
    g.resolvers = address->resolvers;
  }
  return g;
}

}  // namespace bowline::plan
