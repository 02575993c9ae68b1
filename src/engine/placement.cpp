#include "engine/placement.hpp"

#include <algorithm>
#include <cstdio>
#include <pugixml.hpp>
#include <stdexcept>

#include "util/strings.hpp"

namespace bowline::engine {

namespace {

unsigned parse_cpu(const std::string& text, const std::string& whole) {
  if (text.empty() || text.size() > 4 || text.find_first_not_of("0123456789") != std::string::npos)
    throw std::invalid_argument("\"" + whole + "\" is not a CPU list such as 2-7,10");
  return static_cast<unsigned>(std::stoul(text));
}

unsigned parse_hex(const char* text) {
  return static_cast<unsigned>(std::strtoul(text, nullptr, 0));
}

}  // namespace

std::vector<unsigned> parse_cpu_list(const std::string& text) {
  std::vector<unsigned> out;
  for (const auto& raw : util::split(text, ',')) {
    const auto part = util::trim(raw);
    const auto dash = part.find('-');
    const auto first = parse_cpu(part.substr(0, dash), text);
    const auto last = dash == std::string::npos ? first : parse_cpu(part.substr(dash + 1), text);
    if (last < first) throw std::invalid_argument("\"" + text + "\": " + part + " runs backwards");
    for (auto c = first; c <= last; ++c)
      if (std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
  }
  return out;
}

void add_held(Held& held, const std::string& domain_xml) {
  pugi::xml_document doc;
  if (!doc.load_string(domain_xml.c_str())) return;
  const auto domain = doc.child("domain");
  for (const char* pin : {"vcpupin", "emulatorpin"})
    for (const auto node : domain.child("cputune").children(pin)) try {
        for (const auto c : parse_cpu_list(node.attribute("cpuset").value())) held.cpus.insert(c);
      } catch (const std::invalid_argument&) {  // not bowline's form ("0-3,^2"): not ours
      }
  for (const auto dev : domain.child("devices").children("hostdev")) {
    if (std::string_view(dev.attribute("type").value()) != "pci") continue;
    const auto a = dev.child("source").child("address");
    char text[32];
    std::snprintf(text, sizeof text, "%04x:%02x:%02x.%x", parse_hex(a.attribute("domain").value()),
                  parse_hex(a.attribute("bus").value()), parse_hex(a.attribute("slot").value()),
                  parse_hex(a.attribute("function").value()));
    held.pci.insert(text);
  }
}

std::string pci_text(const libvirt::NodeDevice& d) {
  char text[32];
  std::snprintf(text, sizeof text, "%04x:%02x:%02x.%x", d.pci_domain, d.pci_bus, d.pci_slot,
                d.pci_function);
  return text;
}

std::optional<std::string> resource_name(const libvirt::NodeDevice& d) {
  if (d.kind != libvirt::NodeDeviceKind::Pci || d.product.empty()) return std::nullopt;
  std::string vendor;
  if (d.vendor_id == 0x10de) vendor = "nvidia.com";
  if (d.vendor_id == 0x1002) vendor = "amd.com";
  if (d.vendor_id == 0x8086) vendor = "intel.com";
  if (vendor.empty()) return std::nullopt;
  std::string product;
  for (char c : d.product) {
    if (c == '[' || c == ']') continue;
    product += c == ' ' ? '_' : c;
  }
  return vendor + "/" + product;
}

std::optional<std::vector<unsigned>> choose_cpus(const std::vector<unsigned>& pool,
                                                 const Held& held, unsigned count) {
  std::vector<unsigned> out;
  for (auto c : pool) {
    if (out.size() == count) break;
    if (!held.cpus.count(c)) out.push_back(c);
  }
  if (out.size() < count) return std::nullopt;
  return out;
}

}  // namespace bowline::engine
