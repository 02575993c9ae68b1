// The engine with a kubevirt node, end to end over HTTPS: the real engine, store and libcurl
// client against fake_apiserver.py (a stateful stand-in for the API server and KubeVirt, with
// a certificate made here by openssl), checking every request it received and the states,
// operations and events the engine made of the answers.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <thread>

#include "engine/engine.hpp"
#include "engine/kubevirt_node.hpp"
#include "engine/libvirt_node.hpp"
#include "kubevirt/apply.hpp"
#include "kubevirt/curl_client.hpp"
#include "libvirt/libvirt_hypervisor.hpp"
#include "test_support.hpp"
#include "util/clock.hpp"
#include "util/process.hpp"

namespace bowline::kubevirt::test {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;
using store::SpaceState;

class NoBridges final : public engine::HostProbe {
 public:
  bool bridge_exists(const std::string&) const override { return false; }
  std::vector<std::string> bridge_ports(const std::string&) const override { return {}; }
};

const char* kToken = "node-token-4711";

std::string kubevirt_template(const std::string& suffix, const std::string& instance_type) {
  return "name: ${{ .space.name }}-" + suffix +
         "\nimage: https://images.example.org/debian-12.qcow2\ndisk: 10Gi\n"
         "network: {mode: nat}\ninstanceType: " +
         instance_type +
         "\ninstanceProfile: debian\n"
         "cloudInit: |\n  #cloud-config\n  packages: [htop]\n";
}

class EngineNode : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    certs_ = new TempDir;
    const auto made = run({"openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                           "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2", "-subj",
                           "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1", "-keyout",
                           certs_->file("server.key"), "-out", certs_->file("server.crt")});
    ASSERT_EQ(made.exit_code, 0) << made.err;
  }
  static void TearDownTestSuite() {
    delete certs_;
    certs_ = nullptr;
  }

  void SetUp() override {
    server_ = std::make_unique<Server>(std::vector<std::string>{
        "python3", source_path("tests/unit/kubevirt/fake_apiserver.py"), certs_->file("server.crt"),
        certs_->file("server.key"), dir_.file("requests.log"), kToken});
    ASSERT_FALSE(server_->first_line().empty()) << "the fake API server did not start";
    Connection c;
    c.server = "https://127.0.0.1:" + server_->first_line();
    c.ca_pem = read_file(certs_->file("server.crt"));
    c.token = kToken;
    start_engine(c);
  }

  void start_engine(const Connection& connection) {
    engine_.reset();
    client_ = std::make_unique<CurlKubeClient>(connection, std::chrono::seconds(10));
    engine::KubevirtNodeOptions options{"cluster", "tenant-a", connection.server};
    options.settle_timeout = std::chrono::seconds(5);
    node_ = std::make_unique<engine::KubevirtNode>(*client_, options);
    images_ = fs::path(dir_.path()) / "images";
    fs::create_directories(images_);
    if (!store_) {
      store_ = std::make_unique<store::Store>(fs::path(dir_.path()) / "bowline.db", clock_);
      hypervisor_ =
          std::make_unique<libvirt::LibvirtHypervisor>(libvirt::LibvirtOptions{"test:///default"});
      cache_ = std::make_unique<image::ImageCache>(
          image::CacheOptions{images_ / "cloud-images", images_ / "base", {}, {}});
      disks_ = std::make_unique<image::Disks>(runner_);
      bus_ = std::make_unique<engine::EventBus>(*store_);
      alice_ = store_->users()
                   .create({"alice", "alice@example.org", "", std::string("pw"), "", {}, {}})
                   .id;
    }
    engine::LibvirtNodeSettings local_settings;
    local_settings.node.domain_type = plan::DomainType::Qemu;
    local_settings.node.images_path = images_.string();
    local_ = std::make_unique<engine::LibvirtNode>(*hypervisor_, *cache_, *disks_, host_,
                                                   local_settings);
    engine::EngineSettings settings;
    settings.reconcile_interval = std::chrono::seconds(0);  // the test runs audit() itself
    engine_ = std::make_unique<engine::Engine>(*store_, *bus_, settings);
    engine_->add_node(*local_);
    engine_->add_node(*node_);
    engine_->start();
  }

  void TearDown() override {
    if (engine_) engine_->wait_idle();
    engine_.reset();
  }

  // The fake's cue endpoints.
  void cue(const std::string& what, const Json& body) {
    const auto r = client_->send("POST", "/fake/" + what, "application/json", body.dump());
    ASSERT_EQ(r.status, 200);
  }

  std::vector<Json> requests() { return logged_requests(dir_); }
  // Requests since the mark, without GETs (reads of state) unless asked.
  std::vector<Json> since(std::size_t mark, bool with_gets = false) {
    std::vector<Json> out;
    auto all = requests();
    for (std::size_t i = mark; i < all.size(); ++i)
      if (with_gets || all[i]["method"] != "GET") out.push_back(all[i]);
    return out;
  }

  std::string add_template(const std::string& instance_type = "u1.small") {
    const auto name = "kv" + std::to_string(templates_++);
    store_->templates().create(name, kubevirt_template(suffix_, instance_type));
    return name;
  }

  engine::Accepted create(const std::string& tmpl, const std::string& name, bool start = true) {
    engine::CreateSpaceRequest request{alice_, tmpl, name, std::nullopt, start};
    auto accepted = engine_->create_space(request, "cluster");
    engine_->wait_idle();
    return accepted;
  }

  store::Space space(const std::string& id) { return *store_->spaces().get(id); }
  store::Operation operation(std::int64_t id) { return *store_->operations().get(id); }
  std::string vm_path(const std::string& name) {
    return "/apis/kubevirt.io/v1/namespaces/tenant-a/virtualmachines/" + name;
  }
  std::string subresource(const std::string& name, const std::string& verb) {
    return "/apis/subresources.kubevirt.io/v1/namespaces/tenant-a/virtualmachines/" + name + "/" +
           verb;
  }

  static TempDir* certs_;
  TempDir dir_;
  std::unique_ptr<Server> server_;
  util::ManualClock clock_;
  util::SystemProcessRunner runner_;
  NoBridges host_;
  fs::path images_;
  std::unique_ptr<store::Store> store_;
  std::unique_ptr<libvirt::LibvirtHypervisor> hypervisor_;
  std::unique_ptr<image::ImageCache> cache_;
  std::unique_ptr<image::Disks> disks_;
  std::unique_ptr<engine::EventBus> bus_;
  std::unique_ptr<CurlKubeClient> client_;
  std::unique_ptr<engine::LibvirtNode> local_;
  std::unique_ptr<engine::KubevirtNode> node_;
  std::unique_ptr<engine::Engine> engine_;
  std::int64_t alice_ = 0;
  std::string suffix_ = std::to_string(getpid());
  int templates_ = 0;
};

