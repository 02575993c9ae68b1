#include "guest/cloud_init.hpp"

#include <stdexcept>
#include <string_view>

#include "guest/cloud_init_mime.hpp"
#include "guest/cloud_init_yaml.hpp"
#include "guest/environment_files.hpp"
#include "guest/iso9660_writer.hpp"
#include "guest/owner_boot_script.hpp"
#include "util/strings.hpp"

namespace bowline::guest {
namespace {

using detail::Yaml;

constexpr std::string_view kCloudConfigHeader = "#cloud-config\n";

// Installs qemu-guest-agent only when the image lacks it, with the guest's package manager,
// each attempt time-limited; whatever happens (offline, no package manager) the boot goes on.
// apt-get first tries the lists the image has, and updates them only when that fails.
constexpr std::string_view kInstallGuestAgent =
    R"(if ! command -v qemu-ga >/dev/null 2>&1 && [ ! -x /usr/bin/qemu-ga ] && [ ! -x /usr/sbin/qemu-ga ]; then
  if command -v apt-get >/dev/null 2>&1; then
    DEBIAN_FRONTEND=noninteractive timeout 300 apt-get install -y qemu-guest-agent ||
      { timeout 300 apt-get update && DEBIAN_FRONTEND=noninteractive timeout 300 apt-get install -y qemu-guest-agent; }
  elif command -v dnf >/dev/null 2>&1; then timeout 300 dnf install -y qemu-guest-agent
  elif command -v yum >/dev/null 2>&1; then timeout 300 yum install -y qemu-guest-agent
  elif command -v zypper >/dev/null 2>&1; then timeout 300 zypper --non-interactive install qemu-guest-agent
  elif command -v apk >/dev/null 2>&1; then timeout 300 apk add qemu-guest-agent
  elif command -v pacman >/dev/null 2>&1; then timeout 300 pacman -S --noconfirm qemu-guest-agent
  fi
fi || true
)";

// Enables and starts the agent (Debian's unit is static: enable may refuse, start still works).
constexpr std::string_view kEnableGuestAgent =
    R"(if command -v systemctl >/dev/null 2>&1; then
  systemctl enable --now qemu-guest-agent || systemctl start qemu-guest-agent || true
elif command -v rc-service >/dev/null 2>&1; then
  rc-update add qemu-guest-agent default || true
  rc-service qemu-guest-agent start || true
fi
)";

// /etc/resolv.conf for a static address: ifupdown's dns-nameservers needs resolvconf, which
// many images lack, and cloud-init's resolv_conf module skips Debian. The boot script writes it
// only where nothing else manages the file (see owner_boot_script.hpp).
std::string resolv_conf(const plan::GuestPlan& g) {
  if (!g.address || g.resolvers.empty()) return {};
  std::string out = "# written by bowline at boot: the space's resolvers\n";
  for (const auto& r : g.resolvers) out += "nameserver " + r + "\n";
  return out;
}

