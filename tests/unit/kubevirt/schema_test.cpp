// Every rendered VirtualMachine against KubeVirt's schema (as-is and with unknown fields
// forbidden) and our own rules, through validate_vm.py and python3-jsonschema; the
// validator itself is shown to reject broken manifests.
#include <gtest/gtest.h>

#include <functional>

#include "test_support.hpp"

namespace bowline::kubevirt::test {
namespace {

using Json = nlohmann::ordered_json;

// The upstream schema, copied into the repository (../shared is not part of it).
std::string schema_path() {
  return source_path("tests/data/kubevirt/virtualmachine.schema.json");
}

// One python3 run for many manifests: problems come back as "FILE: problem" lines, and the
// result maps each manifest to its problems (empty: valid).
std::vector<std::string> validate_all(const std::vector<Json>& manifests, const std::string& kind) {
  TempDir dir;
  std::vector<std::string> argv = {"python3", source_path("tests/unit/kubevirt/validate_vm.py"),
                                   schema_path(), kind};
  for (std::size_t i = 0; i < manifests.size(); ++i) {
    argv.push_back(dir.file(std::to_string(i) + ".json"));
    write_file(argv.back(), manifests[i].dump(2));
  }
  const auto result = run(argv);
  std::vector<std::string> problems(manifests.size());
  std::size_t start = 0;
  while (start < result.out.size()) {
    const auto end = result.out.find('\n', start);
    const auto line = result.out.substr(start, end - start);
    start = end == std::string::npos ? result.out.size() : end + 1;
    for (std::size_t i = 0; i < manifests.size(); ++i) {
      const auto prefix = argv[4 + i] + ": ";
      if (line.starts_with(prefix)) problems[i] += line.substr(prefix.size()) + "\n";
    }
  }
  // A crash of the script itself must not pass for "no problems".
  EXPECT_TRUE(result.exit_code == 0 || result.exit_code == 1) << result.err;
  if (result.exit_code == 1) {
    bool any = false;
    for (const auto& p : problems) any = any || !p.empty();
    EXPECT_TRUE(any) << "exit 1 without problems:\n" << result.out << result.err;
  }
  return problems;
}

void expect_valid(const std::vector<Manifests>& renders) {
  for (const char* kind : {"VirtualMachine", "DataVolume"}) {
    std::vector<Json> objects;
    for (const auto& m : renders)
      for (const auto& o : m.objects)
        if (o["kind"] == kind) objects.push_back(o);
    ASSERT_EQ(objects.size(), renders.size()) << kind;
    const auto problems =
        validate_all(objects, std::string(kind) == "VirtualMachine" ? "vm" : "datavolume");
    for (std::size_t i = 0; i < objects.size(); ++i)
      EXPECT_EQ(problems[i], "") << kind << " " << objects[i]["metadata"]["name"];
  }
}

const char* kTemplates[] = {
    "examples/bridged.yaml",
    "tests/unit/kubevirt/golden/cozystack-full.template.yaml",
    "tests/unit/kubevirt/golden/sizing-instancetype.template.yaml",
    "tests/unit/kubevirt/golden/sizing-resources-override.template.yaml",
    "tests/unit/kubevirt/golden/sizing-resources-only.template.yaml",
    "tests/unit/kubevirt/golden/external-wholeip.template.yaml",
    "tests/unit/kubevirt/golden/no-cloud-init.template.yaml",
    "tests/unit/kubevirt/golden/keys-only.template.yaml",
};

TEST(Schema, EveryGoldenTemplateRendersValidManifests) {
  std::vector<Manifests> renders;
  for (const char* path : kTemplates) renders.push_back(render(read_file(source_path(path))));
  expect_valid(renders);
}

TEST(Schema, OtherShapesAreValidToo) {
  // Masquerade on the pod network, a library image, a preference without a type, knot sizing,
  // netplanDhcp alone, deprecated subnets, every bus.
  auto options = default_options();
  options.pod_binding = PodBinding::Masquerade;
  options.storage_class = "replicated";
  options.data_volume_prefix = "vm-disk-";
  const auto m = render(R"(
name: shapes
image: debian-12
memory: 2G
cpus: 3
network: {mode: nat}
instanceProfile: fedora
firmware: {bootloader: uefi}
disks: [{name: a, bus: virtio}, {name: b, bus: sata}, {name: c, bus: scsi}, {name: d, bus: usb}]
subnets: [{name: legacy-net}]
netplanDhcp: true
runStrategy: Manual
)",
                        options);
  expect_valid({m});
}

// The validator is not a rubber stamp: each of these edits of a valid VM must fail.
TEST(Schema, TheValidatorRejectsBrokenManifests) {
  const auto good = find_kind(
      render(read_file(source_path("tests/unit/kubevirt/golden/cozystack-full.template.yaml"))),
      "VirtualMachine");

  struct Breakage {
    const char* what;
    std::function<void(Json&)> edit;
  };
  auto vmi = [](Json& vm) -> Json& { return vm["spec"]["template"]["spec"]; };
  const std::vector<Breakage> breakages = {
      {"unknown field", [&](Json& vm) { vmi(vm)["domain"]["cpuu"] = Json::object(); }},
      {"cores above uint32", [&](Json& vm) { vmi(vm)["domain"]["cpu"]["cores"] = 4294967296ull; }},
      {"negative sockets", [&](Json& vm) { vmi(vm)["domain"]["cpu"]["sockets"] = -1; }},
      {"cores as a string", [&](Json& vm) { vmi(vm)["domain"]["cpu"]["cores"] = "2"; }},
      {"run strategy", [](Json& vm) { vm["spec"]["runStrategy"] = "Sometimes"; }},
      {"both bootloaders",
       [&](Json& vm) { vmi(vm)["domain"]["firmware"]["bootloader"]["bios"] = Json::object(); }},
      {"secure boot without SMM", [&](Json& vm) { vmi(vm)["domain"].erase("features"); }},
      {"disk without volume", [&](Json& vm) { vmi(vm)["volumes"].erase(1); }},
      {"null disk target",
       [&](Json& vm) { vmi(vm)["domain"]["devices"]["disks"][0]["disk"] = nullptr; }},
      {"bad bus",
       [&](Json& vm) { vmi(vm)["domain"]["devices"]["disks"][1]["disk"]["bus"] = "ide"; }},
      {"repeated boot order",
       [&](Json& vm) { vmi(vm)["domain"]["devices"]["disks"][1]["bootOrder"] = 1; }},
      {"interface without network", [&](Json& vm) { vmi(vm)["networks"].erase(2); }},
      {"gpu without device",
       [&](Json& vm) { vmi(vm)["domain"]["devices"]["gpus"][0].erase("deviceName"); }},
      {"instancetype with cores", [&](Json& vm) { vmi(vm)["domain"]["cpu"]["cores"] = 2; }},
      {"instancetype kind", [](Json& vm) { vm["spec"]["instancetype"]["kind"] = "Instancetype"; }},
      {"uppercase name", [](Json& vm) { vm["metadata"]["name"] = "Alice_Dev"; }},
      {"bad uuid", [&](Json& vm) { vmi(vm)["domain"]["firmware"]["uuid"] = "not-a-uuid"; }},
      {"missing template", [](Json& vm) { vm["spec"].erase("template"); }},
  };
  std::vector<Json> manifests = {good};
  for (const auto& b : breakages) {
    manifests.push_back(good);
    b.edit(manifests.back());
  }
  const auto problems = validate_all(manifests, "vm");
  EXPECT_EQ(problems[0], "") << "the unbroken VM";
  for (std::size_t i = 0; i < breakages.size(); ++i)
    EXPECT_NE(problems[i + 1], "") << breakages[i].what << " passed validation";
}

TEST(Schema, TheDataVolumeCheckRejectsBrokenOnes) {
  const auto dv = find_kind(render(read_file(source_path("examples/bridged.yaml"))), "DataVolume");
  auto misspelt = dv;
  misspelt["spec"]["storage"]["size"] = "10Gi";
  auto two_sources = dv;
  two_sources["spec"]["source"]["http"] = Json{{"url", "https://x.example/a.qcow2"}};
  const auto problems = validate_all({dv, misspelt, two_sources}, "datavolume");
  EXPECT_EQ(problems[0], "");
  EXPECT_NE(problems[1], "");
  EXPECT_NE(problems[2], "");
}

// cloudInitSeed's UUID recomputed by Python's hashlib, apart from plan::uuid_from_seed.
std::string python_uuid(const std::string& input) {
  const auto result =
      run({"python3", "-c",
           "import hashlib, sys\n"
           "h = hashlib.sha256(sys.argv[1].encode()).hexdigest()\n"
           "print(h[0:8] + '-' + h[8:12] + '-4' + h[13:16] + '-9' + h[17:20] + '-' + h[20:32])",
           input});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  return result.out.substr(0, result.out.find('\n'));
}

std::string rendered_uuid(const std::string& name, const std::optional<std::string>& seed,
                          const std::string& ns) {
  std::string yaml = "name: " + name + "\nimage: debian-12\nnetwork: {mode: nat}\n";
  if (seed) {
    std::string quoted;
    for (char c : *seed)
      quoted += (c == '"' || c == '\\') ? std::string("\\") + c : std::string(1, c);
    yaml += "cloudInitSeed: \"" + quoted + "\"\n";
  }
  auto options = default_options();
  options.ns = ns;
  const auto vm = find_kind(render(yaml, options), "VirtualMachine");
  return vm["spec"]["template"]["spec"]["domain"]["firmware"]["uuid"].get<std::string>();
}

TEST(CloudInitSeed, UuidMatchesAnIndependentComputation) {
  struct Example {
    std::string ns, name;
    std::optional<std::string> seed;
  };
  const std::vector<Example> examples = {
      {"tenant-test", "vm-instance-test", ""},
      {"tenant-test", "vm-instance-test", "upd1"},
      {"tenant-test", "alice-dev", "rebuild-2"},
      {"prod", "db-1", "a seed with spaces & symbols: \"quoted\""},
      {"prod", "db-1", std::nullopt},  // no seed: the formula with an empty seed
  };
  for (const auto& e : examples) {
    const auto expected = python_uuid(e.ns + "-" + e.name + "-" + e.seed.value_or(""));
    EXPECT_EQ(rendered_uuid(e.name, e.seed, e.ns), expected) << e.ns << "/" << e.name;
  }
}

// The two values Cozystack's chart documents for its own formula.
TEST(CloudInitSeed, UuidMatchesCozystacksPublishedExamples) {
  EXPECT_EQ(rendered_uuid("vm-instance-test", "", "tenant-test"),
            "6143cd81-c500-4d73-975a-5e986a00d984");
  EXPECT_EQ(rendered_uuid("vm-instance-test", "upd1", "tenant-test"),
            "17107e6e-2538-4847-98ce-272c7ee3ec5c");
}

}  // namespace
}  // namespace bowline::kubevirt::test
