// A libvirt node can do everything bowline offers: its spaces' disks are files on the host,
// and libvirt reaches their consoles, displays, snapshots and saved states.
#include "engine/libvirt_node.hpp"

namespace bowline::engine {

const NodeCapabilities& LibvirtNode::kind_capabilities() {
  static const NodeCapabilities all("libvirt");
  return all;
}

// The console, readiness, figures and moves come through libvirt, TCP to guests through the
// host's sshd (server.nodes' ssh_host_key); what needs the host's own files or sockets waits.
const NodeCapabilities& LibvirtNode::elsewhere_capabilities() {
  static const std::string later = " on a libvirt host elsewhere: not built yet";
  static const NodeCapabilities some = [] {
    NodeCapabilities c("libvirt elsewhere");
    c.lacks(Capability::Vnc,
            "libvirt hands a display's socket over its local socket only; a display" + later)
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
