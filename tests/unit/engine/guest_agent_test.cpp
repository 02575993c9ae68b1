// Claim personalisation through a scripted guest agent: the commands sent, their arguments
// (values passed as positional parameters, never spliced into the script), the wait for
// guest-exec, and failures that carry the guest's own words.
#include "engine/guest_agent.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <vector>

#include "engine/identity_scripts.hpp"

namespace bowline::engine {
namespace {

using nlohmann::json;

// Answers like qemu-ga: each guest-exec starts "pid 42", which has exited after `polls` status
// calls with the next of `exit_codes` (0 once they run out).
struct ScriptedAgent {
  std::vector<json> sent;
  int polls = 2;
  std::vector<int> exit_codes;
  std::string output_b64 = "aGVsbG8=";  // "hello"
  std::string fail_command;             // answers this one with an error
  int fail_times = 1000;                // ... this many times

  std::string operator()(const std::string& text, std::chrono::seconds) {
    const auto request = json::parse(text);
    sent.push_back(request);
    const auto name = request.value("execute", "");
    if (name == fail_command && fail_times-- > 0)
      return json{{"error", {{"class", "GenericError"}, {"desc", "nope"}}}}.dump();
    if (name == "guest-exec") {
      left = polls;
      return json{{"return", {{"pid", 42}}}}.dump();
    }
    if (name == "guest-exec-status") {
      if (--left > 0) return json{{"return", {{"exited", false}}}}.dump();
      int code = 0;
      if (!exit_codes.empty()) {
        code = exit_codes.front();
        exit_codes.erase(exit_codes.begin());
      }
      return json{{"return", {{"exited", true}, {"exitcode", code}, {"out-data", output_b64}}}}
          .dump();
    }
    return json{{"return", json::object()}}.dump();
  }
  std::vector<json> execs() const {
    std::vector<json> out;
    for (const auto& r : sent)
      if (r["execute"] == "guest-exec") out.push_back(r["arguments"]);
    return out;
  }

