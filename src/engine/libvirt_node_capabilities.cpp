// A libvirt node can do everything bowline offers: its spaces' disks are files on the host,
// and libvirt reaches their consoles, displays, snapshots and saved states.
#include "engine/libvirt_node.hpp"

namespace bowline::engine {

const NodeCapabilities& LibvirtNode::kind_capabilities() {
  static const NodeCapabilities all("libvirt");
  return all;
}

// What needs the host's own files or sockets, or TCP into the host's guest networks, waits for
// the node's sshd (not built yet); the console, readiness and figures come through libvirt.
const NodeCapabilities& LibvirtNode::elsewhere_capabilities() {
  static const std::string later = " on a libvirt host elsewhere: not built yet";
  static const NodeCapabilities some = [] {
    NodeCapabilities c("libvirt elsewhere");
    c.lacks(Capability::Vnc,
            "libvirt hands a display's socket over its local socket only; a display" + later)
        .lacks(Capability::Terminal,
               "the terminal reaches the guest through the node's sshd" + later)
        .lacks(Capability::Tunnel, "tunnels reach the guest through the node's sshd" + later)
        .lacks(Capability::ExternalPorts, "external ports" + later)
        .lacks(Capability::Snapshots, "snapshots" + later)
        .lacks(Capability::MemorySnapshots, "snapshots" + later)
        .lacks(Capability::Clone, "clones" + later)
        .lacks(Capability::Suspend, "suspend" + later)
        .lacks(Capability::Export, "export" + later)
        .lacks(Capability::Import, "import" + later)
        .lacks(Capability::Disks, "disk objects" + later);
    return c;
  }();
  return some;
}

}  // namespace bowline::engine
