// A Hypervisor that passes every call to another one (a real LibvirtHypervisor): tests
// derive from it and override the one call whose answer they need to change, to put the
// engine in front of a race that a real libvirtd shows only now and then.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "libvirt/hypervisor.hpp"

namespace bowline::engine {

class ForwardingHypervisor : public libvirt::Hypervisor {
 public:
  explicit ForwardingHypervisor(libvirt::Hypervisor& inner) : inner_(inner) {}

  std::string uri() const override { return inner_.uri(); }
  libvirt::DomainInfo define(const std::string& xml) override { return inner_.define(xml); }
  void start(const std::string& name, libvirt::StartOptions options) override {
    inner_.start(name, options);
  }
  void resume(const std::string& name) override { inner_.resume(name); }
  void shutdown(const std::string& name) override { inner_.shutdown(name); }
  bool destroy(const std::string& name) override { return inner_.destroy(name); }
  bool undefine(const std::string& name) override { return inner_.undefine(name); }
  libvirt::DomainInfo create_transient(const std::string& xml) override {
    return inner_.create_transient(xml);
  }
  std::optional<libvirt::DomainInfo> lookup(const std::string& name) override {
    return inner_.lookup(name);
  }
  std::vector<libvirt::DomainInfo> list() override { return inner_.list(); }
  std::vector<libvirt::DomainStats> all_domain_stats() override {
    return inner_.all_domain_stats();
  }
  libvirt::DomainStatus state(const std::string& name) override { return inner_.state(name); }
  void set_autostart(const std::string& name, bool autostart) override {
    inner_.set_autostart(name, autostart);
  }
  std::string domain_xml(const std::string& name, bool inactive) override {
    return inner_.domain_xml(name, inactive);
  }
  std::vector<libvirt::InterfaceAddress> interface_addresses(
      const std::string& name, libvirt::AddressSource source) override {
    return inner_.interface_addresses(name, source);
  }
  std::string agent_command(const std::string& name, const std::string& json,
                            std::chrono::seconds timeout) override {
    return inner_.agent_command(name, json, timeout);
  }
  libvirt::Subscription subscribe(libvirt::LifecycleCallback callback) override {
    return inner_.subscribe(std::move(callback));
  }
  std::optional<libvirt::NetworkInfo> lookup_network(const std::string& name) override {
    return inner_.lookup_network(name);
  }
  std::vector<libvirt::NetworkInfo> list_networks() override { return inner_.list_networks(); }
  std::vector<libvirt::DhcpLease> dhcp_leases() override { return inner_.dhcp_leases(); }
  std::optional<std::string> nwfilter_xml(const std::string& name) override {
    return inner_.nwfilter_xml(name);
  }
  bool ensure_nwfilter(const std::string& name, const std::string& xml) override {
    return inner_.ensure_nwfilter(name, xml);
  }
  std::vector<libvirt::NodeDevice> node_devices() override { return inner_.node_devices(); }
  libvirt::DomainCapabilities domain_capabilities(const std::string& domain_type) override {
    return inner_.domain_capabilities(domain_type);
  }
  std::unique_ptr<util::ByteStream> open_console(const std::string& name, const std::string& device,
                                                 bool force) override {
    return inner_.open_console(name, device, force);
  }
  int open_graphics(const std::string& name, unsigned index, bool skip_auth) override {
    return inner_.open_graphics(name, index, skip_auth);
  }

 private:
  libvirt::Hypervisor& inner_;
};

}  // namespace bowline::engine
