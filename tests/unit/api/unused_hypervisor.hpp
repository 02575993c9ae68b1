// A Hypervisor whose every call fails with "not in this test": the base of the fakes that need
// only a console or a display, so each states just the part it plays.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "libvirt/hypervisor.hpp"

namespace bowline::api::testing {

class UnusedHypervisor : public libvirt::Hypervisor {
 public:
  std::string uri() const override { return "stub"; }
  libvirt::DomainInfo define(const std::string&) override { throw unused(); }
  void start(const std::string&, libvirt::StartOptions) override { throw unused(); }
  void resume(const std::string&) override { throw unused(); }
  void shutdown(const std::string&) override { throw unused(); }
  bool destroy(const std::string&) override { throw unused(); }
  bool undefine(const std::string&) override { throw unused(); }
  std::optional<libvirt::DomainInfo> lookup(const std::string&) override { throw unused(); }
  std::vector<libvirt::DomainInfo> list() override { throw unused(); }
  libvirt::DomainStatus state(const std::string&) override { throw unused(); }
  void set_autostart(const std::string&, bool) override { throw unused(); }
  std::string domain_xml(const std::string&, bool) override { throw unused(); }
  std::vector<libvirt::InterfaceAddress> interface_addresses(const std::string&,
                                                             libvirt::AddressSource) override {
    throw unused();
  }
  std::string agent_command(const std::string&, const std::string&, std::chrono::seconds) override {
    throw unused();
  }
  libvirt::Subscription subscribe(libvirt::LifecycleCallback) override { throw unused(); }
  std::optional<libvirt::NetworkInfo> lookup_network(const std::string&) override {
    throw unused();
  }
  std::vector<libvirt::NetworkInfo> list_networks() override { throw unused(); }
  std::vector<libvirt::NodeDevice> node_devices() override { throw unused(); }
  libvirt::DomainCapabilities domain_capabilities(const std::string&) override { throw unused(); }
  std::unique_ptr<util::ByteStream> open_console(const std::string&, const std::string&,
                                                 bool) override {
    throw unused();
  }

 protected:
  static libvirt::HypervisorError unused() { return libvirt::HypervisorError("not in this test"); }
};

// A ConsoleHub opener over a fake hypervisor: the hub's key is the fake's domain name.
inline auto console_of(libvirt::Hypervisor& host) {
  return [&host](const std::string& key) { return host.open_console(key, {}, true); };
}

}  // namespace bowline::api::testing
