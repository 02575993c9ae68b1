// bowline user create|list|info|set-password|add-key|set-quota|disable|enable|delete: users on
// the server (admins; info, set-password and add-key also for oneself).
#include <termios.h>
#include <unistd.h>

#include <iostream>

#include "cli/app.hpp"
#include "cli/client_format.hpp"
#include "cli/client_verbs.hpp"
#include "cli/template_input.hpp"
#include "cli/verbs.hpp"

namespace bowline::cli {
namespace {

std::string user_path(const std::string& username) {
  return "/api/v1/users/" + escape_segment(username);
}

// An SSH key given as a file (~/.ssh/id_ed25519.pub) or as the key's text.
std::string key_text(const std::string& value) {
  if (value.rfind("ssh-", 0) != 0 && value.rfind("ecdsa-", 0) != 0 && value.rfind("sk-", 0) != 0) {
    if (const auto text = read_file(value)) {
      auto key = *text;
      while (!key.empty() && (key.back() == '\n' || key.back() == '\r')) key.pop_back();
      if (key.find('\n') != std::string::npos)
        throw CliError(kExitUsage, value + ": holds more than one line; give one key a time");
      return key;
    }
  }
  return value;
}

std::string trimmed_line(std::istream& in) {
  std::string line;
  std::getline(in, line);
  while (!line.empty() && (line.back() == '\r' || line.back() == '\n')) line.pop_back();
  return line;
}

// From the terminal without echo (a new one asked twice), or one line from a pipe.
std::string read_secret(const std::string& what, bool confirm = true) {
  if (::isatty(STDIN_FILENO) != 1) {
    const auto secret = trimmed_line(std::cin);
    if (secret.empty()) throw CliError(kExitUsage, "no " + what + " on standard input");
    return secret;
  }
  termios old{};
  ::tcgetattr(STDIN_FILENO, &old);
  termios quiet = old;
  quiet.c_lflag &= ~static_cast<tcflag_t>(ECHO);
  auto ask = [&](const std::string& prompt) {
    std::cerr << prompt << std::flush;
    ::tcsetattr(STDIN_FILENO, TCSANOW, &quiet);
    const auto line = trimmed_line(std::cin);
    ::tcsetattr(STDIN_FILENO, TCSANOW, &old);
    std::cerr << "\n";
    return line;
  };
  const auto first = ask((confirm ? "New " : "") + what + ": ");
  if (first.empty()) throw CliError(kExitUsage, "the " + what + " is empty");
  if (confirm && ask("Again: ") != first) throw CliError(kExitUsage, "the two entries differ");
  return first;
}

struct CreateArgs {
  ClientOptions client;
  std::string username, email, timezone, password, service_password;
  std::vector<std::string> keys, permissions;
};

int create(const CreateArgs& a) {
  ojson body = {{"username", a.username}};
  if (!a.email.empty()) body["email"] = a.email;
  if (!a.timezone.empty()) body["timezone"] = a.timezone;
  if (!a.password.empty()) body["password"] = a.password;
  if (!a.service_password.empty()) body["servicePassword"] = a.service_password;
  if (!a.keys.empty()) {
    body["sshKeys"] = ojson::array();
    for (const auto& key : a.keys) body["sshKeys"].push_back(key_text(key));
  }
  if (!a.permissions.empty()) body["permissions"] = a.permissions;
  Client client(resolve_endpoint(a.client.server));
  const auto answer = client.post("/api/v1/users", body);
  if (a.client.json()) {
    print_json(answer);
    return kExitOk;
  }
  const auto& user =
      answer.contains("user") && answer["user"].is_object() ? answer["user"] : answer;
  std::cout << format_user(user);
  if (const auto token = text_of(answer, "token"); !token.empty())
    std::cout << "token (shown once): " << token << "\n";
  return kExitOk;
}

int list(const ClientOptions& o) {
  Client client(resolve_endpoint(o.server));
  const auto users = client.get("/api/v1/users");
  if (o.json())
    print_json(users);
  else
    std::cout << format_users(users);
  return kExitOk;
}

struct InfoArgs {
  ClientOptions client;
  std::string username;  // empty: oneself
};

int info(const InfoArgs& a) {
  Client client(resolve_endpoint(a.client.server));
  const auto user = client.get(a.username.empty() ? "/api/v1/whoami" : user_path(a.username));
  if (a.client.json())
    print_json(user);
  else
    std::cout << format_user(user);
  return kExitOk;
}

// Each limit as given ("default", "unlimited", "4", "8G"): the server reads and checks them.
struct QuotaArgs {
  ClientOptions client;
  std::string username;
  std::string spaces, cpus, memory, disk;  // empty: not given
};

int set_quota(const QuotaArgs& a) {
  ojson body = ojson::object();
  const std::pair<const char*, const std::string*> given[] = {
      {"spaces", &a.spaces}, {"cpus", &a.cpus}, {"memory", &a.memory}, {"disk", &a.disk}};
  for (const auto& [key, value] : given)
    if (!value->empty()) body[key] = *value;
  if (body.empty())
    throw CliError(kExitUsage,
                   "set-quota: give at least one of --spaces, --cpus, --memory, --disk");
  Client client(resolve_endpoint(a.client.server));
  const auto user = client.patch(user_path(a.username) + "/quota", body);
  if (a.client.json())
    print_json(user);
  else
    std::cout << a.username << "'s " << format_quota(user);
  return kExitOk;
}

struct PasswordArgs {
  ClientOptions client;
  std::string username;
  bool service = false;
  bool revoke_tokens = false;
};

int set_password(const PasswordArgs& a) {
  Client client(resolve_endpoint(a.client.server));
  ojson body;
  if (!a.service) {
    // One's own web password changes only with the current one (first, from a pipe).
    const auto me = client.get("/api/v1/whoami");
    if (text_of(me, "username") == a.username && me.value("hasPassword", false))
      body["currentPassword"] = read_secret("Current password", false);
  }
  body[a.service ? "servicePassword" : "password"] =
      read_secret(a.service ? "service password" : "password");
  if (a.revoke_tokens) body["revokeTokens"] = true;
  const auto user = client.patch(user_path(a.username), body);
  if (a.client.json())
    print_json(user);
  else
    std::cout << (a.service ? "service password" : "password") << " of " << a.username << " changed"
              << (a.service ? " (spaces get it at their next start)" : "") << "\n";
  return kExitOk;
}

struct KeyArgs {
  ClientOptions client;
  std::string username, key;
};

int add_key(const KeyArgs& a) {
  const auto key = key_text(a.key);
  Client client(resolve_endpoint(a.client.server));
  const auto user = client.post(user_path(a.username) + "/keys", {{"key", key}});
  if (a.client.json())
    print_json(user);
  else
    std::cout << "key added to " << a.username << " (spaces get it at their next start)\n";
  return kExitOk;
}

struct UserArgs {
  ClientOptions client;
  std::string username;
  bool delete_spaces = false;
  std::string transfer_to;
};

int set_disabled(const UserArgs& a, bool disabled) {
  Client client(resolve_endpoint(a.client.server));
  const auto user = client.patch(user_path(a.username), {{"disabled", disabled}});
  if (a.client.json())
    print_json(user);
  else
    std::cout << a.username
              << (disabled ? " disabled: their sessions ended; tokens, logins and open consoles "
                             "and tunnels no longer work\n"
                           : " enabled: their tokens work again\n");
  return kExitOk;
}

// With --delete-spaces: the account is disabled first (nothing new is made meanwhile), each of
// its spaces deleted and waited for, then the account.
int remove_user(const UserArgs& a) {
  Client client(resolve_endpoint(a.client.server));
  if (a.delete_spaces) {
    client.patch(user_path(a.username), {{"disabled", true}});
    const auto spaces = client.get("/api/v1/spaces?all=1");
    ProgressLine progress(std::cerr, ::isatty(STDERR_FILENO) == 1);
    for (const auto& space : spaces) {
      if (text_of(space, "owner") != a.username) continue;
      const auto id = text_of(space, "id");
      const auto answer = client.del("/api/v1/spaces/" + escape_segment(id));
      std::cerr << "deleting space " << text_of(space, "name") << "\n";
      if (const int code =
              wait_for_operation(client, id, answer["operation"], "delete", std::nullopt, progress);
          code != kExitOk)
        return code;
    }
    progress.done();
  }
  if (!a.transfer_to.empty()) {
    client.del(user_path(a.username) + "?transfer_to=" + escape_segment(a.transfer_to));
    if (!a.client.json())
      std::cout << "user " << a.username << " deleted; their spaces are " << a.transfer_to
                << "'s (the guest account changes at each space's next start)\n";
    return kExitOk;
  }
  client.del(user_path(a.username));
  if (!a.client.json()) std::cout << "user " << a.username << " deleted\n";
  return kExitOk;
}

void add_info_verb(CLI::App& group, int& exit_code) {
  auto a = std::make_shared<InfoArgs>();
  auto* cmd = group.add_subcommand(
      "info", "A user's account and their use against their quota (yours without USERNAME)");
  cmd->add_option("USERNAME", a->username, "The user (admins: anyone)");
  add_client_options(*cmd, a->client);
  cmd->callback([a, &exit_code] { run_client_verb(exit_code, [&] { return info(*a); }); });
}

void add_set_quota_verb(CLI::App& group, int& exit_code) {
  auto a = std::make_shared<QuotaArgs>();
  auto* cmd = group.add_subcommand(
      "set-quota",
      "Admins: limit what a user may hold (stopped spaces and pool claims count); each value "
      "may be 'default' (the server's) or 'unlimited'");
  cmd->add_option("USERNAME", a->username, "The user")->required();
  cmd->add_option("--spaces", a->spaces, "How many spaces")->type_name("N");
  cmd->add_option("--cpus", a->cpus, "vCPUs of all their spaces together")->type_name("N");
  cmd->add_option("--memory", a->memory, "Memory of all their spaces together (e.g. 16G)")
      ->type_name("SIZE");
  cmd->add_option("--disk", a->disk, "Disk of all their spaces together (e.g. 200G)")
      ->type_name("SIZE");
  add_client_options(*cmd, a->client);
  cmd->callback([a, &exit_code] { run_client_verb(exit_code, [&] { return set_quota(*a); }); });
}

}  // namespace

void add_user_verbs(CLI::App& app, int& exit_code) {
  auto* group = app.add_subcommand("user", "Users on the server");
  group->require_subcommand(1);
  {
    auto a = std::make_shared<CreateArgs>();
    auto* cmd = group->add_subcommand(
        "create", "Admins: create a user; prints the user's first API token (shown once)");
    cmd->add_option("USERNAME", a->username, "The user's name (also their login in spaces)")
        ->required();
    cmd->add_option("--email", a->email, "E-mail address");
    cmd->add_option("--timezone", a->timezone, "Time zone for their spaces, e.g. Europe/Berlin");
    cmd->add_option("--password", a->password, "Password for the web login");
    cmd->add_option("--service-password", a->service_password,
                    "Password of their account inside spaces");
    cmd->add_option("--ssh-key", a->keys, "An SSH public key, or a file with one (repeatable)")
        ->type_name("KEY|FILE");
    cmd->add_option("--permission", a->permissions,
                    "admin, use-vnc, use-web-terminal, use-ssh or use-ports (repeatable)")
        ->type_name("PERMISSION");
    add_client_options(*cmd, a->client);
    cmd->callback([a, &exit_code] { run_client_verb(exit_code, [&] { return create(*a); }); });
  }
  {
    auto a = std::make_shared<ClientOptions>();
    auto* cmd = group->add_subcommand("list", "Admins: list users");
    add_client_options(*cmd, *a);
    cmd->callback([a, &exit_code] { run_client_verb(exit_code, [&] { return list(*a); }); });
  }
  add_info_verb(*group, exit_code);
  add_set_quota_verb(*group, exit_code);
  {
    auto a = std::make_shared<PasswordArgs>();
    auto* cmd = group->add_subcommand(
        "set-password",
        "Change a password, read from the terminal (twice, not shown) or one line of stdin");
    cmd->add_option("USERNAME", a->username, "The user")->required();
    cmd->add_flag("--service", a->service,
                  "The service password (their account inside spaces), not the web login's");
    cmd->add_flag("--revoke-tokens", a->revoke_tokens,
                  "Revoke every API token of the user too (this command's own included)")
        ->excludes("--service");
    add_client_options(*cmd, a->client);
    cmd->callback(
        [a, &exit_code] { run_client_verb(exit_code, [&] { return set_password(*a); }); });
  }
  {
    auto a = std::make_shared<KeyArgs>();
    auto* cmd = group->add_subcommand("add-key", "Add an SSH public key to a user");
    cmd->add_option("USERNAME", a->username, "The user")->required();
    cmd->add_option("KEY", a->key, "The key's text, or a file with it (~/.ssh/id_ed25519.pub)")
        ->required();
    add_client_options(*cmd, a->client);
    cmd->callback([a, &exit_code] { run_client_verb(exit_code, [&] { return add_key(*a); }); });
  }
  for (const bool disabled : {true, false}) {
    auto a = std::make_shared<UserArgs>();
    auto* cmd = group->add_subcommand(
        disabled ? "disable" : "enable",
        disabled ? "Admins: stop a user's logins, tokens, sessions and open sockets at once"
                 : "Admins: let a disabled user in again (their tokens work again)");
    cmd->add_option("USERNAME", a->username, "The user")->required();
    add_client_options(*cmd, a->client);
    cmd->callback([a, disabled, &exit_code] {
      run_client_verb(exit_code, [&] { return set_disabled(*a, disabled); });
    });
  }
  {
    auto a = std::make_shared<UserArgs>();
    auto* cmd = group->add_subcommand(
        "delete", "Admins: delete a user with their tokens (refused while they own spaces)");
    cmd->add_option("USERNAME", a->username, "The user")->required();
    cmd->add_flag("--delete-spaces", a->delete_spaces,
                  "Disable the user, delete each of their spaces (and wait), then the user");
    cmd->add_option("--transfer-to", a->transfer_to,
                    "Hand every space of the user to OTHER (all or none), then delete the user")
        ->excludes("--delete-spaces");
    add_client_options(*cmd, a->client);
    cmd->callback([a, &exit_code] { run_client_verb(exit_code, [&] { return remove_user(*a); }); });
  }
}

}  // namespace bowline::cli
