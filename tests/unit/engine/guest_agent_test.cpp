// Claim personalisation through a scripted guest agent: the commands sent, their arguments
// (values passed as positional parameters, never spliced into the script), the wait for
// guest-exec, and failures that carry the guest's own words.
#include "engine/guest_agent.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <vector>

namespace bowline::engine {
namespace {

using nlohmann::json;

// Answers like qemu-ga: guest-exec starts "pid 42", which has exited after `polls` status calls.
struct ScriptedAgent {
  std::vector<json> sent;
  int polls = 2;
  int exit_code = 0;
  std::string output_b64 = "aGVsbG8=";  // "hello"
  std::string fail_command;             // answers this one with an error

  std::string operator()(const std::string& text, std::chrono::seconds) {
    const auto request = json::parse(text);
    sent.push_back(request);
    const auto name = request.value("execute", "");
    if (name == fail_command)
      return json{{"error", {{"class", "GenericError"}, {"desc", "nope"}}}}.dump();
    if (name == "guest-exec") return json{{"return", {{"pid", 42}}}}.dump();
    if (name == "guest-exec-status") {
      if (--polls > 0) return json{{"return", {{"exited", false}}}}.dump();
      return json{{"return", {{"exited", true}, {"exitcode", exit_code}, {"out-data", output_b64}}}}
          .dump();
    }
    return json{{"return", json::object()}}.dump();
  }
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
// emulation), and every value is a positional parameter.
TEST(GuestAgent, AppliesUserKeysPasswordAndHostnameInOneScript) {
  ScriptedAgent agent;
  apply_identity(call(agent), alice());
  std::vector<std::string> names;
  for (const auto& r : agent.sent) names.push_back(r["execute"]);
  EXPECT_EQ(names,
            (std::vector<std::string>{"guest-exec", "guest-exec-status", "guest-exec-status"}));
  const auto& exec = agent.sent[0]["arguments"];
  EXPECT_EQ(exec["path"], "/bin/sh");
  EXPECT_EQ(exec["capture-output"], true);
  ASSERT_EQ(exec["arg"].size(), 8u);
  EXPECT_EQ(exec["arg"][0], "-c");
  EXPECT_EQ(exec["arg"][2], "bowline-claim");
  EXPECT_EQ(exec["arg"][3], "alice");
  EXPECT_EQ(exec["arg"][4], "dev-box");
  EXPECT_EQ(exec["arg"][5], "pool");
  EXPECT_EQ(exec["arg"][6], "ssh-ed25519 AAAA alice@laptop\nssh-rsa BBBB alice@desk\n");
  EXPECT_EQ(exec["arg"][7], "$6$salt$hash");
  const auto script = exec["arg"][1].get<std::string>();
  for (const char* value : {"alice", "dev-box", "AAAA", "$6$salt"})
    EXPECT_EQ(script.find(value), std::string::npos) << value << " spliced into the script";
  EXPECT_EQ(agent.sent[1]["arguments"]["pid"], 42);
}

TEST(GuestAgent, NoPasswordHashMeansAnEmptyParameter) {
  ScriptedAgent agent;
  auto id = alice();
  id.password_hash.reset();
  apply_identity(call(agent), id);
  EXPECT_EQ(agent.sent[0]["arguments"]["arg"][7], "");
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
  agent.exit_code = 9;
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
  agent.fail_command = "guest-exec";
  try {
    apply_identity(call(agent), alice());
    FAIL();
  } catch (const GuestAgentError& e) {
    EXPECT_EQ(std::string(e.what()), "guest-exec: nope");
  }
}

}  // namespace
}  // namespace bowline::engine
