// The CLI against the real `bowline server` (on libvirt's test:///default driver, a temp data
// directory and a port of its own): templates, a space created, listed and deleted with --wait,
// users and login, imports' refusals, and the exit codes of refusals.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <thread>

#include "engine/host_keys.hpp"
#include "engine/identifiers.hpp"
#include "engine/space_archive.hpp"

#include "server_process.hpp"

namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

using bowline::clitest::ServerProcess;
using bowline::clitest::slurp;

std::string quote(const std::string& s) {
  return bowline::clitest::shell_quote(s);
}

// One real server for the suite (tests/unit/cli/server_process.hpp).
class ServerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    server_.start();
    dir_ = server_.dir();
    url_ = server_.url();
    token_ = server_.admin_token();
    std::ofstream(dir_ / "nat.yaml") << "image: tiny\nmemory: 64Mi\ncpus: 1\n"
                                        "network:\n  mode: nat\n  bridge: default\n";
  }
  static void TearDownTestSuite() { server_.stop(); }

  using Run = ServerProcess::Run;
  // As the admin unless `token` says otherwise ("": none); HOME is the test's own.
  static Run bowline(const std::string& args, const std::string& token = token_,
                     const std::string& stdin_text = "") {
    return server_.run_as(args, token.empty() ? std::nullopt : std::optional(token), stdin_text);
  }

  static inline ServerProcess server_;
  static inline fs::path dir_;
  static inline std::string url_, token_;
};

TEST_F(ServerTest, TemplateSpaceLifecycleWithWait) {
  const auto nat = (dir_ / "nat.yaml").string();
  auto r = bowline("template create " + nat);
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_EQ(r.out, "template nat created (revision 1)\n");
  EXPECT_EQ(bowline("template get nat").out, slurp(nat));
  EXPECT_EQ(bowline("template create " + nat).code, 1) << "the name is taken (409)";

  // On the test driver no guest boots, so readiness never comes: wait for the operation only.
  r = bowline("space create nat dev --wait --no-ready");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("space dev is running"));
  EXPECT_THAT(r.err, HasSubstr("create: "));

  r = bowline("space list -o json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto spaces = nlohmann::json::parse(r.out);
  ASSERT_EQ(spaces.size(), 1u);
  EXPECT_EQ(spaces[0]["name"], "dev");
  EXPECT_EQ(spaces[0]["state"], "running");
  EXPECT_EQ(spaces[0]["template"], "nat");
  EXPECT_EQ(spaces[0]["owner"], "admin");
  const auto id = spaces[0]["id"].get<std::string>();

  r = bowline("space info dev");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("id:                 " + id + "\n"));
  EXPECT_THAT(r.out, HasSubstr("state:              running\n"));
  EXPECT_THAT(r.out, HasSubstr("template:           nat, revision 1\n"));
  EXPECT_EQ(nlohmann::json::parse(bowline("space info " + id + " -o json").out)["id"], id);

  r = bowline("space create nat dev");
  EXPECT_EQ(r.code, 1) << "the name is taken";
  EXPECT_FALSE(r.err.empty());
  EXPECT_EQ(bowline("template delete nat").code, 1) << "a space uses it (409)";

  r = bowline("space stop dev --wait");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "space dev is stopped\n");

  r = bowline("space delete dev --wait");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_EQ(r.out, "space dev deleted\n");
  EXPECT_EQ(nlohmann::json::parse(bowline("space list -o json").out), nlohmann::json::array());
  EXPECT_EQ(bowline("space info dev").code, 4);
  EXPECT_EQ(bowline("template delete nat").code, 0);
  EXPECT_EQ(bowline("template get nat").code, 4);
}

TEST_F(ServerTest, UsersLoginAndRefusals) {
  EXPECT_EQ(bowline("space list", "not-a-token").code, 4);
  auto r = bowline("user create carol --email carol@example.org --permission use-vnc");
  ASSERT_EQ(r.code, 0) << r.err;
  const std::regex token_line("token \\(shown once\\): (\\S+)");
  std::smatch match;
  ASSERT_TRUE(std::regex_search(r.out, match, token_line)) << r.out;
  const std::string carol = match[1];

  r = bowline("login --server " + url_, "", carol + "\n");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("as carol"));
  r = bowline("space list", "");  // the login file's token
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(bowline("user list", "").code, 4) << "not an admin (403)";
  EXPECT_EQ(bowline("space list --all", "").code, 4);

  EXPECT_EQ(bowline("user add-key carol 'not a key'", "").code, 1);
  r = bowline("user set-password carol --service", "", "correct horse battery\n");
  EXPECT_EQ(r.code, 0) << r.err;
  r = bowline("user list -o json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto users = nlohmann::json::parse(r.out);
  ASSERT_EQ(users.size(), 2u);
  EXPECT_EQ(users[1]["username"], "carol");
  EXPECT_EQ(users[1]["hasServicePassword"], true);
}

