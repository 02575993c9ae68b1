// The settings' table in code (server/settings_table.cpp) is the one source: docs/configuration.md
// carries the table it generates, word for word, and ServerSettings' own initial values are
// the rows' defaults.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>

#include "server/settings.hpp"

namespace bowline::server::testing {
namespace {

namespace fs = std::filesystem;

const std::string kBegin =
    "<!-- The settings: generated from src/server/settings_table.cpp by `bowline server "
    "--settings-markdown`. Edit the table there, not here. -->\n";
const std::string kEnd = "<!-- End of the generated settings. -->\n";

std::string read(const fs::path& file) {
  std::ifstream in(file);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(SettingsDoc, TheDocsTableIsTheOneTheCodeMakes) {
  const auto doc_file = fs::path(BOWLINE_SOURCE_DIR) / "docs" / "configuration.md";
  const auto doc = read(doc_file);
  const auto begin = doc.find(kBegin);
  const auto end = doc.find(kEnd);
  ASSERT_NE(begin, std::string::npos) << doc_file << " lacks the line\n" << kBegin;
  ASSERT_NE(end, std::string::npos) << doc_file << " lacks the line\n" << kEnd;
  const auto table_at = begin + kBegin.size();
  ASSERT_LT(table_at, end);
  const auto generated = settings_markdown();
  if (doc.substr(table_at, end - table_at) == generated) return;
  // Write the doc as it should be, so that the fix is one copy.
  const auto fixed = fs::path(BOWLINE_BINARY_DIR) / "configuration.md";
  std::ofstream(fixed) << doc.substr(0, table_at) << generated << doc.substr(end);
  ADD_FAILURE() << "the settings table in docs/configuration.md is not the one "
                   "src/server/settings_table.cpp makes. To regenerate it:\n  cp "
                << fixed.string() << " " << doc_file.string()
                << "\n(written just now; or paste `bowline server --settings-markdown` between "
                   "its two markers), then review the diff";
}

TEST(SettingsDoc, EveryRowIsCompleteAndSpelledOnce) {
  std::set<std::string> seen;
  for (const auto& row : setting_table()) {
    for (const char* name : {row.key, row.flag, row.env}) {
      ASSERT_NE(name, nullptr);
      EXPECT_TRUE(seen.insert(name).second) << name << " names two settings";
    }
    for (const char* name : {row.knot_flag, row.knot_env})
      if (name) {
        EXPECT_TRUE(seen.insert(name).second) << name << " names two settings";
      }
    EXPECT_EQ(std::string(row.key).rfind("server.", 0), 0u) << row.key;
    EXPECT_EQ(std::string(row.flag).rfind("--", 0), 0u) << row.key;
    EXPECT_EQ(std::string(row.env).rfind("BOWLINE_", 0), 0u) << row.key;
    EXPECT_TRUE(row.set && row.show) << row.key;
    EXPECT_NE(std::string(row.type), "") << row.key;
    EXPECT_NE(std::string(row.summary), "") << row.key;
    EXPECT_NE(std::string(row.details), "") << row.key;
    // A cell of the docs' table cannot hold a line break or a bar.
    for (const std::string text : {row.details, row.default_doc ? row.default_doc : ""})
      EXPECT_EQ(text.find_first_of("|\n"), std::string::npos) << row.key;
    // Without a value for its default, the docs must say in words what it is.
    if (std::string(row.default_value).empty()) {
      EXPECT_NE(row.default_doc, nullptr) << row.key << " has no default and no words for it";
    }
  }
}

// ServerSettings{} (what code that builds settings by hand starts from) has the defaults the
// table gives, as --print-config shows them.
TEST(SettingsDoc, TheStructsInitialValuesAreTheRowsDefaults) {
  SettingsInput input;
  input.cwd = "/";
  const auto resolved = resolve_settings(input);
  const ServerSettings plain;
  for (const auto& row : setting_table()) {
    if (std::string(row.default_value) != "") {
      EXPECT_EQ(row.show(plain), row.show(resolved)) << row.key;
    }
  }
}

}  // namespace
}  // namespace bowline::server::testing
