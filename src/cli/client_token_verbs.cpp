// bowline token list|create|revoke: one's API tokens (an admin: anyone's, with --user).
#include <iostream>

#include "cli/app.hpp"
#include "cli/client_format.hpp"
#include "cli/client_verbs.hpp"
#include "cli/output.hpp"
#include "cli/verbs.hpp"

namespace bowline::cli {
namespace {

struct TokenArgs {
  ClientOptions client;
  std::string user;     // empty: the caller
  std::string name;     // create: the new token's; revoke: its id or name
  std::string expires;  // create: "30d" and the like; empty: until revoked
};

std::string tokens_path(Client& client, const std::string& user) {
  const auto who = user.empty() ? text_of(client.get("/api/v1/whoami"), "username") : user;
  return "/api/v1/users/" + escape_segment(who) + "/tokens";
}

std::string when_or(const ojson& token, const char* key, const std::string& none) {
  return token.contains(key) && !token[key].is_null() ? format_time(token[key]) : none;
}

int list(const TokenArgs& a) {
  Client client(resolve_endpoint(a.client.server));
  const auto tokens = client.get(tokens_path(client, a.user));
  if (a.client.json()) {
    print_json(tokens);
    return kExitOk;
  }
  std::vector<std::vector<std::string>> rows{{"ID", "NAME", "CREATED", "LAST USED", "EXPIRES"}};
  for (const auto& t : tokens)
    rows.push_back({text_of(t, "id"), text_of(t, "name"), when_or(t, "createdAt", "-"),
                    when_or(t, "lastUsed", "never"), when_or(t, "expiresAt", "never")});
  std::cout << format_table(rows);
  return kExitOk;
}

int create(const TokenArgs& a) {
  Client client(resolve_endpoint(a.client.server));
  ojson body = {{"name", a.name}};
  if (!a.expires.empty()) body["expires"] = a.expires;
  const auto made = client.post(tokens_path(client, a.user), body);
  if (a.client.json()) {
    print_json(made);
    return kExitOk;
  }
  std::cerr << "token " << text_of(made, "id") << " (" << text_of(made, "name") << "), expires "
            << when_or(made, "expiresAt", "never") << "; shown once:\n";
  std::cout << text_of(made, "token") << "\n";
  return kExitOk;
}

int revoke(const TokenArgs& a) {
  Client client(resolve_endpoint(a.client.server));
  const auto gone = client.del(tokens_path(client, a.user) + "/" + escape_segment(a.name));
  if (a.client.json())
    print_json(gone);
  else
    std::cout << "token " << text_of(gone, "id") << " (" << text_of(gone, "name") << ") revoked\n";
  return kExitOk;
}

void add_user_option(CLI::App& cmd, TokenArgs& a) {
  cmd.add_option("--user", a.user, "Admins: another user's tokens")->type_name("USERNAME");
  add_client_options(cmd, a.client);
}

}  // namespace

void add_token_verbs(CLI::App& app, int& exit_code) {
  auto* group = app.add_subcommand("token", "API tokens: list, create and revoke");
  group->require_subcommand(1);
  {
    auto a = std::make_shared<TokenArgs>();
    auto* cmd = group->add_subcommand("list", "Your tokens (never their secrets)");
    add_user_option(*cmd, *a);
    cmd->callback([a, &exit_code] { run_client_verb(exit_code, [&] { return list(*a); }); });
  }
  {
    auto a = std::make_shared<TokenArgs>();
    auto* cmd = group->add_subcommand("create", "Make a token; prints its secret once on stdout");
    cmd->add_option("NAME", a->name, "What the token is for, e.g. laptop or ci")->required();
    cmd->add_option("--expires", a->expires, "Lifetime such as 12h, 30d or 2w (default: none)")
        ->type_name("DURATION");
    add_user_option(*cmd, *a);
    cmd->callback([a, &exit_code] { run_client_verb(exit_code, [&] { return create(*a); }); });
  }
  {
    auto a = std::make_shared<TokenArgs>();
    auto* cmd = group->add_subcommand(
        "revoke", "End a token at once (requests get 401, its open sockets close)");
    cmd->add_option("TOKEN", a->name, "The token's id or name")->required();
    add_user_option(*cmd, *a);
    cmd->callback([a, &exit_code] { run_client_verb(exit_code, [&] { return revoke(*a); }); });
  }
}

}  // namespace bowline::cli
