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

}  // namespace

ProcessRunner::~ProcessRunner() = default;

ProcessResult SystemProcessRunner::run(const std::vector<std::string>& argv,
                                       std::chrono::milliseconds timeout) {
  if (argv.empty()) throw std::invalid_argument("SystemProcessRunner::run: empty argv");
  const auto start = Clock::now();
  std::optional<Clock::time_point> deadline;
  if (timeout.count() > 0) deadline = start + timeout;

  Pipe out = make_pipe();
  Pipe err = make_pipe();

  SpawnSetup setup;
  posix_spawn_file_actions_addopen(setup.actions(), 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(setup.actions(), out.write.get(), 1);
  posix_spawn_file_actions_adddup2(setup.actions(), err.write.get(), 2);
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

  pid_t pid = 0;
  const int rc = ::posix_spawnp(&pid, args[0], setup.actions(), setup.attr(), args.data(), environ);
  out.write.reset();
  err.write.reset();
  ProcessResult result;
  if (rc != 0) {
    result.exit_code = 127;
    result.err = "cannot start " + argv[0] + ": " + std::strerror(rc);
    return result;
  }

  auto kill_group = [&] {
    ::kill(-pid, SIGKILL);
    result.timed_out = true;
    deadline = Clock::now() + kDrainAfterKill;
  };

  // Drain both pipes until both reach end-of-file.
  Fd* fds[2] = {&out.read, &err.read};
  std::string* sinks[2] = {&result.out, &result.err};
  char buffer[65536];
  while (out.read.open() || err.read.open()) {
    pollfd polled[2];
    int count = 0;
    int index[2];
    for (int i = 0; i < 2; ++i) {
      if (!fds[i]->open()) continue;
      polled[count] = {fds[i]->get(), POLLIN, 0};
      index[count++] = i;
    }
    int wait_ms = -1;
    if (deadline) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(*deadline - Clock::now()).count();
      wait_ms = static_cast<int>(std::max<long long>(0, left));
    }
    const int ready = ::poll(polled, static_cast<nfds_t>(count), wait_ms);
    if (ready < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error(std::string("poll: ") + std::strerror(errno));
    }
    if (ready == 0) {
      if (result.timed_out) break;  // killed, and the pipes are still held open: give up
      kill_group();
      continue;
    }
    for (int k = 0; k < count; ++k) {
      if (polled[k].revents == 0) continue;
      const int i = index[k];
      const auto n = ::read(fds[i]->get(), buffer, sizeof buffer);
      if (n > 0) {
        sinks[i]->append(buffer, static_cast<std::size_t>(n));
      } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
        fds[i]->reset();
      }
    }
  }
  out.read.reset();
  err.read.reset();

  // The child may have closed its output and still be running.
  int status = 0;
  auto nap = std::chrono::milliseconds(1);
  for (;;) {
    const pid_t done = ::waitpid(pid, &status, deadline ? WNOHANG : 0);
    if (done == pid) break;
    if (done < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error(std::string("waitpid: ") + std::strerror(errno));
    }
    if (Clock::now() >= *deadline) {
      if (!result.timed_out) kill_group();
      ::waitpid(pid, &status, 0);
      break;
    }
    std::this_thread::sleep_for(nap);
    nap = std::min(nap * 2, std::chrono::milliseconds(50));
  }
  result.exit_code = exit_code_of(status);
  return result;
}

}  // namespace bowline::util
