// A libvirt node can do everything bowline offers: its spaces' disks are files on the host,
// and libvirt reaches their consoles, displays, snapshots and saved states.
#include "engine/libvirt_node.hpp"

namespace bowline::engine {

const NodeCapabilities& LibvirtNode::kind_capabilities() {
  static const NodeCapabilities all("libvirt");
  return all;
}

}  // namespace bowline::engine
