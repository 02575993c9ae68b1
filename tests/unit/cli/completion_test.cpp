// Shell completion's logic (cli/completion.hpp) on the real verb tree, with the server's names
// from a fake: what a user pressing TAB at each kind of slot gets.
#include "cli/completion.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>

#include "cli/app.hpp"

namespace bowline::cli {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::Not;

struct Completion : ::testing::Test {
  CLI::App app{"test", "bowline"};
  int exit_code = 0;
  std::vector<std::pair<NameKind, std::string>> asked;  // what the fake server was asked

  void SetUp() override { add_verbs(app, exit_code); }

  NameSource names() {
    return [this](NameKind kind, const std::string& server) {
      asked.emplace_back(kind, server);
      switch (kind) {
        case NameKind::Spaces:
          return std::vector<std::string>{"web1", "web2", "db"};
        case NameKind::Templates:
          return std::vector<std::string>{"debian-12", "tiny"};
        case NameKind::Pools:
          return std::vector<std::string>{"ci"};
      }
      return std::vector<std::string>{};
    };
  }

  std::vector<std::string> at(std::vector<std::string> before, const std::string& current) {
    before.insert(before.begin(), "bowline");
    return complete(app, before, current, names());
  }
};

TEST_F(Completion, TopLevelVerbsByPrefixAndNoHiddenOnes) {
  EXPECT_THAT(at({}, "sp"), ElementsAre("space"));
  EXPECT_THAT(at({}, "s"), ElementsAre("server", "space", "ssh", "ssh-config"));
  const auto all = at({}, "");
  EXPECT_THAT(all, Contains("template"));
  EXPECT_THAT(all, Contains("node"));
  for (const auto& verb : all) EXPECT_NE(verb.rfind("__", 0), 0u) << verb;
  EXPECT_THAT(asked, IsEmpty());  // verbs come from the tree, not the server
}

TEST_F(Completion, SubVerbsOfAGroup) {
  EXPECT_THAT(at({"space"}, "st"), ElementsAre("start", "stop"));
  EXPECT_THAT(at({"space"}, ""), Contains("set-ip"));
  EXPECT_THAT(at({"space"}, "zz"), IsEmpty());
}

TEST_F(Completion, SpaceSlotsOfferTheServersSpaces) {
  EXPECT_THAT(at({"space", "start"}, "we"), ElementsAre("web1", "web2"));
  EXPECT_THAT(at({"ssh"}, "d"), ElementsAre("db"));
  ASSERT_EQ(asked.size(), 2u);
  EXPECT_EQ(asked[0].first, NameKind::Spaces);
  // Once the SPACE slot is filled, set-ip's IP slot offers no names.
  asked.clear();
  EXPECT_THAT(at({"space", "set-ip", "web1"}, ""), IsEmpty());
  EXPECT_THAT(asked, IsEmpty());
}

TEST_F(Completion, TemplateAndPoolSlots) {
  // `space create TEMPLATE NAME`: templates first, then a new name (nothing to offer).
  EXPECT_THAT(at({"space", "create"}, ""), ElementsAre("debian-12", "tiny"));
  EXPECT_THAT(at({"space", "create", "tiny"}, ""), IsEmpty());
  EXPECT_THAT(at({"template", "get"}, "t"), ElementsAre("tiny"));
  EXPECT_THAT(at({"template", "delete"}, ""), ElementsAre("debian-12", "tiny"));
  EXPECT_THAT(at({"pool", "claim"}, ""), ElementsAre("ci"));
  EXPECT_THAT(at({"pool", "delete"}, ""), ElementsAre("ci"));
  EXPECT_THAT(at({"pool", "create"}, ""), IsEmpty());  // a new pool's name
}

TEST_F(Completion, OptionsOfTheVerbReached) {
  EXPECT_THAT(at({"space", "list"}, "--o"), ElementsAre("--output"));
  const auto create = at({"space", "create"}, "--");
  EXPECT_THAT(create, Contains("--ip"));
  EXPECT_THAT(create, Contains("--owner"));
  EXPECT_THAT(create, Contains("--help"));
  EXPECT_THAT(at({"space", "list"}, "--"), Not(Contains("--ip")));  // create's, not list's
}

TEST_F(Completion, OptionValues) {
  EXPECT_THAT(at({"space", "list", "--output"}, ""), ElementsAre("table", "json"));
  EXPECT_THAT(at({"space", "list", "--output"}, "j"), ElementsAre("json"));
  // --opt=value as one word: candidates keep the --opt= prefix (the script strips it).
  EXPECT_THAT(at({"space", "list"}, "--output="), ElementsAre("--output=table", "--output=json"));
  // The option's value is not a positional: the SPACE slot is still the next one.
  EXPECT_THAT(at({"space", "info", "--output", "json"}, "w"), ElementsAre("web1", "web2"));
}

TEST_F(Completion, FileSlotsAreHandedToTheShell) {
  EXPECT_THAT(at({"template", "validate"}, ""), ElementsAre(kCompleteFiles));
  EXPECT_THAT(at({"template", "create"}, "ex"), ElementsAre(kCompleteFiles));
  EXPECT_THAT(at({"server", "--config"}, ""), ElementsAre(kCompleteFiles));
}

TEST_F(Completion, AServerOnTheLineIsTheOneAsked) {
  at({"space", "start", "--server", "https://other:8443"}, "");
  at({"space", "start", "--server=https://third:8443"}, "");
  ASSERT_EQ(asked.size(), 2u);
  EXPECT_EQ(asked[0].second, "https://other:8443");
  EXPECT_EQ(asked[1].second, "https://third:8443");
}

TEST_F(Completion, UnknownWordsOfferNothingRatherThanFail) {
  EXPECT_THAT(at({"frobnicate"}, ""), IsEmpty());
  EXPECT_THAT(at({"space", "list", "--no-such"}, "--o"), ElementsAre("--output"));
}

TEST_F(Completion, NoServerMeansNoNames) {
  const auto none = [](NameKind, const std::string&) { return std::vector<std::string>{}; };
  EXPECT_THAT(complete(app, {"bowline", "space", "start"}, "", none), IsEmpty());
}

}  // namespace
}  // namespace bowline::cli
