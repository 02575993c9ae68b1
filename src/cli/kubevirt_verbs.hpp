// The KubeVirt backend on the command line: rendering for `template render --output kubevirt`
// and the `kubevirt apply|delete` verbs (registered by add_kubevirt_verbs, verbs.hpp).
#pragma once

#include <string>
#include <vector>

namespace bowline::cli {

// The cluster refused the request or could not be reached (apply, delete).
inline constexpr int kExitCluster = 3;

// Prints FILE's manifests for namespace `ns` as a YAML stream on stdout; notes and problems go
// to stderr. The owner comes from --var user.username, user.email, user.timezone and
// user.service_password (hashed here); the space from space.name and space.id. Returns an exit
// code.
int render_kubevirt(const std::string& file, const std::vector<std::string>& vars,
                    const std::string& ns);

}  // namespace bowline::cli
