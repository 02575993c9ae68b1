// bowline login: checks a token against a server and keeps both in the login file. For an
// https:// server whose certificate the system does not vouch for, it first shows the
// certificate's fingerprint and asks (or takes --accept-fingerprint), then pins it. With --sso
// the token comes from a single sign-on in a browser (the device authorization flow).
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <thread>

#include "cli/app.hpp"
#include "cli/client_format.hpp"
#include "cli/client_verbs.hpp"
#include "cli/tls_trust.hpp"
#include "cli/verbs.hpp"
#include "util/strings.hpp"
#include "util/tls_fingerprint.hpp"

namespace bowline::cli {
namespace {

struct LoginArgs {
  ClientOptions client;
  std::string token;
  std::string accept_fingerprint;
  bool sso = false;
};

// Single sign-on from a terminal (the device authorization flow): the server asks its
// provider for a code, the person enters it in any browser, and the server hands this CLI an
// API token of theirs once they have.
std::string sso_token(const Endpoint& endpoint) {
  auto anonymous = endpoint;
  anonymous.token.clear();
  Client client(anonymous);
  const auto start = client.post("/api/v1/sso/device", ojson::object());
  const auto id = text_of(start, "id");
  const auto complete = text_of(start, "verificationUriComplete");
  std::cerr << "To log in, open " << text_of(start, "verificationUri") << " in a browser and enter "
            << "the code " << text_of(start, "userCode") << "\n";
  if (!complete.empty()) std::cerr << "(or open " << complete << ")\n";
  std::cerr << "Waiting for the login..." << std::endl;
  auto interval = start.value("interval", 5);
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(start.value("expiresIn", 600));
  while (std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::seconds(std::max(1, interval)));
    const auto answer = client.post("/api/v1/sso/device/" + escape_segment(id), ojson::object());
    if (answer.contains("token")) return text_of(answer, "token");
    interval = answer.value("interval", interval);
  }
  throw CliError(kExitUnreachable, "the login code expired before the login was done: try again");
}

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

// An unverifiable certificate: the user compares its fingerprint with the server's and says
// yes (y/N on a terminal); without a terminal only --accept-fingerprint would do.
std::string confirm_certificate(const CertificateError& e, const Endpoint& endpoint) {
  const auto& server = endpoint.server;
  if (::isatty(STDIN_FILENO) != 1)
    throw CliError(kExitUnreachable,
                   "the certificate of " + server + " cannot be verified (" + e.reason() +
                       "); its fingerprint is " + e.seen() +
                       ". Without a terminal to ask on, nothing is trusted: if that is the "
                       "server's (bowline server prints it at start), run again with "
                       "--accept-fingerprint " +
                       e.seen());
  std::cerr << "The certificate of " << server << " cannot be verified (" << e.reason() << ").\n"
            << "Its fingerprint is " << e.seen() << "\n"
            << "Compare it with the one the server printed at start (bowline server "
               "--print-config shows it too).\n"
            << "Trust this certificate and pin it for " << server << "? [y/N] " << std::flush;
  std::string answer;
  std::getline(std::cin, answer);
  answer = util::to_lower(util::trim(answer));
  if (answer != "y" && answer != "yes")
    throw CliError(kExitUnreachable,
                   "the certificate of " + server + " was not trusted; nothing was saved");
  return e.seen();
}

// Before any token goes out: which certificate of an https:// server to hold the login to.
void trust_server(Endpoint& endpoint, const std::string& accept) {
  const bool https = is_https(endpoint.server);
  if (!accept.empty()) {
    if (!https)
      throw CliError(kExitUsage, "--accept-fingerprint is for https:// servers, and " +
                                     endpoint.server + " is not one");
    if (!util::is_certificate_fingerprint(accept))
      throw CliError(kExitUsage, "--accept-fingerprint \"" + accept +
                                     "\" is not a fingerprint: SHA256: and 43 base64 characters, "
                                     "as bowline server prints it");
    endpoint.fingerprint = accept;
    endpoint.fingerprint_from = "--accept-fingerprint";
  }
  if (!https) return;
  auto probe = endpoint;
  probe.token.clear();
  try {
    Client(probe).get("/api/v1/whoami");
  } catch (const CertificateError& e) {
    if (e.kind() == CertificateError::Kind::Mismatch) throw;
    endpoint.fingerprint = confirm_certificate(e, endpoint);
    endpoint.fingerprint_from = "your answer";
  } catch (const ApiError&) {
    // 401 without a token: the certificate passed.
  }
}

int login(const LoginArgs& a) {
  auto endpoint = resolve_endpoint(a.client.server);
  const auto pinned_before = endpoint.fingerprint;
  trust_server(endpoint, a.accept_fingerprint);
  if (a.sso && !a.token.empty()) throw CliError(kExitUsage, "--sso and --token: choose one");
  endpoint.token = a.sso ? sso_token(endpoint) : a.token.empty() ? read_token() : a.token;
  endpoint.token_from = a.sso ? "single sign-on" : "--token";
  Client client(endpoint);
  const auto me = client.get("/api/v1/whoami");
  auto file = read_login_file(endpoint.login_file).value_or(LoginFile{});
  file.server = endpoint.server;
  file.token = endpoint.token;
  if (!endpoint.fingerprint.empty()) file.fingerprints[endpoint.server] = endpoint.fingerprint;
  write_login_file(endpoint.login_file, file);
  if (a.client.json()) {
    print_json(me);
  } else {
    const auto& user = me.contains("user") && me["user"].is_object() ? me["user"] : me;
    std::cout << "logged in to " << endpoint.server << " as " << text_of(user, "username", "?")
              << " (saved in " << endpoint.login_file << ")\n";
    if (endpoint.fingerprint != pinned_before)
      std::cout << "pinned the certificate " << endpoint.fingerprint << " for " << endpoint.server
                << "\n";
  }
  return kExitOk;
}

}  // namespace

void add_login_verb(CLI::App& app, int& exit_code) {
  auto a = std::make_shared<LoginArgs>();
  auto* cmd = app.add_subcommand(
      "login",
      "Check a token against a server and save both in ~/.config/bowline/login.json (0600), "
      "which later verbs use unless --server, BOWLINE_SERVER or BOWLINE_TOKEN say otherwise. "
      "An https:// server's certificate that the system cannot verify is shown by its "
      "fingerprint and, once you confirm it, pinned: later verbs refuse any other");
  cmd->add_option("--token", a->token,
                  "The API token (default: read from the terminal or one line of stdin)");
  cmd->add_flag("--sso", a->sso,
                "Log in through the server's single sign-on: open the address shown in any "
                "browser and enter the code; the server then gives this CLI a token (30 days)");
  cmd->add_option("--accept-fingerprint", a->accept_fingerprint,
                  "Trust and pin the server's certificate with this fingerprint (SHA256:..., as "
                  "bowline server prints it) without asking");
  add_client_options(*cmd, a->client);
  cmd->callback([a, &exit_code] { run_client_verb(exit_code, [&] { return login(*a); }); });
}

}  // namespace bowline::cli
