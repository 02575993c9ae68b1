// Suspend and resume on a libvirt node: libvirt's managed save. The domain's memory and
// device state go to a file libvirt keeps under its own directory (root's, 0600), QEMU exits
// and frees the host's memory; a start restores the domain from it, and a stop or an undefine
// removes it. The domain is not redefined on resume: the saved machine must match what was
// saved, so a template change waits for the next stop and start.
#include "engine/guest_agent.hpp"
#include "engine/libvirt_node.hpp"
#include "engine/page_report_watch.hpp"
#include "engine/readiness.hpp"
#include "plan/plan.hpp"

namespace bowline::engine {

namespace {

// Clean page cache only: dirty pages are written first (sync), nothing the guest needs is lost,
// and it reads back what it uses again. Linux's own hibernation shrinks its image the same way.
constexpr const char* kDropCaches = "sync && echo 3 > /proc/sys/vm/drop_caches";
// How long the guest's free pages may take to reach the host before the save goes on anyway.
constexpr auto kReportWithin = std::chrono::seconds(12);

std::string first_line(const std::string& text) {
  const auto line = text.substr(0, text.find('\n'));
  return line.empty() ? text : line;
}

}  // namespace

std::optional<std::uint64_t> LibvirtNode::resident_kib(const std::string& domain) {
  try {
    for (const auto& stats : hypervisor_.all_domain_stats())
      if (stats.name == domain) return stats.balloon_rss_kib;
  } catch (const libvirt::HypervisorError&) {
  }
  return std::nullopt;
}

// A guest's page cache is most of what a suspend would save from a guest that read or wrote
// much, and the save and the restore take time in proportion. Dropped through the guest agent,
// the freed pages go back to the host (free page reporting, domain_xml.cpp), read as zeros
// and cost nothing to save. Best effort: without an agent the save is only bigger. Returns
// what the progress says of it.
std::string LibvirtNode::trim_guest_cache(const std::string& domain) {
  if (!s_.trim_guest_cache) return "the guest's page cache is kept (server.idle.trim_guest_cache)";
  try {
    std::string output;
    const auto agent = [this, &domain](const std::string& json, std::chrono::seconds t) {
      return hypervisor_.agent_command(domain, json, t);
    };
    if (guest_exec(agent, "/bin/sh", {"-c", kDropCaches}, output, std::chrono::seconds(20)) != 0)
      return "the guest's page cache is kept: dropping it failed: " + first_line(output);
  } catch (const std::exception& e) {
    return std::string("the guest's page cache is kept: its agent did not drop it (") + e.what() +
           ")";
  }
  PageReportWatch watch;
  const auto deadline = timer_.now() + kReportWithin;
  for (;;) {
    const auto rss = resident_kib(domain);
    if (!rss || watch.settled(timer_.now(), *rss) || timer_.now() >= deadline) break;
    timer_.sleep_for(std::chrono::milliseconds(500));
  }
  return "dropped the guest's page cache: " + std::to_string(watch.freed_kib() / 1024) +
         " MiB fewer to save";
}

bool LibvirtNode::carry_console_over(const std::string& domain, const std::string& console_log) {
  const bool saved = has_saved_state(domain);
  if (saved)
    keep_console_before_restore(console_log);
  else
    forget_kept_console(console_log);
  return saved;
}

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
  progress.step("dropping the guest's page cache", 5);
  progress.step(trim_guest_cache(space.domain_name) + "; saving memory to disk", 10);
  const bool agent = agent_connected(space.domain_name);
  hypervisor_.managed_save(space.domain_name);
  std::lock_guard lock(restored_mutex_);
  if (agent)
    agent_before_save_.insert(space.domain_name);
  else
    agent_before_save_.erase(space.domain_name);
  return observe(space);
}

// libvirt's word on the guest agent's channel (the domain XML's state='connected'), which it
// keeps from the agent's own VSERPORT events.
bool LibvirtNode::agent_connected(const std::string& domain) {
  try {
    const auto xml = hypervisor_.domain_xml(domain, false);
    const auto at = xml.find("name='org.qemu.guest_agent.0'");
    if (at == std::string::npos) return false;
    const auto end = xml.find('>', at);
    return xml.substr(at, end - at).find("state='connected'") != std::string::npos;
  } catch (const libvirt::HypervisorError&) {
    return false;
  }
}

Observation LibvirtNode::resume(const store::Space& space, const Progress& progress) {
  const auto info = hypervisor_.lookup(space.domain_name);
  if (!info)
    return {MachineState::Gone, "the domain " + space.domain_name + " vanished from libvirt"};
  if (info->status.state != libvirt::DomainState::Shutoff) return observe(space);
  const bool saved = carry_console_over(
      space.domain_name,
      plan::console_log_of(plan::space_dir(s_.node.images_path, space.domain_name)));
  progress.step(saved ? "restoring memory from disk" : "no saved state left: booting", 10);
  ensure_guarded(space.domain_name);
  hypervisor_.start(space.domain_name);
  if (saved) {
    // Its agent answered before the save: a claim waits for it to come back, not for nothing.
    std::lock_guard lock(restored_mutex_);
    if (agent_before_save_.erase(space.domain_name))
      restored_at_[space.domain_name] = std::chrono::steady_clock::now();
  }
  return observe(space);
}

// How long to wait for the agent of a guest restored moments ago whose agent answered before
// (its channel comes back a little after the guest does); zero for any other.
std::chrono::seconds LibvirtNode::agent_patience(const std::string& domain) {
  constexpr auto kPatience = std::chrono::seconds(60);
  std::lock_guard lock(restored_mutex_);
  const auto it = restored_at_.find(domain);
  if (it == restored_at_.end()) return std::chrono::seconds(0);
  const auto since = std::chrono::steady_clock::now() - it->second;
  restored_at_.erase(it);
  if (since >= kPatience) return std::chrono::seconds(0);
  return std::chrono::duration_cast<std::chrono::seconds>(kPatience - since);
}

}  // namespace bowline::engine
