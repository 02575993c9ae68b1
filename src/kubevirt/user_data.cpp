#include "kubevirt/user_data.hpp"

#include <yaml-cpp/yaml.h>

#include <stdexcept>

#include "util/hash.hpp"

namespace bowline::kubevirt {
namespace {

std::string finish(YAML::Emitter& out) {
  if (!out.good()) throw std::logic_error("yaml-cpp: " + out.GetLastError());
  return std::string(out.c_str()) + "\n";
}

// 'value' for a POSIX shell: the only character a single-quoted string cannot hold is '.
std::string shell_quote(const std::string& value) {
  std::string quoted = "'";
  for (char c : value) {
    if (c == '\'')
      quoted += "'\\''";
    else
      quoted += c;
  }
  return quoted + "'";
}

std::string bowline_cloud_config(const plan::Plan& plan) {
  const auto& g = plan.guest;
  YAML::Emitter out;
  out << YAML::BeginMap;
  out << YAML::Key << "hostname" << YAML::Value << YAML::DoubleQuoted << plan.hostname;
  out << YAML::Key << "manage_etc_hosts" << YAML::Value << true;
  out << YAML::Key << "ssh_pwauth" << YAML::Value << false;
  if (!g.timezone.empty())
    out << YAML::Key << "timezone" << YAML::Value << YAML::DoubleQuoted << g.timezone;
  out << YAML::Key << "users" << YAML::Value << YAML::BeginSeq << YAML::BeginMap;
  out << YAML::Key << "name" << YAML::Value << YAML::DoubleQuoted << g.username;
  out << YAML::Key << "shell" << YAML::Value << "/bin/bash";
  out << YAML::Key << "sudo" << YAML::Value << YAML::DoubleQuoted << "ALL=(ALL) NOPASSWD:ALL";
  out << YAML::Key << "lock_passwd" << YAML::Value << !g.password_hash.has_value();
  if (g.password_hash)
    out << YAML::Key << "passwd" << YAML::Value << YAML::DoubleQuoted << *g.password_hash;
  if (!g.ssh_keys.empty()) {
    out << YAML::Key << "ssh_authorized_keys" << YAML::Value << YAML::BeginSeq;
    for (const auto& key : g.ssh_keys) out << YAML::DoubleQuoted << key;
    out << YAML::EndSeq;
  }
  out << YAML::EndMap << YAML::EndSeq;
  if (!g.environment.empty()) {
    std::string profile = "# Written by bowline from the template's environment.\n";
    for (const auto& var : g.environment)
      profile += "export " + var.name + "=" + shell_quote(var.value) + "\n";
    out << YAML::Key << "write_files" << YAML::Value << YAML::BeginSeq << YAML::BeginMap;
    out << YAML::Key << "path" << YAML::Value << "/etc/profile.d/bowline-environment.sh";
    out << YAML::Key << "permissions" << YAML::Value << YAML::DoubleQuoted << "0644";
    out << YAML::Key << "content" << YAML::Value << YAML::DoubleQuoted << profile;
    out << YAML::EndMap << YAML::EndSeq;
  }
  out << YAML::EndMap;
  return "#cloud-config\n" + finish(out);
}

// The MIME type cloud-init expects for a user-data part, from its first line.
std::string part_type(const std::string& text) {
  if (text.starts_with("#cloud-config")) return "text/cloud-config";
  if (text.starts_with("#!")) return "text/x-shellscript";
  if (text.starts_with("#cloud-boothook")) return "text/cloud-boothook";
  if (text.starts_with("#include")) return "text/x-include-url";
  return "text/plain";
}

}  // namespace

std::string owner_user_data(const plan::Plan& plan) {
  const auto ours = bowline_cloud_config(plan);
  if (!plan.guest.user_cloud_init || plan.guest.user_cloud_init->empty()) return ours;
  const auto& theirs = *plan.guest.user_cloud_init;

  // A boundary derived from the content, so the same inputs give the same bytes.
  const std::string boundary = "bowline-" + util::sha256_hex(ours + theirs).substr(0, 32);
  if (theirs.find(boundary) != std::string::npos)
    throw std::invalid_argument("cloudInit contains the MIME boundary " + boundary);
  // Lists are appended and keys already set are kept, so the owner's account survives a
  // cloudInit that has its own users, and both runcmd lists run.
  const std::string merge = "Merge-Type: list(append)+dict(no_replace,recurse_list)+str()\n";
  std::string message = "Content-Type: multipart/mixed; boundary=\"" + boundary +
                        "\"\nMIME-Version: 1.0\n\n--" + boundary + "\n" +
                        "Content-Type: text/cloud-config; charset=\"utf-8\"\n" + merge + "\n" +
                        ours + "\n--" + boundary + "\n";
  // A MIME cloudInit brings its own headers and becomes a nested part.
  if (theirs.starts_with("Content-Type:") || theirs.starts_with("MIME-Version:"))
    message += theirs;
  else
    message +=
        "Content-Type: " + part_type(theirs) + "; charset=\"utf-8\"\n" + merge + "\n" + theirs;
  if (!message.ends_with("\n")) message += "\n";
  return message + "--" + boundary + "--\n";
}

std::string keys_only_user_data(const std::vector<std::string>& keys) {
  YAML::Emitter out;
  out << YAML::BeginMap << YAML::Key << "ssh_authorized_keys" << YAML::Value << YAML::BeginSeq;
  for (const auto& key : keys) out << YAML::DoubleQuoted << key;
  out << YAML::EndSeq << YAML::EndMap;
  return "#cloud-config\n" + finish(out);
}

std::string netplan_dhcp_network_data() {
  YAML::Emitter out;
  out << YAML::BeginMap;
  out << YAML::Key << "version" << YAML::Value << 2;
  out << YAML::Key << "ethernets" << YAML::Value << YAML::BeginMap;
  // One stanza per name pattern: netplan's match takes a single glob.
  for (const char* pattern : {"en*", "eth*"}) {
    const std::string id = std::string("bowline-") + (pattern[1] == 'n' ? "en" : "eth");
    out << YAML::Key << id << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "match" << YAML::Value << YAML::BeginMap << YAML::Key << "name"
        << YAML::Value << YAML::DoubleQuoted << pattern << YAML::EndMap;
    out << YAML::Key << "dhcp4" << YAML::Value << true;
    out << YAML::Key << "dhcp4-overrides" << YAML::Value << YAML::BeginMap << YAML::Key
        << "use-domains" << YAML::Value << true << YAML::EndMap;
    out << YAML::EndMap;
  }
  out << YAML::EndMap << YAML::EndMap;
  return finish(out);
}

}  // namespace bowline::kubevirt
