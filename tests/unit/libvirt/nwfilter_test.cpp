// bowline's traffic filter (libvirt/nwfilter.hpp): its definition, checked against libvirt's own
// nwfilter schema (virt-xml-validate) and read back for what it must say; how definitions are
// compared and given a UUID; what every NIC of a domain references; and what libvirt's test
// driver answers (no network filters at all, the default network's DHCP server).
#include "libvirt/nwfilter.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <pugixml.hpp>
#include <stdexcept>

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

TEST(security_traffic_filter, IsCleanTrafficAndDropsDhcpServerTrafficFromTheGuest) {
  const auto doc = parse(traffic_filter_xml());
  EXPECT_EQ(at(doc, "/filter/@name"), "bowline-clean-traffic");
  EXPECT_EQ(at(doc, "/filter/@chain"), "root");
  EXPECT_EQ(doc.select_nodes("/filter/filterref").size(), 1u);
  EXPECT_EQ(at(doc, "/filter/filterref/@filter"), "clean-traffic");
  EXPECT_EQ(doc.select_nodes("/filter/rule").size(), 1u);
  EXPECT_EQ(at(doc, "/filter/rule/@action"), "drop");
  EXPECT_EQ(at(doc, "/filter/rule/@direction"), "out");  // what the guest sends
  // After clean-traffic's MAC check (-800), before its accept of all IPv4 from the guest (-650).
  const int priority = std::stoi(at(doc, "/filter/rule/@priority"));
  EXPECT_GT(priority, -800);
  EXPECT_LT(priority, -650);
  EXPECT_EQ(at(doc, "/filter/rule/ip/@protocol"), "udp");
  EXPECT_EQ(at(doc, "/filter/rule/ip/@srcportstart"), "67");  // a server's answer...
  EXPECT_EQ(at(doc, "/filter/rule/ip/@dstportstart"), "68");  // ...to a client
  // Whatever the addresses: a server may answer from 0.0.0.0, which clean-traffic lets out.
  EXPECT_EQ(at(doc, "/filter/rule/ip/@srcipaddr"), "<none>");
  EXPECT_EQ(at(doc, "/filter/rule/ip/@dstipaddr"), "<none>");
  EXPECT_EQ(filter_name(traffic_filter_xml()), kTrafficFilter);
}

TEST(TrafficFilter, SameFilterIgnoresUuidAttributeOrderAndWhitespace) {
  const auto ours = traffic_filter_xml();
  EXPECT_TRUE(same_filter(ours, ours));
  // As libvirt gives it back: with a UUID, its own indentation and attribute order.
  const std::string libvirts =
      "<filter chain='root' name='bowline-clean-traffic'>\n"
      "    <uuid>da374175-46ff-4512-959e-c7895a5ebc9d</uuid>\n"
      "    <filterref filter='clean-traffic'/>\n"
      "    <rule priority='-720' direction='out' action='drop'><!-- a comment -->\n"
      "      <ip dstportstart='68' srcportstart='67' protocol='udp'/>\n"
      "    </rule>\n"
      "</filter>\n\n";
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
  EXPECT_FALSE(same_filter(ours, changed("clean-traffic'", "no-mac-spoofing'")));
  EXPECT_FALSE(same_filter(ours, changed("  </rule>\n",
                                         "  </rule>\n  <rule action='accept' "
                                         "direction='inout' priority='0'/>\n")));
  EXPECT_FALSE(same_filter(ours, changed("<filterref filter='clean-traffic'/>", "")));
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