// `bowline ssh` pins keys under NAME.OWNER.bowline, which ssh-config's Host *.bowline block
// hands to `bowline known-hosts`: the full name must work for the owner, not only for admins,
// and tell another user nothing of someone else's space.
using ssh_known_hosts = ServerTest;
TEST_F(ssh_known_hosts, TheOwnersFullNameWorksForTheOwnerAndAdminsOnly) {
  ASSERT_EQ(bowline("template create " + (dir_ / "nat.yaml").string() + " --name kh").code, 0);
  const std::regex token_line("token \\(shown once\\): (\\S+)");
  std::smatch match;
  auto r = bowline("user create erin");
  ASSERT_TRUE(std::regex_search(r.out, match, token_line)) << r.out << r.err;
  const std::string erin = match[1];
  r = bowline("user create frank");
  ASSERT_TRUE(std::regex_search(r.out, match, token_line)) << r.out << r.err;
  const std::string frank = match[1];
  r = bowline("space create kh box --wait --no-ready", erin);
  ASSERT_EQ(r.code, 0) << r.out << r.err;

  for (const auto& [who, token] : {std::pair{"erin", erin}, std::pair{"an admin", token_}}) {
    r = bowline("known-hosts box.erin.bowline", token);
    EXPECT_EQ(r.code, 0) << who << ": " << r.err;
    EXPECT_THAT(r.out, HasSubstr("box.erin.bowline ssh-ed25519 AAAA")) << who;
  }
  r = bowline("known-hosts box.bowline", erin);
  EXPECT_THAT(r.out, HasSubstr("box.bowline ssh-ed25519 AAAA")) << r.err;
  r = bowline("known-hosts box.erin.bowline", frank);
  EXPECT_EQ(r.code, 4);
  EXPECT_THAT(r.err, HasSubstr("no space box of erin"));
  EXPECT_TRUE(r.out.empty());
  EXPECT_EQ(bowline("space delete box --wait", erin).code, 0);
}

}  // namespace

namespace {

using security_cli = ServerTest;

// Tokens and accounts from the command line, against the real server.
TEST_F(security_cli, TokensAreMadeListedAndRevokedAndAccountsDisabledAndDeleted) {
  auto r = bowline("user create dave --password 'dave password 1'");
  ASSERT_EQ(r.code, 0) << r.err;
  std::smatch match;
  ASSERT_TRUE(std::regex_search(r.out, match, std::regex("token \\(shown once\\): (\\S+)")));
  const std::string dave = match[1];

  r = bowline("token create laptop --expires 30d", dave);
  ASSERT_EQ(r.code, 0) << r.err;
  const auto laptop = r.out.substr(0, r.out.find('\n'));
  EXPECT_EQ(laptop.size(), 64u) << r.out;
  EXPECT_THAT(r.err, HasSubstr("shown once"));
  EXPECT_EQ(bowline("space list", laptop).code, 0);
  r = bowline("token list", dave);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("laptop"));
  EXPECT_THAT(r.out, HasSubstr("first token"));
  EXPECT_EQ(r.out.find(laptop), std::string::npos);
  EXPECT_EQ(bowline("token create x --expires soon", dave).code, 1);
  EXPECT_EQ(bowline("token list --user dave").code, 0);  // an admin's look
  r = bowline("token revoke laptop", dave);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(bowline("space list", laptop).code, 4);
  EXPECT_EQ(bowline("token revoke laptop", dave).code, 4);

  // One's own password: the current one first, then the new one (one line each from a pipe).
  EXPECT_NE(bowline("user set-password dave", dave, "wrong password\nnew password 22\n").code, 0);
  r = bowline("user set-password dave", dave, "dave password 1\nnew password 22\n");
  EXPECT_EQ(r.code, 0) << r.err;

