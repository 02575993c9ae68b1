// The mapping rules of the KubeVirt backend, one at a time.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "kubevirt/base64.hpp"
#include "kubevirt/yaml_stream.hpp"
#include "spec/loader.hpp"
#include "test_support.hpp"

namespace bowline::kubevirt::test {
namespace {

using Json = nlohmann::ordered_json;

const std::string kBase = R"(
image: https://images.example.org/debian-12.qcow2
disk: 10Gi
network: {mode: nat}
)";

const std::string kKey =
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIO0YJqpgw7lmoOfackKCKbYpE/sRiR+X2GqmHbnaDtW9 ops@bastion";

const Json& vmi(const Manifests& m) {
  return find_kind(m, "VirtualMachine")["spec"]["template"]["spec"];
}
const Json& domain(const Manifests& m) {
  return vmi(m)["domain"];
}

std::vector<std::string> kinds(const Manifests& m) {
  std::vector<std::string> out;
  for (const auto& o : m.objects) out.push_back(o["kind"].get<std::string>());
  return out;
}

std::string secret_entry(const Manifests& m, const std::string& key) {
  const auto& secret = find_kind(m, "Secret");
  if (!secret.contains("data") || !secret["data"].contains(key)) return {};
  return base64_decode(secret["data"][key].get<std::string>()).value_or("<not base64>");
}

// The problems render_manifests reports, or an empty string when it renders.
std::string render_problems(const spec::Spec& spec,
                            const RenderOptions& options = default_options()) {
  try {
    render_manifests(spec, options);
  } catch (const RenderError& e) {
    return e.what();
  }
  return {};
}

std::string load_errors(const std::string& yaml) {
  const auto vars = default_vars();
  const auto result = spec::load_spec(yaml, &vars);
  std::string text;
  for (const auto& d : result.diagnostics.items())
    if (d.severity == spec::Severity::Error) text += spec::format(d, "t") + "\n";
  return text;
}

// ---- names ---------------------------------------------------------------------------------

TEST(Names, LibvirtNamesThatKubernetesRefusesAreReportedClearly) {
  auto spec = load("name: Alice_Dev" + kBase);
  const auto problems = render_problems(spec);
  EXPECT_NE(problems.find("name: \"Alice_Dev\""), std::string::npos) << problems;
  EXPECT_NE(problems.find("uppercase"), std::string::npos) << problems;

  spec.name = "alice_dev";
  EXPECT_NE(render_problems(spec).find("'_'"), std::string::npos) << render_problems(spec);
  spec.name = "dev.example";  // a valid object name, but not a Service name
  EXPECT_NE(render_problems(spec).find("Service"), std::string::npos);
  spec.name = "1dev";
  EXPECT_NE(render_problems(spec).find("start with a letter"), std::string::npos);
  spec.name = std::string(64, 'a');
  EXPECT_NE(render_problems(spec).find("63"), std::string::npos);
  spec.name = "alice-dev";
  EXPECT_EQ(render_problems(spec), "");
}

TEST(Names, TheNamespaceMustBeALabel) {
  const auto spec = load("name: dev" + kBase);
  auto options = default_options();
  options.ns = "";
  EXPECT_NE(render_problems(spec, options).find("namespace"), std::string::npos);
  options.ns = "Tenant";
  EXPECT_NE(render_problems(spec, options).find("namespace"), std::string::npos);
}

TEST(Names, EveryObjectIsLabelledAndNamespaced) {
  const auto m = render("name: dev" + kBase + "sshKeys: [" + kKey + "]\n");
  EXPECT_EQ(kinds(m),
            (std::vector<std::string>{"DataVolume", "Secret", "VirtualMachine", "Service"}));
  for (const auto& o : m.objects) {
    EXPECT_EQ(o["metadata"]["namespace"], "tenant-test");
    EXPECT_EQ(o["metadata"]["labels"]["app.kubernetes.io/managed-by"], "bowline");
    EXPECT_EQ(o["metadata"]["labels"]["app.kubernetes.io/instance"], "dev");
  }
  const auto& vm = find_kind(m, "VirtualMachine");
  EXPECT_EQ(vm["metadata"]["name"], "dev");
  EXPECT_EQ(vm["metadata"]["annotations"]["bowline/owner"], "alice");
  // The pod is selected by managed-by and instance; whose the object is stays on the object.
  auto selecting = vm["metadata"]["labels"];
  selecting.erase("bowline/space-id");
  EXPECT_EQ(vm["spec"]["template"]["metadata"]["labels"], selecting);
  EXPECT_EQ(find_kind(m, "Secret")["metadata"]["name"], "dev-cloud-init");
  EXPECT_EQ(find_kind(m, "DataVolume")["metadata"]["name"], "dev-system");
}

// ---- sizing --------------------------------------------------------------------------------

TEST(Sizing, InstanceTypeAloneIsAMatcherAndNothingElse) {
  const auto m = render("name: dev" + kBase + "instanceType: u1.large\ninstanceProfile: ubuntu\n");
  const auto& spec = find_kind(m, "VirtualMachine")["spec"];
  EXPECT_EQ(spec["instancetype"],
            (Json{{"kind", "VirtualMachineClusterInstancetype"}, {"name", "u1.large"}}));
  EXPECT_EQ(spec["preference"],
            (Json{{"kind", "VirtualMachineClusterPreference"}, {"name", "ubuntu"}}));
  EXPECT_FALSE(domain(m).contains("cpu"));
  EXPECT_FALSE(domain(m).contains("resources"));
}

TEST(Sizing, CompleteResourcesDropTheInstanceType) {
  const auto m = render("name: dev" + kBase +
                        "instanceType: u1.large\nresources: {cpu: 3, sockets: 2, memory: 12Gi}\n");
  EXPECT_FALSE(find_kind(m, "VirtualMachine")["spec"].contains("instancetype"));
  EXPECT_EQ(domain(m)["cpu"], (Json{{"cores", 3}, {"sockets", 2}}));
  EXPECT_EQ(domain(m)["resources"]["requests"]["memory"], "12Gi");  // as written
  bool noted = false;
  for (const auto& n : m.notes) noted = noted || n.find("u1.large is dropped") != std::string::npos;
  EXPECT_TRUE(noted);
}

TEST(Sizing, KnotSizesAndTheDefaultAreCoresAndMemory) {
  auto m = render("name: dev" + kBase + "memory: 4G\ncpus: 2\n");
  EXPECT_EQ(domain(m)["cpu"], (Json{{"cores", 2}, {"sockets", 1}}));
  EXPECT_EQ(domain(m)["resources"]["requests"]["memory"], "4Gi");
  // Nothing sized: Cozystack's defaults, as the chart renders them.
  m = render("name: dev" + kBase);
  const auto vm = find_kind(m, "VirtualMachine")["spec"];
  EXPECT_EQ(vm["instancetype"]["name"], "u1.medium") << vm.dump();
  EXPECT_EQ(vm["preference"]["name"], "ubuntu") << vm.dump();
  EXPECT_FALSE(domain(m).contains("cpu"));
  EXPECT_FALSE(domain(m).contains("resources"));
}

TEST(Sizing, CpuModelGoesWithEitherSizing) {
  auto m = render("name: dev" + kBase + "instanceType: u1.medium\ncpuModel: host-passthrough\n");
  EXPECT_EQ(domain(m)["cpu"], (Json{{"model", "host-passthrough"}}));
  m = render("name: dev" + kBase +
             "cpuModel: EPYC\nresources: {cpu: 1, sockets: 1, memory: 1Gi}\n");
  EXPECT_EQ(domain(m)["cpu"], (Json{{"cores", 1}, {"sockets", 1}, {"model", "EPYC"}}));
}

// The seed's validation rules hold on the way to KubeVirt: the loader refuses these.
TEST(Sizing, TheSeedsRulesRejectBadValues) {
  const std::string type = "name: dev" + kBase + "instanceType: u1.medium\n";
  EXPECT_NE(load_errors(type + "resources: {cpu: 2}\n").find("only in part"), std::string::npos);
  EXPECT_NE(load_errors(type + "resources: {memory: 4Gi, sockets: 1}\n").find("only in part"),
            std::string::npos);
  const std::string base = "name: dev" + kBase + "resources: {sockets: 1, memory: 1Gi, cpu: ";
  for (const char* bad : {"\"500m\"", "1.5", "\"1.5\"", "0", "-2", "4294967296", "\"08\"", "2Gi"})
    EXPECT_FALSE(load_errors(base + bad + "}\n").empty()) << "cpu " << bad << " was accepted";
  EXPECT_TRUE(load_errors(base + "4294967295}\n").empty());
  EXPECT_FALSE(
      load_errors("name: dev" + kBase + "resources: {cpu: 1, sockets: 1, memory: 999k}\n").empty());
  EXPECT_TRUE(
      load_errors("name: dev" + kBase + "resources: {cpu: 1, sockets: 1, memory: 1M}\n").empty());
  EXPECT_NE(load_errors("name: dev" + kBase + "instanceType: u9.huge\n").find("unknown instance"),
            std::string::npos);
  EXPECT_NE(
      load_errors("name: dev" + kBase + "instanceProfile: ubunto\n").find("unknown preference"),
      std::string::npos);
}

// A Spec made by other means than the loader gets the same checks from the renderer.
TEST(Sizing, TheRendererChecksAHandMadeSpecToo) {
  auto spec = load("name: dev" + kBase + "instanceType: u1.medium\n");
  spec.resources.cpu = 2;
  EXPECT_NE(render_problems(spec).find("only in part"), std::string::npos);
  spec.resources = {};
  spec.instance_type = "u9.huge";
  EXPECT_NE(render_problems(spec).find("unknown instance type"), std::string::npos);
  spec.instance_type = "u1.medium";
  spec.instance_profile = "beos";
  EXPECT_NE(render_problems(spec).find("unknown preference"), std::string::npos);
}

// ---- firmware ------------------------------------------------------------------------------

TEST(Firmware, SecureBootBringsSmm) {
  auto m = render("name: dev" + kBase +
                  "firmware: {bootloader: uefi, secureBoot: true, efiPersistent: true}\n");
  EXPECT_EQ(domain(m)["firmware"]["bootloader"],
            (Json{{"efi", Json{{"secureBoot", true}, {"persistent", true}}}}));
  EXPECT_EQ(domain(m)["features"], (Json{{"smm", Json{{"enabled", true}}}}));

  m = render("name: dev" + kBase + "firmware: {bootloader: uefi}\n");
  EXPECT_EQ(domain(m)["firmware"]["bootloader"],
            (Json{{"efi", Json{{"secureBoot", false}, {"persistent", false}}}}));
  EXPECT_FALSE(domain(m).contains("features"));

  m = render("name: dev" + kBase + "firmware: {bootloader: bios}\n");
  EXPECT_EQ(domain(m)["firmware"]["bootloader"], (Json{{"bios", Json::object()}}));

  // No bootloader: the preference decides on the cluster.
  m = render("name: dev" + kBase + "instanceProfile: fedora\ninstanceType: u1.medium\n");
  EXPECT_FALSE(domain(m)["firmware"].contains("bootloader"));
  EXPECT_TRUE(domain(m)["firmware"].contains("uuid"));
}

TEST(Firmware, SecureBootWithoutUefiIsRefusedNotIgnored) {
  EXPECT_NE(load_errors("name: dev" + kBase + "firmware: {bootloader: bios, secureBoot: true}\n")
                .find("Secure Boot needs bootloader: uefi"),
            std::string::npos);
}

// ---- disks, GPUs, networks -----------------------------------------------------------------

TEST(Devices, DisksKeepTheirBusAndBootAfterTheSystemDisk) {
  auto options = default_options();
  options.data_volume_prefix = "vm-disk-";
  const auto m =
      render("name: dev" + kBase + "disks: [{name: data, bus: sata}, {name: logs}]\n", options);
  EXPECT_EQ(
      domain(m)["devices"]["disks"],
      (Json::array({Json{{"name", "system"}, {"disk", Json::object()}, {"bootOrder", 1}},
                    Json{{"name", "disk-data"}, {"disk", Json{{"bus", "sata"}}}, {"bootOrder", 2}},
                    Json{{"name", "disk-logs"}, {"disk", Json::object()}, {"bootOrder", 3}}})));
  EXPECT_EQ(vmi(m)["volumes"][1],
            (Json{{"name", "disk-data"}, {"dataVolume", Json{{"name", "vm-disk-data"}}}}));
  EXPECT_EQ(vmi(m)["volumes"][0],
            (Json{{"name", "system"}, {"dataVolume", Json{{"name", "dev-system"}}}}));
}

// Cozystack's form: no image, disks[0] boots; each disk is the DataVolume vm-disk-NAME by
// default, as Cozystack's VMDisks are named.
TEST(Devices, WithoutImageDisks0BootsFromItsVmDiskDataVolume) {
  const auto m = render("name: dev\nnetwork: {mode: nat}\ndisks: [{name: root}, {name: data}]\n",
                        default_options());
  EXPECT_EQ(domain(m)["devices"]["disks"][0],
            (Json{{"name", "disk-root"}, {"disk", Json::object()}, {"bootOrder", 1}}));
  EXPECT_EQ(vmi(m)["volumes"][0],
            (Json{{"name", "disk-root"}, {"dataVolume", Json{{"name", "vm-disk-root"}}}}));
  EXPECT_EQ(vmi(m)["volumes"][1],
            (Json{{"name", "disk-data"}, {"dataVolume", Json{{"name", "vm-disk-data"}}}}));
  for (const auto& object : m.objects) EXPECT_NE(object["kind"], "DataVolume");
}

TEST(Devices, GpusAreNumberedFromOne) {
  const auto m =
      render("name: dev" + kBase + "gpus: [{name: nvidia.com/A}, {name: nvidia.com/B}]\n");
  EXPECT_EQ(domain(m)["devices"]["gpus"],
            (Json::array({Json{{"name", "gpu1"}, {"deviceName", "nvidia.com/A"}},
                          Json{{"name", "gpu2"}, {"deviceName", "nvidia.com/B"}}})));
}

TEST(Devices, APciAddressIsNoGpuResourceName) {
  const auto spec = load("name: dev" + kBase + "gpus: [{name: pci_0000_01_00_0}]\n");
  EXPECT_NE(render_problems(spec).find("resource name"), std::string::npos);
}

TEST(Networks, PodNetworkFirstThenOneMultusNetworkEach) {
  const auto m = render("name: dev" + kBase + "networks: [{name: subnet-a}, {name: subnet-b}]\n");
  EXPECT_EQ(vmi(m)["networks"],
            (Json::array({Json{{"name", "default"}, {"pod", Json::object()}},
                          Json{{"name", "subnet-a"},
                               {"multus", Json{{"networkName", "tenant-test/subnet-a"}}}},
                          Json{{"name", "subnet-b"},
                               {"multus", Json{{"networkName", "tenant-test/subnet-b"}}}}})));
  EXPECT_EQ(domain(m)["devices"]["interfaces"],
            (Json::array({Json{{"name", "default"}, {"bridge", Json::object()}},
                          Json{{"name", "subnet-a"}, {"bridge", Json::object()}},
                          Json{{"name", "subnet-b"}, {"bridge", Json::object()}}})));
  EXPECT_EQ(find_kind(m, "VirtualMachine")["spec"]["template"]["metadata"]["annotations"]
                                          ["kubevirt.io/allow-pod-bridge-network-live-migration"],
            "true");
}

TEST(Networks, DeprecatedSubnetsServeOnlyWhenNetworksIsEmpty) {
  auto m = render("name: dev" + kBase + "subnets: [{name: old}]\n");
  EXPECT_EQ(vmi(m)["networks"][1]["name"], "old");
  m = render("name: dev" + kBase + "subnets: [{name: old}]\nnetworks: [{name: new}]\n");
  EXPECT_EQ(vmi(m)["networks"].size(), 2u);
  EXPECT_EQ(vmi(m)["networks"][1]["name"], "new");
}

TEST(Networks, MasqueradeIsAnOption) {
  auto options = default_options();
  options.pod_binding = PodBinding::Masquerade;
  const auto m = render("name: dev" + kBase, options);
  EXPECT_EQ(domain(m)["devices"]["interfaces"][0],
            (Json{{"name", "default"}, {"masquerade", Json::object()}}));
  EXPECT_FALSE(
      find_kind(m, "VirtualMachine")["spec"]["template"]["metadata"].contains("annotations"));
}

TEST(Networks, AnAttachmentCalledDefaultWouldShadowThePodNetwork) {
  const auto spec = load("name: dev" + kBase + "networks: [{name: default}]\n");
  EXPECT_NE(render_problems(spec).find("pod network"), std::string::npos);
}

// ---- cloud-init ----------------------------------------------------------------------------

TEST(CloudInit, NoneOfTheTriggersMeansNoDiskAndNoSecret) {
  const auto m = render("name: dev" + kBase + "environment: [EDITOR=vim]\n");
  EXPECT_FALSE(has_kind(m, "Secret"));
  for (const auto& d : domain(m)["devices"]["disks"]) EXPECT_NE(d["name"], "cloudinitdisk");
  for (const auto& v : vmi(m)["volumes"]) EXPECT_FALSE(v.contains("cloudInitNoCloud"));
  ASSERT_FALSE(m.notes.empty());
  EXPECT_NE(m.notes.back().find("no cloud-init disk"), std::string::npos);
}

TEST(CloudInit, SshKeysAloneGiveExactlyTheKeysOnlyUserData) {
  const auto m = render("name: dev" + kBase + "sshKeys: [" + kKey + "]\n");
  EXPECT_EQ(secret_entry(m, "userdata"),
            "#cloud-config\nssh_authorized_keys:\n  - \"" + kKey + "\"\n");
  EXPECT_EQ(secret_entry(m, "networkdata"), "");
  const auto& volume = vmi(m)["volumes"].back();
  EXPECT_EQ(volume,
            (Json{{"name", "cloudinitdisk"},
                  {"cloudInitNoCloud", Json{{"secretRef", Json{{"name", "dev-cloud-init"}}}}}}));
  EXPECT_EQ(domain(m)["devices"]["disks"].back(),
            (Json{{"name", "cloudinitdisk"}, {"disk", Json::object()}}));
}

TEST(CloudInit, ACloudInitIsCombinedWithTheOwnersUserData) {
  const auto m = render("name: dev" + kBase + "sshKeys: [" + kKey +
                        "]\ncloudInit: |\n  #!/bin/sh\n  echo hi > /tmp/hi\n");
  const auto user_data = secret_entry(m, "userdata");
  EXPECT_TRUE(user_data.starts_with("Content-Type: multipart/mixed")) << user_data;
  EXPECT_NE(user_data.find("echo hi > /tmp/hi"), std::string::npos);
  EXPECT_NE(user_data.find("alice"), std::string::npos);  // the owner's account
  EXPECT_NE(user_data.find(kKey), std::string::npos);     // the spec's key for the owner
  EXPECT_NE(user_data.find("$6$"), std::string::npos);    // the password, hashed
  EXPECT_EQ(user_data.find("correct horse"), std::string::npos);
}

// A space of the server (a knot template: no cloudInit, sshKeys or netplanDhcp) still gets
// bowline's cloud-init, as on libvirt: the owner's account with their keys and password, the
// environment, the host key bowline made and the terminal's key.
TEST(CloudInit, kubevirt_AServersSpaceAlwaysGetsBowlinesUserData) {
  auto options = default_options();
  options.always_cloud_init = true;
  options.terminal_key_public = kKey;
  const auto m = render("name: dev" + kBase + "environment: [EDITOR=vim]\n", options);
  ASSERT_TRUE(has_kind(m, "Secret"));
  const auto user_data = secret_entry(m, "userdata");
  EXPECT_NE(user_data.find("alice"), std::string::npos) << user_data;
  EXPECT_NE(user_data.find("$6$"), std::string::npos);
  EXPECT_NE(user_data.find("EDITOR"), std::string::npos);
  EXPECT_EQ(vmi(m)["volumes"].back()["name"], "cloudinitdisk");
  for (const auto& note : m.notes) EXPECT_EQ(note.find("no cloud-init disk"), std::string::npos);
  // sshKeys alone: the owner's full user-data (keys for the owner), not the keys-only form.
  const auto keys = render("name: dev" + kBase + "sshKeys: [" + kKey + "]\n", options);
  EXPECT_NE(secret_entry(keys, "userdata").find("alice"), std::string::npos);
}

TEST(CloudInit, NetplanDhcpAddsNetworkData) {
  const auto m = render("name: dev" + kBase + "netplanDhcp: true\n");
  const auto network = YAML::Load(secret_entry(m, "networkdata"));
  EXPECT_EQ(network["version"].as<int>(), 2);
  for (const char* id : {"all-en", "all-eth"}) {
    const auto entry = network["ethernets"][id];
    EXPECT_TRUE(entry["dhcp4"].as<bool>()) << id;
    EXPECT_TRUE(entry["dhcp4-overrides"]["use-domains"].as<bool>()) << id;
  }
  EXPECT_EQ(network["ethernets"]["all-en"]["match"]["name"].as<std::string>(), "en*");
  EXPECT_EQ(network["ethernets"]["all-eth"]["match"]["name"].as<std::string>(), "eth*");
  EXPECT_EQ(vmi(m)["volumes"].back()["cloudInitNoCloud"]["networkDataSecretRef"]["name"],
            "dev-cloud-init");
  EXPECT_TRUE(secret_entry(m, "userdata").starts_with("#cloud-config\n"));
}

TEST(CloudInit, BowlinesUserDataNeedsTheOwner) {
  const auto spec = load("name: dev" + kBase + "netplanDhcp: true\n");
  auto options = default_options();
  options.owner = {};
  EXPECT_NE(render_problems(spec, options).find("owner's username"), std::string::npos);
}

TEST(CloudInit, HostileValuesStayData) {
  auto vars = default_vars();
  auto options = default_options();
  options.owner.username = "al\"ice: {x}\n- y";
  const auto spec =
      load("name: dev" + kBase +
               "environment: [\"X=a'b\\\"c\\n- d: e\"]\ncloudInit: |\n  #cloud-config\n"
               "  runcmd: [\"echo '}{'\"]\n",
           vars);
  const auto m = render_manifests(spec, options);
  const auto user_data = secret_entry(m, "userdata");
  // Our part of the message still reads as one mapping with the username intact.
  const auto start = user_data.find("#cloud-config");
  const auto end = user_data.find("\n--bowline-", start);
  const auto ours = YAML::Load(user_data.substr(start, end - start));
  EXPECT_EQ(ours["users"][0]["name"].as<std::string>(), options.owner.username);
}

// ---- Service -------------------------------------------------------------------------------

TEST(Service, InternalIsHeadlessWithTheVmAsSubdomain) {
  const auto m = render("name: dev" + kBase);
  const auto& svc = find_kind(m, "Service");
  EXPECT_EQ(svc["spec"]["type"], "ClusterIP");
  EXPECT_EQ(svc["spec"]["clusterIP"], "None");
  EXPECT_FALSE(svc["spec"].contains("ports"));
  EXPECT_EQ(svc["spec"]["selector"],
            find_kind(m, "VirtualMachine")["spec"]["template"]["metadata"]["labels"]);
  EXPECT_EQ(vmi(m)["subdomain"], "dev");
  EXPECT_EQ(vmi(m)["hostname"], "dev");
}

TEST(Service, PortListPublishesEachPortAndCarriesTheIcmpChoice) {
  auto m = render("name: dev" + kBase + "external: true\nexternalPorts: [22, 8080]\n");
  auto svc = find_kind(m, "Service");
  EXPECT_EQ(svc["spec"]["type"], "LoadBalancer");
  EXPECT_EQ(svc["spec"]["externalTrafficPolicy"], "Local");
  EXPECT_EQ(
      svc["spec"]["ports"][1],
      (Json{{"name", "port-8080"}, {"protocol", "TCP"}, {"port", 8080}, {"targetPort", 8080}}));
  EXPECT_EQ(svc["metadata"]["annotations"], (Json{{"networking.cozystack.io/wholeIP", "false"},
                                                  {"networking.cozystack.io/allowICMP", "true"}}));
  EXPECT_FALSE(vmi(m).contains("subdomain"));
  m = render("name: dev" + kBase + "external: true\nexternalAllowICMP: false\n");
  EXPECT_EQ(find_kind(m, "Service")["metadata"]["annotations"]["networking.cozystack.io/allowICMP"],
            "false");
}

TEST(Service, WholeIpHandsTheAddressToCozyProxy) {
  const auto m = render("name: dev" + kBase +
                        "external: true\nexternalMethod: WholeIP\nexternalAllowICMP: false\n");
  const auto& svc = find_kind(m, "Service");
  EXPECT_EQ(svc["metadata"]["annotations"], (Json{{"networking.cozystack.io/wholeIP", "true"}}));
  EXPECT_EQ(svc["metadata"]["labels"]["service.kubernetes.io/service-proxy-name"], "cozy-proxy");
  EXPECT_EQ(svc["spec"]["ports"].size(), 1u);
}

TEST(Service, APortListWithNoPortsIsRefused) {
  const auto spec = load("name: dev" + kBase + "external: true\nexternalPorts: []\n");
  EXPECT_NE(render_problems(spec).find("externalPorts"), std::string::npos);
}

// ---- DataVolume ----------------------------------------------------------------------------

TEST(DataVolume, AUrlIsImportedAtTheDiskSize) {
  const auto m = render("name: dev" + kBase);
  const auto& dv = find_kind(m, "DataVolume");
  EXPECT_EQ(dv["spec"]["source"],
            (Json{{"http", Json{{"url", "https://images.example.org/debian-12.qcow2"}}}}));
  EXPECT_EQ(dv["spec"]["storage"]["resources"]["requests"]["storage"], "10Gi");
  EXPECT_EQ(dv["metadata"]["annotations"]["cdi.kubevirt.io/storage.deleteAfterCompletion"],
            "false");
}

TEST(DataVolume, ALibraryImageIsClonedAndAPathIsRefused) {
  auto options = default_options();
  options.image_namespace = "golden";
  options.storage_class = "fast";
  auto m = render("name: dev\nimage: debian-12\nnetwork: {mode: nat}\n", options);
  const auto& dv = find_kind(m, "DataVolume");
  EXPECT_EQ(dv["spec"]["source"],
            (Json{{"pvc", Json{{"namespace", "golden"}, {"name", "debian-12"}}}}));
  EXPECT_EQ(dv["spec"]["storage"], (Json{{"storageClassName", "fast"}}));

  const auto spec = load("name: dev\nimage: /var/lib/images/x.qcow2\nnetwork: {mode: nat}\n");
  EXPECT_NE(render_problems(spec).find("path on a libvirt host"), std::string::npos);
}

TEST(DataVolume, AUrlWithoutADiskSizeGetsTheDefaultAndANote) {
  const auto m = render("name: dev\nimage: https://x.example/a.qcow2\nnetwork: {mode: nat}\n");
  EXPECT_EQ(find_kind(m, "DataVolume")["spec"]["storage"]["resources"]["requests"]["storage"],
            "10Gi");
  bool noted = false;
  for (const auto& n : m.notes) noted = noted || n.find("disk: not set") != std::string::npos;
  EXPECT_TRUE(noted);
}

// ---- YAML ----------------------------------------------------------------------------------

TEST(Yaml, StringsThatLookLikeOtherTypesAreQuoted) {
  const Json value = {{"a", "yes"},        {"b", "0123"}, {"c", "x: y"}, {"d", "two\nlines"},
                      {"e", ""},           {"f", "null"}, {"g", "1e3"},  {"h", "- item"},
                      {"i", "#hash"},      {"j", "on"},   {"k", "4Gi"},  {"l", " padded "},
                      {"m", "plain-text"}, {"n", 7},      {"o", true},   {"yes", "key"}};
  const auto text = to_yaml(value);
  const auto node = YAML::Load(text);
  for (const auto& [key, item] : value.items()) {
    if (!item.is_string()) continue;
    EXPECT_EQ(node[key].as<std::string>(), item.get<std::string>()) << key;
    if (key != "m" && key != "yes") {
      EXPECT_EQ(node[key].Tag(), "!") << key << " is not quoted in\n" << text;
    }
  }
  // Keys too: `yes` and `n` would read as booleans in YAML 1.1.
  EXPECT_NE(text.find("\"yes\": key"), std::string::npos) << text;
  EXPECT_NE(text.find("\"n\": 7"), std::string::npos) << text;
  EXPECT_EQ(node["m"].Tag(), "?");
  EXPECT_EQ(node["n"].as<int>(), 7);
  EXPECT_TRUE(node["o"].as<bool>());
}

TEST(Yaml, AStreamIsDocumentsSeparatedByDashes) {
  const auto text = to_yaml_stream({Json{{"kind", "A"}}, Json{{"kind", "B"}}});
  EXPECT_EQ(text, "---\nkind: A\n---\nkind: B\n");
  EXPECT_EQ(to_yaml(Json{{"disk", Json::object()}, {"ports", Json::array()}}),
            "disk: {}\nports: []\n");
}

}  // namespace
}  // namespace bowline::kubevirt::test
