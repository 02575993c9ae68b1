// Shared by the hypervisor_*_test.cpp files: the test driver's URIs, domain XML for it, and
// a recorder that collects lifecycle events and waits for the one a test expects.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "libvirt/hypervisor.hpp"

namespace bowline::libvirt::hvtest {

// A private host per connection: each open of the file starts from its content.
inline std::string node_uri() {
  return std::string("test://") + BOWLINE_SOURCE_DIR + "/tests/data/libvirt/node.xml";
}

// libvirt's built-in test host, shared by every connection in this process.
inline constexpr const char* kDefaultUri = "test:///default";

inline constexpr const char* kUuid = "6f1c3d2e-0a4b-4c5d-8e9f-101112131415";

inline DomainMetadata sample_metadata(const std::string& space_id = "sp-42") {
  DomainMetadata m;
  m.space_id = space_id;
  m.space_name = "dev";
  m.template_id = "tpl-7";
  m.template_name = "ubuntu-dev";
  m.owner = "alice";
  m.owner_id = "u-1";
  return m;
}

// A domain for the test driver, ours when `metadata` is given; with `nic`, one interface on
// the "default" network.
inline std::string test_domain_xml(const std::string& name, const std::string& uuid,
                                   const DomainMetadata* metadata = nullptr, bool nic = false,
                                   unsigned memory_kib = 65536) {
  std::string xml = "<domain type='test'>\n  <name>" + name + "</name>\n  <uuid>" + uuid +
                    "</uuid>\n  <memory unit='KiB'>" + std::to_string(memory_kib) +
                    "</memory>\n  <vcpu>1</vcpu>\n  <os><type>hvm</type></os>\n";
  if (metadata) {
    xml += "  <metadata>\n    <bowline:space xmlns:bowline='" + std::string(kMetadataNamespace) +
           "'>\n      <bowline:id>" + metadata->space_id + "</bowline:id>\n      <bowline:name>" +
           metadata->space_name + "</bowline:name>\n      <bowline:template id='" +
           metadata->template_id + "'>" + metadata->template_name +
           "</bowline:template>\n      <bowline:owner id='" + metadata->owner_id + "'>" +
           metadata->owner + "</bowline:owner>\n    </bowline:space>\n  </metadata>\n";
  }
  xml += "  <devices>\n";
  if (nic)
    xml +=
        "    <interface type='network'><source network='default'/>"
        "<mac address='52:54:00:aa:bb:cc'/></interface>\n";
  xml += "  </devices>\n</domain>\n";
  return xml;
}

// Collects events (optionally only one domain's) and lets a test wait for a given one.
class EventRecorder {
 public:
  explicit EventRecorder(std::string domain = {}) : domain_(std::move(domain)) {}

  LifecycleCallback callback() {
    return [this](const LifecycleEvent& event) {
      if (!domain_.empty() && event.domain != domain_) return;
      std::lock_guard lock(mutex_);
      events_.push_back(event);
      changed_.notify_all();
    };
  }

  // True when an event of `type` for the domain arrives within `timeout`.
  bool wait_for(LifecycleEventType type,
                std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, timeout, [&] {
      for (const auto& e : events_)
        if (e.type == type) return true;
      return false;
    });
  }

  std::vector<LifecycleEvent> events() const {
    std::lock_guard lock(mutex_);
    return events_;
  }

  std::vector<std::string> descriptions() const {
    std::vector<std::string> out;
    for (const auto& e : events()) out.push_back(describe(e));
    return out;
  }

 private:
  const std::string domain_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<LifecycleEvent> events_;
};

// Runs `body` and returns the HypervisorError it throws; fails the test if it throws none.
inline HypervisorError error_from(const std::function<void()>& body) {
  try {
    body();
  } catch (const HypervisorError& e) {
    return e;
  }
  ADD_FAILURE() << "expected a HypervisorError";
  return HypervisorError("none");
}

}  // namespace bowline::libvirt::hvtest
