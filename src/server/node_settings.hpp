// server.nodes: the nodes a server runs spaces on besides the one the single-host settings
// describe (server.libvirt_uri and server.kvm.images_path, the node named `local`). Each entry
// is a mapping in the config file, or YAML flow text in the flag or the environment:
//   server:
//     nodes:
//       - name: node2
//         uri: qemu+ssh://root@node2.example/system?keyfile=/etc/bowline/node2.key
//         images_path: /var/lib/libvirt/images/bowline
//         labels: {rack: b}
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace bowline::server {

struct SettingValue;

struct NodeSetting {
  std::string name;              // a DNS label, not `local`
  std::string kind = "libvirt";  // libvirt | kubevirt
  std::string uri;               // the libvirt URI (libvirt nodes)
  // Where the node's overlays and seeds are, as the node's host sees the path; empty: the
  // server's server.kvm.images_path.
  std::filesystem::path images_path;
  std::string pool;                           // the node's libvirt storage pool, if any
  std::vector<std::string> networks;          // libvirt networks spaces may join there
  std::vector<std::string> bridges;           // host bridges spaces may join there
  std::map<std::string, std::string> labels;  // what templates may ask a node for
  std::uint64_t reserve_memory = 0;           // bytes kept free for the host itself
  unsigned reserve_cpus = 0;                  // host CPUs kept free for the host itself
  // TCP to its guests (tunnels, the terminal, bowline ssh) goes through its sshd: the host's
  // key ("ssh-ed25519 AAAA...", the only one accepted) and the server's private key for it
  // (empty: the URI's keyfile=). Without a host key, its guests' ports are not reached.
  std::string ssh_host_key;
  std::filesystem::path ssh_key;
};

namespace parse {
// Every item a mapping (or a YAML sequence of them); unique names, none `local`.
std::vector<NodeSetting> nodes(const SettingValue& v);
}  // namespace parse

// For --print-config: one flow mapping per node, or "(none)".
std::string show_nodes(const std::vector<NodeSetting>& nodes);

}  // namespace bowline::server
