// The `bowline` command line: builds the verb tree and runs one verb.
#pragma once

namespace bowline::cli {

// Exit codes that scripts can trust.
inline constexpr int kExitOk = 0;
inline constexpr int kExitInvalid = 1;  // the input was read but is not valid
inline constexpr int kExitUsage = 2;    // bad arguments, unreadable files

int run(int argc, char** argv);

}  // namespace bowline::cli