TempDir* EngineNode::certs_ = nullptr;

TEST_F(EngineNode, CreateAppliesEveryObjectAndTheSpaceRuns) {
  const auto accepted = create(add_template(), "dev");
  const auto s = space(accepted.space.id);
  EXPECT_EQ(s.node, "cluster");
  EXPECT_EQ(s.state, SpaceState::Running) << s.error;
  EXPECT_FALSE(s.ip.has_value());  // no address from bowline: the cluster gives one
  EXPECT_EQ(operation(accepted.operation_id).state, store::OperationState::Succeeded);

  const auto vm = "dev-" + suffix_;
  const std::vector<std::string> paths{
      "/apis/cdi.kubevirt.io/v1beta1/namespaces/tenant-a/datavolumes/" + vm + "-system",
      "/api/v1/namespaces/tenant-a/secrets/" + vm + "-cloud-init", vm_path(vm),
      "/api/v1/namespaces/tenant-a/services/" + vm};
  const auto all = requests();
  ASSERT_EQ(all.size(), 2 * paths.size() + 1);  // a read and an apply each, then the state read
  for (std::size_t i = 0; i < paths.size(); ++i) {
    EXPECT_EQ(all[2 * i]["method"], "GET");
    EXPECT_EQ(all[2 * i]["path"], paths[i]);
  }
  const auto seen = since(0);
  ASSERT_EQ(seen.size(), paths.size());
  for (std::size_t i = 0; i < paths.size(); ++i) {
    const auto& r = seen[i];
    EXPECT_EQ(r["method"], "PATCH");
    EXPECT_EQ(r["path"], paths[i]);
    // New objects: no force, so nothing is taken from another field manager.
    EXPECT_EQ(r["query"], (Json{{"fieldManager", {"bowline"}}}));
    EXPECT_EQ(r["content_type"], "application/apply-patch+yaml");
    EXPECT_EQ(r["authorization"], std::string("Bearer ") + kToken);
    const auto body = Json::parse(r["body"].get<std::string>());
    EXPECT_EQ(body["metadata"]["namespace"], "tenant-a");
  }
  // The VirtualMachine's body: what the renderer makes for this space, told to run.
  const auto body = Json::parse(seen[2]["body"].get<std::string>());
  EXPECT_EQ(body["kind"], "VirtualMachine");
  EXPECT_EQ(body["metadata"]["name"], vm);
  EXPECT_EQ(body["metadata"]["annotations"]["bowline/owner"], "alice");
  EXPECT_EQ(body["metadata"]["annotations"]["bowline/space"], "dev");
  EXPECT_EQ(body["spec"]["runStrategy"], "Always");
  EXPECT_EQ(body["spec"]["instancetype"]["name"], "u1.small");
  EXPECT_EQ(body["metadata"]["labels"]["bowline/space-id"], accepted.space.id);
  EXPECT_EQ(all.back()["method"], "GET");
  EXPECT_EQ(all.back()["path"], vm_path(vm));
}

