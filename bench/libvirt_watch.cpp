#include "libvirt_watch.hpp"

#include <stdexcept>

namespace bowline::bench {

std::string libvirt_error() {
  const virError* e = virGetLastError();
  return e && e->message ? e->message : "unknown libvirt error";
}

LibvirtWatch::LibvirtWatch(const std::string& uri) {
  // The default event loop must exist before the connection opens.
  if (virEventRegisterDefaultImpl() < 0)
    throw std::runtime_error("libvirt event loop: " + libvirt_error());
  conn_ = virConnectOpen(uri.c_str());
  if (!conn_) throw std::runtime_error("cannot open " + uri + ": " + libvirt_error());
  callback_ = virConnectDomainEventRegisterAny(conn_, nullptr, VIR_DOMAIN_EVENT_ID_LIFECYCLE,
                                               VIR_DOMAIN_EVENT_CALLBACK(&LibvirtWatch::on_event),
                                               this, nullptr);
  if (callback_ < 0) {
    virConnectClose(conn_);
    throw std::runtime_error("cannot subscribe to lifecycle events: " + libvirt_error());
  }
  loop_ = std::thread([this] {
    while (__atomic_load_n(&running_, __ATOMIC_ACQUIRE)) virEventRunDefaultImpl();
  });
}

LibvirtWatch::~LibvirtWatch() {
  __atomic_store_n(&running_, false, __ATOMIC_RELEASE);
  // Deregistering wakes the loop (it changes the connection's watches).
  virConnectDomainEventDeregisterAny(conn_, callback_);
  // An idle loop waits for the next event source: a timeout that fires at once ends the wait.
  const int timer = virEventAddTimeout(
      0, [](int, void*) {}, nullptr, nullptr);
  loop_.join();
  if (timer >= 0) virEventRemoveTimeout(timer);
  virConnectClose(conn_);
}

void LibvirtWatch::on_event(virConnectPtr, virDomainPtr dom, int event, int, void* self) {
  auto* watch = static_cast<LibvirtWatch*>(self);
  const auto now = Clock::now();
  {
    std::lock_guard lock(watch->mutex_);
    watch->events_.push_back({virDomainGetName(dom), event, now});
  }
  watch->changed_.notify_all();
}

std::optional<Clock::time_point> LibvirtWatch::wait(const std::string& domain, int event,
                                                    Clock::time_point after,
                                                    std::chrono::seconds timeout) {
  std::unique_lock lock(mutex_);
  std::optional<Clock::time_point> found;
  changed_.wait_for(lock, timeout, [&] {
    for (const auto& e : events_)
      if (e.domain == domain && e.event == event && e.at >= after) {
        found = e.at;
        return true;
      }
    return false;
  });
  return found;
}

}  // namespace bowline::bench
