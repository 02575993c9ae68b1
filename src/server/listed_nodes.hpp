// The libvirt nodes of server.nodes (server/node_settings.hpp): each its own libvirt
// connection and LibvirtNode, named as listed, beside the server's own node `local`.
#pragma once

#include <memory>
#include <ostream>
#include <vector>

#include "engine/host_probe.hpp"
#include "engine/libvirt_node.hpp"
#include "engine/pool_node_files.hpp"
#include "libvirt/libvirt_hypervisor.hpp"
#include "server/settings.hpp"

namespace bowline::server {

struct ListedNode {
  std::unique_ptr<libvirt::LibvirtHypervisor> hypervisor;
  std::unique_ptr<engine::HostProbe> host;       // the bridges its entry names
  std::unique_ptr<engine::PoolNodeFiles> files;  // with pool:; else files in images_path
  std::unique_ptr<engine::LibvirtNode> node;
};

// One per libvirt entry of settings.nodes, from `base` (the local node's settings without its
// guard and report: a host elsewhere is filtered by its own libvirt's nwfilter). A kubevirt
// entry is a SettingsError for now (server.kubevirt.* names the kubevirt node). A node whose
// pool's directory cannot be asked now (its host is away) needs images_path. Each argument must
// outlive the nodes.
std::vector<ListedNode> make_listed_nodes(const ServerSettings& settings,
                                          const engine::LibvirtNodeSettings& base,
                                          image::ImageCache& images, image::Disks& disks,
                                          std::ostream& out);

}  // namespace bowline::server
