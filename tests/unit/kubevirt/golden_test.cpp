// Golden files: whole renders compared byte for byte with tests/unit/kubevirt/golden/.
// BOWLINE_UPDATE_GOLDEN=1 rewrites them; review the diff before committing.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <cstdlib>

#include "kubevirt/base64.hpp"
#include "kubevirt/yaml_stream.hpp"
#include "test_support.hpp"

namespace bowline::kubevirt::test {
namespace {

struct Case {
  std::string name;
  std::string template_path;  // relative to the repository
};

const std::vector<Case>& cases() {
  static const std::vector<Case> kCases = {
      {"bridged", "examples/bridged.yaml"},
      {"cozystack-full", "tests/unit/kubevirt/golden/cozystack-full.template.yaml"},
      {"sizing-instancetype", "tests/unit/kubevirt/golden/sizing-instancetype.template.yaml"},
      {"sizing-resources-override",
       "tests/unit/kubevirt/golden/sizing-resources-override.template.yaml"},
      {"sizing-resources-only", "tests/unit/kubevirt/golden/sizing-resources-only.template.yaml"},
      {"external-wholeip", "tests/unit/kubevirt/golden/external-wholeip.template.yaml"},
      {"no-cloud-init", "tests/unit/kubevirt/golden/no-cloud-init.template.yaml"},
      {"keys-only", "tests/unit/kubevirt/golden/keys-only.template.yaml"},
  };
  return kCases;
}

std::string golden_path(const std::string& name) {
  return source_path("tests/unit/kubevirt/golden/" + name);
}

void compare_or_update(const std::string& name, const std::string& actual) {
  const auto path = golden_path(name);
  if (std::getenv("BOWLINE_UPDATE_GOLDEN")) {
    write_file(path, actual);
    return;
  }
  std::string expected;
  try {
    expected = read_file(path);
  } catch (const std::exception&) {
    FAIL() << path << " is missing: run with BOWLINE_UPDATE_GOLDEN=1";
  }
  EXPECT_EQ(expected, actual) << "golden file " << path
                              << " differs (BOWLINE_UPDATE_GOLDEN=1 regenerates it)";
}

// The YAML stream as a reader sees it: quoted scalars are strings, plain ones are resolved
// as YAML 1.2's core schema does.
nlohmann::ordered_json to_json(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map: {
      auto out = nlohmann::ordered_json::object();
      for (const auto& kv : node) out[kv.first.Scalar()] = to_json(kv.second);
      return out;
    }
    case YAML::NodeType::Sequence: {
      auto out = nlohmann::ordered_json::array();
      for (const auto& item : node) out.push_back(to_json(item));
      return out;
    }
    case YAML::NodeType::Scalar: {
      const auto& text = node.Scalar();
      if (node.Tag() == "!") return text;
      if (text == "true" || text == "false") return text == "true";
      if (!text.empty() && text.find_first_not_of("0123456789") == std::string::npos)
        return std::stoull(text);
      return text;
    }
    default:
      return nullptr;
  }
}

std::string render_golden(const Case& c, Manifests& out) {
  const auto text = read_file(source_path(c.template_path));
  out = render(text);
  std::string golden = "# " + c.template_path +
                       " rendered by tests/unit/kubevirt/golden_test.cpp for namespace "
                       "tenant-test (BOWLINE_UPDATE_GOLDEN=1 regenerates this file).\n";
  for (const auto& note : out.notes) golden += "# note: " + note + "\n";
  return golden + to_yaml_stream(out.objects);
}

class Golden : public ::testing::TestWithParam<Case> {};

TEST_P(Golden, MatchesTheFileAndReadsBackAsTheSameObjects) {
  const auto& c = GetParam();
  Manifests out;
  const auto golden = render_golden(c, out);
  compare_or_update(c.name + ".yaml", golden);

  // The stream holds exactly the rendered objects.
  const auto documents = YAML::LoadAll(golden);
  ASSERT_EQ(documents.size(), out.objects.size());
  for (std::size_t i = 0; i < documents.size(); ++i)
    EXPECT_EQ(to_json(documents[i]), out.objects[i]) << c.name << " document " << i;

  // The Secret's documents, decoded, as files of their own for review.
  for (const auto& object : out.objects) {
    if (object["kind"] != "Secret") continue;
    for (const auto& [key, value] : object["data"].items()) {
      const auto decoded = base64_decode(value.get<std::string>());
      ASSERT_TRUE(decoded.has_value()) << key;
      compare_or_update(c.name + "." + key, *decoded);
    }
  }
}

TEST_P(Golden, RendersTheSameBytesTwice) {
  Manifests a, b;
  EXPECT_EQ(render_golden(GetParam(), a), render_golden(GetParam(), b));
}

INSTANTIATE_TEST_SUITE_P(Templates, Golden, ::testing::ValuesIn(cases()),
                         [](const auto& param_info) {
                           std::string name = param_info.param.name;
                           for (auto& ch : name)
                             if (ch == '-') ch = '_';
                           return name;
                         });

}  // namespace
}  // namespace bowline::kubevirt::test
