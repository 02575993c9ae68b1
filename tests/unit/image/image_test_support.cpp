#include "image_test_support.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "util/process.hpp"

extern char** environ;

namespace bowline::image::test {

std::string test_bytes(std::size_t size, unsigned seed) {
  std::string out(size, '\0');
  std::uint64_t x = 0x9e3779b97f4a7c15ull ^ seed;
  for (auto& c : out) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    c = static_cast<char>(x & 0xff);
  }
  return out;
}

std::vector<std::string> list_dir(const std::string& path) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(path, ec))
    names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

HttpsServer::HttpsServer(const std::string& dir, const std::string& root) {
  ca_file_ = dir + "/server.crt";
  log_ = dir + "/requests.log";
  util::SystemProcessRunner runner;
  const auto made =
      runner.run({"openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj",
                  "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1", "-keyout",
                  dir + "/server.key", "-out", ca_file_},
                 std::chrono::seconds(60));
  if (made.exit_code != 0) throw std::runtime_error("openssl failed: " + made.err);

  int out_pipe[2];
  if (::pipe(out_pipe) != 0) throw std::runtime_error("pipe failed");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], 1);
  posix_spawn_file_actions_addclose(&actions, out_pipe[0]);
  const std::vector<std::string> argv{"python3", source_path("tests/unit/image/https_server.py"),
                                      ca_file_,  dir + "/server.key",
                                      root,      log_};
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int rc = ::posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(out_pipe[1]);
  if (rc != 0) {
    ::close(out_pipe[0]);
    throw std::runtime_error("cannot start python3");
  }
  pid_ = pid;
  std::string line;
  char c = 0;
  while (::read(out_pipe[0], &c, 1) == 1 && c != '\n') line += c;
  ::close(out_pipe[0]);
  std::istringstream ports(line);  // "HTTPS_PORT HTTP_PORT"
  ports >> port_ >> http_port_;
  if (http_port_.empty()) throw std::runtime_error("the test HTTPS server did not start");
}

HttpsServer::~HttpsServer() {
  if (pid_ > 0) {
    ::kill(pid_, SIGTERM);
    int status = 0;
    ::waitpid(pid_, &status, 0);
  }
}

std::string HttpsServer::url(const std::string& mode, const std::string& name) const {
  return "https://127.0.0.1:" + port_ + "/" + mode + "/" + name;
}

std::string HttpsServer::http_url(const std::string& mode, const std::string& name) const {
  return "http://127.0.0.1:" + http_port_ + "/" + mode + "/" + name;
}

std::vector<nlohmann::json> HttpsServer::requests() const {
  std::vector<nlohmann::json> out;
  std::ifstream in(log_);
  std::string line;
  while (std::getline(in, line))
    if (!line.empty()) out.push_back(nlohmann::json::parse(line));
  return out;
}

}  // namespace bowline::image::test
