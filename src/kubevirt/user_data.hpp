// The cloud-init documents of the VM's Secret.
//
// Stand-in: src/guest/ is gaining render_user_data(plan) and render_keys_only_user_data(keys);
// until they land, these small versions fill the same role. render.cpp calls them from one
// place (cloud_init_secret) so switching over is a one-line change.
#pragma once

#include <string>
#include <vector>

#include "plan/plan.hpp"

namespace bowline::kubevirt {

// bowline's #cloud-config for the owner (account, keys, password hash, host name, time zone,
// environment), combined with the spec's own cloudInit as a multipart MIME message so both
// take effect.
std::string owner_user_data(const plan::Plan& plan);

// Exactly `#cloud-config` + ssh_authorized_keys: what Cozystack gives a VM with sshKeys and
// no cloudInit; the keys go to the image's default user.
std::string keys_only_user_data(const std::vector<std::string>& keys);

// netplan v2: DHCP on every en* and eth* interface, keeping the search domains DHCP offers.
std::string netplan_dhcp_network_data();

}  // namespace bowline::kubevirt
