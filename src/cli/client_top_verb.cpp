// bowline space top: what the visible spaces use, as a table redrawn every few seconds (like
// virt-top), from GET /api/v1/spaces (the server's latest figures; the list asks no node).
#include <unistd.h>

#include <chrono>
#include <ctime>
#include <iostream>
#include <thread>

#include "cli/app.hpp"
#include "cli/client_format.hpp"
#include "cli/client_verbs.hpp"
#include "cli/verbs.hpp"

namespace bowline::cli {
namespace {

struct TopArgs {
  ClientOptions client;
  bool all = false;
  int rounds = -1;  // -1: until interrupted on a terminal, once otherwise
  double delay = 5;
};

std::string clock_now() {
  const auto now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char buffer[16];
  std::strftime(buffer, sizeof buffer, "%H:%M:%S", &local);
  return buffer;
}

std::string summary(const ojson& spaces) {
  std::size_t running = 0;
  for (const auto& s : spaces)
    if (text_of(s, "state") == "running") ++running;
  return std::to_string(spaces.size()) + " spaces, " + std::to_string(running) + " running";
}

// One round: on a terminal the screen is cleared and redrawn; otherwise (a script) the table
// is printed after the ones before, with a blank line between; -o json prints the list on
// one line.
void show(const ojson& spaces, const TopArgs& a, bool terminal, bool first) {
  if (a.client.json()) {
    std::cout << spaces.dump() << "\n" << std::flush;
    return;
  }
  if (terminal)
    std::cout << "\x1b[H\x1b[2J";
  else if (!first)
    std::cout << "\n";
  std::cout << "bowline space top - " << clock_now() << " - " << summary(spaces);
  if (terminal) std::cout << " (every " << a.delay << " s; Ctrl-C ends)";
  std::cout << "\n\n" << format_top(spaces) << std::flush;
}

int top(const TopArgs& a) {
  Client client(resolve_endpoint(a.client.server));
  const bool terminal = ::isatty(STDOUT_FILENO) == 1 && !a.client.json();
  const int rounds = a.rounds >= 0 ? a.rounds : (terminal ? 0 : 1);  // 0: no end
  const auto delay = std::chrono::milliseconds(static_cast<long long>(a.delay * 1000));
  for (int round = 0; rounds == 0 || round < rounds; ++round) {
    if (round > 0) std::this_thread::sleep_for(delay);
    show(client.get(a.all ? "/api/v1/spaces?all=1" : "/api/v1/spaces"), a, terminal, round == 0);
  }
  return kExitOk;
}

}  // namespace

void add_space_top_verb(CLI::App& space_group, int& exit_code) {
  auto a = std::make_shared<TopArgs>();
  auto* cmd = space_group.add_subcommand(
      "top", "What your spaces use (CPU, memory, disk, network), redrawn every few seconds");
  cmd->add_flag("--all", a->all, "Admins: everyone's spaces");
  cmd->add_option("-n,--rounds", a->rounds,
                  "Show this many rounds, then end (default: until Ctrl-C on a terminal, one "
                  "round otherwise)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("-d,--delay", a->delay, "Seconds between rounds")
      ->check(CLI::Range(0.5, 3600.0))
      ->capture_default_str();
  add_client_options(*cmd, a->client);
  cmd->footer(
      "The figures are the server's latest, sampled every server.stats.interval (10 s by "
      "default): CPU% of the space's vCPUs, memory used / what the guest has, disk and network "
      "bytes per second. Stopped spaces show -. Not a terminal: plain tables, one a round; -o "
      "json: the list of GET /api/v1/spaces on one line a round.");
  cmd->callback([a, &exit_code] { run_client_verb(exit_code, [&] { return top(*a); }); });
}

}  // namespace bowline::cli
