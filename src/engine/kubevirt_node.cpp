#include "engine/kubevirt_node.hpp"

#include <set>

#include "kubevirt/apply.hpp"
#include "kubevirt/render.hpp"

namespace bowline::engine {

namespace {

using Json = nlohmann::ordered_json;

bool ok(long status) {
  return status >= 200 && status <= 299;
}

kubevirt::ApiError api_error(const std::string& what, const kubevirt::HttpResponse& response) {
  return kubevirt::ApiError(response.status, what + ": HTTP " + std::to_string(response.status) +
                                                 ": " + kubevirt::api_message(response));
}

// An object reduced to what names it and whose it is: enough to delete it.
Json named(const char* api_version, const char* kind, const std::string& ns,
           const std::string& name, const Json& labels) {
  return Json{{"apiVersion", api_version},
              {"kind", kind},
              {"metadata", Json{{"name", name}, {"namespace", ns}, {"labels", labels}}}};
}

nlohmann::json check(const char* name, const char* title, bool passed, const std::string& detail,
                     const std::string& fix) {
  return {{"name", name},     {"title", title},   {"status", passed ? "ok" : "missing"},
          {"required", true}, {"detail", detail}, {"fix", passed ? std::string() : fix}};
}

}  // namespace

Observation observe_printable_status(const std::string& printable, bool ready) {
  static const std::set<std::string> running{"Running", "Migrating", "Paused"};
  static const std::set<std::string> stopped{"Stopped", "Succeeded"};
  static const std::set<std::string> starting{"Provisioning", "Starting", "WaitingForVolumeBinding",
                                              "WaitingForReceiver"};
  static const std::set<std::string> stopping{"Stopping", "Terminating"};
  if (running.count(printable)) return {MachineState::Running, printable};
  if (stopped.count(printable)) return {MachineState::Stopped, printable};
  if (starting.count(printable)) return {MachineState::Starting, printable};
  if (stopping.count(printable)) return {MachineState::Stopping, printable};
  // The controller has not written a status yet: a fresh VM, on its way somewhere.
  if (printable.empty())
    return {ready ? MachineState::Running : MachineState::Starting, "no status reported yet"};
  // CrashLoopBackOff, ErrorUnschedulable, ErrImagePull, DataVolumeError, Unknown, ...
  return {MachineState::Failed, printable};
}

std::string applied_run_strategy(spec::RunStrategy strategy, bool running) {
  if (!running) return "Halted";
  switch (strategy) {
    case spec::RunStrategy::Always:
    case spec::RunStrategy::RerunOnFailure:
    case spec::RunStrategy::Once:
      return spec::to_string(strategy);
    case spec::RunStrategy::Manual:
    case spec::RunStrategy::Halted:
      return "Manual";
  }
  return "Manual";
}

KubevirtNode::KubevirtNode(kubevirt::KubeClient& client, KubevirtNodeOptions options)
    : client_(client),
      o_(std::move(options)),
      timer_(o_.timer ? *o_.timer : util::steady_timer()) {}

// Each reason says what stands in the way on a cluster, for users reading a refusal.
const NodeCapabilities& KubevirtNode::kind_capabilities() {
  static const NodeCapabilities kubevirt = [] {
    NodeCapabilities c("kubevirt");
    const std::string in_cluster = "a space's disk is a DataVolume in the cluster, not a file on ";
    c.lacks(Capability::Console,
            "bowline does not carry a VirtualMachine's serial console yet (virtctl console "
            "reaches it)")
        .lacks(Capability::Vnc,
               "bowline does not carry a VirtualMachine's display yet (virtctl vnc reaches it)")
        .lacks(Capability::Readiness,
               "cloud-init's progress comes from the console log, which bowline does not read "
               "from the cluster: --wait returns when the operation ends")
        .lacks(Capability::Stats,
               "bowline does not read a VirtualMachine's figures from the "
               "cluster yet")
        .lacks(Capability::Snapshots,
               "bowline does not take VirtualMachineSnapshots of a cluster's VMs yet")
        .lacks(Capability::MemorySnapshots,
               "bowline does not take VirtualMachineSnapshots of a cluster's VMs yet")
        .lacks(Capability::Clone, in_cluster + "the server, which a clone copies")
        .lacks(Capability::Suspend,
               "bowline saves a suspended machine's memory to a file on the server; a cluster's "
               "VM keeps its pod while paused")
        .lacks(Capability::Export, in_cluster + "the server, which an export reads")
        .lacks(Capability::Import, in_cluster + "the server, which an import writes")
        .lacks(Capability::Disks,
               in_cluster + "the server; a template's disks: names DataVolumes there")
        .lacks(Capability::Move, in_cluster +
                                     "a libvirt host; within the cluster, KubeVirt's live "
                                     "migration moves a VM between its nodes");
    return c;
  }();
  return kubevirt;
}

std::string KubevirtNode::vm_path(const std::string& vm) const {
  return "/apis/kubevirt.io/v1/namespaces/" + o_.ns + "/virtualmachines/" + vm;
}

std::vector<std::string> KubevirtNode::refusals(const spec::Spec& spec) {
  std::vector<std::string> out;
  if (spec.network.mode == spec::NetworkMode::Bridged)
    out.push_back(
        "network.mode bridged takes a host bridge and an address from bowline; on the "
        "kubevirt node " +
        o_.name + " a VM is on the pod network (use network.mode nat, and networks: for more)");
  return out;
}

std::optional<std::string> KubevirtNode::fixed_address_refusal(const spec::Spec&) const {
  return "a space on the kubevirt node " + o_.name + " gets its address from the cluster";
}

void KubevirtNode::apply_objects(const NodeSpace& s, bool running) {
  kubevirt::RenderOptions options;
  options.ns = o_.ns;
  options.owner = s.owner;
  options.space_name = s.space.name;
  options.space_id = s.space.id;
  if (!s.space.host_key.empty())
    options.host_key = plan::HostKeyPair{s.space.host_key, s.space.host_key_public};
  options.terminal_key_public = s.space.terminal_key_public;
  options.instance_id = s.space.instance_id;
  options.always_cloud_init = true;  // a space's guest is set up as on every other node
  auto manifests = kubevirt::render_manifests(s.spec, options);
  const auto strategy = applied_run_strategy(s.spec.run_strategy, running);
  for (auto& object : manifests.objects)
    if (object["kind"] == "VirtualMachine") object["spec"]["runStrategy"] = strategy;
  kubevirt::apply_objects(client_, manifests.objects);
  if (running && strategy == "Manual") {
    // 409: KubeVirt's "VM is already running".
    try {
      subresource(s.spec.name, "start");
    } catch (const kubevirt::ApiError& e) {
      if (e.status() != 409) throw;
    }
  }
}

Applied KubevirtNode::apply(const NodeSpace& s, const Progress& progress, bool run) {
  progress.step("applying objects", 20);
  apply_objects(s, run);
  progress.applied();
  progress.step(run ? "starting" : "stopped", 60);
  return {settle(s.space, run ? MachineState::Running : MachineState::Stopped), true};
}

Observation KubevirtNode::settle(const store::Space& space, MachineState wanted) {
  const auto deadline = timer_.now() + o_.settle_timeout;
  Observation seen = observe(space);
  while (seen.state != wanted && seen.state != MachineState::Failed &&
         seen.state != MachineState::Gone && timer_.now() < deadline) {
    timer_.sleep_for(std::chrono::seconds(1));
    seen = observe(space);
  }
  if (seen.state == MachineState::Failed || seen.state == MachineState::Gone)
    throw std::runtime_error(seen.detail);
  return seen;  // still on its way after the timeout: the audit follows it up
}

Observation KubevirtNode::shut_down(const store::Space& space, const Progress& progress) {
  progress.step("stopping", 10);
  // A merge patch of the one field: a stop must work even when the template no longer renders,
  // and a changed template applies at the next start, not at a stop.
  const auto response =
      client_.send("PATCH", vm_path(space.domain_name) + "?fieldManager=" + kubevirt::kFieldManager,
                   "application/merge-patch+json", R"({"spec":{"runStrategy":"Halted"}})");
  if (response.status == 404) return {MachineState::Stopped, ""};  // nothing there to stop
  if (!ok(response.status))
    throw api_error("stopping VirtualMachine/" + space.domain_name, response);
  return settle(space, MachineState::Stopped);
}

Observation KubevirtNode::restart(const NodeSpace& s, const Progress& progress) {
  progress.step("restarting", 20);
  const auto before = observe(s.space);
  apply_objects(s, true);  // a stopped VM starts here; a running one keeps running on the old spec
  progress.applied();
  if (before.state == MachineState::Running) subresource(s.spec.name, "restart");
  return settle(s.space, MachineState::Running);
}

void KubevirtNode::tear_down(const store::Space& space) {
  const auto& vm = space.domain_name;
  // Only objects labelled as this space's are deleted; others of the same name are left.
  const auto labels = kubevirt::ownership_labels(kubevirt::space_label_value(space.id, o_.ns, vm));
  // In the order of apply; delete_objects goes backwards: Service, VM, Secret, DataVolume.
  const std::vector<Json> objects{
      named("cdi.kubevirt.io/v1beta1", "DataVolume", o_.ns, kubevirt::system_disk_name(vm), labels),
      named("v1", "Secret", o_.ns, kubevirt::cloud_init_secret_name(vm), labels),
      named("kubevirt.io/v1", "VirtualMachine", o_.ns, vm, labels),
      named("v1", "Service", o_.ns, vm, labels),
  };
  kubevirt::delete_objects(client_, objects);
}

Observation KubevirtNode::observe(const store::Space& space) {
  const auto response = client_.send("GET", vm_path(space.domain_name), "", "");
  if (response.status == 404)
    return {MachineState::Gone,
            "the VirtualMachine " + space.domain_name + " vanished from the cluster"};
  if (!ok(response.status))
    throw api_error("reading VirtualMachine/" + space.domain_name, response);
  const auto vm = nlohmann::json::parse(response.body, nullptr, false);
  std::string printable;
  bool ready = false;
  if (vm.is_object() && vm.contains("status") && vm["status"].is_object()) {
    const auto& status = vm["status"];
    if (status.contains("printableStatus") && status["printableStatus"].is_string())
      printable = status["printableStatus"].get<std::string>();
    ready = status.contains("ready") && status["ready"].is_boolean() && status["ready"].get<bool>();
  }
  auto seen = observe_printable_status(printable, ready);
  if (seen.state == MachineState::Failed) seen.detail = "the VirtualMachine reports " + seen.detail;
  return seen;
}

void KubevirtNode::personalise(const NodeSpace&, const std::string&) {
  throw std::runtime_error("a space on the kubevirt node " + o_.name +
                           " is made its owner's by a restart, not in place");
}

std::unique_ptr<util::ByteStream> KubevirtNode::open_console(const store::Space&) {
  capabilities().require(Capability::Console, o_.name);  // throws: the table lacks it
  return nullptr;
}

int KubevirtNode::open_display(const store::Space&) {
  capabilities().require(Capability::Vnc, o_.name);  // throws: the table lacks it
  return -1;
}

// Through KubeVirt's portforward subresource of the running VirtualMachineInstance (what
// `virtctl port-forward` uses): the cluster carries the bytes to the guest's port, so a tunnel
// needs no route from this host to the pod network. The connect timeout is the client's.
int KubevirtNode::open_port(const store::Space& space, std::uint16_t port,
                            std::chrono::milliseconds) {
  const auto target = "/apis/subresources.kubevirt.io/v1/namespaces/" + o_.ns +
                      "/virtualmachineinstances/" + space.domain_name + "/portforward/" +
                      std::to_string(port) + "/tcp";
  return client_.open_stream(target, "plain.kubevirt.io");
}

void KubevirtNode::subresource(const std::string& vm, const std::string& verb) {
  const auto target = "/apis/subresources.kubevirt.io/v1/namespaces/" + o_.ns +
                      "/virtualmachines/" + vm + "/" + verb;
  const auto response = client_.send("PUT", target, "application/json", "{}");
  if (!ok(response.status)) throw api_error(verb + " of VirtualMachine/" + vm, response);
}

nlohmann::json KubevirtNode::report() {
  auto checks = nlohmann::json::array();
  const std::string reach_fix =
      "check server.kubevirt.kubeconfig (server, CA, credentials) and that the API server is "
      "reachable from this host";
  // Each probe: (answered 2xx, body, or why not).
  auto probe = [this](const std::string& target, std::string& body, std::string& problem) {
    try {
      const auto response = client_.send("GET", target, "", "");
      body = response.body;
      if (ok(response.status)) return true;
      problem = "HTTP " + std::to_string(response.status) + ": " + kubevirt::api_message(response);
    } catch (const kubevirt::TransportError& e) {
      problem = e.what();
    }
    return false;
  };
  std::string body, problem;
  const bool reachable = probe("/version", body, problem);
  if (reachable) {
    const auto version = nlohmann::json::parse(body, nullptr, false);
    const std::string git = version.is_object() && version.contains("gitVersion")
                                ? version["gitVersion"].get<std::string>()
                                : std::string("version unknown");
    checks.push_back(
        check("api-server", "Kubernetes API server", true, o_.server + ": " + git, ""));
  } else {
    checks.push_back(
        check("api-server", "Kubernetes API server", false, o_.server + ": " + problem, reach_fix));
  }
  if (reachable) {
    bool has_vms = false;
    if (probe("/apis/kubevirt.io/v1", body, problem)) {
      const auto list = nlohmann::json::parse(body, nullptr, false);
      if (list.is_object() && list.contains("resources") && list["resources"].is_array())
        for (const auto& r : list["resources"])
          if (r.is_object() && r.value("name", "") == "virtualmachines") has_vms = true;
      if (!has_vms) problem = "kubevirt.io/v1 serves no virtualmachines";
    }
    checks.push_back(check("kubevirt", "KubeVirt (VirtualMachine API)", has_vms,
                           has_vms ? "kubevirt.io/v1 virtualmachines" : problem,
                           "install KubeVirt on the cluster"));
    const bool cdi = probe("/apis/cdi.kubevirt.io/v1beta1", body, problem);
    checks.push_back(check("cdi", "CDI (DataVolume API, imports system disks)", cdi,
                           cdi ? "cdi.kubevirt.io/v1beta1" : problem,
                           "install the Containerized Data Importer on the cluster"));
    const bool allowed = probe(
        "/apis/kubevirt.io/v1/namespaces/" + o_.ns + "/virtualmachines?limit=1", body, problem);
    checks.push_back(
        check("namespace", "VirtualMachines in the namespace", allowed,
              allowed ? "namespace " + o_.ns : problem,
              "let the kubeconfig's user manage VirtualMachines, Secrets, Services and "
              "DataVolumes in " +
                  o_.ns + " (a Role and RoleBinding)"));
  }
  bool ready = true;
  for (const auto& c : checks) ready = ready && c["status"] == "ok";
  return {{"name", o_.name},
          {"kind", kind()},
          {"server", o_.server},
          {"namespace", o_.ns},
          {"runtimes", ready ? nlohmann::json::array({"kubevirt"}) : nlohmann::json::array()},
          {"ready", ready},
          {"checks", checks},
          {"devices", nlohmann::json::array()}};
}

}  // namespace bowline::engine
