// bowline node list: the server's nodes, each with its kind, its state and why (GET
// /api/v1/nodes).
#include <iostream>
#include <sstream>

#include "cli/app.hpp"
#include "cli/client_format.hpp"
#include "cli/client_verbs.hpp"
#include "cli/verbs.hpp"

namespace bowline::cli {
namespace {

// "ready", "unreachable" (a node elsewhere that did not answer) or "not ready".
std::string state_of(const ojson& node) {
  if (node.contains("state") && node["state"].is_string()) return node["state"];
  return node.value("ready", false) ? "ready" : "not ready";
}

// Why a node is not ready: its own reason, else its first required check that is not ok.
std::string detail_of(const ojson& node) {
  if (node.contains("reason") && node["reason"].is_string()) return node["reason"];
  for (const auto& c : node.value("checks", ojson::array()))
    if (c.value("required", false) && text_of(c, "status") != "ok")
      return text_of(c, "title") + ": " + text_of(c, "detail");
  return "-";
}

std::string format_nodes(const ojson& nodes) {
  std::ostringstream out;
  out << "NAME\tKIND\tSTATE\tDETAIL\n";
  for (const auto& n : nodes)
    out << text_of(n, "name") << "\t" << text_of(n, "kind") << "\t" << state_of(n) << "\t"
        << detail_of(n) << "\n";
  return out.str();
}

struct ListArgs {
  ClientOptions client;
  bool refresh = false;
};

int list(const ListArgs& a) {
  Client client(resolve_endpoint(a.client.server));
  const auto nodes = client.get(a.refresh ? "/api/v1/nodes?refresh=1" : "/api/v1/nodes");
  if (a.client.json())
    print_json(nodes);
  else
    std::cout << format_nodes(nodes);
  return kExitOk;
}

}  // namespace

void add_node_list_verb(CLI::App& group, int& exit_code) {
  auto a = std::make_shared<ListArgs>();
  auto* cmd = group.add_subcommand("list", "List the server's nodes: kind, state and why");
  cmd->add_flag("--refresh", a->refresh,
                "Check every node now instead of the last minute's reports (admins)");
  add_client_options(*cmd, a->client);
  cmd->callback([a, &exit_code] { run_client_verb(exit_code, [&] { return list(*a); }); });
}

}  // namespace bowline::cli
