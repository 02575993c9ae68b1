// KubevirtNode's decisions with a scripted KubeClient: which strategy it applies, how it reads
// KubeVirt's statuses, which answers it takes as done. (engine_node_test.cpp runs the same node
// over real HTTPS.)
#include "engine/kubevirt_node.hpp"

#include <gtest/gtest.h>

#include <deque>

#include "kubevirt/apply.hpp"
#include "test_support.hpp"

namespace bowline::kubevirt::test {
namespace {

using engine::MachineState;

// Answers from a script (default: 200 {}), records every request.
class ScriptedClient final : public KubeClient {
 public:
  struct Sent {
    std::string method, target, content_type, body;
  };
  std::vector<Sent> sent;
  std::deque<HttpResponse> answers;

  HttpResponse send(const std::string& method, const std::string& target,
                    const std::string& content_type, const std::string& body) override {
    sent.push_back({method, target, content_type, body});
    if (answers.empty()) return {200, "{}"};
    auto a = answers.front();
    answers.pop_front();
    return a;
  }
};

store::Space space_named(const std::string& domain) {
  store::Space s;
  s.id = "0b5c3d62-1111-4222-8333-944455556666";
  s.name = "dev";
  s.domain_name = domain;
  s.node = "cluster";
  return s;
}

TEST(KubevirtNode, PrintableStatusesMapToBowlinesStates) {
  const std::vector<std::pair<std::string, MachineState>> table{
      {"Running", MachineState::Running},
      {"Paused", MachineState::Running},
      {"Migrating", MachineState::Running},
      {"Stopped", MachineState::Stopped},
      {"Provisioning", MachineState::Starting},
      {"Starting", MachineState::Starting},
      {"WaitingForVolumeBinding", MachineState::Starting},
      {"Stopping", MachineState::Stopping},
      {"Terminating", MachineState::Stopping},
      {"CrashLoopBackOff", MachineState::Failed},
      {"ErrorUnschedulable", MachineState::Failed},
      {"ErrImagePull", MachineState::Failed},
      {"DataVolumeError", MachineState::Failed},
      {"Unknown", MachineState::Failed},
  };
  for (const auto& [printable, state] : table) {
    const auto seen = engine::observe_printable_status(printable, false);
    EXPECT_EQ(seen.state, state) << printable;
    EXPECT_EQ(seen.detail, printable);
  }
  EXPECT_EQ(engine::observe_printable_status("", false).state, MachineState::Starting);
  EXPECT_EQ(engine::observe_printable_status("", true).state, MachineState::Running);
}

TEST(KubevirtNode, TheAppliedRunStrategyFollowsTheDesiredState) {
  using spec::RunStrategy;
  EXPECT_EQ(engine::applied_run_strategy(RunStrategy::Always, true), "Always");
  EXPECT_EQ(engine::applied_run_strategy(RunStrategy::RerunOnFailure, true), "RerunOnFailure");
  EXPECT_EQ(engine::applied_run_strategy(RunStrategy::Once, true), "Once");
  EXPECT_EQ(engine::applied_run_strategy(RunStrategy::Manual, true), "Manual");
  EXPECT_EQ(engine::applied_run_strategy(RunStrategy::Halted, true), "Manual");
  for (auto s : {RunStrategy::Always, RunStrategy::Manual, RunStrategy::Halted})
    EXPECT_EQ(engine::applied_run_strategy(s, false), "Halted");
}

TEST(KubevirtNode, ObserveReadsTheVirtualMachine) {
  ScriptedClient client;
  engine::KubevirtNode node(client, {"cluster", "tenant-a", "https://k"});
  client.answers = {{200, R"({"status":{"printableStatus":"Running","ready":true}})"},
                    {404, R"({"kind":"Status","reason":"NotFound"})"},
                    {403, R"({"kind":"Status","reason":"Forbidden","message":"no"})"}};
  EXPECT_EQ(node.observe(space_named("dev-a")).state, MachineState::Running);
  EXPECT_EQ(node.observe(space_named("dev-a")).state, MachineState::Gone);
  try {
    node.observe(space_named("dev-a"));
    FAIL() << "no error";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.status(), 403);
    EXPECT_STREQ(e.what(), "reading VirtualMachine/dev-a: HTTP 403: Forbidden: no");
  }
  ASSERT_EQ(client.sent.size(), 3u);
  EXPECT_EQ(client.sent[0].method, "GET");
  EXPECT_EQ(client.sent[0].target,
            "/apis/kubevirt.io/v1/namespaces/tenant-a/virtualmachines/dev-a");
}

// A Progress that records nothing: these tests look at the requests.
engine::Progress quiet() {
  engine::Progress p;
  p.step = [](const std::string&, int) {};
  p.download = [](const std::string&, int, std::uint64_t, std::uint64_t) {};
  p.applied = [] {};
  p.booting = [] {};
  return p;
}

TEST(KubevirtNode, ShuttingDownAVmThatIsGoneIsDone) {
  ScriptedClient client;
  engine::KubevirtNode node(client, {"cluster", "tenant-a", "https://k"});
  client.answers = {{404, "{}"}};
  EXPECT_EQ(node.shut_down(space_named("dev-a"), quiet()).state, MachineState::Stopped);
  client.answers = {{422, R"({"kind":"Status","reason":"Invalid","message":"bad"})"}};
  EXPECT_THROW(node.shut_down(space_named("dev-a"), quiet()), ApiError);
}

TEST(KubevirtNode, AManualStartOfARunningVmIsNotAnError) {
  ScriptedClient client;
  engine::KubevirtNode node(client, {"cluster", "tenant-a", "https://k"});
  const auto spec = load(
      "name: dev-a\nimage: https://images.example.org/d.qcow2\ndisk: 5Gi\n"
      "network: {mode: nat}\ninstanceType: u1.small\nrunStrategy: Manual\n");
  const auto space = space_named("dev-a");
  store::Template tmpl;
  plan::Owner alice;
  alice.username = "alice";
  const engine::NodeSpace on_node{space, tmpl, spec, alice, {}};
  // The applies (DataVolume, the cloud-init Secret every space gets, VirtualMachine, Service),
  // each read first (not there yet), then the start: 409 "already running".
  const HttpResponse absent{404, "{}"}, created{201, "{}"};
  client.answers = {
      absent,
      created,
      absent,
      created,
      absent,
      created,
      absent,
      created,
      {409, R"({"kind":"Status","reason":"Conflict","message":"VM is already running"})"},
      {200, R"({"status":{"printableStatus":"Running","ready":true}})"}};
  EXPECT_EQ(node.apply(on_node, quiet(), true).seen.state, MachineState::Running);
  ASSERT_EQ(client.sent.size(), 10u);  // and the state read
  EXPECT_EQ(client.sent[3].target.rfind("/api/v1/namespaces/tenant-a/secrets/dev-a-cloud-init", 0),
            0u);
  EXPECT_EQ(client.sent[8].method, "PUT");
  EXPECT_EQ(client.sent[8].target,
            "/apis/subresources.kubevirt.io/v1/namespaces/tenant-a/virtualmachines/dev-a/start");
  // Any other refusal of the start is one.
  client.answers = {absent,  created, absent,
                    created, absent,  created,
                    absent,  created, {403, R"({"message":"no"})"}};
  EXPECT_THROW(node.apply(on_node, quiet(), true), ApiError);
}

}  // namespace
}  // namespace bowline::kubevirt::test
