// The tools `bowline mcp` offers an agent (docs/agents.md): each one a few calls of the
// server's API with the CLI's own login, so every tool call is checked with the caller's
// permissions and recorded in the audit log like any other request (the calls carry
// X-Bowline-Agent: mcp/TOOL, so the server records the reads too).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "cli/client.hpp"

namespace bowline::cli::mcp {

struct ToolResult {
  std::string text;  // what the agent reads
  bool error = false;
};

struct Tool {
  std::string name;
  std::string description;
  ojson input_schema;  // JSON Schema of its arguments
  std::function<ToolResult(Client&, const ojson& arguments)> call;
};

// Every tool, in the order tools/list shows them. `self` is this program (for run_command,
// which runs `bowline ssh`).
std::vector<Tool> tools(const std::string& self);

}  // namespace bowline::cli::mcp
