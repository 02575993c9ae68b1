// Lifecycle events of one libvirt connection, timestamped as they arrive: the bench's clock
// for "the domain is running" and "the domain is off", whoever started or stopped it.
#pragma once

#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace bowline::bench {

using Clock = std::chrono::steady_clock;

// The message of the calling thread's last libvirt error.
std::string libvirt_error();

struct LifecycleEvent {
  std::string domain;
  int event = 0;  // VIR_DOMAIN_EVENT_*
  Clock::time_point at;
};

class LibvirtWatch {
 public:
  // Opens `uri` and subscribes to every domain's lifecycle events.
  explicit LibvirtWatch(const std::string& uri);
  ~LibvirtWatch();
  LibvirtWatch(const LibvirtWatch&) = delete;
  LibvirtWatch& operator=(const LibvirtWatch&) = delete;

  // The first `event` (VIR_DOMAIN_EVENT_STARTED, ..._STOPPED) of `domain` at or after `after`;
  // nullopt on timeout.
  std::optional<Clock::time_point> wait(const std::string& domain, int event,
                                        Clock::time_point after, std::chrono::seconds timeout);

  virConnectPtr connection() const { return conn_; }

 private:
  static void on_event(virConnectPtr, virDomainPtr dom, int event, int detail, void* self);

  virConnectPtr conn_ = nullptr;
  int callback_ = -1;
  bool running_ = true;
  std::thread loop_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<LifecycleEvent> events_;
};

}  // namespace bowline::bench