TEST_F(EngineNode, StopPatchesRunStrategyAndStartReappliesAChangedTemplate) {
  const auto tmpl = add_template();
  const auto id = create(tmpl, "dev").space.id;
  const auto vm = "dev-" + suffix_;

  auto mark = requests().size();
  const auto stop = engine_->stop_space(id);
  engine_->wait_idle();
  EXPECT_EQ(space(id).state, SpaceState::Stopped) << space(id).error;
  EXPECT_EQ(operation(stop).state, store::OperationState::Succeeded);
  auto seen = since(mark);
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0]["method"], "PATCH");
  EXPECT_EQ(seen[0]["path"], vm_path(vm));
  EXPECT_EQ(seen[0]["query"], (Json{{"fieldManager", {"bowline"}}}));
  EXPECT_EQ(seen[0]["content_type"], "application/merge-patch+json");
  EXPECT_EQ(Json::parse(seen[0]["body"].get<std::string>()),
            (Json{{"spec", {{"runStrategy", "Halted"}}}}));

  // The template changes while the space is stopped: the next start applies it.
  store_->templates().update(store_->templates().find_by_name(tmpl)->id,
                             kubevirt_template(suffix_, "u1.large"));
  mark = requests().size();
  engine_->start_space(id);
  engine_->wait_idle();
  EXPECT_EQ(space(id).state, SpaceState::Running) << space(id).error;
  seen = since(mark);
  ASSERT_EQ(seen.size(), 4u);
  const auto body = Json::parse(seen[2]["body"].get<std::string>());
  EXPECT_EQ(seen[2]["path"], vm_path(vm));
  // Its own objects now: forced, as bowline owns the fields it renders.
  EXPECT_EQ(seen[2]["query"], (Json{{"fieldManager", {"bowline"}}, {"force", {"true"}}}));
  EXPECT_EQ(body["spec"]["instancetype"]["name"], "u1.large");
  EXPECT_EQ(body["spec"]["runStrategy"], "Always");
  EXPECT_EQ(space(id).applied_template_revision, 2);
}

