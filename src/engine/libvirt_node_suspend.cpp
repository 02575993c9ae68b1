// Suspend and resume on a libvirt node: libvirt's managed save. The domain's memory and
// device state go to a file libvirt keeps under its own directory (root's, 0600), QEMU exits
// and frees the host's memory; a start restores the domain from it, and a stop or an undefine
// removes it. The domain is not redefined on resume: the saved machine must match what was
// saved, so a template change waits for the next stop and start.
#include "engine/libvirt_node.hpp"

namespace bowline::engine {

bool LibvirtNode::has_saved_state(const std::string& domain) {
  try {
    return hypervisor_.has_managed_save(domain);
  } catch (const libvirt::HypervisorError& e) {
    if (e.is_unsupported() || e.is_no_domain()) return false;
    throw;
  }
}

void LibvirtNode::discard_saved_state(const std::string& domain) {
  try {
    hypervisor_.remove_managed_save(domain);
  } catch (const libvirt::HypervisorError& e) {
    if (!e.is_unsupported() && !e.is_no_domain()) throw;
  }
}

Observation LibvirtNode::suspend(const store::Space& space, const Progress& progress) {
  const auto info = hypervisor_.lookup(space.domain_name);
  if (!info)
    return {MachineState::Gone, "the domain " + space.domain_name + " vanished from libvirt"};
  if (info->status.state == libvirt::DomainState::Shutoff)
    return observe(space);  // stopped meanwhile, or already saved
  progress.step("saving memory to disk", 10);
  hypervisor_.managed_save(space.domain_name);
  return observe(space);
}

Observation LibvirtNode::resume(const store::Space& space, const Progress& progress) {
  const auto info = hypervisor_.lookup(space.domain_name);
  if (!info)
    return {MachineState::Gone, "the domain " + space.domain_name + " vanished from libvirt"};
  if (info->status.state != libvirt::DomainState::Shutoff) return observe(space);
  progress.step(has_saved_state(space.domain_name) ? "restoring memory from disk"
                                                   : "no saved state left: booting",
                10);
  hypervisor_.start(space.domain_name);
  return observe(space);
}

}  // namespace bowline::engine
