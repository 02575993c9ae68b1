// bowline login: checks a token against a server and keeps both in the login file.
#include <termios.h>
#include <unistd.h>

#include <iostream>

#include "cli/app.hpp"
#include "cli/client_format.hpp"
#include "cli/client_verbs.hpp"
#include "cli/verbs.hpp"

namespace bowline::cli {
namespace {

struct LoginArgs {
  ClientOptions client;
  std::string token;
};

std::string read_token() {
  std::string token;
  if (::isatty(STDIN_FILENO) == 1) {
    termios old{};
    ::tcgetattr(STDIN_FILENO, &old);
    termios quiet = old;
    quiet.c_lflag &= ~static_cast<tcflag_t>(ECHO);
    std::cerr << "Token: " << std::flush;
    ::tcsetattr(STDIN_FILENO, TCSANOW, &quiet);
    std::getline(std::cin, token);
    ::tcsetattr(STDIN_FILENO, TCSANOW, &old);
    std::cerr << "\n";
  } else {
    std::getline(std::cin, token);
  }
  while (!token.empty() && (token.back() == '\r' || token.back() == ' ')) token.pop_back();
  if (token.empty()) throw CliError(kExitUsage, "no token given (--token, or one line on stdin)");
  return token;
}

int login(const LoginArgs& a) {
  auto endpoint = resolve_endpoint(a.client.server);
  endpoint.token = a.token.empty() ? read_token() : a.token;
  endpoint.token_from = "--token";
  Client client(endpoint);
  const auto me = client.get("/api/v1/whoami");
  write_login_file(endpoint.login_file, endpoint.server, endpoint.token);
  if (a.client.json()) {
    print_json(me);
  } else {
    const auto& user = me.contains("user") && me["user"].is_object() ? me["user"] : me;
    std::cout << "logged in to " << endpoint.server << " as " << text_of(user, "username", "?")
              << " (saved in " << endpoint.login_file << ")\n";
  }
  return kExitOk;
}

}  // namespace

void add_login_verb(CLI::App& app, int& exit_code) {
  auto a = std::make_shared<LoginArgs>();
  auto* cmd = app.add_subcommand(
      "login",
      "Check a token against a server and save both in ~/.config/bowline/login.json (0600), "
      "which later verbs use unless --server, BOWLINE_SERVER or BOWLINE_TOKEN say otherwise");
  cmd->add_option("--token", a->token,
                  "The API token (default: read from the terminal or one line of stdin)");
  add_client_options(*cmd, a->client);
  cmd->callback([a, &exit_code] { run_client_verb(exit_code, [&] { return login(*a); }); });
}

}  // namespace bowline::cli
