#include "guest/environment_files.hpp"

#include <cstdio>
#include <stdexcept>
#include <string_view>

namespace bowline::guest {
namespace {

bool shell_name(std::string_view name) {
  if (name.empty() || (name.front() >= '0' && name.front() <= '9')) return false;
  for (char c : name)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'))
      return false;
  return true;
}

void check(const spec::EnvVar& var) {
  if (!shell_name(var.name))
    throw std::invalid_argument("environment variable \"" + var.name +
                                "\" is not a shell variable name");
  if (var.value.find('\0') != std::string::npos)
    throw std::invalid_argument("environment variable " + var.name +
                                " holds a NUL character, which a shell cannot carry");
}

// 'value' for sh: everything is literal inside single quotes except ', written '\''.
std::string single_quoted(std::string_view value) {
  std::string out = "'";
  for (char c : value) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// "KEY=value" in systemd's double quotes, whose C escapes it undoes (no specifiers in
// system.conf).
std::string systemd_quoted(std::string_view text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    if (c == '\\' || c == '"') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c < 0x20 || c == 0x7f) {
      char escaped[5];
      std::snprintf(escaped, sizeof escaped, "\\x%02x", c);
      out += escaped;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

}  // namespace

std::string profile_script(const std::vector<spec::EnvVar>& environment) {
  std::string out = "# The space's environment, written by bowline.\n";
  for (const auto& var : environment) {
    check(var);
    out += "export " + var.name + "=" + single_quoted(var.value) + "\n";
  }
  return out;
}

std::string pam_environment(const std::vector<spec::EnvVar>& environment) {
  std::string out;
  for (const auto& var : environment) {
    check(var);
    if (var.value.find('\n') != std::string::npos || var.value.ends_with('\\')) continue;
    out += var.name + "=\"" + var.value + "\"\n";
  }
  return out;
}

std::string systemd_dropin(const std::vector<spec::EnvVar>& environment) {
  std::string out = "# The space's environment for every service, written by bowline.\n[Manager]\n";
  for (const auto& var : environment) {
    check(var);
    out += "DefaultEnvironment=" + systemd_quoted(var.name + "=" + var.value) + "\n";
  }
  return out;
}

std::string environment_names(const std::vector<spec::EnvVar>& environment) {
  std::string out;
  for (const auto& var : environment) {
    check(var);
    out += (out.empty() ? "" : " ") + var.name;
  }
  return out;
}

}  // namespace bowline::guest
