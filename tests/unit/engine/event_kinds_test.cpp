// One list of event kinds: unique names, a payload line each, and docs/api.md lists them all.
#include "engine/event_kinds.hpp"

#include <gtest/gtest.h>

#include <set>

#include "../common/scratch_files.hpp"

namespace bowline::engine {
namespace {

TEST(EventKinds, UniqueDescribedAndDocumented) {
  const auto doc = test_support::read_file(test_support::source_path("docs/api.md"));
  const auto table = doc.substr(doc.find("### Event kinds"));
  std::set<std::string_view> names;
  for (const auto& kind : event_kinds()) {
    EXPECT_TRUE(names.insert(kind.name).second) << kind.name << " twice";
    EXPECT_FALSE(kind.payload.empty()) << kind.name;
    EXPECT_NE(table.find("| `" + std::string(kind.name) + "` |"), std::string::npos)
        << kind.name << " is missing from docs/api.md's event kinds";
  }
  // And the table lists no kind the engine cannot publish: one row per kind.
  const auto rows_end = table.find("\n\n", table.find("|---|"));
  std::size_t rows = 0;
  for (auto at = table.find("\n| `"); at < rows_end; at = table.find("\n| `", at + 1)) ++rows;
  EXPECT_EQ(rows, names.size());
}

}  // namespace
}  // namespace bowline::engine
