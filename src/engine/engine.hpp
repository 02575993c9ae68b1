// The engine: spaces' lifecycle on one libvirt node. It owns state and order (the store says
// what a space should be, libvirt what it is); the backends own side effects. Long operations
// run in the background; every step, state change and failure is an event, and a failure also
// stays on the space (state error, with the reason).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

#include "engine/event_bus.hpp"
#include "engine/executor.hpp"
#include "engine/host_probe.hpp"
#include "engine/readiness.hpp"
#include "image/cache.hpp"
#include "image/overlay.hpp"
#include "libvirt/hypervisor.hpp"
#include "plan/plan.hpp"
#include "spec/expand.hpp"
#include "spec/spec.hpp"
#include "store/store.hpp"

namespace bowline::engine {

struct EngineSettings {
  plan::NodeSettings node;
  std::string node_name = "local";
  std::chrono::seconds stop_timeout{60};
  unsigned workers = 4;
  spec::Variables server_variables;  // server.url and var.* for templates
};

class EngineError : public std::runtime_error {
 public:
  enum class Kind { NotFound, Conflict, Invalid };
  EngineError(Kind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
  Kind kind() const { return kind_; }

 private:
  Kind kind_;
};

struct CreateSpaceRequest {
  std::int64_t owner_id = 0;
  std::string template_name;
  std::string name;
  std::optional<std::string> ip;  // bridged: a chosen address instead of the next free one
  bool start = true;
};

struct Accepted {
  store::Space space;
  std::int64_t operation_id = 0;
};

struct SpaceView {
  store::Space space;
  std::string owner;
  std::string template_name;
  std::int64_t template_revision = 0;
  bool redefine_pending = false;       // the template changed since the domain was defined
  std::optional<std::string> address;  // the lease (bridged) or what libvirt reports (nat)
  Readiness readiness;
};

class Engine {
 public:
  Engine(store::Store& store, libvirt::Hypervisor& hypervisor, image::ImageCache& images,
         image::Disks& disks, const HostProbe& host, EventBus& events, EngineSettings settings);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Subscribes to libvirt's lifecycle events and reconciles the store with libvirt.
  void start();

  Accepted create_space(const CreateSpaceRequest& request);
  std::int64_t start_space(const std::string& id);
  std::int64_t stop_space(const std::string& id);
  std::int64_t restart_space(const std::string& id);
  std::int64_t delete_space(const std::string& id);
  // Only while stopped; the guest gets the address at its next boot.
  void set_ip(const std::string& id, const std::string& ip);

  SpaceView describe(const std::string& id);
  // Compares the store with libvirt; libvirt's state wins. Reports what it cannot fix.
  void reconcile();
  // Blocks until background work is done (tests, shutdown).
  void wait_idle();

  // The spec of a space's template with the space's values (for render and checks).
  spec::Spec space_spec(const store::Space& space);

 private:
  struct Loaded;
  Loaded load(const store::Space& space);
  std::int64_t enqueue(const store::Space& space, const std::string& kind,
                       std::function<void(std::int64_t)> body);
  void bring_up(const std::string& id, std::int64_t operation, bool first);
  void shut_down(const store::Space& space, std::int64_t operation);
  void tear_down(const store::Space& space);
  void set_state(const std::string& id, store::SpaceState state, const std::string& error = {});
  void progress(std::int64_t operation, const std::string& id, const std::string& step,
                int percent);
  void on_lifecycle(const libvirt::LifecycleEvent& event);
  bool wait_for_shutoff(const std::string& domain, std::chrono::seconds timeout);
  store::Space require(const std::string& id);
  void check_devices_exist(const spec::Spec& spec);
  void check_devices_free(const store::Space& space, const spec::Spec& spec);

  store::Store& store_;
  libvirt::Hypervisor& hypervisor_;
  image::ImageCache& images_;
  image::Disks& disks_;
  const HostProbe& host_;
  EventBus& events_;
  EngineSettings settings_;
  libvirt::Subscription subscription_;
  std::mutex shutoff_mutex_;
  std::condition_variable shutoff_;
  Executor executor_;  // last: its threads stop before the members they use
};

}  // namespace bowline::engine
