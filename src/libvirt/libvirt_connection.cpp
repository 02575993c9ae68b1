// LibvirtHypervisor::Impl: the connection to libvirtd, replaced when it dies, and its domain
// events (one lifecycle callback per connection, fanned out to the subscribers); and the
// process-wide set-up of libvirt and its event loop.
#include "libvirt/libvirt_connection.hpp"

#include <atomic>
#include <map>
#include <thread>
#include <utility>
#include <vector>

namespace bowline::libvirt {

using namespace detail;

// ---- process-wide setup ------------------------------------------------------------------

void ensure_libvirt_event_loop() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (virInitialize() < 0) throw last_error("libvirt", "initialise");
    // Errors reach callers as exceptions; libvirt's default handler would also print them.
    virSetErrorFunc(nullptr, [](void*, virErrorPtr) {});
    if (virEventRegisterDefaultImpl() < 0) throw last_error("libvirt", "register an event loop");
    std::thread([] {
      for (;;) {
        if (virEventRunDefaultImpl() < 0) {
          virResetLastError();
          std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
      }
    }).detach();
  });
}

namespace detail {

// ---- events ------------------------------------------------------------------------------

// Subscribers. Callbacks run with `dispatch` held, so removing a subscriber waits for a
// delivery in progress (the mutex is recursive so a callback may unsubscribe itself).
class EventHub {
 public:
  std::uint64_t add(LifecycleCallback callback) {
    std::lock_guard lock(dispatch_);
    const auto id = next_id_++;
    subscribers_.emplace(id, std::make_shared<LifecycleCallback>(std::move(callback)));
    return id;
  }

  void remove(std::uint64_t id) {
    std::lock_guard lock(dispatch_);
    subscribers_.erase(id);
  }

  void deliver(const LifecycleEvent& event) {
    std::lock_guard lock(dispatch_);
    std::vector<std::uint64_t> ids;
    ids.reserve(subscribers_.size());
    for (const auto& [id, callback] : subscribers_) ids.push_back(id);
    for (const auto id : ids) {
      const auto it = subscribers_.find(id);
      if (it == subscribers_.end()) continue;  // removed by an earlier callback
      const auto callback = it->second;        // stays alive if it removes itself
      try {
        (*callback)(event);
      } catch (...) {
        // Documented: a callback's exception is dropped.
      }
    }
  }

 private:
  std::recursive_mutex dispatch_;
  std::map<std::uint64_t, std::shared_ptr<LifecycleCallback>> subscribers_;
  std::uint64_t next_id_ = 1;
};

struct Shared {
  EventHub hub;
};

// Set by libvirt's close callback (on the event thread) when the connection dies.
struct CloseFlag {
  std::atomic<bool> closed{false};
};

}  // namespace detail

namespace {

LifecycleEventType event_type(int event) {
  switch (event) {
    case VIR_DOMAIN_EVENT_DEFINED:
      return LifecycleEventType::Defined;
    case VIR_DOMAIN_EVENT_UNDEFINED:
      return LifecycleEventType::Undefined;
    case VIR_DOMAIN_EVENT_STARTED:
      return LifecycleEventType::Started;
    case VIR_DOMAIN_EVENT_SUSPENDED:
      return LifecycleEventType::Suspended;
    case VIR_DOMAIN_EVENT_RESUMED:
      return LifecycleEventType::Resumed;
    case VIR_DOMAIN_EVENT_STOPPED:
      return LifecycleEventType::Stopped;
    case VIR_DOMAIN_EVENT_SHUTDOWN:
      return LifecycleEventType::Shutdown;
    case VIR_DOMAIN_EVENT_PMSUSPENDED:
      return LifecycleEventType::PMSuspended;
    case VIR_DOMAIN_EVENT_CRASHED:
      return LifecycleEventType::Crashed;
    default:
      return LifecycleEventType::Unknown;
  }
}

int on_lifecycle(virConnectPtr, virDomainPtr domain, int event, int detail, void* opaque) noexcept {
  try {
    auto& shared = *static_cast<std::shared_ptr<Shared>*>(opaque);
    LifecycleEvent e;
    if (const char* name = virDomainGetName(domain)) e.domain = name;
    char uuid[VIR_UUID_STRING_BUFLEN];
    if (virDomainGetUUIDString(domain, uuid) == 0) e.uuid = uuid;
    e.type = event_type(event);
    e.detail = detail;
    shared->hub.deliver(e);
  } catch (...) {
  }
  return 0;
}

void free_shared(void* opaque) noexcept {
  delete static_cast<std::shared_ptr<Shared>*>(opaque);
}

void on_close(virConnectPtr, int /*reason*/, void* opaque) noexcept {
  static_cast<CloseFlag*>(opaque)->closed.store(true);
}

}  // namespace