TEST_F(EngineNode, RestartUsesTheRestartSubresource) {
  const auto id = create(add_template(), "dev").space.id;
  const auto mark = requests().size();
  const auto op = engine_->restart_space(id);
  engine_->wait_idle();
  EXPECT_EQ(operation(op).state, store::OperationState::Succeeded) << operation(op).error;
  EXPECT_EQ(space(id).state, SpaceState::Running);
  const auto seen = since(mark);
  ASSERT_EQ(seen.size(), 5u);  // four applies, then the restart
  EXPECT_EQ(seen[4]["method"], "PUT");
  EXPECT_EQ(seen[4]["path"], subresource("dev-" + suffix_, "restart"));
  EXPECT_EQ(seen[4]["authorization"], std::string("Bearer ") + kToken);
}

TEST_F(EngineNode, AManualTemplateStartsThroughTheStartSubresource) {
  const auto name = add_template();
  store_->templates().update(store_->templates().find_by_name(name)->id,
                             kubevirt_template(suffix_, "u1.small") + "runStrategy: Manual\n");
  const auto id = create(name, "dev").space.id;
  EXPECT_EQ(space(id).state, SpaceState::Running) << space(id).error;
  const auto seen = since(0);
  ASSERT_EQ(seen.size(), 5u);
  EXPECT_EQ(Json::parse(seen[2]["body"].get<std::string>())["spec"]["runStrategy"], "Manual");
  EXPECT_EQ(seen[4]["method"], "PUT");
  EXPECT_EQ(seen[4]["path"], subresource("dev-" + suffix_, "start"));
}

TEST_F(EngineNode, CreatedStoppedIsAppliedHalted) {
  const auto id = create(add_template(), "dev", false).space.id;
  EXPECT_EQ(space(id).state, SpaceState::Stopped) << space(id).error;
  const auto seen = since(0);
  ASSERT_EQ(seen.size(), 4u);
  EXPECT_EQ(Json::parse(seen[2]["body"].get<std::string>())["spec"]["runStrategy"], "Halted");
}

TEST_F(EngineNode, DeleteRemovesEveryObjectThenTheRow) {
  const auto id = create(add_template(), "dev").space.id;
  const auto vm = "dev-" + suffix_;
  const auto mark = requests().size();
  const auto op = engine_->delete_space(id);
  engine_->wait_idle();
  EXPECT_FALSE(store_->spaces().get(id).has_value());
  EXPECT_EQ(operation(op).state, store::OperationState::Succeeded);
  const auto seen = since(mark);
  const std::vector<std::string> paths{
      "/api/v1/namespaces/tenant-a/services/" + vm, vm_path(vm),
      "/api/v1/namespaces/tenant-a/secrets/" + vm + "-cloud-init",
      "/apis/cdi.kubevirt.io/v1beta1/namespaces/tenant-a/datavolumes/" + vm + "-system"};
  ASSERT_EQ(seen.size(), paths.size());
  for (std::size_t i = 0; i < paths.size(); ++i) {
    EXPECT_EQ(seen[i]["method"], "DELETE");
    EXPECT_EQ(seen[i]["path"], paths[i]);
    EXPECT_EQ(seen[i]["query"], (Json{{"propagationPolicy", {"Background"}}}));
    EXPECT_EQ(seen[i]["authorization"], std::string("Bearer ") + kToken);
  }
}

