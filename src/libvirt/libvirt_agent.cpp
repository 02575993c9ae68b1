// Calls to a domain's QEMU guest agent, each with a bound on how long libvirt waits for its
// answer: a guest is not trusted to answer at all (an agent of its own that answers only
// guest-sync would otherwise hold the call, and libvirt's agent job on the domain, for ever).
#include <libvirt/libvirt-qemu.h>

#include "libvirt/libvirt_handles.hpp"

namespace bowline::libvirt::detail {

namespace {

// libvirt keeps the timeout with the domain and uses it for every later agent call of its own
// (freeze, thaw): set before each, since a restart or another client may have changed it.
// Drivers without agents (test://) have nothing to bound.
void bound_agent(virDomainPtr domain, const std::string& name, std::chrono::seconds timeout) {
  if (virDomainAgentSetResponseTimeout(domain, static_cast<int>(timeout.count()), 0) == 0) return;
  auto error = last_error(domain_subject(name), "bound the guest agent's answers");
  if (!error.is_unsupported()) throw error;
}

}  // namespace

unsigned freeze_filesystems(virDomainPtr domain, const std::string& name,
                            std::chrono::seconds timeout) {
  bound_agent(domain, name, timeout);
  const int n = virDomainFSFreeze(domain, nullptr, 0, 0);
  if (n < 0) throw last_error(domain_subject(name), "freeze the guest's filesystems");
  return static_cast<unsigned>(n);
}

void thaw_filesystems(virDomainPtr domain, const std::string& name, std::chrono::seconds timeout) {
  bound_agent(domain, name, timeout);
  if (virDomainFSThaw(domain, nullptr, 0, 0) < 0)
    throw last_error(domain_subject(name), "thaw the guest's filesystems");
}

std::string agent_command(virDomainPtr domain, const std::string& name, const std::string& json,
                          std::chrono::seconds timeout) {
  if (timeout.count() <= 0) throw std::invalid_argument("agent_command: timeout must be > 0");
  CString reply(
      virDomainQemuAgentCommand(domain, json.c_str(), static_cast<int>(timeout.count()), 0));
  if (!reply) throw last_error(domain_subject(name), "talk to the guest agent");
  return reply.get();
}

}  // namespace bowline::libvirt::detail
