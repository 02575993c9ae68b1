// Child processes as a seam: code that runs tools (qemu-img, xorriso) takes a ProcessRunner so
// tests can assert the exact argv and script the answers instead of running the tool.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

namespace bowline::util {

struct ProcessResult {
  // The exit status; 128 + N when a signal N ended the child (as shells report it); 127 when
  // the program could not be started (the reason is in `err`).
  int exit_code = -1;
  std::string out;
  std::string err;
  bool timed_out = false;  // the child was killed because it ran past the timeout
};

class ProcessRunner {
 public:
  virtual ~ProcessRunner();
  // Runs argv[0] (looked up in PATH when it has no '/') with argv as its arguments, no shell in
  // between, stdin from /dev/null; waits for it and returns what it wrote. A timeout of zero
  // or less means none.
  virtual ProcessResult run(const std::vector<std::string>& argv,
                            std::chrono::milliseconds timeout) = 0;
};

// The most of stdout, and of stderr, a child's output is kept to: a tool that prints more
// (`qemu-img map` of a disk crafted to be as fragmented as it can) is killed and fails, rather
// than make the server hold it all.
inline constexpr std::size_t kMaxOutput = std::size_t{64} << 20;

// posix_spawn. The child leads its own process group, and the whole group is killed
// (SIGKILL) at the timeout or once it prints more than kMaxOutput, so a grandchild that holds the
// pipes open cannot stall us. stdout and stderr are drained together with poll(), so a child that
// fills one pipe while we wait on the other cannot deadlock. Safe to call from several threads at
// once.
class SystemProcessRunner final : public ProcessRunner {
 public:
  ProcessResult run(const std::vector<std::string>& argv,
                    std::chrono::milliseconds timeout) override;
};

}  // namespace bowline::util
