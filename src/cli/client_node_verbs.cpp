// bowline node list|cordon|uncordon|drain: the server's nodes, each with its kind, its state and
// why (GET /api/v1/nodes), taken out of placement and emptied by operators.
#include <unistd.h>

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
  if (node.contains("cordoned")) return "cordoned";
  if (node.contains("state") && node["state"].is_string()) return node["state"];
  return node.value("ready", false) ? "ready" : "not ready";
}

// Why a node is not ready: its own reason, else its first required check that is not ok.
std::string detail_of(const ojson& node) {
  if (node.contains("cordoned") && node["cordoned"].is_string() &&
      !node["cordoned"].get<std::string>().empty())
    return node["cordoned"];
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

struct NodeArgs {
  ClientOptions client;
  std::string node, reason;
  WaitOptions options;
  bool wait = false;
};

std::string node_path(const std::string& node) {
  return "/api/v1/nodes/" + escape_segment(node);
}

int cordon(const NodeArgs& a, bool on) {
  Client client(resolve_endpoint(a.client.server));
  ojson body = ojson::object();
  if (!a.reason.empty()) body["reason"] = a.reason;
  const auto answer = client.post(node_path(a.node) + (on ? "/cordon" : "/uncordon"), body);
  if (a.client.json())
    print_json(answer);
  else
    std::cout << "node " << a.node
              << (on ? " cordoned: no new space goes there\n"
                     : " uncordoned: it takes new spaces again\n");
  return kExitOk;
}

// Each move, and with --wait each followed to its end; exit 1 when a space stays.
int drain(const NodeArgs& a) {
  Client client(resolve_endpoint(a.client.server));
  const auto answer = client.post(node_path(a.node) + "/drain", ojson::object());
  int code = kExitOk;
  std::optional<Clock::time_point> deadline;
  if (a.options.timeout) deadline = Clock::now() + *a.options.timeout;
  for (const auto& m : answer.value("moves", ojson::array())) {
    if (m.contains("error")) {
      std::cerr << "space " << text_of(m, "space") << " stays: " << text_of(m, "error") << "\n";
      code = kExitInvalid;
      continue;
    }
    if (a.wait) {
      ProgressLine progress(std::cerr, ::isatty(STDERR_FILENO) == 1);
      const auto moved =
          wait_for_operation(client, text_of(m, "spaceId"), {{"id", m.value("operation", 0)}},
                             "move", deadline, progress);
      progress.done();
      if (moved != kExitOk) code = moved;
    }
    if (!a.client.json())
      std::cout << "space " << text_of(m, "space") << " -> " << text_of(m, "to")
                << (a.wait ? "\n" : " (moving)\n");
  }
  if (a.client.json()) print_json(answer);
  return code;
}

}  // namespace

void add_node_client_verbs(CLI::App& group, int& exit_code) {
  for (const bool on : {true, false}) {
    auto a = std::make_shared<NodeArgs>();
    auto* cmd = group.add_subcommand(
        on ? "cordon" : "uncordon",
        on ? "Take a node out of placement (admins): its spaces stay; no new one goes there"
           : "Let a cordoned node take new spaces again (admins)");
    cmd->add_option("NODE", a->node, "The node's name")->required();
    if (on) cmd->add_option("--reason", a->reason, "Why, shown in node list");
    add_client_options(*cmd, a->client);
    cmd->callback(
        [a, on, &exit_code] { run_client_verb(exit_code, [&] { return cordon(*a, on); }); });
  }
  {
    auto a = std::make_shared<NodeArgs>();
    auto* cmd = group.add_subcommand(
        "drain",
        "Cordon a node and move each of its spaces to another (admins): a running one is stopped, "
        "moved and started again there");
    cmd->add_option("NODE", a->node, "The node's name")->required();
    add_wait_options(*cmd, a->wait, a->options, false);
    add_client_options(*cmd, a->client);
    cmd->callback([a, &exit_code] { run_client_verb(exit_code, [&] { return drain(*a); }); });
  }
  auto a = std::make_shared<ListArgs>();
  auto* cmd = group.add_subcommand("list", "List the server's nodes: kind, state and why");
  cmd->add_flag("--refresh", a->refresh,
                "Check every node now instead of the last minute's reports (admins)");
  add_client_options(*cmd, a->client);
  cmd->callback([a, &exit_code] { run_client_verb(exit_code, [&] { return list(*a); }); });
}

}  // namespace bowline::cli
