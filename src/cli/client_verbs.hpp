// What the verbs that talk to the server share: the --server/--output options, error-to-exit
// code handling, naming spaces by id or name, and --wait (operations and readiness).
#pragma once

#include <CLI/CLI.hpp>
#include <chrono>
#include <functional>
#include <iosfwd>
#include <optional>
#include <string>

#include "cli/client.hpp"

namespace bowline::cli {

struct ClientOptions {
  std::string server;
  std::string output = "table";
  bool json() const { return output == "json"; }
};

// --server URL and --output/-o table|json.
void add_client_options(CLI::App& command, ClientOptions& options);

// Runs a verb's body: its return value is the exit code; a CliError prints "bowline: MESSAGE"
// on stderr and ends with its code.
void run_client_verb(int& exit_code, const std::function<int()>& body);

// The server's JSON as `--output json` prints it.
void print_json(const ojson& value);

// A space named by id (a UUID) or by name: names are looked up in GET /spaces (and, when that
// has no match, ?all=1 for admins). Throws CliError: 4 when there is none, 2 when the name is
// ambiguous.
std::string resolve_space(Client& client, const std::string& id_or_name);

// The line on stderr that shows what a wait is doing: redrawn in place on a terminal, a new
// line per step (and per 10% of a download) otherwise.
class ProgressLine {
 public:
  ProgressLine(std::ostream& out, bool terminal);
  ~ProgressLine();
  void show(const std::string& text, const std::string& step_key);
  void done();  // ends the line on a terminal

 private:
  std::ostream& out_;
  bool terminal_;
  std::string last_key_;
  std::size_t drawn_ = 0;
};

struct WaitOptions {
  std::optional<std::chrono::seconds> timeout;  // none: wait as long as it takes
  bool ready = true;                            // after create/start: wait for cloud-init
};

// Adds --wait, --timeout SECONDS and (`with_ready`) --no-ready.
void add_wait_options(CLI::App& command, bool& wait, WaitOptions& options, bool with_ready);

using Clock = std::chrono::steady_clock;

// Follows operation `operation` (the 202 answer's operation.id) of space `space_id` on the event
// stream, polling the operation too, until it ends. Returns kExitOk when it succeeded; prints the
// error and returns kExitInvalid when it failed; kExitTimeout at the deadline.
int wait_for_operation(Client& client, const std::string& space_id, const ojson& operation,
                       const std::string& kind, std::optional<Clock::time_point> deadline,
                       ProgressLine& progress);

// Polls the space until cloud-init has finished (kExitOk), failed (kExitInvalid, with the
// console's last lines), the space stopped or failed (kExitInvalid), or the deadline
// (kExitTimeout). A server that reports no readiness ends the wait at once (kExitOk).
int wait_for_ready(Client& client, const std::string& space_id,
                   std::optional<Clock::time_point> deadline, ProgressLine& progress);

}  // namespace bowline::cli
