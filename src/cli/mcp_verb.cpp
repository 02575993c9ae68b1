// bowline mcp: a Model Context Protocol server on standard input and output (docs/agents.md).
// JSON-RPC 2.0, one message per line (MCP's stdio transport); what is not a message goes to
// standard error. The tools (mcp_tools.hpp) use the CLI's own login and TLS pinning.
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <iostream>

#include "cli/app.hpp"
#include "cli/client_verbs.hpp"
#include "cli/mcp_tools.hpp"
#include "cli/verbs.hpp"

namespace bowline::cli {
namespace {

// The protocol revisions this server speaks, newest first; a client asking for another gets
// the newest, as the specification says.
const std::vector<std::string> kProtocols = {"2025-06-18", "2025-03-26", "2024-11-05"};

ojson rpc_error(const ojson& id, int code, const std::string& message) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"error", {{"code", code}, {"message", message}}}};
}

ojson rpc_result(const ojson& id, ojson result) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}};
}

std::string self_path() {
  char path[PATH_MAX];
  const auto n = ::readlink("/proc/self/exe", path, sizeof path - 1);
  return n > 0 ? std::string(path, static_cast<std::size_t>(n)) : "bowline";
}

class McpServer {
 public:
  McpServer(const std::string& server_flag) : tools_(mcp::tools(self_path())) {
    endpoint_ = resolve_endpoint(server_flag);
  }

  // The answer to one message; null for a notification.
  ojson answer(const ojson& message) {
    if (!message.is_object() || message.value("jsonrpc", "") != "2.0" ||
        !message.contains("method") || !message["method"].is_string())
      return rpc_error(message.is_object() && message.contains("id") ? message["id"] : ojson(),
                       -32600, "not a JSON-RPC 2.0 request");
    const auto method = message["method"].get<std::string>();
    if (!message.contains("id")) return ojson();  // notifications/initialized and the like
    const auto& id = message["id"];
    const auto params = message.contains("params") ? message["params"] : ojson::object();
    if (method == "initialize") return rpc_result(id, initialize(params));
    if (method == "ping") return rpc_result(id, ojson::object());
    if (method == "tools/list") return rpc_result(id, list());
    if (method == "tools/call") return call(id, params);
    return rpc_error(id, -32601, "no method " + method);
  }

 private:
  ojson initialize(const ojson& params) {
    std::string version = kProtocols.front();
    if (params.is_object() && params.contains("protocolVersion") &&
        params["protocolVersion"].is_string())
      for (const auto& v : kProtocols)
        if (v == params["protocolVersion"].get<std::string>()) version = v;
    return {{"protocolVersion", version},
            {"capabilities", {{"tools", {{"listChanged", false}}}}},
            {"serverInfo", {{"name", "bowline"}, {"version", BOWLINE_VERSION}}},
            {"instructions",
             "bowline's spaces (persistent virtual machines) as the logged-in user sees them: "
             "list, create, start, stop, snapshot and restore them, read a space's console, "
             "and run commands in it over SSH. Spaces are named by name or id."}};
  }

  ojson list() const {
    ojson tools = ojson::array();
    for (const auto& t : tools_)
      tools.push_back(
          {{"name", t.name}, {"description", t.description}, {"inputSchema", t.input_schema}});
    return {{"tools", tools}};
  }

  ojson call(const ojson& id, const ojson& params) {
    const std::string name = params.is_object() ? params.value("name", "") : "";
    const auto it = std::find_if(tools_.begin(), tools_.end(),
                                 [&](const mcp::Tool& t) { return t.name == name; });
    if (it == tools_.end()) return rpc_error(id, -32602, "no tool named \"" + name + "\"");
    const auto args = params.contains("arguments") && params["arguments"].is_object()
                          ? params["arguments"]
                          : ojson::object();
    mcp::ToolResult result;
    try {
      auto endpoint = endpoint_;
      endpoint.agent = "mcp/" + name;  // the server records the call, reads included
      Client client(endpoint);
      result = it->call(client, args);
    } catch (const std::exception& e) {
      // A refusal is the tool's answer (the agent reads it), not a protocol error.
      result = {e.what(), true};
    }
    return rpc_result(
        id, {{"content", {{{"type", "text"}, {"text", result.text}}}}, {"isError", result.error}});
  }

  Endpoint endpoint_;
  std::vector<mcp::Tool> tools_;
};

int serve(const std::string& server_flag) {
  McpServer server(server_flag);
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    ojson message;
    try {
      message = ojson::parse(line);
    } catch (const std::exception& e) {
      std::cout << rpc_error(ojson(), -32700, std::string("parse error: ") + e.what()).dump()
                << "\n"
                << std::flush;
      continue;
    }
    const auto reply = server.answer(message);
    if (!reply.is_null()) std::cout << reply.dump() << "\n" << std::flush;
  }
  return kExitOk;
}

}  // namespace

void add_mcp_verb(CLI::App& app, int& exit_code) {
  auto server = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand(
      "mcp", "A Model Context Protocol server on stdin/stdout: an agent drives your spaces");
  cmd->add_option("--server", *server, "The bowline server (default: as every verb finds it)")
      ->type_name("URL");
  cmd->footer(
      "Tools: list_spaces, get_space, create_space, start_space, stop_space, snapshot_space, "
      "restore_snapshot, run_command. Each call is made with your login and permissions and "
      "is recorded in the server's audit log (docs/agents.md).");
  cmd->callback(
      [server, &exit_code] { run_client_verb(exit_code, [&] { return serve(*server); }); });
}

}  // namespace bowline::cli