 private:
  int left = 0;
};

AgentCall call(ScriptedAgent& agent) {
  return [&agent](const std::string& text, std::chrono::seconds t) { return agent(text, t); };
}

GuestIdentity alice() {
  GuestIdentity id;
  id.username = "alice";
  id.ssh_keys = {"ssh-ed25519 AAAA alice@laptop"};
  id.ssh_keys.push_back("ssh-rsa BBBB alice@desk");
  id.password_hash = "$6$salt$hash";
  id.hostname = "dev-box";
  id.previous_user = "pool";
  return id;
}

// One guest-exec does it all (each agent round trip and each process costs time under
// emulation): first the rename of the placeholder account, and every value is an argument.
TEST(GuestAgent, RenamesThePlaceholderAccountInOneProgram) {
  ScriptedAgent agent;
  apply_identity(call(agent), alice());
  std::vector<std::string> names;
  for (const auto& r : agent.sent) names.push_back(r["execute"]);
  EXPECT_EQ(names,
            (std::vector<std::string>{"guest-exec", "guest-exec-status", "guest-exec-status"}));
  const auto& exec = agent.sent[0]["arguments"];
  EXPECT_EQ(exec["path"], "/usr/bin/perl");
  EXPECT_EQ(exec["capture-output"], true);
  const auto args = exec["arg"].get<std::vector<std::string>>();
  ASSERT_EQ(args.size(), 8u);
  EXPECT_EQ(args[0], "-e");
  EXPECT_EQ(args[1], kRenameAccountPerl);
  EXPECT_EQ((std::vector<std::string>(args.begin() + 2, args.end())),
            (std::vector<std::string>{"/", "alice", "dev-box", "pool",
                                      "ssh-ed25519 AAAA alice@laptop\nssh-rsa BBBB alice@desk\n",
                                      "$6$salt$hash"}));
  EXPECT_EQ(agent.sent[1]["arguments"]["pid"], 42);
}

// Exit 3: the account could not be renamed (the user exists, or no placeholder): useradd.
TEST(GuestAgent, FallsBackToTheShellWhenTheRenameDoesNotApply) {
  ScriptedAgent agent;
  agent.exit_codes = {3, 0};
  apply_identity(call(agent), alice());
  const auto execs = agent.execs();
  ASSERT_EQ(execs.size(), 2u);
  EXPECT_EQ(execs[1]["path"], "/bin/sh");
  const auto args = execs[1]["arg"].get<std::vector<std::string>>();
  ASSERT_EQ(args.size(), 8u);
  EXPECT_EQ(args[0], "-c");
  EXPECT_EQ(args[1], kMakeAccountShell);
  EXPECT_EQ((std::vector<std::string>(args.begin() + 2, args.end())),
            (std::vector<std::string>{"bowline-claim", "alice", "dev-box", "pool",
                                      "ssh-ed25519 AAAA alice@laptop\nssh-rsa BBBB alice@desk\n",
                                      "$6$salt$hash"}));
  for (const char* value : {"alice", "dev-box", "AAAA", "$6$salt"}) {
    EXPECT_EQ(std::string(kMakeAccountShell).find(value), std::string::npos) << value;
    EXPECT_EQ(std::string(kRenameAccountPerl).find(value), std::string::npos) << value;
  }
}

// An image without perl: the agent cannot start it, and the shell does the work.
TEST(GuestAgent, FallsBackToTheShellWithoutPerl) {
  ScriptedAgent agent;
  agent.fail_command = "guest-exec";
  agent.fail_times = 1;
  apply_identity(call(agent), alice());
  const auto execs = agent.execs();
  ASSERT_EQ(execs.size(), 2u);
  EXPECT_EQ(execs[1]["path"], "/bin/sh");
}

TEST(GuestAgent, AFailedRenameIsAnErrorWithTheGuestsWords) {
  ScriptedAgent agent;
  agent.exit_codes = {1};
  try {
    apply_identity(call(agent), alice());
    FAIL() << "a failed rename was taken for success";
  } catch (const GuestAgentError& e) {
    EXPECT_NE(std::string(e.what()).find("pool account to alice failed (exit 1): hello"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(agent.execs().size(), 1u);  // no second attempt on top of a half-done one
}

TEST(GuestAgent, NoPasswordHashMeansAnEmptyParameter) {
  ScriptedAgent agent;
  auto id = alice();
  id.password_hash.reset();
  apply_identity(call(agent), id);
  EXPECT_EQ(agent.execs()[0]["arg"][7], "");
}

// A value that would add a line to passwd, authorized_keys or hosts never reaches the guest.
TEST(GuestAgent, ValuesThatWouldAddALineAreRefusedBeforeTheGuestIsAsked) {
  const auto refused = [](GuestIdentity id) {
    ScriptedAgent agent;
    EXPECT_THROW(apply_identity(call(agent), id), GuestAgentError);
    EXPECT_TRUE(agent.sent.empty());
  };
  auto id = alice();
  id.ssh_keys.push_back("ssh-ed25519 CCCC\nssh-ed25519 EVIL");
  refused(id);
  id = alice();
  id.username = "eve\nroot";
  refused(id);
  id = alice();
  id.password_hash = "$6$x$y:0:0";
  refused(id);
  id = alice();
  id.hostname = "a/b";
  refused(id);
}

TEST(GuestAgent, AFailingScriptReportsItsExitCodeAndOutput) {
  ScriptedAgent agent;
  agent.exit_codes = {3, 9};
  try {
    apply_identity(call(agent), alice());
    FAIL() << "a failed script was taken for success";
  } catch (const GuestAgentError& e) {
    EXPECT_NE(std::string(e.what()).find("exit 9"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("hello"), std::string::npos) << e.what();
  }
  EXPECT_EQ(agent.sent.back()["execute"], "guest-exec-status");
}

TEST(GuestAgent, AnAgentErrorNamesTheCommand) {
  ScriptedAgent agent;
  agent.fail_command = "guest-exec-status";
  try {
    apply_identity(call(agent), alice());
    FAIL();
  } catch (const GuestAgentError& e) {
    EXPECT_EQ(std::string(e.what()), "guest-exec-status: nope");
  }
}

}  // namespace
}  // namespace bowline::engine
