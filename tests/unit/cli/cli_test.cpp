// The bowline binary as a script sees it: output, exit codes.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sys/wait.h>
#include <array>
#include <cstdio>
#include <fstream>
#include <string>

namespace {

struct Result {
  int code = -1;
  std::string out;  // stdout and stderr together
};

Result bowline(const std::string& args) {
  const std::string command = std::string(BOWLINE_BINARY_DIR) + "/src/bowline " + args + " 2>&1";
  Result r;
  FILE* pipe = popen(command.c_str(), "r");
  std::array<char, 4096> buffer{};
  std::size_t n = 0;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) r.out.append(buffer.data(), n);
  const int status = pclose(pipe);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

std::string example(const std::string& name) {
  return std::string(BOWLINE_SOURCE_DIR) + "/examples/" + name;
}

std::string write_temp(const std::string& name, const std::string& text) {
  const auto path = std::string(BOWLINE_BINARY_DIR) + "/cli-test-" + name;
  std::ofstream(path) << text;
  return path;
}

TEST(Cli, ValidateAcceptsTheExamples) {
  const auto r = bowline("template validate " + example("bridged.yaml") + " " +
                         example("nat.yaml") + " " + example("cozystack.yaml"));
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("bridged.yaml: ok"), std::string::npos);
  EXPECT_NE(r.out.find("cozystack.yaml: ok"), std::string::npos);
}

TEST(Cli, ValidateReportsEveryProblemWithPositionAndPath) {
  const auto bad = write_temp("bad.yaml",
                              "image: debian-12\n"
                              "memory: 2048\n"
                              "network:\n"
                              "  cidr: 198.51.100.0/24\n"
                              "  gatway: 198.51.100.1\n");
  const auto r = bowline("template validate " + bad + " " + example("nat.yaml"));
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find(bad + ":2:9: error: memory: below 1 MiB"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(bad + ":5:3: error: network.gatway: unknown field (did you mean gateway?)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("nat.yaml: ok"), std::string::npos);  // the valid file is still checked
}

TEST(Cli, ValidateUsageAndIoErrorsExitTwo) {
  EXPECT_EQ(bowline("template validate /nonexistent/file.yaml").code, 2);
  EXPECT_EQ(bowline("template validate").code, 2);
  EXPECT_EQ(bowline("no-such-verb").code, 2);
  // --help does not hide an unknown verb or sub-verb.
  const auto unknown = bowline("no-such-verb --help");
  EXPECT_EQ(unknown.code, 2);
  EXPECT_NE(unknown.out.find("bowline has no command no-such-verb"), std::string::npos)
      << unknown.out;
  const auto sub = bowline("space frobnicate --help");
  EXPECT_EQ(sub.code, 2);
  EXPECT_NE(sub.out.find("bowline space has no command frobnicate"), std::string::npos) << sub.out;
  EXPECT_EQ(bowline("space --help").code, 0);
  EXPECT_EQ(bowline("space create --help").code, 0);
}

TEST(Cli, ShowExpandsVariablesAndFillsDefaults) {
  const auto r = bowline("template show " + example("bridged.yaml") +
                         " --var user.username=alice --var space.name=dev -o json");
  ASSERT_EQ(r.code, 0) << r.out;
  const auto json = nlohmann::json::parse(r.out);
  EXPECT_EQ(json["name"], "alice-dev");
  EXPECT_EQ(json["hostname"], "dev");
  EXPECT_EQ(json["sizing"]["memoryBytes"], 4294967296ull);
  EXPECT_EQ(json["diskBytes"], 21474836480ull);
  EXPECT_EQ(json["network"]["ipRangeStart"], "198.51.100.10");
}

TEST(Cli, ShowWithoutANeededValueSaysWhichVar) {
  const auto r = bowline("template show " + example("bridged.yaml") + " --var user.username=alice");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("--var space.name="), std::string::npos) << r.out;
}

TEST(Cli, ShowYamlKeepsHostileValuesAsData) {
  const auto r = bowline("template show " + example("nat.yaml") +
                         " --var user.username=alice --var space.name=dev"
                         " --var 'user.email=x@y\"\n: {evil}'");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find(R"("x@y\"\n: {evil}")"), std::string::npos) << r.out;
}

TEST(Cli, CatalogListsAsTableAndJson) {
  const auto table = bowline("catalog instancetypes");
  EXPECT_EQ(table.code, 0);
  EXPECT_NE(table.out.find("u1.medium"), std::string::npos);
  const auto json = nlohmann::json::parse(bowline("catalog preferences -o json").out);
  ASSERT_TRUE(json.is_array());
  EXPECT_GE(json.size(), 54u);
  EXPECT_EQ(nlohmann::json::parse(bowline("catalog instancetypes --output json").out).size(), 69u);
}

TEST(Cli, VersionAndHelp) {
  const auto version = bowline("--version");
  EXPECT_EQ(version.code, 0);
  EXPECT_NE(version.out.find("bowline "), std::string::npos);
  const auto help = bowline("template validate --help");
  EXPECT_EQ(help.code, 0);
  EXPECT_NE(help.out.find("FILE"), std::string::npos);
}

}  // namespace
