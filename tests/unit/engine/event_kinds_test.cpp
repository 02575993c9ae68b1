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
  EXPECT_EQ(names.size(), 27u);
}

}  // namespace
}  // namespace bowline::engine
