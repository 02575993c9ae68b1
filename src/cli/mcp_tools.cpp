#include "cli/mcp_tools.hpp"

#include <algorithm>
#include <chrono>
#include <thread>

#include "cli/app.hpp"
#include "cli/client_format.hpp"
#include "cli/client_verbs.hpp"
#include "util/process.hpp"

namespace bowline::cli::mcp {
namespace {

using namespace std::chrono_literals;

std::string string_arg(const ojson& args, const char* name) {
  if (!args.contains(name) || !args[name].is_string() || args[name].get<std::string>().empty())
    throw CliError(kExitUsage, std::string("the argument \"") + name + "\" (a string) is missing");
  return args[name].get<std::string>();
}

bool bool_arg(const ojson& args, const char* name, bool absent) {
  return args.contains(name) && args[name].is_boolean() ? args[name].get<bool>() : absent;
}

ojson schema(ojson properties, std::vector<std::string> required) {
  return {{"type", "object"}, {"properties", std::move(properties)}, {"required", required}};
}

const ojson kSpace = {{"type", "string"}, {"description", "the space's name or id"}};
const ojson kWait = {{"type", "boolean"},
                     {"description", "wait until the operation has ended (default true)"}};

std::string space_path(Client& client, const ojson& args) {
  return "/api/v1/spaces/" + escape_segment(resolve_space(client, string_arg(args, "space")));
}

// What a space is, in a few lines an agent reads without parsing.
std::string describe(const ojson& s) {
  std::string text = "space " + text_of(s, "name") + " (id " + text_of(s, "id") +
                     "): " + text_of(s, "state") + ", template " + text_of(s, "template", "-") +
                     ", owner " + text_of(s, "owner", "-") + ", ip " + text_of(s, "ip", "-");
  if (const auto error = text_of(s, "error"); !error.empty()) text += "\nerror: " + error;
  return text;
}

// Follows an accepted operation to its end (10 minutes at most).
ToolResult finish(Client& client, const ojson& accepted, bool wait, const std::string& what) {
  const auto& op = accepted.contains("operation") ? accepted["operation"] : ojson();
  const std::string id = op.is_object() ? text_of(op, "id") : "";
  if (!wait || id.empty()) return {what + " started (operation " + id + ")", false};
  const auto deadline = std::chrono::steady_clock::now() + 10min;
  for (;;) {
    const auto now = client.get("/api/v1/operations/" + id);
    const auto state = text_of(now, "state");
    if (state == "succeeded") {
      std::string text = what + " succeeded";
      if (accepted.contains("space") && accepted["space"].is_object())
        text += "\n" + describe(client.get("/api/v1/spaces/" +
                                           escape_segment(text_of(accepted["space"], "id"))));
      return {text, false};
    }
    if (state == "failed") return {what + " failed: " + text_of(now, "error"), true};
    if (std::chrono::steady_clock::now() > deadline)
      return {what + " has not ended after 10 minutes (operation " + id + ", " + state + ")", true};
    std::this_thread::sleep_for(500ms);
  }
}

Tool power(const std::string& verb, const std::string& what) {
  return {verb + "_space", what, schema({{"space", kSpace}, {"wait", kWait}}, {"space"}),
          [verb](Client& client, const ojson& args) {
            const auto accepted =
                client.post(space_path(client, args) + "/" + verb, ojson::object());
            return finish(client, accepted, bool_arg(args, "wait", true), verb);
          }};
}

ToolResult run_command(const std::string& self, Client& client, const ojson& args) {
  const auto space = string_arg(args, "space");
  const auto command = string_arg(args, "command");
  int seconds = 120;
  if (args.contains("timeoutSeconds") && args["timeoutSeconds"].is_number_integer())
    seconds = std::clamp(args["timeoutSeconds"].get<int>(), 1, 3600);
  resolve_space(client, space);  // a clear "no space named" before ssh says anything
  util::SystemProcessRunner runner;
  const auto r = runner.run({self, "ssh", space, "--", command}, std::chrono::seconds(seconds));
  std::string text = "exit code " + std::to_string(r.exit_code) +
                     (r.timed_out ? " (killed after " + std::to_string(seconds) + " s)" : "");
  if (!r.out.empty()) text += "\nstdout:\n" + r.out;
  if (!r.err.empty()) text += "\nstderr:\n" + r.err;
  return {text, r.exit_code != 0};
}

}  // namespace

std::vector<Tool> tools(const std::string& self) {
  std::vector<Tool> out;
  out.push_back(
      {"list_spaces", "The spaces you may see: name, state, template, owner, address.",
       schema({{"all", {{"type", "boolean"}, {"description", "admins: everyone's spaces"}}}}, {}),
       [](Client& client, const ojson& args) {
         const auto list = client.get(std::string("/api/v1/spaces") +
                                      (bool_arg(args, "all", false) ? "?all=1" : ""));
         std::string text = std::to_string(list.size()) + " spaces";
         for (const auto& s : list) text += "\n" + describe(s);
         return ToolResult{text, false};
       }});
  out.push_back({"get_space", "One space: its state, address, error, and its console's last lines.",
                 schema({{"space", kSpace}}, {"space"}), [](Client& client, const ojson& args) {
                   const auto s = client.get(space_path(client, args));
                   std::string text = describe(s);
                   const auto view = readiness_of(s);
                   text += "\nreadiness: " + readiness_summary(view);
                   if (!view.last_lines.empty()) {
                     text += "\nconsole (last lines):";
                     for (const auto& line : view.last_lines) text += "\n" + line;
                   }
                   return ToolResult{text, false};
                 }});
  out.push_back(
      {"create_space", "Make a space from a template (and start it unless start is false).",
       schema({{"template", {{"type", "string"}, {"description", "the template's name"}}},
               {"name", {{"type", "string"}, {"description", "the new space's name"}}},
               {"start", {{"type", "boolean"}, {"description", "start it (default true)"}}},
               {"wait", kWait}},
              {"template", "name"}),
       [](Client& client, const ojson& args) {
         const auto accepted =
             client.post("/api/v1/spaces", {{"template", string_arg(args, "template")},
                                            {"name", string_arg(args, "name")},
                                            {"start", bool_arg(args, "start", true)}});
         return finish(client, accepted, bool_arg(args, "wait", true), "create");
       }});
  out.push_back(power("start", "Start a stopped (or resume a suspended) space."));
  out.push_back(power("stop", "Stop a running space."));
  out.push_back(
      {"snapshot_space", "Take a snapshot of a space's disks (and memory, with memory: true).",
       schema({{"space", kSpace},
               {"name", {{"type", "string"}, {"description", "the snapshot's name"}}},
               {"memory", {{"type", "boolean"}, {"description", "also its running state"}}},
               {"wait", kWait}},
              {"space", "name"}),
       [](Client& client, const ojson& args) {
         const auto accepted = client.post(
             space_path(client, args) + "/snapshots",
             {{"name", string_arg(args, "name")}, {"memory", bool_arg(args, "memory", false)}});
         return finish(client, accepted, bool_arg(args, "wait", true), "snapshot");
       }});
  out.push_back({"restore_snapshot", "Put a space back as one of its snapshots has it.",
                 schema({{"space", kSpace},
                         {"name", {{"type", "string"}, {"description", "the snapshot's name"}}},
                         {"wait", kWait}},
                        {"space", "name"}),
                 [](Client& client, const ojson& args) {
                   const auto accepted =
                       client.post(space_path(client, args) + "/snapshots/" +
                                       escape_segment(string_arg(args, "name")) + "/restore",
                                   ojson::object());
                   return finish(client, accepted, bool_arg(args, "wait", true), "restore");
                 }});
  out.push_back(
      {"run_command",
       "Run a shell command in a running space over SSH, as its owner, and read its output.",
       schema({{"space", kSpace},
               {"command", {{"type", "string"}, {"description", "a shell command line"}}},
               {"timeoutSeconds", {{"type", "integer"}, {"description", "default 120"}}}},
              {"space", "command"}),
       [self](Client& client, const ojson& args) { return run_command(self, client, args); }});
  return out;
}

}  // namespace bowline::cli::mcp