// ---- the connection ----------------------------------------------------------------------

LibvirtHypervisor::Impl::Impl(LibvirtOptions options, bool events)
    : options_(std::move(options)), events_(events), shared_(std::make_shared<Shared>()) {
  ensure_libvirt_event_loop();
  std::lock_guard lock(mutex_);
  live_ = open();
}

LibvirtHypervisor::Impl::~Impl() {
  std::lock_guard lock(mutex_);
  close(live_);
}

Connection LibvirtHypervisor::Impl::connection() {
  std::lock_guard lock(mutex_);
  if (live_.close_flag->closed.load() || virConnectIsAlive(live_.connection) != 1) {
    virResetLastError();
    replace_locked();
  }
  virConnectRef(live_.connection);
  return Connection(live_.connection);
}

void LibvirtHypervisor::Impl::reconnect() {
  std::lock_guard lock(mutex_);
  replace_locked();
}

Connection LibvirtHypervisor::Impl::agent_connection() {
  if (options_.uri.starts_with("test:")) return connection();
  {
    std::lock_guard lock(agent_mutex_);
    if (!agent_) agent_ = std::make_unique<Impl>(options_, false);
  }
  return agent_->connection();
}

unsigned long LibvirtHypervisor::Impl::connection_count() const {
  std::lock_guard lock(mutex_);
  return opened_;
}

Subscription LibvirtHypervisor::Impl::subscribe(LifecycleCallback callback) {
  connection();  // so that events flow again if the connection had broken
  const auto id = shared_->hub.add(std::move(callback));
  return Subscription([weak = std::weak_ptr<Shared>(shared_), id] {
    if (const auto shared = weak.lock()) shared->hub.remove(id);
  });
}

void LibvirtHypervisor::Impl::replace_locked() {
  auto old = std::exchange(live_, open());
  close(old);
}

LibvirtHypervisor::Impl::Live LibvirtHypervisor::Impl::open() {
  const std::string subject = "libvirt at \"" + options_.uri + "\"";
  virConnectPtr raw = virConnectOpen(options_.uri.c_str());
  if (!raw) throw last_error(subject, "connect");
  Connection connection(raw);
  if (options_.keepalive_interval.count() > 0 &&
      virConnectSetKeepAlive(raw, static_cast<int>(options_.keepalive_interval.count()),
                             options_.keepalive_count) < 0)
    virResetLastError();  // local drivers (test://) have no keepalive
  Live live;
  live.close_flag = std::make_unique<CloseFlag>();
  // Drivers without close callbacks (test://) return 0 without registering anything.
  live.close_registered =
      virConnectRegisterCloseCallback(raw, on_close, live.close_flag.get(), nullptr) == 0;
  if (!live.close_registered) virResetLastError();
  if (!events_) {
    live.connection = connection.release();
    ++opened_;
    return live;
  }
  auto* opaque = new std::shared_ptr<Shared>(shared_);
  live.lifecycle_callback = virConnectDomainEventRegisterAny(
      raw, nullptr, VIR_DOMAIN_EVENT_ID_LIFECYCLE, VIR_DOMAIN_EVENT_CALLBACK(on_lifecycle), opaque,
      free_shared);
  if (live.lifecycle_callback < 0) {
    auto error = last_error(subject, "subscribe to domain events");
    delete opaque;
    if (live.close_registered) virConnectUnregisterCloseCallback(raw, on_close);
    throw error;
  }
  live.connection = connection.release();
  ++opened_;
  return live;
}

void LibvirtHypervisor::Impl::close(Live& live) {
  if (!live.connection) return;
  // Both fail harmlessly on a dead connection; the local bookkeeping goes either way.
  if (live.lifecycle_callback >= 0)
    virConnectDomainEventDeregisterAny(live.connection, live.lifecycle_callback);
  if (live.close_registered) virConnectUnregisterCloseCallback(live.connection, on_close);
  virResetLastError();
  virConnectClose(live.connection);  // calls in flight keep their own references
  live = Live{};
}

}  // namespace bowline::libvirt
