#include "libvirt/nwfilter.hpp"

#include <algorithm>
#include <pugixml.hpp>
#include <sstream>
#include <stdexcept>
#include <utility>
#include <vector>

namespace bowline::libvirt {

std::string traffic_filter_xml() {
  // Rules and filter chains of a root-chain filter run in the order of their priorities, lowest
  // first. clean-traffic checks the MAC at -800 (its mac chain), the source IP at -710
  // (no-ip-spoofing's chain) and then accepts all IPv4 from the guest at -650. The drop must
  // come before that accept: -720, after the MAC check. It matches on the ports alone, so a
  // server answering from 0.0.0.0 (which no-ip-spoofing lets through for DHCP clients) is
  // dropped too. DHCP clients send from 68 to 67, untouched.
  return "<filter name='" + std::string(kTrafficFilter) +
         "' chain='root'>\n"
         "  <filterref filter='" +
         kCleanTraffic +
         "'/>\n"
         "  <rule action='drop' direction='out' priority='-720'>\n"
         "    <ip protocol='udp' srcportstart='67' dstportstart='68'/>\n"
         "  </rule>\n"
         "</filter>\n";
}

namespace {

std::string trimmed(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  const auto last = text.find_last_not_of(" \t\r\n");
  return std::string(text.substr(first, last - first + 1));
}

bool same_element(pugi::xml_node a, pugi::xml_node b, bool top) {
  if (std::string_view(a.name()) != b.name()) return false;
  const auto attributes = [](pugi::xml_node n) {
    std::vector<std::pair<std::string, std::string>> out;
    for (const auto attribute : n.attributes())
      out.emplace_back(attribute.name(), attribute.value());
    std::sort(out.begin(), out.end());
    return out;
  };
  if (attributes(a) != attributes(b)) return false;
  if (trimmed(a.text().get()) != trimmed(b.text().get())) return false;
  const auto elements = [top](pugi::xml_node n) {
    std::vector<pugi::xml_node> out;
    for (const auto child : n.children())
      if (child.type() == pugi::node_element && !(top && std::string_view(child.name()) == "uuid"))
        out.push_back(child);
    return out;
  };
  const auto left = elements(a), right = elements(b);
  if (left.size() != right.size()) return false;
  for (std::size_t i = 0; i < left.size(); ++i)
    if (!same_element(left[i], right[i], false)) return false;
  return true;
}

pugi::xml_node load_filter(pugi::xml_document& doc, std::string_view xml) {
  if (!doc.load_buffer(xml.data(), xml.size())) return {};
  const auto root = doc.document_element();
  return std::string_view(root.name()) == "filter" ? root : pugi::xml_node();
}

}  // namespace

bool same_filter(std::string_view a, std::string_view b) {
  pugi::xml_document da, db;
  const auto fa = load_filter(da, a), fb = load_filter(db, b);
  return fa && fb && same_element(fa, fb, true);
}

std::string filter_name(std::string_view xml) {
  pugi::xml_document doc;
  return load_filter(doc, xml).attribute("name").value();
}

std::string filter_with_uuid(std::string_view xml, const std::string& uuid) {
  pugi::xml_document doc;
  auto filter = load_filter(doc, xml);
  if (!filter) throw std::invalid_argument("network filter XML: not a <filter> document");
  if (uuid.empty()) return std::string(xml);
  auto element = filter.child("uuid");
  if (!element) element = filter.prepend_child("uuid");
  element.text().set(uuid.c_str());
  std::ostringstream out;
  doc.save(out, "  ",
           pugi::format_indent | pugi::format_no_declaration | pugi::format_attribute_single_quote,
           pugi::encoding_utf8);
  return out.str();
}

}  // namespace bowline::libvirt
