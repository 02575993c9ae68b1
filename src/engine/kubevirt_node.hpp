// A KubeVirt cluster as a node: each space is a VirtualMachine (with its cloud-init Secret,
// Service and system-disk DataVolume) in one namespace, made by server-side apply.
//
// Power goes through spec.runStrategy, which bowline's apply owns: start applies the
// template's running strategy, stop merge-patches it to Halted. KubeVirt's start/stop
// subresources would rewrite runStrategy behind bowline's back, and the next forced apply
// would undo them. Subresources are used only where no strategy says it: `restart`, and
// `start` for a Manual (or Halted) template, which runs once on request and is never
// restarted by the cluster.
#pragma once

#include <chrono>
#include <string>

#include "engine/node.hpp"
#include "kubevirt/kube_client.hpp"
#include "util/timer.hpp"

namespace bowline::engine {

struct KubevirtNodeOptions {
  std::string name;    // the node's name in bowline, e.g. "cluster"
  std::string ns;      // the namespace every space's objects live in
  std::string server;  // the API server's URL, for the node's report
  // How long an operation waits for the VirtualMachine to reach the state it asked for; one
  // still on its way after that is left to the audit.
  std::chrono::seconds settle_timeout{60};
  util::Timer* timer = nullptr;  // what it waits with; unset: real time
};

// KubeVirt's status.printableStatus (and status.ready) in bowline's terms.
Observation observe_printable_status(const std::string& printable_status, bool ready);

// The runStrategy bowline applies: the template's own while the space should run (Manual for
// Manual and Halted templates, started through the subresource), Halted while it should not.
std::string applied_run_strategy(spec::RunStrategy strategy, bool running);

class KubevirtNode final : public Node {
 public:
  KubevirtNode(kubevirt::KubeClient& client, KubevirtNodeOptions options);

  const std::string& name() const override { return o_.name; }
  const char* kind() const override { return "kubevirt"; }
  static const NodeCapabilities& kind_capabilities();
  const NodeCapabilities& capabilities() const override { return kind_capabilities(); }

  std::vector<std::string> refusals(const spec::Spec& spec) override;
  void check_machine_name(const std::string&) override {}
  std::optional<std::string> fixed_address_refusal(const spec::Spec& spec) const override;
  bool publishes_host_ports() const override { return false; }  // a Service publishes them

  Applied apply(const NodeSpace& space, const Progress& progress, bool run) override;
  // Keeps the objects as they are and makes the machine stop.
  Observation shut_down(const store::Space& space, const Progress& progress) override;
  Observation restart(const NodeSpace& space, const Progress& progress) override;
  void stay_off(const store::Space&) override {}  // runStrategy Halted already says so
  // Deletes the space's objects; returns once the cluster accepted every delete.
  void tear_down(const store::Space& space) override;
  void personalise(const NodeSpace& space, const std::string& previous_user) override;

  Observation observe(const store::Space& space) override;
  std::vector<Orphan> orphans(const std::set<std::string>&) override { return {}; }
  std::optional<std::string> address(const store::Space&) override { return std::nullopt; }
  std::optional<Readiness> readiness(const store::Space&) override { return std::nullopt; }
  std::optional<std::map<std::string, std::string>> parts(const NodeSpace&) override {
    return std::nullopt;
  }

  std::unique_ptr<util::ByteStream> open_console(const store::Space& space) override;
  int open_display(const store::Space& space) override;
  int open_port(const store::Space& space, std::uint16_t port,
                std::chrono::milliseconds timeout) override;
  nlohmann::json report() override;

  // /apis/kubevirt.io/v1/namespaces/<ns>/virtualmachines/<name>
  std::string vm_path(const std::string& vm) const;

 private:
  // Renders and applies every object of the space; `running`: the runStrategy to run it.
  void apply_objects(const NodeSpace& space, bool running);
  // Waits (up to the settle timeout) for the VirtualMachine to report `wanted`; throws when it
  // reports a failure or is gone.
  Observation settle(const store::Space& space, MachineState wanted);
  // PUT .../virtualmachines/<vm>/<verb> on the subresources API group.
  void subresource(const std::string& vm, const std::string& verb);

  kubevirt::KubeClient& client_;
  KubevirtNodeOptions o_;
  util::Timer& timer_;
};

}  // namespace bowline::engine
