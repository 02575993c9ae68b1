#include "libvirt/nwfilter.hpp"

#include <algorithm>
#include <pugixml.hpp>
#include <sstream>
#include <stdexcept>
#include <utility>
#include <vector>

namespace bowline::libvirt {

std::string traffic_filter_xml() {
  // One flat root chain rather than a reference to libvirt's clean-traffic, which means the
  // same but spreads it over six sub-chains: libvirt makes, links, renames and tears down each
  // sub-chain with its own ebtables process at every start and every resume, and those took
  // 1.0 s of each start here (129 processes) against 0.45 s (64) for these rules.
  // Rules run by priority, lowest first; whatever no rule accepts meets the last one. What the
  // guest sends ("out"): its own MAC only; no DHCP server's answer (ports alone, so one from
  // 0.0.0.0 is dropped too); IPv4 only from its own address, or a DHCP client's request from
  // 0.0.0.0; ARP only for its own MAC and address; RARP only as QEMU announces a restored or
  // migrated guest; nothing else (IPv6 included). What comes to it: IPv4, ARP and that RARP.
  return "<filter name='" + std::string(kTrafficFilter) +
         "' chain='root'>\n"
         "  <rule action='drop' direction='out' priority='-900'>\n"
         "    <mac match='no' srcmacaddr='$MAC'/>\n"
         "  </rule>\n"
         "  <rule action='drop' direction='out' priority='-720'>\n"
         "    <ip protocol='udp' srcportstart='67' dstportstart='68'/>\n"
         "  </rule>\n"
         "  <rule action='accept' direction='out' priority='-710'>\n"
         "    <ip srcipaddr='0.0.0.0' protocol='udp' srcportstart='68' dstportstart='67'/>\n"
         "  </rule>\n"
         "  <rule action='accept' direction='out' priority='-705'>\n"
         "    <ip srcipaddr='$IP'/>\n"
         "  </rule>\n"
         // Not needed for the verdict (the last rule drops it too): it counts spoofed IPv4 apart
         // from the guest's IPv6 and other noise, which the e2e test and an operator read.
         "  <rule action='drop' direction='out' priority='-700'>\n"
         "    <mac protocolid='ipv4'/>\n"
         "  </rule>\n"
         "  <rule action='accept' direction='in' priority='-690'>\n"
         "    <mac protocolid='ipv4'/>\n"
         "  </rule>\n"
         "  <rule action='accept' direction='out' priority='-520'>\n"
         "    <arp arpsrcmacaddr='$MAC' arpsrcipaddr='$IP'/>\n"
         "  </rule>\n"
         "  <rule action='accept' direction='in' priority='-500'>\n"
         "    <mac protocolid='arp'/>\n"
         "  </rule>\n"
         "  <rule action='accept' direction='out' priority='-400'>\n"
         "    <rarp srcmacaddr='$MAC' dstmacaddr='ff:ff:ff:ff:ff:ff' opcode='Request_Reverse' "
         "arpsrcmacaddr='$MAC' arpdstmacaddr='$MAC' arpsrcipaddr='0.0.0.0' "
         "arpdstipaddr='0.0.0.0'/>\n"
         "  </rule>\n"
         "  <rule action='accept' direction='in' priority='-400'>\n"
         "    <rarp dstmacaddr='ff:ff:ff:ff:ff:ff' opcode='Request_Reverse' "
         "arpsrcmacaddr='$MAC' arpdstmacaddr='$MAC' arpsrcipaddr='0.0.0.0' "
         "arpdstipaddr='0.0.0.0'/>\n"
         "  </rule>\n"
         // No protocol element: an ebtables rule matching every frame (<all/> would be an
         // iptables rule, and libvirt would manage iptables chains for each NIC as well).
         "  <rule action='drop' direction='inout' priority='1000'/>\n"
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