Yaml our_cloud_config(const plan::GuestPlan& g) {
  if (g.username.empty()) throw std::invalid_argument("the guest user has no name");

  Yaml user = Yaml::map();
  user.add("name", Yaml::str(g.username))
      .add("sudo", Yaml::str("ALL=(ALL) NOPASSWD:ALL"))
      .add("shell", Yaml::str("/bin/bash"));
  if (g.password_hash && !g.password_hash->empty()) {
    user.add("lock_passwd", Yaml::boolean(false)).add("passwd", Yaml::str(*g.password_hash));
  } else {
    user.add("lock_passwd", Yaml::boolean(true));
  }
  if (!g.ssh_keys.empty()) {
    Yaml keys = Yaml::seq();
    for (const auto& k : g.ssh_keys) keys.items.push_back(Yaml::str(k));
    user.add("ssh_authorized_keys", std::move(keys));
  }

  Yaml doc = Yaml::map();
  if (!g.hostname.empty()) doc.add("hostname", Yaml::str(g.hostname));
  if (!g.timezone.empty()) doc.add("timezone", Yaml::str(g.timezone));
  doc.add("manage_etc_hosts", Yaml::boolean(true))
      .add("ssh_pwauth", Yaml::boolean(false))
      .add("users", Yaml::seq({std::move(user)}));
  // The host key clients already know (GET .../host-keys): cloud-init deletes the image's
  // keys and installs this one instead of making new ones, once per instance.
  if (g.host_key)
    doc.add("ssh_keys", Yaml::map()
                            .add("ed25519_private", Yaml::str(g.host_key->private_key))
                            .add("ed25519_public", Yaml::str(g.host_key->public_line)));
  // Every boot: the owner as the seed says now (the users, ssh and write_files modules run
  // once per instance, and the instance-id stays for the space's life).
  std::string keys;
  for (const auto& k : g.ssh_keys) keys += k + "\n";
  Yaml owner = Yaml::seq();
  for (const std::string& arg :
       {std::string("sh"), std::string("-c"), std::string(kOwnerBootScript),
        std::string("bowline-owner"), g.username, keys, g.password_hash.value_or(""),
        g.environment.empty() ? std::string() : profile_script(g.environment), g.timezone,
        resolv_conf(g), g.identity.empty() ? g.instance_id : g.identity,
        environment_names(g.environment), pam_environment(g.environment),
        g.environment.empty() ? std::string() : systemd_dropin(g.environment)})
    owner.items.push_back(Yaml::str(arg));
  doc.add("bootcmd", Yaml::seq({std::move(owner)}));
  // And the network-config at every boot, not only the first: a stopped bridged space's
  // address can change (set-ip), and so can the resolvers.
  doc.add(
      "updates",
      Yaml::map().add("network", Yaml::map().add("when", Yaml::seq({Yaml::str("boot-new-instance"),
                                                                    Yaml::str("boot")}))));
  doc.add("runcmd", Yaml::seq({Yaml::str(std::string(kInstallGuestAgent)),
                               Yaml::str(std::string(kEnableGuestAgent))}));
  return doc;
}

enum class UserData { None, CloudConfig, Script, Mime, Other };

std::string_view lstrip(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\n' ||
                        s.front() == '\r' || s.front() == '\f' || s.front() == '\v'))
    s.remove_prefix(1);
  return s;
}

// A header field line: a name of printable ASCII without ':' or blanks, then ':'.
bool header_line(std::string_view s) {
  const auto colon = s.find(':');
  if (colon == 0 || colon == s.npos) return false;
  for (char c : s.substr(0, colon))
    if (c <= 0x20 || c > 0x7e) return false;
  return true;
}

UserData classify(std::string_view text) {
  const auto start = lstrip(text);
  if (start.empty()) return UserData::None;
  // As cloud-init types a part: by its start, lower-cased, after leading blanks; a longer
  // prefix wins (#cloud-config-archive is not #cloud-config).
  const auto head = util::to_lower(start.substr(0, 32));
  if (head.starts_with("#cloud-config") && !head.starts_with("#cloud-config-archive") &&
      !head.starts_with("#cloud-config-jsonp"))
    return UserData::CloudConfig;
  // MIME as cloud-init detects it ("mime-version:" in the first 4096 bytes), when the text
  // starts with a header; or starting with Content-Type: as the spec loader accepts it.
  const auto lower = util::to_lower(text.substr(0, 4096));
  if (lower.starts_with("content-type:") ||
      (lower.find("mime-version:") != std::string::npos && header_line(text)))
    return UserData::Mime;
  if (head.starts_with("#!")) return UserData::Script;
  return UserData::Other;
}

Yaml parse_user_cloud_config(const std::string& text) {
  std::vector<YAML::Node> docs;
  try {
    docs = YAML::LoadAll(text);
  } catch (const YAML::Exception& e) {
    throw std::invalid_argument("the user's #cloud-config is not valid YAML (line " +
                                std::to_string(e.mark.line + 1) + "): " + e.msg);
  }
  if (docs.size() > 1)
    throw std::invalid_argument(
        "the user's #cloud-config holds several YAML documents; cloud-init reads only one");
  if (docs.empty()) return Yaml::null();
  Yaml theirs = detail::from_node(docs.front());
  if (theirs.kind != Yaml::Kind::Null && theirs.kind != Yaml::Kind::Mapping)
    throw std::invalid_argument("the user's #cloud-config must be a YAML mapping");
  return theirs;
}

Yaml ethernet_by_mac(const std::string& mac, const std::string& name) {
  if (mac.empty()) throw std::invalid_argument("NIC " + name + " has no MAC address");
  Yaml e = Yaml::map();
  e.add("match", Yaml::map().add("macaddress", Yaml::str(util::to_lower(mac))))
      .add("set-name", Yaml::str(name));
  return e;
}

}  // namespace

