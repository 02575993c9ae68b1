// bowline space share|unshare|shares: a space's owner (or an admin) shares it with a colleague
// as viewer, user or admin; `shares` lists whom a space is shared with, or without SPACE the
// spaces shared with the caller.
#include <iostream>

#include "cli/app.hpp"
#include "cli/client_format.hpp"
#include "cli/client_share_verbs.hpp"
#include "cli/client_verbs.hpp"
#include "cli/output.hpp"
#include "cli/verbs.hpp"

namespace bowline::cli {
namespace {

struct Args {
  ClientOptions client;
  std::string space, user, role = "user";
};

std::string shares_path(const std::string& id) {
  return "/api/v1/spaces/" + escape_segment(id) + "/shares";
}

int share(const Args& a) {
  Client client(resolve_endpoint(a.client.server));
  const auto id = resolve_space(client, a.space);
  const auto made = client.put(shares_path(id) + "/" + escape_segment(a.user), {{"role", a.role}});
  if (a.client.json())
    print_json(made);
  else
    std::cout << "space " << a.space << " is shared with " << a.user << " as " << a.role << "\n";
  return kExitOk;
}

int unshare(const Args& a) {
  Client client(resolve_endpoint(a.client.server));
  const auto id = resolve_space(client, a.space);
  client.del(shares_path(id) + "/" + escape_segment(a.user));
  if (!a.client.json())
    std::cout << "space " << a.space << " is no longer shared with " << a.user << "\n";
  return kExitOk;
}

int list(const Args& a) {
  Client client(resolve_endpoint(a.client.server));
  if (a.space.empty()) {  // what others share with me
    const auto mine = client.get("/api/v1/shares");
    if (a.client.json()) {
      print_json(mine);
      return kExitOk;
    }
    std::vector<std::vector<std::string>> rows{{"SPACE", "OWNER", "ROLE", "SINCE", "NAME IT AS"}};
    for (const auto& s : mine)
      rows.push_back({text_of(s, "name"), text_of(s, "owner"), text_of(s, "role"),
                      format_time(s.value("createdAt", ojson())),
                      text_of(s, "name") + "." + text_of(s, "owner")});
    std::cout << format_table(rows);
    return kExitOk;
  }
  const auto shares = client.get(shares_path(resolve_space(client, a.space)));
  if (a.client.json()) {
    print_json(shares);
    return kExitOk;
  }
  std::vector<std::vector<std::string>> rows{{"USER", "ROLE", "SINCE"}};
  for (const auto& s : shares)
    rows.push_back(
        {text_of(s, "user"), text_of(s, "role"), format_time(s.value("createdAt", ojson()))});
  std::cout << format_table(rows);
  return kExitOk;
}

}  // namespace

void add_space_share_verbs(CLI::App& group, int& exit_code) {
  {
    auto a = std::make_shared<Args>();
    auto* cmd = group.add_subcommand(
        "share",
        "Share a space with another user: viewer (sees it, its console and display), user (also "
        "ssh, forward, terminal, console input, start and stop) or admin (also changes, "
        "snapshots, delete); again to change the role");
    cmd->add_option("SPACE", a->space, "The space's name or id")->required();
    cmd->add_option("USER", a->user, "The colleague's username")->required();
    cmd->add_option("--role", a->role, "viewer, user or admin (default: user)")
        ->check(CLI::IsMember({"viewer", "user", "admin"}));
    add_client_options(*cmd, a->client);
    cmd->footer(
        "The colleague names it SPACE.OWNER (bowline ssh SPACE.OWNER). Their SSH keys reach a "
        "running guest at once through its guest agent, else at its next start; the browser "
        "terminal works at once.");
    cmd->callback([a, &exit_code] { run_client_verb(exit_code, [&] { return share(*a); }); });
  }
  {
    auto a = std::make_shared<Args>();
    auto* cmd = group.add_subcommand(
        "unshare",
        "End a user's share of a space (their open consoles, displays, terminals and tunnels "
        "close within a second); a colleague may end their own");
    cmd->add_option("SPACE", a->space, "The space's name or id")->required();
    cmd->add_option("USER", a->user, "The colleague's username")->required();
    add_client_options(*cmd, a->client);
    cmd->callback([a, &exit_code] { run_client_verb(exit_code, [&] { return unshare(*a); }); });
  }
  {
    auto a = std::make_shared<Args>();
    auto* cmd = group.add_subcommand(
        "shares", "Whom a space is shared with; without SPACE, the spaces shared with you");
    cmd->add_option("SPACE", a->space, "The space's name or id");
    add_client_options(*cmd, a->client);
    cmd->callback([a, &exit_code] { run_client_verb(exit_code, [&] { return list(*a); }); });
  }
}

}  // namespace bowline::cli
