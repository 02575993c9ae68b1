#include "test_support.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "spec/loader.hpp"

extern char** environ;

namespace bowline::kubevirt::test {
namespace {

std::vector<char*> c_argv(const std::vector<std::string>& argv) {
  std::vector<char*> out;
  for (const auto& a : argv) out.push_back(const_cast<char*>(a.c_str()));
  out.push_back(nullptr);
  return out;
}

std::string drain(int fd) {
  std::string text;
  char buffer[4096];
  for (;;) {
    const auto n = ::read(fd, buffer, sizeof buffer);
    if (n <= 0) break;
    text.append(buffer, static_cast<std::size_t>(n));
  }
  return text;
}

}  // namespace

std::vector<nlohmann::ordered_json> logged_requests(const TempDir& dir) {
  std::vector<nlohmann::ordered_json> out;
  std::string log;
  try {
    log = read_file(dir.file("requests.log"));
  } catch (const std::exception&) {
    return out;
  }
  std::size_t start = 0;
  while (start < log.size()) {
    const auto end = log.find('\n', start);
    out.push_back(nlohmann::ordered_json::parse(log.substr(start, end - start)));
    start = end + 1;
  }
  return out;
}

Finished run(const std::vector<std::string>& argv) {
  int out_pipe[2], err_pipe[2];
  if (::pipe(out_pipe) != 0 || ::pipe(err_pipe) != 0) throw std::runtime_error("pipe failed");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err_pipe[1], 2);
  posix_spawn_file_actions_addclose(&actions, out_pipe[0]);
  posix_spawn_file_actions_addclose(&actions, err_pipe[0]);
  pid_t pid = 0;
  auto args = c_argv(argv);
  const int rc = ::posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  Finished f;
  if (rc != 0) {
    ::close(out_pipe[0]);
    ::close(err_pipe[0]);
    f.err = "cannot start " + argv[0] + ": " + std::strerror(rc);
    return f;
  }
  // stderr is drained on its own thread so neither pipe can fill up and stall the child.
  std::thread err_reader([&] { f.err = drain(err_pipe[0]); });
  f.out = drain(out_pipe[0]);
  err_reader.join();
  ::close(out_pipe[0]);
  ::close(err_pipe[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  f.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return f;
}

Server::Server(const std::vector<std::string>& argv) {
  int out_pipe[2];
  // Close-on-exec: a server started meanwhile by another thread must not hold this pipe.
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], 1);
  posix_spawn_file_actions_addclose(&actions, out_pipe[0]);
  auto args = c_argv(argv);
  pid_t pid = 0;
  const int rc = ::posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(out_pipe[1]);
  if (rc != 0) {
    ::close(out_pipe[0]);
    throw std::runtime_error("cannot start " + argv[0]);
  }
  pid_ = pid;
  // One byte at a time up to the newline, so nothing after it is taken from the pipe.
  char c = 0;
  while (::read(out_pipe[0], &c, 1) == 1 && c != '\n') first_line_ += c;
  ::close(out_pipe[0]);
}

Server::~Server() {
  if (pid_ > 0) {
    ::kill(pid_, SIGTERM);
    int status = 0;
    ::waitpid(pid_, &status, 0);
  }
}

spec::Variables default_vars() {
  return {{"user.username", "alice"}, {"space.name", "dev"}};
}

RenderOptions default_options() {
  RenderOptions o;
  o.ns = "tenant-test";
  o.owner.username = "alice";
  o.owner.email = "alice@example.org";
  o.owner.timezone = "Europe/Berlin";
  // Hashed as before the store kept hashes, so the goldens stay as they were.
  o.owner.service_password_hash = plan::password_hash("correct horse", "tenant-test/alice-dev");
  o.owner.ssh_keys = {
      "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAID1Tvq9YFtwKkQufCTL4JXdq2diK7NoYlB0HJmJ6ncfP "
      "alice@laptop"};
  o.space_name = "dev";
  return o;
}

spec::Spec load(const std::string& yaml, const spec::Variables& vars) {
  auto result = spec::load_spec(yaml, &vars);
  for (const auto& d : result.diagnostics.items())
    if (d.severity == spec::Severity::Error) ADD_FAILURE() << spec::format(d, "template");
  if (!result.spec) throw std::runtime_error("the template does not load");
  return *result.spec;
}

Manifests render(const std::string& yaml, const RenderOptions& options) {
  return render_manifests(load(yaml), options);
}

bool has_kind(const Manifests& m, const std::string& kind) {
  for (const auto& o : m.objects)
    if (o["kind"] == kind) return true;
  return false;
}

const nlohmann::ordered_json& find_kind(const Manifests& m, const std::string& kind) {
  for (const auto& o : m.objects)
    if (o["kind"] == kind) return o;
  ADD_FAILURE() << "no " << kind << " rendered";
  static const nlohmann::ordered_json kEmpty = nlohmann::ordered_json::object();
  return kEmpty;
}

}  // namespace bowline::kubevirt::test
