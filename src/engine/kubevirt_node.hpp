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

#include <string>

#include "engine/remote_node.hpp"
#include "kubevirt/kube_client.hpp"

namespace bowline::engine {

struct KubevirtNodeOptions {
  std::string name;    // the node's name in bowline, e.g. "cluster"
  std::string ns;      // the namespace every space's objects live in
  std::string server;  // the API server's URL, for the node's report
};

// KubeVirt's status.printableStatus (and status.ready) in bowline's terms.
Observation observe_printable_status(const std::string& printable_status, bool ready);

// The runStrategy bowline applies: the template's own while the space should run (Manual for
// Manual and Halted templates, started through the subresource), Halted while it should not.
std::string applied_run_strategy(spec::RunStrategy strategy, bool running);

class KubevirtNode final : public RemoteNode {
 public:
  KubevirtNode(kubevirt::KubeClient& client, KubevirtNodeOptions options);

  const std::string& name() const override { return o_.name; }
  const char* kind() const override { return "kubevirt"; }
  std::vector<std::string> refusals(const spec::Spec& spec) const override;
  void apply(const RemoteSpace& space, bool running) override;
  void power_off(const store::Space& space) override;
  void restart(const RemoteSpace& space) override;
  void remove(const store::Space& space) override;
  Observation observe(const store::Space& space) override;
  nlohmann::json report() override;

  // /apis/kubevirt.io/v1/namespaces/<ns>/virtualmachines/<name>
  std::string vm_path(const std::string& vm) const;

 private:
  // PUT .../virtualmachines/<vm>/<verb> on the subresources API group.
  void subresource(const std::string& vm, const std::string& verb);

  kubevirt::KubeClient& client_;
  KubevirtNodeOptions o_;
};

}  // namespace bowline::engine
