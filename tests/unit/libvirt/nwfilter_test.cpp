// bowline's traffic filter (libvirt/nwfilter.hpp): its definition, checked against libvirt's own
// nwfilter schema (virt-xml-validate) and read back for what it must say; how definitions are
// compared and given a UUID; what every NIC of a domain references; and what libvirt's test
// driver answers (no network filters at all, the default network's DHCP server).
#include "libvirt/nwfilter.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <pugixml.hpp>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "libvirt/domain_xml.hpp"
#include "libvirt/libvirt_hypervisor.hpp"

namespace bowline::libvirt {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// `virt-xml-validate FILE nwfilter`: its exit status and output.
std::pair<int, std::string> validate_filter(const std::string& xml) {
  std::string path = (fs::temp_directory_path() / "bowline-nwfilter-XXXXXX").string();
  const int fd = mkstemp(path.data());
  if (fd < 0) throw std::runtime_error("mkstemp failed");
  close(fd);
  std::ofstream(path, std::ios::binary) << xml;
  std::string output;
  int status = -1;
  if (FILE* pipe = popen(("virt-xml-validate '" + path + "' nwfilter 2>&1").c_str(), "r")) {
    char buffer[4096];
    while (std::size_t n = fread(buffer, 1, sizeof buffer, pipe)) output.append(buffer, n);
    const int raw = pclose(pipe);
    status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  }
  fs::remove(path);
  return {status, output};
}

pugi::xml_document parse(const std::string& xml) {
  pugi::xml_document doc;
  EXPECT_TRUE(doc.load_string(xml.c_str())) << xml;
  return doc;
}

std::string at(const pugi::xml_node& node, const char* xpath) {
  const auto found = node.select_node(xpath);
  if (!found) return "<none>";
  return found.attribute() ? found.attribute().value() : found.node().text().get();
}

TEST(security_traffic_filter, IsValidForLibvirt) {
  const auto [status, output] = validate_filter(traffic_filter_xml());
  EXPECT_EQ(status, 0) << output << "\n" << traffic_filter_xml();
}

// The filter's rules in the order libvirt applies them (priority, then document order).
std::vector<pugi::xml_node> rules_in_order(const pugi::xml_document& doc) {
  std::vector<pugi::xml_node> rules;
  for (const auto r : doc.select_nodes("/filter/rule")) rules.push_back(r.node());
  std::stable_sort(rules.begin(), rules.end(), [](pugi::xml_node a, pugi::xml_node b) {
    return a.attribute("priority").as_int() < b.attribute("priority").as_int();
  });
  return rules;
}

// "drop out ip", "accept in mac", "drop inout -" for the last rule, ...
std::string describe(pugi::xml_node rule) {
  const auto match = rule.first_child();
  return std::string(rule.attribute("action").value()) + " " + rule.attribute("direction").value() +
         " " + (match ? match.name() : "-");
}

TEST(security_traffic_filter, SaysWhatCleanTrafficSaysInOneChainAndDropsDhcpServers) {
  const auto doc = parse(traffic_filter_xml());
  EXPECT_EQ(at(doc, "/filter/@name"), "bowline-clean-traffic");
  EXPECT_EQ(at(doc, "/filter/@chain"), "root");
  EXPECT_EQ(filter_name(traffic_filter_xml()), kTrafficFilter);
  // Self-contained: no sub-chains to make at each start, nothing else to install.
  EXPECT_EQ(doc.select_nodes("//filterref").size(), 0u);
  const auto rules = rules_in_order(doc);
  ASSERT_GE(rules.size(), 3u);
  // The MAC first, for everything the guest sends.
  EXPECT_EQ(describe(rules[0]), "drop out mac");
  EXPECT_EQ(std::string(rules[0].child("mac").attribute("match").value()), "no");
  EXPECT_EQ(std::string(rules[0].child("mac").attribute("srcmacaddr").value()), "$MAC");
  // Everything no rule accepted is dropped, both ways: an ebtables rule with no match (an <all/>
  // would make it an iptables rule).
  EXPECT_EQ(describe(rules.back()), "drop inout -");
  bool dhcp_dropped = false;
  for (const auto rule : rules) {
    const std::string action = rule.attribute("action").value();
    const std::string direction = rule.attribute("direction").value();
    const auto match = rule.first_child();
    const std::string layer = match ? match.name() : "";
    // Only layer-2 matches: ebtables alone, no iptables chains per NIC.
    EXPECT_TRUE(layer.empty() || layer == "mac" || layer == "ip" || layer == "arp" ||
                layer == "rarp")
        << layer;
    if (layer == "ip" && action == "drop" && direction == "out" &&
        std::string(match.attribute("srcportstart").value()) == "67") {
      // A server's answer to a client, whatever its addresses (a server may answer from
      // 0.0.0.0, which a DHCP client's requests need let out).
      EXPECT_EQ(std::string(match.attribute("protocol").value()), "udp");
      EXPECT_EQ(std::string(match.attribute("dstportstart").value()), "68");
      EXPECT_EQ(std::string(match.attribute("srcipaddr").value()), "");
      dhcp_dropped = true;
    }
    if (action != "accept" || direction == "in") continue;
    // What the guest may send: each accept is pinned to its own address or is DHCP's request.
    ASSERT_TRUE(direction == "out") << describe(rule);
    if (layer == "ip") {
      EXPECT_TRUE(dhcp_dropped) << "IPv4 accepted before DHCP servers are dropped";
      const std::string source = match.attribute("srcipaddr").value();
      if (source == "0.0.0.0") {
        EXPECT_EQ(std::string(match.attribute("srcportstart").value()), "68");
        EXPECT_EQ(std::string(match.attribute("dstportstart").value()), "67");
      } else {
        EXPECT_EQ(source, "$IP");
      }
    } else if (layer == "arp") {
      EXPECT_EQ(std::string(match.attribute("arpsrcmacaddr").value()), "$MAC");
      EXPECT_EQ(std::string(match.attribute("arpsrcipaddr").value()), "$IP");
    } else if (layer == "rarp") {
      // QEMU's announcement after a restore: from the NIC's MAC, about it, no addresses.
      EXPECT_EQ(std::string(match.attribute("srcmacaddr").value()), "$MAC");
      EXPECT_EQ(std::string(match.attribute("arpsrcmacaddr").value()), "$MAC");
      EXPECT_EQ(std::string(match.attribute("arpsrcipaddr").value()), "0.0.0.0");
    } else {
      ADD_FAILURE() << "the guest may send " << describe(rule);
    }
  }
  EXPECT_TRUE(dhcp_dropped);
}

TEST(TrafficFilter, SameFilterIgnoresUuidAttributeOrderAndWhitespace) {
  const auto ours = traffic_filter_xml();
  EXPECT_TRUE(same_filter(ours, ours));
  // As libvirt gives it back: with a UUID, its own indentation and attribute order.
  pugi::xml_document doc;
  ASSERT_TRUE(doc.load_string(ours.c_str()));
  auto filter = doc.document_element();
  filter.prepend_child("uuid").text().set("da374175-46ff-4512-959e-c7895a5ebc9d");
  filter.prepend_child(pugi::node_comment).set_value(" a comment ");
  for (auto rule : filter.children("rule")) {  // attributes in reverse order
    std::vector<std::pair<std::string, std::string>> attributes;
    for (const auto a : rule.attributes()) attributes.emplace_back(a.name(), a.value());
    while (rule.first_attribute()) rule.remove_attribute(rule.first_attribute());
    for (auto it = attributes.rbegin(); it != attributes.rend(); ++it)
      rule.append_attribute(it->first.c_str()).set_value(it->second.c_str());
  }
  std::ostringstream out;
  doc.save(out, "    ", pugi::format_indent | pugi::format_no_declaration);
  const auto libvirts = out.str() + "\n\n";
  EXPECT_NE(libvirts, ours);
  EXPECT_TRUE(same_filter(ours, libvirts));
  EXPECT_TRUE(same_filter(libvirts, ours));
}

TEST(TrafficFilter, SameFilterSeesEveryChange) {
  const auto ours = traffic_filter_xml();
  const auto changed = [&](const std::string& from, const std::string& to) {
    auto copy = ours;
    const auto at = copy.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return copy.replace(at, from.size(), to);
  };
  EXPECT_FALSE(same_filter(ours, changed("-720", "-600")));
  EXPECT_FALSE(same_filter(ours, changed("'67'", "'1067'")));
  EXPECT_FALSE(same_filter(ours, changed("drop", "accept")));
  EXPECT_FALSE(same_filter(ours, changed("$IP", "0.0.0.0")));
  EXPECT_FALSE(same_filter(ours, changed("  </rule>\n",
                                         "  </rule>\n  <rule action='accept' "
                                         "direction='inout' priority='0'/>\n")));
  EXPECT_FALSE(same_filter(ours, changed("<mac match='no' srcmacaddr='$MAC'/>", "")));
  EXPECT_FALSE(same_filter(ours, "not xml"));
  EXPECT_FALSE(same_filter("<network/>", "<network/>"));
}

TEST(TrafficFilter, KeepsTheUuidOfTheFilterItReplaces) {
  const std::string uuid = "da374175-46ff-4512-959e-c7895a5ebc9d";
  const auto with = filter_with_uuid(traffic_filter_xml(), uuid);
  const auto doc = parse(with);
  EXPECT_EQ(at(doc, "/filter/uuid"), uuid);
  EXPECT_EQ(doc.select_nodes("/filter/uuid").size(), 1u);
  EXPECT_TRUE(same_filter(with, traffic_filter_xml()));
  // A UUID already there is replaced, not doubled.
  const auto again = parse(filter_with_uuid(with, "0f0e0d0c-0b0a-4908-9706-050403020100"));
  EXPECT_EQ(again.select_nodes("/filter/uuid").size(), 1u);
  EXPECT_EQ(at(again, "/filter/uuid"), "0f0e0d0c-0b0a-4908-9706-050403020100");
  EXPECT_EQ(filter_with_uuid(traffic_filter_xml(), ""), traffic_filter_xml());
  EXPECT_THROW(filter_with_uuid("<domain/>", uuid), std::invalid_argument);
  EXPECT_EQ(filter_name("<domain name='x'/>"), "");
}

// --- what the NICs reference ---------------------------------------------------------------

plan::Plan plan_with(std::vector<plan::Nic> nics) {
  plan::Plan p;
  p.domain_name = "alice-dev";
  p.uuid = "0f0e0d0c-0b0a-4908-9706-050403020100";
  p.domain_type = plan::DomainType::Qemu;
  p.memory_bytes = 256ull << 20;
  p.space_dir = "/var/lib/bowline/alice-dev";
  p.system_disk = {p.space_dir + "/disk.qcow2", "virtio", "vda"};
  p.seed_iso = p.space_dir + "/seed.iso";
  p.console_log = p.space_dir + "/console.log";
  p.nics = std::move(nics);
  return p;
}

std::vector<std::string> parameters(const pugi::xml_node& interface) {
  std::vector<std::string> out;
  for (const auto& p : interface.select_nodes("filterref/parameter"))
    out.push_back(std::string(p.node().attribute("name").value()) + "=" +
                  p.node().attribute("value").value());
  return out;
}

TEST(security_traffic_filter, ABridgedNicMaySendFromItsAddressOnly) {
  const auto doc = parse(render_domain_xml(plan_with({{plan::NicType::Bridge,
                                                       "br0",
                                                       "52:54:00:12:34:56",
                                                       "virtio",
                                                       spec::Ipv4Address::parse("198.51.100.10"),
                                                       {}}})));
  const auto nic = doc.select_node("//interface[@type='bridge']").node();
  EXPECT_EQ(at(nic, "filterref/@filter"), "bowline-clean-traffic");
  EXPECT_THAT(parameters(nic), ElementsAre("IP=198.51.100.10"));
}

TEST(security_traffic_filter, ANicOnALibvirtNetworkMaySendFromItsLeaseOnly) {
  const auto doc = parse(render_domain_xml(plan_with(
      {{plan::NicType::Network,
        "default",
        "52:54:00:12:34:56",
        "virtio",
        std::nullopt,
        {*spec::Ipv4Address::parse("192.168.122.1")}},
       {plan::NicType::Network, "storage", "52:54:00:12:34:57", "virtio", std::nullopt, {}}})));
  const auto nat = doc.select_node("//interface[source/@network='default']").node();
  EXPECT_EQ(at(nat, "filterref/@filter"), "bowline-clean-traffic");
  EXPECT_THAT(parameters(nat), ElementsAre("CTRL_IP_LEARNING=dhcp", "DHCPSERVER=192.168.122.1"));
  // An extra NIC on a network whose DHCP server the node did not name still learns from DHCP.
  const auto extra = doc.select_node("//interface[source/@network='storage']").node();
  EXPECT_EQ(at(extra, "filterref/@filter"), "bowline-clean-traffic");
  EXPECT_THAT(parameters(extra), ElementsAre("CTRL_IP_LEARNING=dhcp"));
}

// --- libvirt's answers ---------------------------------------------------------------------

TEST(TrafficFilter, ANetworksDhcpServersAreItsIpv4AddressesWithDhcp) {
  EXPECT_THAT(parse_dhcp_servers(R"(<network><name>lab</name>
      <ip address='198.51.100.1' prefix='28'><dhcp><range start='198.51.100.2' end='198.51.100.6'/></dhcp></ip>
      <ip address='198.51.100.33' prefix='28'/>
      <ip family='ipv4' address='198.51.100.49' netmask='255.255.255.240'><dhcp/></ip>
      <ip family='ipv6' address='2001:db8::1' prefix='64'><dhcp/></ip>
    </network>)"),
              ElementsAre("198.51.100.1", "198.51.100.49"));
  EXPECT_TRUE(parse_dhcp_servers("<network><name>bridged</name></network>").empty());
  EXPECT_TRUE(parse_dhcp_servers("not xml").empty());
}

// dnsmasq keys leases by the client id a guest sends unless told dhcp-ignore-clid: a network
// without it lets one guest hold many leases (bowline node check says so).
TEST(security_one_lease_per_mac, ANetworkSaysWhetherItsDnsmasqIgnoresClientIds) {
  EXPECT_TRUE(parse_one_lease_per_mac(
      R"(<network xmlns:dnsmasq='http://libvirt.org/schemas/network/dnsmasq/1.0'>
      <name>lab</name><ip address='198.51.100.1' prefix='28'><dhcp/></ip>
      <dnsmasq:options><dnsmasq:option value='log-dhcp'/><dnsmasq:option value='dhcp-ignore-clid'/></dnsmasq:options>
    </network>)"));
  EXPECT_FALSE(parse_one_lease_per_mac(
      R"(<network xmlns:dnsmasq='http://libvirt.org/schemas/network/dnsmasq/1.0'>
      <name>lab</name><dnsmasq:options><dnsmasq:option value='log-dhcp'/></dnsmasq:options>
    </network>)"));
  EXPECT_FALSE(parse_one_lease_per_mac("<network><name>default</name></network>"));
  EXPECT_FALSE(parse_one_lease_per_mac("not xml"));
}

TEST(TrafficFilter, TheTestDriverHasNoNetworkFiltersAndItsDefaultNetworkADhcpServer) {
  LibvirtHypervisor test({.uri = "test:///default"});
  try {
    test.nwfilter_xml("clean-traffic");
    ADD_FAILURE() << "the test driver answered a filter lookup";
  } catch (const HypervisorError& e) {
    EXPECT_TRUE(e.is_unsupported()) << e.what();
    EXPECT_THAT(e.what(), HasSubstr("network filter \"clean-traffic\""));
  }
  try {
    test.ensure_nwfilter(kTrafficFilter, traffic_filter_xml());
    ADD_FAILURE() << "the test driver defined a filter";
  } catch (const HypervisorError& e) {
    EXPECT_TRUE(e.is_unsupported()) << e.what();
  }
  EXPECT_THROW(test.ensure_nwfilter("other-name", traffic_filter_xml()), std::invalid_argument);
  const auto network = test.lookup_network("default");
  ASSERT_TRUE(network);
  EXPECT_THAT(network->dhcp_servers, ElementsAre("192.168.122.1"));
}

}  // namespace
}  // namespace bowline::libvirt
