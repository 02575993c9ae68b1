// The space's environment in the form each reader of the guest takes, so it reaches every
// session and service and not only login shells:
//   - profile_script: /etc/profile.d (login shells, and images without PAM or systemd);
//   - pam_environment: /etc/environment lines for pam_env (ssh sessions with or without a
//     command, console logins, su, cron);
//   - systemd_dropin: a system.conf.d drop-in with DefaultEnvironment= (every service, from the
//     next boot; the boot script imports the names into the running manager meanwhile).
// Each throws std::invalid_argument for a name that is no shell variable name or a NUL.
#pragma once

#include <string>
#include <vector>

#include "spec/spec.hpp"

namespace bowline::guest {

std::string profile_script(const std::vector<spec::EnvVar>& environment);
// KEY="value" lines; pam_env strips the quotes and nothing else, and cannot carry a newline
// or a trailing backslash (its line continuation): such a variable is left to the others.
std::string pam_environment(const std::vector<spec::EnvVar>& environment);
std::string systemd_dropin(const std::vector<spec::EnvVar>& environment);
// The names, separated by spaces (shell variable names need no quoting).
std::string environment_names(const std::vector<spec::EnvVar>& environment);

}  // namespace bowline::guest
