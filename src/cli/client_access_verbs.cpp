#include "cli/client_access_verbs.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <termios.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <iostream>
#include <thread>

#include "cli/app.hpp"
#include "cli/client_verbs.hpp"
#include "cli/local_sockets.hpp"
#include "cli/ws_client.hpp"

namespace bowline::cli {
namespace {

constexpr char kDetach = 0x1d;  // Ctrl-]

// ---- the terminal ---------------------------------------------------------------------------

// The terminal's settings before raw mode, for the signal handler to put back.
termios g_saved;
std::atomic<bool> g_raw{false};

void restore_terminal() {
  if (g_raw.exchange(false)) ::tcsetattr(STDIN_FILENO, TCSAFLUSH, &g_saved);
}

extern "C" void restore_and_die(int signal) {
  restore_terminal();  // tcsetattr is async-signal-safe
  ::signal(signal, SIG_DFL);
  ::raise(signal);
}

// Raw mode for as long as it lives; the terminal is restored on every way out (return,
// exception, SIGTERM/SIGHUP/SIGQUIT).
class RawTerminal {
 public:
  RawTerminal() {
    if (::isatty(STDIN_FILENO) != 1 || ::tcgetattr(STDIN_FILENO, &g_saved) != 0) return;
    termios raw = g_saved;
    ::cfmakeraw(&raw);
    for (int s : {SIGTERM, SIGHUP, SIGQUIT}) ::signal(s, restore_and_die);
    if (::tcsetattr(STDIN_FILENO, TCSAFLUSH, &raw) == 0) g_raw = true;
  }
  ~RawTerminal() { restore_terminal(); }
  RawTerminal(const RawTerminal&) = delete;
  RawTerminal& operator=(const RawTerminal&) = delete;
};

// ---- console --------------------------------------------------------------------------------

struct ConsoleArgs {
  ClientOptions client;
  std::string space;
};

int console(const ConsoleArgs& a) {
  Client client(resolve_endpoint(a.client.server));
  const auto id = resolve_space(client, a.space);
  WsConnection ws(client.endpoint(), "/api/v1/spaces/" + escape_segment(id) + "/console");
  std::cerr << "Connected to the console of " << a.space << " (Ctrl-] leaves)\r\n";
  RawTerminal raw;
  std::atomic<bool> closed{false};
  int wake[2];
  if (::pipe(wake) != 0) throw CliError(kExitInvalid, "pipe failed");
  std::thread output([&] {
    while (auto bytes = ws.read())
      if (!write_all(STDOUT_FILENO, *bytes)) break;
    closed = true;
    [[maybe_unused]] auto n = ::write(wake[1], "x", 1);
  });
  bool left = false;
  char buffer[4096];
  while (!closed) {
    pollfd fds[2] = {{STDIN_FILENO, POLLIN, 0}, {wake[0], POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (fds[1].revents) break;
    if (!(fds[0].revents & (POLLIN | POLLHUP))) continue;
    const auto n = ::read(STDIN_FILENO, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // stdin ended
    std::string_view typed(buffer, static_cast<std::size_t>(n));
    if (const auto at = typed.find(kDetach); at != std::string_view::npos) {
      if (at > 0) ws.write(std::string(typed.substr(0, at)));
      left = true;
      break;
    }
    ws.write(std::string(typed));
  }
  ws.close();
  output.join();
  ::close(wake[0]);
  ::close(wake[1]);
  restore_terminal();
  std::cerr << (left || !closed ? "\nLeft the console of " : "\nThe server closed the console of ")
            << a.space << "\n";
  return kExitOk;
}

// ---- vnc ------------------------------------------------------------------------------------

struct VncArgs {
  ClientOptions client;
  std::string space;
  int port = 5900;
};

// One viewer's TCP connection <-> one WebSocket, until either ends.
void forward(int fd, const Endpoint& endpoint, const std::string& path) {
  try {
    WsConnection ws(endpoint, path);
    std::thread down([&] {
      while (auto bytes = ws.read())
        if (!write_all(fd, *bytes)) break;
      ::shutdown(fd, SHUT_RDWR);
    });
    char buffer[64 * 1024];
    for (;;) {
      const auto n = ::read(fd, buffer, sizeof buffer);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0 || !ws.write(std::string(buffer, static_cast<std::size_t>(n)))) break;
    }
    ws.close();
    down.join();
  } catch (const std::exception& e) {
    std::cerr << "bowline: VNC connection refused: " << e.what() << "\n";
  }
  ::close(fd);
}

int vnc(const VncArgs& a) {
  Client client(resolve_endpoint(a.client.server));
  const auto id = resolve_space(client, a.space);
  const auto path = "/api/v1/spaces/" + escape_segment(id) + "/vnc";
  { WsConnection probe(client.endpoint(), path); }  // refusals show now, not at the viewer
  const int listener = listen_loopback(static_cast<unsigned>(a.port));
  std::cout << "VNC of " << a.space << " on 127.0.0.1:" << bound_port(listener)
            << " (point a VNC viewer there; Ctrl-C ends)" << std::endl;
  for (;;) {
    const int fd = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR) continue;
      break;
    }
    std::thread(forward, fd, client.endpoint(), path).detach();
  }
  ::close(listener);
  return kExitOk;
}

}  // namespace

void add_space_access_verbs(CLI::App& group, int& exit_code) {
  {
    auto a = std::make_shared<ConsoleArgs>();
    auto* cmd = group.add_subcommand(
        "console", "Attach this terminal to a space's serial console (Ctrl-] leaves)");
    cmd->add_option("SPACE", a->space, "The space's name or id")->required();
    add_client_options(*cmd, a->client);
    cmd->footer(
        "Others may watch and type on the same console at the same time; you first see its "
        "recent output. Needs the permission use-web-terminal and a template with console: "
        "true. Ends with Ctrl-], when stdin ends, or when the server closes the console.");
    cmd->callback([a, &exit_code] { run_client_verb(exit_code, [&] { return console(*a); }); });
  }
  {
    auto a = std::make_shared<VncArgs>();
    auto* cmd = group.add_subcommand(
        "vnc", "Forward a space's display to a port on 127.0.0.1 for a desktop VNC viewer");
    cmd->add_option("SPACE", a->space, "The space's name or id")->required();
    cmd->add_option("--port", a->port, "The local port (0: any free one)")
        ->default_val(5900)
        ->check(CLI::Range(0, 65535));
    add_client_options(*cmd, a->client);
    cmd->footer(
        "Listens on 127.0.0.1 only; each viewer connection gets its own WebSocket to the server. "
        "No VNC password is asked: the server checks your token and the permission use-vnc.");
    cmd->callback([a, &exit_code] { run_client_verb(exit_code, [&] { return vnc(*a); }); });
  }
}

}  // namespace bowline::cli
