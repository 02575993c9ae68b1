// The `bowline` command line: builds the verb tree and runs one verb.
#pragma once

namespace CLI {
class App;
}

namespace bowline::cli {

// Exit codes that scripts can trust (the same for every verb; `bowline --help` lists them).
inline constexpr int kExitOk = 0;
// The input was read but is not valid, the server refused the request (400, 409, 422, 5xx), an
// operation or cloud-init failed, or the node is not ready.
inline constexpr int kExitInvalid = 1;
inline constexpr int kExitUsage = 2;        // bad arguments, unreadable files
inline constexpr int kExitUnreachable = 3;  // no answer from the server (refused, DNS, TLS)
inline constexpr int kExitNotFound = 4;     // no such object, not allowed, not logged in
inline constexpr int kExitTimeout = 5;      // --wait gave up at --timeout; the work goes on

// Every verb, with the top level's version flag, footer and rules (tests and completion walk
// the same tree that run() parses).
void add_verbs(CLI::App& app, int& exit_code);

int run(int argc, char** argv);

}  // namespace bowline::cli