TEST_F(EngineNode, ADeleteTheClusterRefusesKeepsTheRowInError) {
  const auto id = create(add_template(), "dev").space.id;
  cue("refuse", {{"method", "DELETE"},
                 {"contains", "/virtualmachines/"},
                 {"status", 403},
                 {"reason", "Forbidden"},
                 {"message", "virtualmachines.kubevirt.io is forbidden: no delete for you"}});
  engine_->delete_space(id);
  engine_->wait_idle();
  ASSERT_TRUE(store_->spaces().get(id).has_value());
  EXPECT_EQ(space(id).state, SpaceState::Error);
  EXPECT_NE(space(id).error.find("HTTP 403: Forbidden: virtualmachines.kubevirt.io is forbidden"),
            std::string::npos)
      << space(id).error;
  // Once the cluster allows it, the delete goes through; an object already gone counts.
  cue("clear", Json::object());
  engine_->delete_space(id);
  engine_->wait_idle();
  EXPECT_FALSE(store_->spaces().get(id).has_value());
}

TEST_F(EngineNode, A422PutsTheSpaceInErrorWithTheApiServersMessageAndCleansUp) {
  cue("refuse", {{"method", "PATCH"},
                 {"contains", "/virtualmachines/"},
                 {"status", 422},
                 {"reason", "Invalid"},
                 {"message", "VirtualMachine.kubevirt.io \"x\" is invalid: spec.template: bad"}});
  const auto accepted = create(add_template(), "dev");
  const auto s = space(accepted.space.id);
  EXPECT_EQ(s.state, SpaceState::Error);
  EXPECT_NE(s.error.find("create failed: applying VirtualMachine/dev-" + suffix_ +
                         ": HTTP 422: Invalid: VirtualMachine.kubevirt.io \"x\" is invalid"),
            std::string::npos)
      << s.error;
  const auto op = operation(accepted.operation_id);
  EXPECT_EQ(op.state, store::OperationState::Failed);
  bool failed_event = false;
  for (const auto& e : store_->events().events_since(0, 1000))
    if (e.space_id == s.id && e.kind == "operation.failed")
      failed_event = e.payload["error"].get<std::string>().find("HTTP 422") != std::string::npos;
  EXPECT_TRUE(failed_event);
  // What the failed create applied before the refusal is deleted again (what it did not
  // make is only read).
  std::vector<std::string> deleted;
  for (const auto& r : requests())
    if (r["method"] == "DELETE") deleted.push_back(r["path"]);
  const auto vm = "dev-" + suffix_;
  EXPECT_EQ(deleted, (std::vector<std::string>{
                         "/api/v1/namespaces/tenant-a/secrets/" + vm + "-cloud-init",
                         "/apis/cdi.kubevirt.io/v1beta1/namespaces/tenant-a/datavolumes/" + vm +
                             "-system"}));
}

TEST_F(EngineNode, AnUnreachableClusterPutsTheSpaceInError) {
  Connection nowhere;
  nowhere.server = "https://127.0.0.1:1";
  nowhere.token = kToken;
  start_engine(nowhere);
  const auto accepted = create(add_template(), "dev");
  const auto s = space(accepted.space.id);
  EXPECT_EQ(s.state, SpaceState::Error);
  EXPECT_NE(s.error.find("create failed: GET https://127.0.0.1:1/apis/"), std::string::npos)
      << s.error;
  // The node says why it is not ready.
  const auto report = node_->report();
  EXPECT_EQ(report["kind"], "kubevirt");
  EXPECT_EQ(report["ready"], false);
  EXPECT_EQ(report["checks"][0]["name"], "api-server");
  EXPECT_EQ(report["checks"][0]["status"], "missing");
}

TEST_F(EngineNode, TheAuditFollowsWhatTheClusterReports) {
  const auto id = create(add_template(), "dev").space.id;
  const auto vm = "dev-" + suffix_;
  cue("status", {{"name", vm}, {"printableStatus", "ErrImagePull"}});
  engine_->audit();
  engine_->wait_idle();
  EXPECT_EQ(space(id).state, SpaceState::Error);
  EXPECT_EQ(space(id).error, "the VirtualMachine reports ErrImagePull");
  cue("clear", Json::object());
  engine_->audit();
  engine_->wait_idle();
  EXPECT_EQ(space(id).state, SpaceState::Running);  // running again clears the error
  cue("forget", {{"name", vm}});
  engine_->audit();
  engine_->wait_idle();
  EXPECT_EQ(space(id).state, SpaceState::Error);
  EXPECT_EQ(space(id).error, "the VirtualMachine " + vm + " vanished from the cluster");
}

