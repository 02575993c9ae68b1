// A real `bowline server` for CLI tests, on libvirt's test:///default driver, a temp data
// directory and a port of its own, with the CLI run against it as the admin or another token:
// to the end (run) or in the background (start) for verbs that keep running.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace bowline::clitest {

namespace fs = std::filesystem;

inline std::string slurp(const fs::path& file) {
  std::ifstream in(file);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

inline std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

inline std::string bowline_binary() {
  return std::string(BOWLINE_BINARY_DIR) + "/src/bowline";
}

// Waits (bounded) until `file` holds a match of `pattern`; the match, or nullopt.
inline std::optional<std::smatch> wait_for_text(const fs::path& file, const std::regex& pattern,
                                                std::chrono::seconds within, std::string& text) {
  const auto deadline = std::chrono::steady_clock::now() + within;
  std::smatch match;
  for (;;) {
    text = slurp(file);
    if (std::regex_search(text, match, pattern)) return match;
    if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

class ServerProcess {
 public:
  struct Run {
    int code = -1;
    std::string out, err;
  };

  // A CLI process left running: its output goes to files.
  struct Background {
    pid_t pid = -1;
    fs::path out, err;
    // The exit code once it has ended, nullopt while it runs.
    std::optional<int> exited() {
      if (code) return code;
      int status = 0;
      if (::waitpid(pid, &status, WNOHANG) != pid) return std::nullopt;
      code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      return code;
    }
    void stop() {
      if (exited()) return;
      ::kill(pid, SIGTERM);
      int status = 0;
      ::waitpid(pid, &status, 0);
      code = -1;
    }
    std::optional<int> code;
  };

  void start() {
    std::string pattern = (fs::temp_directory_path() / "bowline-cli-server-XXXXXX").string();
    dir_ = ::mkdtemp(pattern.data());
    fs::create_directories(dir_ / "images" / "cloud-images");
    fs::create_directories(dir_ / "home");
    const auto image = (dir_ / "images" / "cloud-images" / "tiny.qcow2").string();
    ASSERT_EQ(std::system(("qemu-img create -q -f qcow2 " + shell_quote(image) + " 64M").c_str()),
              0);
    const auto log = dir_ / "server.log";
    const auto binary = bowline_binary();
    pid_ = ::fork();
    ASSERT_GE(pid_, 0);
    if (pid_ == 0) {
      const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      ::dup2(fd, 1);
      ::dup2(fd, 2);
      const auto data = (dir_ / "data").string(), images = (dir_ / "images").string();
      ::execl(binary.c_str(), binary.c_str(), "server", "--listen", "127.0.0.1:0", "--data-dir",
              data.c_str(), "--images-path", images.c_str(), "--libvirt-uri", "test:///default",
              "--domain-type", "qemu", static_cast<char*>(nullptr));
      ::_exit(127);
    }
    std::string text;
    const auto match =
        wait_for_text(log, std::regex("listening on (http://127\\.0\\.0\\.1:[0-9]+)"),
                      std::chrono::seconds(30), text);
    ASSERT_TRUE(match) << "the server did not start:\n" << text;
    url_ = (*match)[1];
    token_ = slurp(dir_ / "data" / "admin.token");
    while (!token_.empty() && token_.back() == '\n') token_.pop_back();
    ASSERT_FALSE(token_.empty());
  }

  void stop() {
    if (pid_ > 0) {
      ::kill(pid_, SIGTERM);
      int status = 0;
      ::waitpid(pid_, &status, 0);
      pid_ = -1;
    }
    std::error_code ec;
    if (!dir_.empty()) fs::remove_all(dir_, ec);
  }

  const fs::path& dir() const { return dir_; }
  const std::string& url() const { return url_; }
  const std::string& admin_token() const { return token_; }

  // `bowline ARGS` to its end, as the admin unless `token` says otherwise.
  Run run(const std::string& args, const std::string& token = {}) const {
    return run_as(args, token.empty() ? token_ : token);
  }

  // `bowline ARGS` with `token` (nullopt: none at all) and `stdin_text` on its standard input.
  Run run_as(const std::string& args, const std::optional<std::string>& token,
             const std::string& stdin_text = "") const {
    const auto err_file = dir_ / "stderr.txt";
    const auto in_file = dir_ / "stdin.txt";
    std::ofstream(in_file) << stdin_text;
    const auto command = env(token) + " " + bowline_binary() + " " + args + " <" +
                         shell_quote(in_file.string()) + " 2>" + shell_quote(err_file.string());
    Run r;
    FILE* pipe = popen(command.c_str(), "r");
    std::array<char, 4096> buffer{};
    std::size_t n = 0;
    while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) r.out.append(buffer.data(), n);
    const int status = pclose(pipe);
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.err = slurp(err_file);
    return r;
  }

  // `bowline ARGS` left running; `name` names its output files.
  Background start_cli(const std::string& args, const std::string& name,
                       const std::string& token = {}) const {
    Background b;
    b.out = dir_ / (name + ".out");
    b.err = dir_ / (name + ".err");
    const auto command = "exec " + env(token.empty() ? token_ : token) + " " + bowline_binary() +
                         " " + args + " </dev/null >" + shell_quote(b.out.string()) + " 2>" +
                         shell_quote(b.err.string());
    b.pid = ::fork();
    if (b.pid == 0) {
      ::execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    return b;
  }

 private:
  std::string env(const std::optional<std::string>& token) const {
    return "env -u BOWLINE_TOKEN HOME=" + shell_quote((dir_ / "home").string()) +
           " BOWLINE_SERVER=" + shell_quote(url_) +
           (token ? " BOWLINE_TOKEN=" + shell_quote(*token) : std::string());
  }

  fs::path dir_;
  pid_t pid_ = -1;
  std::string url_, token_;
};

}  // namespace bowline::clitest
