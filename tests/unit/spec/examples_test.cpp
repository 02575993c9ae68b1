// Every template in examples/ validates, without values and with a user's and a space's.
#include <gtest/gtest.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "spec_test_support.hpp"

namespace bowline::spec {
namespace {

TEST(Examples, AllValidate) {
  const std::filesystem::path dir = std::filesystem::path(BOWLINE_SOURCE_DIR) / "examples";
  int seen = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".yaml") continue;
    ++seen;
    SCOPED_TRACE(entry.path().filename().string());
    std::ifstream in(entry.path(), std::ios::binary);
    const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    const auto without = load_spec(text, nullptr);
    EXPECT_TRUE(test::Valid(without));
    auto values = test::alice_dev();
    // Examples may use .var.NAME; give every one they mention a plausible value.
    for (auto at = text.find(".var."); at != std::string::npos; at = text.find(".var.", at + 5)) {
      auto end = at + 5;
      while (end < text.size() &&
             (std::isalnum(static_cast<unsigned char>(text[end])) || text[end] == '_'))
        ++end;
      values.emplace(text.substr(at + 1, end - at - 1), "x");
    }
    const auto with = load_spec(text, &values);
    EXPECT_TRUE(test::Valid(with));
  }
  EXPECT_GE(seen, 1);
}

TEST(Examples, BridgedExampleExpandsAsDocumented) {
  std::ifstream in(std::filesystem::path(BOWLINE_SOURCE_DIR) / "examples/bridged.yaml");
  const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  const auto values = test::alice_dev();
  const auto r = load_spec(text, &values);
  ASSERT_TRUE(test::Valid(r));
  EXPECT_EQ(r.spec->name, "alice-dev");
  EXPECT_EQ(r.spec->hostname, "dev");
  EXPECT_EQ(r.spec->network.mode, NetworkMode::Bridged);
  EXPECT_EQ(r.spec->sizing.memory_bytes, 4ull << 30);
  EXPECT_EQ(r.spec->sizing.vcpus(), 2u);
}

}  // namespace
}  // namespace bowline::spec