std::string render_user_data(const plan::GuestPlan& guest) {
  const Yaml ours = our_cloud_config(guest);
  const std::string theirs = guest.user_cloud_init.value_or("");
  switch (classify(theirs)) {
    case UserData::None:
      return std::string(kCloudConfigHeader) + detail::emit(ours);
    case UserData::CloudConfig:
      return std::string(kCloudConfigHeader) +
             detail::emit(detail::merge(ours, parse_user_cloud_config(theirs), true));
    case UserData::Mime:
      return detail::multipart_mixed(
          {{"text/cloud-config", std::string(kCloudConfigHeader) + detail::emit(ours)},
           {"", theirs, true}});
    case UserData::Script:
      return detail::multipart_mixed(
          {{"text/cloud-config", std::string(kCloudConfigHeader) + detail::emit(ours)},
           {"text/x-shellscript", theirs}});
    case UserData::Other:
      break;
  }
  return detail::multipart_mixed(
      {{"text/cloud-config", std::string(kCloudConfigHeader) + detail::emit(ours)},
       {"text/plain", theirs}});
}

std::string render_meta_data(const plan::GuestPlan& guest) {
  Yaml doc = Yaml::map();
  doc.add("instance-id", Yaml::str(guest.instance_id));
  if (!guest.hostname.empty()) doc.add("local-hostname", Yaml::str(guest.hostname));
  return detail::emit(doc);
}

std::optional<std::string> render_network_config(const plan::GuestPlan& g) {
  Yaml ethernets = Yaml::map();
  if (g.address) {
    if (!g.network) throw std::invalid_argument("a static address needs its network");
    Yaml primary = ethernet_by_mac(g.primary_mac, "eth0");
    primary.add(
        "addresses",
        Yaml::seq({Yaml::str(g.address->to_string() + "/" + std::to_string(g.network->prefix))}));
    if (g.gateway)
      // gateway4, not routes: Debian 12's cloud-init renders ifupdown (ENI), where a route
      // becomes "post-up route add" (net-tools, absent from the image: no default route) and
      // "to: default" fails its network stage outright; gateway4 becomes ifupdown's own
      // `gateway`, and networkd, sysconfig and netplan (which only warns that it is old) take it.
      primary.add("gateway4", Yaml::str(g.gateway->to_string()));
    if (!g.resolvers.empty()) {
      Yaml servers = Yaml::seq();
      for (const auto& r : g.resolvers) servers.items.push_back(Yaml::str(r));
      primary.add("nameservers", Yaml::map().add("addresses", std::move(servers)));
    }
    ethernets.add("eth0", std::move(primary));
    for (std::size_t i = 0; i < g.extra_macs.size(); ++i) {
      const auto name = "eth" + std::to_string(i + 1);
      Yaml extra = ethernet_by_mac(g.extra_macs[i], name);
      extra.add("dhcp4", Yaml::boolean(true)).add("optional", Yaml::boolean(true));
      ethernets.add(name, std::move(extra));
    }
  } else if (g.dhcp_everywhere) {
    for (const std::string prefix : {"en", "eth"}) {
      Yaml e = Yaml::map();
      e.add("match", Yaml::map().add("name", Yaml::str(prefix + "*")))
          .add("dhcp4", Yaml::boolean(true))
          .add("dhcp4-overrides", Yaml::map().add("use-domains", Yaml::boolean(true)));
      ethernets.add("all-" + prefix, std::move(e));
    }
  } else {
    return std::nullopt;
  }
  Yaml doc = Yaml::map();
  doc.add("version", Yaml::plain("2")).add("ethernets", std::move(ethernets));
  return detail::emit(doc);
}

SeedDocuments render_seed(const plan::GuestPlan& guest) {
  return {render_user_data(guest), render_meta_data(guest), render_network_config(guest)};
}

std::string render_keys_only_user_data(const std::vector<std::string>& keys) {
  Yaml list = Yaml::seq();
  for (const auto& k : keys) list.items.push_back(Yaml::str(k, true));
  return std::string(kCloudConfigHeader) +
         detail::emit(Yaml::map().add("ssh_authorized_keys", std::move(list)));
}

std::string seed_iso(const plan::GuestPlan& guest) {
  auto docs = render_seed(guest);
  std::vector<IsoFile> files{{"user-data", std::move(docs.user_data)},
                             {"meta-data", std::move(docs.meta_data)}};
  if (docs.network_config) files.push_back({"network-config", std::move(*docs.network_config)});
  return write_iso9660("cidata", files);
}

}  // namespace bowline::guest
