// SystemProcessRunner on real programs: exit codes, both streams, large output on both at once,
// timeouts (including a grandchild that keeps the pipes open), no shell in between.
#include "util/process.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

namespace bowline::util {
namespace {

using namespace std::chrono_literals;

ProcessResult run(const std::vector<std::string>& argv,
                  std::chrono::milliseconds timeout = 10000ms) {
  SystemProcessRunner runner;
  return runner.run(argv, timeout);
}

TEST(SystemProcessRunner, ReportsTheExitCode) {
  const auto r = run({"/bin/sh", "-c", "exit 3"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(run({"true"}).exit_code, 0);
}

TEST(SystemProcessRunner, CapturesStdoutAndStderrApart) {
  const auto r = run({"/bin/sh", "-c", "echo to-out; echo to-err >&2; echo more-out"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, "to-out\nmore-out\n");
  EXPECT_EQ(r.err, "to-err\n");
}

TEST(SystemProcessRunner, PassesArgumentsVerbatimWithoutAShell) {
  const auto r = run({"printf", "%s|%s", "$HOME; echo x", "a b"});
  EXPECT_EQ(r.out, "$HOME; echo x|a b");
}

TEST(SystemProcessRunner, StdinIsEmpty) {
  const auto r = run({"cat"}, 5000ms);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.out, "");
}

TEST(SystemProcessRunner, DrainsLargeOutputOnBothStreamsWithoutDeadlock) {
  // Far more than a pipe buffer (64 KiB) on each stream, interleaved: reading only one stream
  // at a time would stall the child on the other.
  const auto r = run({"/bin/sh", "-c",
                      "for i in 1 2 3 4 5 6 7 8; do head -c 1000000 /dev/zero; "
                      "head -c 500000 /dev/zero >&2; done"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.out.size(), 8'000'000u);
  EXPECT_EQ(r.err.size(), 4'000'000u);
}

TEST(SystemProcessRunner, KillsAChildThatRunsPastTheTimeout) {
  const auto start = std::chrono::steady_clock::now();
  const auto r = run({"sleep", "30"}, 200ms);
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_TRUE(r.timed_out);
  EXPECT_EQ(r.exit_code, 128 + 9);
  EXPECT_LT(took, 5s);
}

TEST(SystemProcessRunner, KillsGrandchildrenThatHoldThePipes) {
  // sh forks sleep, which inherits stdout: killing sh alone would leave the pipe open.
  const auto start = std::chrono::steady_clock::now();
  const auto r = run({"/bin/sh", "-c", "echo started; sleep 30; echo never"}, 300ms);
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_TRUE(r.timed_out);
  EXPECT_EQ(r.out, "started\n");
  EXPECT_LT(took, 5s);
}

TEST(SystemProcessRunner, TimesOutAChildThatClosedItsOutputButKeepsRunning) {
  const auto r = run({"/bin/sh", "-c", "exec >/dev/null 2>&1; sleep 30"}, 300ms);
  EXPECT_TRUE(r.timed_out);
}

TEST(SystemProcessRunner, AMissingProgramIs127WithTheReason) {
  const auto r = run({"/nonexistent/bowline-no-such-tool", "x"});
  EXPECT_EQ(r.exit_code, 127);
  EXPECT_NE(r.err.find("/nonexistent/bowline-no-such-tool"), std::string::npos) << r.err;
}

TEST(SystemProcessRunner, RunsFromSeveralThreadsAtOnce) {
  std::vector<std::thread> threads;
  std::vector<ProcessResult> results(8);
  for (std::size_t i = 0; i < results.size(); ++i)
    threads.emplace_back([&results, i] {
      results[i] = run({"/bin/sh", "-c", "sleep 0.1; echo " + std::to_string(i)}, 10000ms);
    });
  for (auto& t : threads) t.join();
  for (std::size_t i = 0; i < results.size(); ++i) {
    EXPECT_EQ(results[i].out, std::to_string(i) + "\n");
    EXPECT_FALSE(results[i].timed_out);
  }
}

// A tool that prints without end (qemu-img map of a disk crafted to be as fragmented as it
// can be) is stopped at the bound, and fails: the server never holds more of its output.
TEST(security_process_output, PastTheBoundTheChildIsStoppedAndFails) {
  const auto r = run({"/bin/sh", "-c", "head -c 100000000 /dev/zero; echo done >&2"}, 30000ms);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_FALSE(r.timed_out);
  EXPECT_LE(r.out.size(), kMaxOutput);
  EXPECT_NE(r.err.find("printed more than 64 MiB and was stopped"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace bowline::util
