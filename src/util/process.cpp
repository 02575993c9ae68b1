#include "util/process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <thread>
#include <utility>

extern char** environ;

namespace bowline::util {
namespace {

using Clock = std::chrono::steady_clock;

// How long the pipes are still read after the group was killed: a process that escaped the
// group (setsid) may hold them open forever, and we do not wait for it.
constexpr std::chrono::milliseconds kDrainAfterKill{2000};

class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() { reset(); }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  Fd(Fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Fd& operator=(Fd&&) = delete;
  int get() const { return fd_; }
  bool open() const { return fd_ >= 0; }
  void reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  int* out() { return &fd_; }

 private:
  int fd_ = -1;
};

struct Pipe {
  Fd read, write;
};

Pipe make_pipe() {
  int fds[2];
  // O_CLOEXEC: a child spawned by another thread meanwhile must not inherit our write ends,
  // or our reads would not see end-of-file until that unrelated child exits.
  if (::pipe2(fds, O_CLOEXEC) != 0)
    throw std::runtime_error(std::string("pipe2: ") + std::strerror(errno));
  Pipe p;
  *p.read.out() = fds[0];
  *p.write.out() = fds[1];
  return p;
}

class SpawnSetup {
 public:
  SpawnSetup() {
    posix_spawn_file_actions_init(&actions_);
    posix_spawnattr_init(&attr_);
  }
  ~SpawnSetup() {
    posix_spawn_file_actions_destroy(&actions_);
    posix_spawnattr_destroy(&attr_);
  }
  SpawnSetup(const SpawnSetup&) = delete;
  SpawnSetup& operator=(const SpawnSetup&) = delete;
  posix_spawn_file_actions_t* actions() { return &actions_; }
  posix_spawnattr_t* attr() { return &attr_; }

 private:
  posix_spawn_file_actions_t actions_;
  posix_spawnattr_t attr_;
};

int exit_code_of(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

// Starts argv with stdin from /dev/null and stdout, stderr on the given pipe ends. Returns
// posix_spawnp's error (0 when it started) and the child's pid in `pid`.
int spawn_child(const std::vector<std::string>& argv, int out_fd, int err_fd, pid_t& pid) {
  SpawnSetup setup;
  posix_spawn_file_actions_addopen(setup.actions(), 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(setup.actions(), out_fd, 1);
  posix_spawn_file_actions_adddup2(setup.actions(), err_fd, 2);
  // Its own process group, so a timeout kills its children too; no blocked signals and
  // default dispositions, whatever the server set for itself (SIGPIPE ignored, for one).
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setpgroup(setup.attr(), 0);
  posix_spawnattr_setsigmask(setup.attr(), &none);
  posix_spawnattr_setsigdefault(setup.attr(), &all);
  posix_spawnattr_setflags(setup.attr(),
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);

  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  return ::posix_spawnp(&pid, args[0], setup.actions(), setup.attr(), args.data(), environ);
}

// A started child and the time we wait for it until: the timeout, then kDrainAfterKill more
// once its group was killed.
struct Child {
  pid_t pid = 0;
  std::optional<Clock::time_point> deadline;
  bool killed = false;
  bool output_cut = false;  // killed because it printed more than kMaxOutput

  void kill_group() {
    ::kill(-pid, SIGKILL);
    killed = true;
    deadline = Clock::now() + kDrainAfterKill;
  }

  // poll()'s timeout: until the deadline, or -1 for none.
  int poll_timeout_ms() const {
    if (!deadline) return -1;
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(*deadline - Clock::now()).count();
    return static_cast<int>(std::max<long long>(0, left));
  }
};

// Reads both pipes into `out` and `err` until both reach end-of-file, killing the child's
// group at its deadline. Gives up on pipes still open kDrainAfterKill after the kill.
void drain_pipes(Child& child, Fd& out_fd, Fd& err_fd, std::string& out, std::string& err) {
  Fd* fds[2] = {&out_fd, &err_fd};
  std::string* sinks[2] = {&out, &err};
  char buffer[65536];
  while (out_fd.open() || err_fd.open()) {
    pollfd polled[2];
    int count = 0;
    int index[2];
    for (int i = 0; i < 2; ++i) {
      if (!fds[i]->open()) continue;
      polled[count] = {fds[i]->get(), POLLIN, 0};
      index[count++] = i;
    }
    const int ready = ::poll(polled, static_cast<nfds_t>(count), child.poll_timeout_ms());
    if (ready < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error(std::string("poll: ") + std::strerror(errno));
    }
    if (ready == 0) {
      if (child.killed) break;  // killed, and the pipes are still held open: give up
      child.kill_group();
      continue;
    }
    for (int k = 0; k < count; ++k) {
      if (polled[k].revents == 0) continue;
      const int i = index[k];
      const auto n = ::read(fds[i]->get(), buffer, sizeof buffer);
      if (n > 0 && sinks[i]->size() + static_cast<std::size_t>(n) > kMaxOutput) {
        // Whatever a tool prints is held in memory: past the bound it is stopped, not read.
        child.output_cut = true;
        child.kill_group();
        out_fd.reset();
        err_fd.reset();
        break;
      }
      if (n > 0) {
        sinks[i]->append(buffer, static_cast<std::size_t>(n));
      } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
        fds[i]->reset();
      }
    }
  }
}

// Reaps the child, which may have closed its output and still be running: killed at its
// deadline. Returns the wait status.
int wait_for_exit(Child& child) {
  int status = 0;
  auto nap = std::chrono::milliseconds(1);
  for (;;) {
    const pid_t done = ::waitpid(child.pid, &status, child.deadline ? WNOHANG : 0);
    if (done == child.pid) break;
    if (done < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error(std::string("waitpid: ") + std::strerror(errno));
    }
    if (Clock::now() >= *child.deadline) {
      if (!child.killed) child.kill_group();
      ::waitpid(child.pid, &status, 0);
      break;
    }
    std::this_thread::sleep_for(nap);
    nap = std::min(nap * 2, std::chrono::milliseconds(50));
  }
  return status;
}

}  // namespace

ProcessRunner::~ProcessRunner() = default;

ProcessResult SystemProcessRunner::run(const std::vector<std::string>& argv,
                                       std::chrono::milliseconds timeout) {
  if (argv.empty()) throw std::invalid_argument("SystemProcessRunner::run: empty argv");
  Child child;
  if (timeout.count() > 0) child.deadline = Clock::now() + timeout;

  Pipe out = make_pipe();
  Pipe err = make_pipe();
  const int rc = spawn_child(argv, out.write.get(), err.write.get(), child.pid);
  out.write.reset();
  err.write.reset();
  ProcessResult result;
  if (rc != 0) {
    result.exit_code = 127;
    result.err = "cannot start " + argv[0] + ": " + std::strerror(rc);
    return result;
  }

  drain_pipes(child, out.read, err.read, result.out, result.err);
  out.read.reset();
  err.read.reset();
  const int status = wait_for_exit(child);
  result.timed_out = child.killed && !child.output_cut;
  result.exit_code = exit_code_of(status);
  if (child.output_cut)
    result.err += "\n(" + argv[0] + " printed more than " + std::to_string(kMaxOutput >> 20) +
                  " MiB and was stopped)";
  return result;
}

}  // namespace bowline::util