// A create cut short by a server restart: the cluster, not libvirt (which never had the
// machine), says what the space is now.
TEST_F(EngineNode, AnInterruptedCreateSettlesOnWhatTheClusterSays) {
  const auto id = create(add_template(), "dev", false).space.id;
  ASSERT_EQ(space(id).state, SpaceState::Stopped);
  store_->spaces().set_state(id, SpaceState::Creating);
  cue("status", {{"name", "dev-" + suffix_}, {"printableStatus", "ErrImagePull"}});
  engine_->reconcile();
  engine_->wait_idle();
  EXPECT_EQ(space(id).state, SpaceState::Error);
  EXPECT_EQ(space(id).error, "the VirtualMachine reports ErrImagePull");
  cue("clear", Json::object());
  store_->spaces().set_state(id, SpaceState::Creating);
  engine_->reconcile();
  engine_->wait_idle();
  EXPECT_EQ(space(id).state, SpaceState::Stopped);
}

TEST_F(EngineNode, WhatTheNodeCannotRunIsRefusedBeforeAnythingIsMade) {
  auto expect_refused = [&](engine::CreateSpaceRequest request, const std::string& node,
                            const std::string& part) {
    try {
      engine_->create_space(request, node);
      ADD_FAILURE() << "not refused; expected: " << part;
    } catch (const engine::EngineError& e) {
      EXPECT_EQ(e.kind(), engine::EngineError::Kind::Invalid);
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
  };
  const auto tmpl = add_template();
  expect_refused({alice_, tmpl, "a", std::string("198.51.100.5"), true}, "cluster",
                 "gets its address from the cluster");
  expect_refused({alice_, tmpl, "b", std::nullopt, true}, "elsewhere",
                 "no node named elsewhere (nodes: local, cluster)");
  store_->templates().create(
      "bridged", "name: br-" + suffix_ +
                     "\nimage: https://images.example.org/d.qcow2\nnetwork:\n  bridge: br0\n"
                     "  cidr: 198.51.100.0/24\n  ip_range_start: 198.51.100.10\n"
                     "  ip_range_end: 198.51.100.20\n");
  expect_refused({alice_, "bridged", "c", std::nullopt, true}, "cluster",
                 "network.mode bridged takes a host bridge");
  EXPECT_TRUE(store_->spaces().list().empty());
  EXPECT_TRUE(requests().empty());
}

// What the node kind lacks is refused before anything reaches the cluster, with the reason its
// table of capabilities gives.
TEST_F(EngineNode, WhatTheNodeKindLacksIsRefusedWithItsTablesReason) {
  using engine::Capability;
  const auto id = create(add_template(), "dev").space.id;
  const auto& table = engine::KubevirtNode::kind_capabilities();
  auto expect_refused = [&](Capability capability, const std::function<void()>& call) {
    try {
      call();
      ADD_FAILURE() << "not refused: " << engine::to_string(capability);
    } catch (const engine::EngineError& e) {
      EXPECT_EQ(e.kind(), engine::EngineError::Kind::Invalid);
      const std::string said = e.what();
      EXPECT_NE(said.find(table.reason(capability)), std::string::npos) << said;
      EXPECT_NE(said.find("kubevirt node cluster"), std::string::npos) << said;
    }
  };
  auto mark = requests().size();
  expect_refused(Capability::Snapshots, [&] { engine_->snapshot_space(id, "before", false); });
  expect_refused(Capability::MemorySnapshots, [&] { engine_->snapshot_space(id, "now", true); });
  expect_refused(Capability::Suspend, [&] { engine_->suspend_space(id, "idle"); });
  expect_refused(Capability::Clone, [&] { engine_->clone_space({id, alice_, "copy", std::nullopt, false}); });
  expect_refused(Capability::Console, [&] { engine_->open_console(id); });
  expect_refused(Capability::Vnc, [&] { engine_->open_display(id); });
  EXPECT_TRUE(since(mark, true).empty());
  engine_->stop_space(id);
  engine_->wait_idle();
  mark = requests().size();
  expect_refused(Capability::Export, [&] { engine_->export_source(id); });
  EXPECT_TRUE(since(mark, true).empty());
  EXPECT_TRUE(store_->read_snapshots().list_for_space(id).empty());
}

TEST_F(EngineNode, TheNodeReportsItselfReady) {
  const auto report = node_->report();
  EXPECT_EQ(report["name"], "cluster");
  EXPECT_EQ(report["kind"], "kubevirt");
  EXPECT_EQ(report["runtimes"], nlohmann::json::array({"kubevirt"}));
  EXPECT_EQ(report["ready"], true) << report.dump(2);
  std::vector<std::string> names;
  for (const auto& c : report["checks"]) names.push_back(c["name"]);
  EXPECT_EQ(names, (std::vector<std::string>{"api-server", "kubevirt", "cdi", "namespace"}));
  cue("refuse", {{"method", "GET"},
                 {"contains", "/namespaces/tenant-a/virtualmachines"},
                 {"status", 403},
                 {"reason", "Forbidden"},
                 {"message", "cannot list"}});
  const auto denied = node_->report();
  EXPECT_EQ(denied["ready"], false);
  EXPECT_EQ(denied["checks"][3]["status"], "missing");
  EXPECT_NE(denied["checks"][3]["detail"].get<std::string>().find("HTTP 403"), std::string::npos);
}

// ---- tunnels through KubeVirt's portforward (ctest -R tunnel) -----------------------------------

// A guest's TCP service on loopback: echoes each connection until the client ends it.
class Echo {
 public:
  Echo() {
    listener_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t n = sizeof a;
    ::bind(listener_, reinterpret_cast<sockaddr*>(&a), n);
    ::listen(listener_, 8);
    ::getsockname(listener_, reinterpret_cast<sockaddr*>(&a), &n);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] {
      for (;;) {
        const int fd = ::accept(listener_, nullptr, nullptr);
        if (fd < 0) return;
        char buffer[65536];
        ssize_t got;
        while ((got = ::recv(fd, buffer, sizeof buffer, 0)) > 0)
          if (::send(fd, buffer, static_cast<std::size_t>(got), MSG_NOSIGNAL) != got) break;
        ::close(fd);
      }
    });
  }
  ~Echo() {
    ::shutdown(listener_, SHUT_RDWR);
    ::close(listener_);
    thread_.join();
  }
  int port() const { return port_; }

 private:
  int listener_ = -1;
  int port_ = 0;
  std::thread thread_;
};

