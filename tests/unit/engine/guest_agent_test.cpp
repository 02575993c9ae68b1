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
  id.password = "s3cret 'quoted'";
  id.hostname = "dev-box";
  id.previous_user = "pool";
  return id;
}

TEST(GuestAgent, AppliesUserKeysPasswordAndHostnameInOrder) {
  ScriptedAgent agent;
  apply_identity(call(agent), alice());
  std::vector<std::string> names;
  for (const auto& r : agent.sent) names.push_back(r["execute"]);
  EXPECT_EQ(names,
            (std::vector<std::string>{"guest-exec", "guest-exec-status", "guest-exec-status",
                                      "guest-ssh-add-authorized-keys", "guest-set-user-password"}));
  const auto& exec = agent.sent[0]["arguments"];
  EXPECT_EQ(exec["path"], "/bin/sh");
  ASSERT_EQ(exec["arg"].size(), 6u);
  EXPECT_EQ(exec["arg"][0], "-c");
  // The values come after the script as $1 $2 $3: the script text never contains them.
  EXPECT_EQ(exec["arg"][3], "alice");
  EXPECT_EQ(exec["arg"][4], "dev-box");
  EXPECT_EQ(exec["arg"][5], "pool");
  EXPECT_EQ(exec["arg"][1].get<std::string>().find("alice"), std::string::npos);
  EXPECT_EQ(agent.sent[1]["arguments"]["pid"], 42);

  const auto& keys = agent.sent[3]["arguments"];
  EXPECT_EQ(keys["username"], "alice");
  EXPECT_EQ(keys["keys"], json::array({"ssh-ed25519 AAAA alice@laptop"}));
  EXPECT_EQ(keys["reset"], true);

  const auto& password = agent.sent[4]["arguments"];
  EXPECT_EQ(password["username"], "alice");
  EXPECT_EQ(password["crypted"], false);
  EXPECT_EQ(password["password"], "czNjcmV0ICdxdW90ZWQn");  // base64 of the clear text
}

TEST(GuestAgent, NoPasswordMeansNoPasswordCall) {
  ScriptedAgent agent;
  auto id = alice();
  id.password.reset();
  apply_identity(call(agent), id);
  for (const auto& r : agent.sent) EXPECT_NE(r["execute"], "guest-set-user-password");
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
  for (const auto& r : agent.sent) EXPECT_NE(r["execute"], "guest-ssh-add-authorized-keys");
}

TEST(GuestAgent, AnAgentErrorNamesTheCommand) {
  ScriptedAgent agent;
  agent.fail_command = "guest-ssh-add-authorized-keys";
  try {
    apply_identity(call(agent), alice());
    FAIL();
  } catch (const GuestAgentError& e) {
    EXPECT_EQ(std::string(e.what()), "guest-ssh-add-authorized-keys: nope");
  }
}

}  // namespace
}  // namespace bowline::engine
