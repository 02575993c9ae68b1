// Internal to spec/: fills a Spec from a template's root mapping, section by section.
#pragma once

#include <set>
#include <string>

#include "spec/reader.hpp"
#include "spec/spec.hpp"

namespace bowline::spec {

class SpecBuilder {
 public:
  explicit SpecBuilder(Reader& reader) : r_(reader) {}
  Spec build(const YAML::Node& root);

 private:
  // knot's fields (builder_knot.cpp).
  void read_identity(const YAML::Node& root);
  void read_image(const YAML::Node& root);
  void read_knot_sizing(const YAML::Node& root);
  void read_environment(const YAML::Node& node);
  void read_devices(const YAML::Node& node);
  // network: (builder_network.cpp).
  void read_network(const YAML::Node& node);
  void read_network_mode(const YAML::Node& node);
  void read_network_bridge(const YAML::Node& node);
  void read_network_cidr(const YAML::Node& node);
  void read_network_range(const YAML::Node& node);
  std::optional<Ipv4Address> read_network_address(const YAML::Node& node, const char* key);
  // Cozystack's parameters (builder_cozystack.cpp).
  void read_instance_type(const YAML::Node& root);
  void read_resources(const YAML::Node& node);
  void read_firmware(const YAML::Node& node);
  void read_named_lists(const YAML::Node& root);
  void read_cloud_init(const YAML::Node& root);
  void read_access(const YAML::Node& root);
  void read_ports(const YAML::Node& ports);
  void read_preview(const YAML::Node& entry, const std::string& path, ServicePort& port);
  // Rules across fields, sizing, Cozystack's defaults (builder_resolve.cpp).
  void resolve(const YAML::Node& root);
  struct SizingFields;
  SizingFields sizing_fields(const YAML::Node& root) const;
  void check_sizing_conflicts(const YAML::Node& root, const SizingFields& fields);
  void resolve_sizing(const YAML::Node& root, const SizingFields& fields);
  bool sizing_known() const;
  void resolve_preference(const YAML::Node& root);
  void check_preference_minimums(const YAML::Node& root);
  void check_firmware(const YAML::Node& root);
  void check_network_and_access(const YAML::Node& root);

  // A field that is present but whose value depends on variables not given.
  bool unknown(const std::string& path) const { return unknown_.count(path) != 0; }
  std::optional<std::string> string_field(const YAML::Node& node, const std::string& path);

  Reader& r_;
  Spec spec_;
  std::set<std::string> unknown_;
};

}  // namespace bowline::spec