// What `fd` gives until `want` bytes arrived or it ends (10 s at most).
std::string read_bytes(int fd, std::size_t want) {
  std::string out;
  char buffer[65536];
  while (out.size() < want) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 10000) <= 0) break;
    const auto got = ::recv(fd, buffer, sizeof buffer, 0);
    if (got <= 0) break;
    out.append(buffer, static_cast<std::size_t>(got));
  }
  return out;
}

using tunnel_kubevirt = EngineNode;  // ctest -R tunnel

TEST_F(tunnel_kubevirt, GoesThroughTheVmisPortforwardSubresource) {
  const auto id = create(add_template(), "dev").space.id;
  const auto vm = "dev-" + suffix_;
  Echo echo;
  cue("portforward",
      {{"name", vm}, {"port", 22}, {"to", "127.0.0.1:" + std::to_string(echo.port())}});
  const auto mark = requests().size();
  const int fd = engine_->open_port(id, 22);
  // Bytes of every value, a megabyte of them, come back as they went.
  std::string sent;
  for (std::size_t i = 0; sent.size() < 1024 * 1024; ++i) sent += static_cast<char>(i * 7 % 256);
  std::thread writer([&] {
    for (std::size_t at = 0; at < sent.size();) {
      const auto n = ::send(fd, sent.data() + at, std::min<std::size_t>(50000, sent.size() - at),
                            MSG_NOSIGNAL);
      if (n <= 0) break;
      at += static_cast<std::size_t>(n);
    }
  });
  const auto back = read_bytes(fd, sent.size());
  writer.join();
  EXPECT_EQ(back.size(), sent.size());
  EXPECT_TRUE(back == sent) << "the bytes differ";
  ::close(fd);

  const auto seen = since(mark, true);
  ASSERT_FALSE(seen.empty());
  EXPECT_EQ(seen[0]["path"],
            "/apis/subresources.kubevirt.io/v1/namespaces/tenant-a/"
            "virtualmachineinstances/" +
                vm + "/portforward/22/tcp");
  EXPECT_EQ(seen[0]["upgrade"], "plain.kubevirt.io");
  EXPECT_EQ(seen[0]["authorization"], std::string("Bearer ") + kToken);
}

