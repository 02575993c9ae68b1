// Internal to src/libvirt: LibvirtHypervisor::Impl, the connection to libvirtd that every file
// implementing LibvirtHypervisor's calls reaches through impl_->connection().
//
// Connection: one virConnectPtr, replaced when its close callback fired or libvirt says it is
// dead. Each call takes its own reference (virConnectRef) under the mutex and then works
// without it, so calls run in parallel and a reconnect never pulls a connection from under a
// call in flight. Events: one lifecycle callback per connection fans out to the subscribers
// kept in `Shared`, which outlives this object for as long as libvirt holds the callback.
#pragma once

#include <memory>
#include <mutex>

#include "libvirt/libvirt_handles.hpp"
#include "libvirt/libvirt_hypervisor.hpp"

namespace bowline::libvirt {

namespace detail {

// The subscribers to a connection's domain events (libvirt_connection.cpp).
struct Shared;
// Set by libvirt's close callback when the connection dies (libvirt_connection.cpp).
struct CloseFlag;

}  // namespace detail

class LibvirtHypervisor::Impl {
 public:
  // `events`: whether this connection delivers domain events (the agent's does not).
  explicit Impl(LibvirtOptions options, bool events = true);
  ~Impl();

  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;

  const LibvirtOptions& options() const { return options_; }

  // A reference to the live connection, reconnecting first when it broke.
  detail::Connection connection();

  void reconnect();

  // The connection for guest agent calls: a second one, opened at its first use, so calls that
  // a guest stalls never take the main connection's turns at libvirtd. test:// keeps one (a
  // file-backed test driver's state is its connection's own).
  detail::Connection agent_connection();

  unsigned long connection_count() const;

  Subscription subscribe(LifecycleCallback callback);

 private:
  // One opened connection with our callbacks on it.
  struct Live {
    virConnectPtr connection = nullptr;
    std::unique_ptr<detail::CloseFlag> close_flag;
    bool close_registered = false;
    int lifecycle_callback = -1;
  };

  // The new connection is open before the old one closes: the test driver keeps its state
  // only while some connection to it is open, and callers wait less.
  void replace_locked();

  Live open();

  static void close(Live& live);

  const LibvirtOptions options_;
  const bool events_;
  const std::shared_ptr<detail::Shared> shared_;

  mutable std::mutex mutex_;  // guards the members below
  Live live_;
  unsigned long opened_ = 0;

  std::mutex agent_mutex_;
  std::unique_ptr<Impl> agent_;  // agent_connection()'s
};

}  // namespace bowline::libvirt