  r = bowline("user disable dave");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(bowline("space list", dave).code, 4);
  EXPECT_THAT(bowline("user list").out, HasSubstr("disabled"));
  EXPECT_EQ(bowline("user enable dave").code, 0);
  EXPECT_EQ(bowline("space list", dave).code, 0);
  r = bowline("user delete dave");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(bowline("space list", dave).code, 4);
  EXPECT_EQ(bowline("user list").out.find("dave"), std::string::npos);
}

}  // namespace

namespace {

// An import adds the archive's template only when an admin asks for it (--create-template),
// and --keep-identity never takes an instance id that a space here has or had.
using security_cli_import = ServerTest;

// An archive as `space export` writes one: a space of `tmpl` with a fresh identity.
void write_archive(const fs::path& file, const std::string& tmpl, const std::string& yaml) {
  const auto disk_file = file.parent_path() / "archive-disk.qcow2";
  ASSERT_EQ(
      std::system(("qemu-img create -q -f qcow2 " + quote(disk_file.string()) + " 16M").c_str()),
      0);
  const auto key = bowline::engine::make_host_key("imported");
  const nlohmann::json facts = {{"format", bowline::engine::archive::kFormat},
                                {"version", 1},
                                {"name", "original"},
                                {"template", {{"name", tmpl}, {"revision", 1}}},
                                {"identity",
                                 {{"id", bowline::engine::random_uuid()},
                                  {"uuid", bowline::engine::random_uuid()},
                                  {"hostKey", key.private_key},
                                  {"hostKeyPublic", key.public_line}}}};
  std::ofstream out(file, std::ios::binary);
  bowline::engine::archive::ArchiveWriter writer(
      [&](std::string_view bytes) {
        out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
      },
      1700000000);
  writer.add(bowline::engine::archive::kSpaceMember, facts.dump());
  writer.add(bowline::engine::archive::kTemplateMember, yaml);
  writer.add(bowline::engine::archive::kDiskMember, slurp(disk_file));
  writer.finish();
  fs::remove(disk_file);
}

// Files a refused import left in the server's staging directory.
std::size_t staged_files(const fs::path& images) {
  std::error_code ec;
  std::size_t n = 0;
  for (const auto& entry : fs::directory_iterator(images / "volumes" / "staging", ec))
    n += entry.is_regular_file() ? 1 : 0;
  return n;
}

TEST_F(security_cli_import, TheArchivesTemplateIsAddedOnlyWithCreateTemplateAndOnlyByAnAdmin) {
  const auto yaml = slurp(dir_ / "nat.yaml");
  const auto archive = (dir_ / "space.tar").string();
  write_archive(archive, "archived", yaml);
  auto r = bowline("space import " + archive + " --name one");
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("no template named archived on this server"));
  EXPECT_THAT(r.err, HasSubstr("--create-template"));
  EXPECT_EQ(bowline("template get archived").code, 4) << "added without --create-template";

  r = bowline("user create gina");
  std::smatch match;
  ASSERT_TRUE(std::regex_search(r.out, match, std::regex("token \\(shown once\\): (\\S+)")));
  const std::string gina = match[1];
  r = bowline("space import " + archive + " --name two --create-template", gina);
  EXPECT_EQ(r.code, 4) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("only admins add templates"));
  EXPECT_EQ(bowline("template get archived").code, 4);

  r = bowline("space import " + archive + " --name three --create-template --wait --no-ready");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("with template archived"));
  r = bowline("template get archived");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, yaml);
  EXPECT_EQ(staged_files(dir_ / "images"), 0u);
}

TEST_F(security_cli_import, KeepIdentityRefusesAnIdInUseOrOfADeletedSpaceAndLeavesNothing) {
  ASSERT_EQ(bowline("template create " + (dir_ / "nat.yaml").string() + " --name kept").code, 0);
  const auto archive = (dir_ / "kept.tar").string();
  write_archive(archive, "kept", slurp(dir_ / "nat.yaml"));
  auto r = bowline("space import " + archive + " --name first --keep-identity --wait --no-ready");
  ASSERT_EQ(r.code, 0) << r.out << r.err;

  r = bowline("space import " + archive + " --name again --keep-identity");
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("is in use by the space first"));

  ASSERT_EQ(bowline("space delete first --wait").code, 0);
  r = bowline("space import " + archive + " --name after --keep-identity");
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("was a space's on this server, whose history is kept"));

  for (const auto& space : nlohmann::json::parse(bowline("space list -o json").out))
    EXPECT_EQ(space["name"], "three") << "a refused import made a space";
  EXPECT_EQ(staged_files(dir_ / "images"), 0u);
}

}  // namespace
