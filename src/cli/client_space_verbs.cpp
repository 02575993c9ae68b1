// bowline space create|list|info|start|stop|restart|delete|set-ip: spaces on the server
// (space top: client_top_verb.cpp).
#include <unistd.h>

#include <iostream>

#include "cli/app.hpp"
#include "cli/client_access_verbs.hpp"
#include "cli/client_format.hpp"
#include "cli/client_share_verbs.hpp"
#include "cli/client_snapshot_verbs.hpp"
#include "cli/client_transfer_verbs.hpp"
#include "cli/client_verbs.hpp"
#include "cli/verbs.hpp"

namespace bowline::cli {
namespace {

std::string space_path(const std::string& id) {
  return "/api/v1/spaces/" + escape_segment(id);
}

struct WaitArgs {
  bool wait = false;
  WaitOptions options;
};

// After a 202: without --wait, say what was started; with it, follow the operation (and for
// create/start/restart the guest's readiness) and print the outcome.
int follow(Client& client, const ClientOptions& out, const ojson& accepted, const std::string& kind,
           const WaitArgs& wait, bool then_ready) {
  const auto space = accepted.value("space", ojson::object());
  const auto operation = accepted.value("operation", ojson::object());
  const auto id = text_of(space, "id");
  const auto name = text_of(space, "name", id);
  if (!wait.wait) {
    if (out.json()) {
      print_json(accepted);
    } else {
      std::cout << kind << " of space " << name << " accepted (space " << id << ", operation "
                << text_of(operation, "id", "?") << "); follow it with: bowline space info " << name
                << "\n";
    }
    return kExitOk;
  }
  std::optional<Clock::time_point> deadline;
  if (wait.options.timeout) deadline = Clock::now() + *wait.options.timeout;
  ProgressLine progress(std::cerr, ::isatty(STDERR_FILENO) == 1);
  int code = wait_for_operation(client, id, operation, kind, deadline, progress);
  if (code == kExitOk && then_ready && wait.options.ready)
    code = wait_for_ready(client, id, deadline, progress);
  progress.done();
  if (kind == "delete") {
    if (out.json())
      print_json(accepted);
    else if (code == kExitOk)
      std::cout << "space " << name << " deleted\n";
    return code;
  }
  if (code != kExitOk && code != kExitTimeout) return code;
  const auto now = client.get(space_path(id));
  if (out.json()) {
    print_json(now);
  } else if (code == kExitOk) {
    std::string ip = text_of(now.value("info", ojson::object()), "address");
    if (ip.empty()) ip = text_of(now, "ip");
    std::cout << "space " << name << " is " << text_of(now, "state", "?");
    if (!ip.empty()) std::cout << " at " << ip;
    if (then_ready && wait.options.ready && readiness_of(now).finished) std::cout << ", ready";
    std::cout << "\n";
  }
  return code;
}

struct CreateArgs {
  ClientOptions client;
  WaitArgs wait;
  std::string template_name, name, ip, owner, node;
  bool no_start = false;
};

int create(const CreateArgs& a) {
  Client client(resolve_endpoint(a.client.server));
  ojson body = {{"template", a.template_name}, {"name", a.name}};
  if (!a.ip.empty()) body["ip"] = a.ip;
  if (a.no_start) body["start"] = false;
  if (!a.owner.empty()) body["owner"] = a.owner;
  if (!a.node.empty()) body["node"] = a.node;
  const auto accepted = client.post("/api/v1/spaces", body);
  return follow(client, a.client, accepted, "create", a.wait, !a.no_start);
}

struct ActionArgs {
  ClientOptions client;
  WaitArgs wait;
  std::string space;
};

int action(const ActionArgs& a, const std::string& verb) {
  Client client(resolve_endpoint(a.client.server));
  const auto id = resolve_space(client, a.space);
  const auto accepted = verb == "delete"
                            ? client.del(space_path(id))
                            : client.post(space_path(id) + "/" + verb, ojson::object());
  return follow(client, a.client, accepted, verb, a.wait, verb == "start" || verb == "restart");
}

struct MoveArgs {
  ClientOptions client;
  WaitArgs wait;
  std::string space, to;
};

int move(const MoveArgs& a) {
  Client client(resolve_endpoint(a.client.server));
  const auto id = resolve_space(client, a.space);
  const auto accepted = client.post(space_path(id) + "/move", {{"to", a.to}});
  return follow(client, a.client, accepted, "move", a.wait, false);
}

struct ListArgs {
  ClientOptions client;
  bool all = false;
};

int list(const ListArgs& a) {
  Client client(resolve_endpoint(a.client.server));
  const auto spaces = client.get(a.all ? "/api/v1/spaces?all=1" : "/api/v1/spaces");
  if (a.client.json())
    print_json(spaces);
  else
    std::cout << format_spaces(spaces);
  return kExitOk;
}

struct InfoArgs {
  ClientOptions client;
  std::string space;
};

int info(const InfoArgs& a) {
  Client client(resolve_endpoint(a.client.server));
  const auto space = client.get(space_path(resolve_space(client, a.space)));
  if (a.client.json())
    print_json(space);
  else
    std::cout << format_space_info(space);
  return kExitOk;
}

struct SetIpArgs {
  ClientOptions client;
  std::string space, ip;
};

int set_ip(const SetIpArgs& a) {
  Client client(resolve_endpoint(a.client.server));
  const auto space = client.put(space_path(resolve_space(client, a.space)) + "/ip", {{"ip", a.ip}});
  if (a.client.json())
    print_json(space);
  else
    std::cout << "space " << text_of(space, "name", a.space) << " gets " << a.ip
              << " at its next start\n";
  return kExitOk;
}

// space move and space set-ip: where a stopped space runs, and at which address.
void add_move_and_set_ip(CLI::App& group, int& exit_code) {
  {
    auto a = std::make_shared<MoveArgs>();
    auto* cmd = group.add_subcommand(
        "move", "Move a stopped space to another node (admins): its disk goes with it");
    cmd->add_option("SPACE", a->space, "The space's name or id")->required();
    cmd->add_option("--to", a->to, "The node (bowline node list)")->required()->type_name("NODE");
    add_wait_options(*cmd, a->wait.wait, a->wait.options, false);
    add_client_options(*cmd, a->client);
    cmd->callback([a, &exit_code] { run_client_verb(exit_code, [&] { return move(*a); }); });
  }
  {
    auto a = std::make_shared<SetIpArgs>();
    auto* cmd = group.add_subcommand(
        "set-ip", "Change a stopped bridged space's address; the guest gets it at its next boot");
    cmd->add_option("SPACE", a->space, "The space's name or id")->required();
    cmd->add_option("IP", a->ip, "The new address")->required();
    add_client_options(*cmd, a->client);
    cmd->callback([a, &exit_code] { run_client_verb(exit_code, [&] { return set_ip(*a); }); });
  }
}

}  // namespace

void add_space_verbs(CLI::App& app, int& exit_code) {
  auto* group = app.add_subcommand(
      "space",
      "Spaces on the server: persistent VMs made from templates (name them by name or id)");
  group->require_subcommand(1);

  {
    auto a = std::make_shared<CreateArgs>();
    auto* cmd = group->add_subcommand("create", "Create a space from a template (and start it)");
    cmd->add_option("TEMPLATE", a->template_name, "The template's name on the server")->required();
    cmd->add_option("NAME", a->name, "The space's name")->required();
    cmd->add_option("--ip", a->ip, "Bridged templates: this address instead of the next free one")
        ->type_name("IP");
    cmd->add_flag("--no-start", a->no_start, "Create it stopped");
    cmd->add_option("--owner", a->owner, "Admins: create it for this user")->type_name("USERNAME");
    cmd->add_option(
           "--node", a->node,
           "The node to run it on (default: the local libvirt node; GET /api/v1/nodes lists all)")
        ->type_name("NODE");
    add_wait_options(*cmd, a->wait.wait, a->wait.options, true);
    add_client_options(*cmd, a->client);
    cmd->footer(
        "Without --wait, prints the accepted operation (-o json: the server's 202 answer). With "
        "--wait, shows progress on stderr and prints the space when done (-o json: GET "
        "/api/v1/spaces/ID).");
    cmd->callback([a, &exit_code] { run_client_verb(exit_code, [&] { return create(*a); }); });
  }
  {
    auto a = std::make_shared<ListArgs>();
    auto* cmd = group->add_subcommand("list", "List your spaces");
    cmd->add_flag("--all", a->all, "Admins: everyone's spaces");
    add_client_options(*cmd, a->client);
    cmd->callback([a, &exit_code] { run_client_verb(exit_code, [&] { return list(*a); }); });
  }
  {
    auto a = std::make_shared<InfoArgs>();
    auto* cmd = group->add_subcommand(
        "info",
        "Show a space: state, node, IP, template revision, pending redefine, readiness and the "
        "console's last lines");
    cmd->add_option("SPACE", a->space, "The space's name or id")->required();
    add_client_options(*cmd, a->client);
    cmd->callback([a, &exit_code] { run_client_verb(exit_code, [&] { return info(*a); }); });
  }
  const std::vector<std::pair<std::string, std::string>> actions{
      {"start", "Start a space (applies a changed template; a suspended one resumes where it was)"},
      {"stop", "Stop a space (ACPI shutdown, then power off after the stop timeout)"},
      {"restart", "Restart a space"},
      {"suspend",
       "Suspend a running space: its memory is saved to disk and its machine let go; start, or "
       "opening its console, display, tunnel or ssh, resumes it"},
      {"delete", "Delete a space: its domain, disk and address"}};
  for (const auto& [verb, help] : actions) {
    auto a = std::make_shared<ActionArgs>();
    auto* cmd = group->add_subcommand(verb, help);
    cmd->add_option("SPACE", a->space, "The space's name or id")->required();
    add_wait_options(*cmd, a->wait.wait, a->wait.options, verb == "start" || verb == "restart");
    add_client_options(*cmd, a->client);
    cmd->callback([a, verb = verb, &exit_code] {
      run_client_verb(exit_code, [&] { return action(*a, verb); });
    });
  }
  add_move_and_set_ip(*group, exit_code);
  add_space_top_verb(*group, exit_code);
  add_space_access_verbs(*group, exit_code);
  add_space_transfer_verbs(*group, exit_code);
  add_space_snapshot_verbs(*group, exit_code);
  add_space_share_verbs(*group, exit_code);
}

}  // namespace bowline::cli