TEST_F(tunnel_kubevirt, ToAStoppedVmiSaysWhatTheClusterSaid) {
  const auto id = create(add_template(), "dev", false).space.id;
  try {
    ::close(engine_->open_port(id, 22));
    FAIL() << "a tunnel to a stopped VMI opened";
  } catch (const util::UpstreamError& e) {
    EXPECT_NE(std::string(e.what()).find("VMI is not running"), std::string::npos) << e.what();
  }
}

// Objects of a space's names that bowline did not make for it.
using security_kubevirt_node = EngineNode;

TEST_F(security_kubevirt_node, AnotherToolsVirtualMachineIsNeitherTakenOverNorDeleted) {
  const auto vm = "dev-" + suffix_;
  const Json theirs{{"apiVersion", "kubevirt.io/v1"},
                    {"kind", "VirtualMachine"},
                    {"metadata",
                     {{"name", vm},
                      {"namespace", "tenant-a"},
                      {"labels", {{"app.kubernetes.io/managed-by", "Helm"}}}}},
                    {"spec", {{"runStrategy", "Halted"}}}};
  cue("put", {{"path", vm_path(vm)}, {"object", theirs}, {"manager", "helm"}});
  const auto accepted = create(add_template(), "dev");
  const auto s = space(accepted.space.id);
  EXPECT_EQ(s.state, SpaceState::Error);
  EXPECT_NE(s.error.find("applying VirtualMachine/" + vm +
                         ": the cluster already has it, and it is not this space's: another "
                         "tool owns it (app.kubernetes.io/managed-by=Helm). bowline does not "
                         "take it over"),
            std::string::npos)
      << s.error;
  EXPECT_EQ(operation(accepted.operation_id).state, store::OperationState::Failed);

  // Deleting the space removes what is its own (the failed create already did) and leaves
  // theirs.
  engine_->delete_space(s.id);
  engine_->wait_idle();
  EXPECT_FALSE(store_->spaces().get(s.id).has_value());
  for (const auto& r : requests()) {
    if (r["path"] == vm_path(vm)) {
      EXPECT_EQ(r["method"], "GET") << r.dump();  // never patched nor deleted
    }
  }
  const auto now = client_->send("GET", vm_path(vm), "", "");
  ASSERT_EQ(now.status, 200);
  const auto kept = Json::parse(now.body);
  EXPECT_EQ(kept["metadata"]["labels"], theirs["metadata"]["labels"]);
  EXPECT_EQ(kept["spec"], theirs["spec"]);
}

}  // namespace
}  // namespace bowline::kubevirt::test
