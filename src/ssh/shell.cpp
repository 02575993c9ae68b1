#include "ssh/shell.hpp"

#include <fcntl.h>
#include <libssh/libssh.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <mutex>
#include <string_view>
#include <vector>

#include "util/strings.hpp"

namespace bowline::ssh {

namespace {

void init_once() {
  static std::once_flag once;
  std::call_once(once, [] { ssh_init(); });
}

// The type and base64 fields of "TYPE BASE64 [comment]".
std::pair<std::string, std::string> key_fields(const std::string& public_line) {
  std::vector<std::string> fields;
  for (auto& field : util::split(public_line, ' '))
    if (!field.empty()) fields.push_back(std::move(field));
  if (fields.size() < 2) throw ShellError("the space's pinned host key is not an OpenSSH key");
  return {fields[0], fields[1]};
}

class Shell final : public util::TerminalStream {
 public:
  Shell(int fd, const ShellOptions& options) : fd_(fd) {
    if (::pipe2(wake_, O_CLOEXEC | O_NONBLOCK) != 0) {
      ::close(fd);
      throw ShellError("cannot make a pipe for the terminal");
    }
    session_ = ssh_new();
    if (!session_) {
      release();
      throw ShellError("libssh could not make a session");
    }
    try {
      connect(options);
      verify_host_key(options.host_key_public);
      log_in(options);
      open_channel(options);
    } catch (...) {
      release();
      throw;
    }
  }
  ~Shell() override { release(); }

  std::string read(std::chrono::milliseconds timeout, std::size_t max) override {
    if (!channel_ || eof_) return {};
    // What libssh holds already, else wait for the socket (or interrupt()) and look again.
    for (int round = 0; round < 2; ++round) {
      const int ready = ssh_channel_poll(channel_, 0);
      if (ready == SSH_ERROR) throw ShellError(error("reading from the guest"));
      if (ready == SSH_EOF) {
        eof_ = true;
        return {};
      }
      if (ready > 0) {
        std::string out(std::min<std::size_t>(max, static_cast<std::size_t>(ready)), '\0');
        const int n = ssh_channel_read_nonblocking(channel_, out.data(),
                                                   static_cast<std::uint32_t>(out.size()), 0);
        if (n == SSH_ERROR) throw ShellError(error("reading from the guest"));
        if (n == SSH_EOF) eof_ = true;
        out.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
        return out;
      }
      if (ssh_channel_is_eof(channel_) || ssh_channel_is_closed(channel_)) {
        eof_ = true;
        return {};
      }
      if (round == 1) break;
      pollfd fds[2] = {{ssh_get_fd(session_), POLLIN, 0}, {wake_[0], POLLIN, 0}};
      ::poll(fds, 2, static_cast<int>(timeout.count()));
      if (fds[1].revents & POLLIN) {
        char drain[64];
        while (::read(wake_[0], drain, sizeof drain) > 0) {
        }
        return {};
      }
      if (!(fds[0].revents & (POLLIN | POLLHUP | POLLERR))) return {};
    }
    return {};
  }

  // Blocking: only for callers that may wait. The browser terminal's pump uses write_now.
  void write(std::string_view data) override {
    while (!data.empty()) {
      const auto n = write_now(data);
      data.remove_prefix(n);
      if (n == 0 && !wait_for_guest(std::chrono::milliseconds(250)))
        throw ShellError("writing to the guest: the connection was cut");
    }
  }

  // At most what the channel's window takes now: a guest that stopped reading leaves it at
  // zero, and libssh would wait for it to grow (without end, on a blocking session).
  std::size_t write_now(std::string_view data) override {
    if (!channel_ || ssh_channel_is_closed(channel_)) throw ShellError("the shell has ended");
    if (ssh_channel_poll(channel_, 0) == SSH_ERROR)  // takes in the guest's window adjusts
      throw ShellError(error("writing to the guest"));
    const auto window = static_cast<std::size_t>(ssh_channel_window_size(channel_));
    const auto size = std::min({data.size(), window, kMostPerWrite});
    if (size == 0) return 0;
    const int n = ssh_channel_write(channel_, data.data(), static_cast<std::uint32_t>(size));
    if (n == SSH_ERROR) throw ShellError(error("writing to the guest"));
    return static_cast<std::size_t>(n);
  }

  bool eof() const override { return eof_; }

  void close() override { release(); }

  void resize(unsigned cols, unsigned rows) override {
    if (channel_)
      ssh_channel_change_pty_size(channel_, static_cast<int>(cols), static_cast<int>(rows));
  }

  void interrupt() override {
    std::lock_guard lock(fd_mutex_);
    wake_locked();
  }

  void abort() override {
    std::lock_guard lock(fd_mutex_);
    if (socket_ >= 0) ::shutdown(socket_, SHUT_RDWR);
    wake_locked();
  }

 private:
  std::string error(const std::string& doing) const {
    const char* why = session_ ? ssh_get_error(session_) : nullptr;
    return doing + ": " + (why && *why ? why : "unknown libssh error");
  }

  void connect(const ShellOptions& options) {
    // Ours from here: ssh_free() closes it.
    ssh_options_set(session_, SSH_OPTIONS_FD, &fd_);
    {
      std::lock_guard lock(fd_mutex_);
      socket_ = fd_;
    }
    fd_ = -1;
    int no = 0;
    ssh_options_set(session_, SSH_OPTIONS_PROCESS_CONFIG, &no);  // no ~/.ssh/config of the server's
    ssh_options_set(session_, SSH_OPTIONS_HOST, "guest");
    ssh_options_set(session_, SSH_OPTIONS_USER, options.user.c_str());
    // Only the kind of key bowline pinned, so the guest cannot answer with another it has.
    const auto [type, base64] = key_fields(options.host_key_public);
    ssh_options_set(session_, SSH_OPTIONS_HOSTKEYS, type.c_str());
    long seconds = static_cast<long>((options.timeout.count() + 999) / 1000);
    ssh_options_set(session_, SSH_OPTIONS_TIMEOUT, &seconds);
    if (ssh_connect(session_) != SSH_OK) throw ShellError(error("the guest's SSH server"));
  }

  void verify_host_key(const std::string& pinned) {
    ssh_key key = nullptr;
    if (ssh_get_server_publickey(session_, &key) != SSH_OK)
      throw ShellError(error("the guest's host key"));
    char* base64 = nullptr;
    const int exported = ssh_pki_export_pubkey_base64(key, &base64);
    const std::string type = ssh_key_type_to_char(ssh_key_type(key));
    ssh_key_free(key);
    if (exported != SSH_OK) throw ShellError("the guest's host key cannot be read");
    const std::string offered = type + " " + base64;
    ssh_string_free_char(base64);
    const auto [want_type, want_base64] = key_fields(pinned);
    if (offered != want_type + " " + want_base64)
      throw ShellError("the guest offered a host key that is not the one bowline made for it (" +
                       type + "): refused, as someone may be in the middle");
  }

  void log_in(const ShellOptions& options) {
    ssh_key key = nullptr;
    if (ssh_pki_import_privkey_base64(options.private_key.c_str(), nullptr, nullptr, nullptr,
                                      &key) != SSH_OK)
      throw ShellError("the space's terminal key cannot be read");
    const int result = ssh_userauth_publickey(session_, nullptr, key);
    ssh_key_free(key);
    if (result != SSH_AUTH_SUCCESS)
      throw ShellError("the guest refused the terminal's key for " + options.user +
                       " (the key reaches the guest at its next start): " + error("login"));
  }

  void open_channel(const ShellOptions& options) {
    channel_ = ssh_channel_new(session_);
    if (!channel_ || ssh_channel_open_session(channel_) != SSH_OK)
      throw ShellError(error("opening a session"));
    if (ssh_channel_request_pty_size(channel_, options.term.c_str(), static_cast<int>(options.cols),
                                     static_cast<int>(options.rows)) != SSH_OK)
      throw ShellError(error("asking for a terminal"));
    if (ssh_channel_request_shell(channel_) != SSH_OK) throw ShellError(error("starting a shell"));
    // From here nothing waits inside libssh: not the window, not a full socket (its bytes
    // stay in libssh's buffer, which the guest's window bounds, and go with the next call).
    ssh_set_blocking(session_, 0);
  }

  void wake_locked() {
    const char byte = 1;
    if (wake_[1] >= 0) {
      [[maybe_unused]] const auto ignored = ::write(wake_[1], &byte, 1);
    }
  }

  // Until the guest sends something (a window adjust, output) or interrupt(); false once the
  // connection is cut.
  bool wait_for_guest(std::chrono::milliseconds timeout) {
    pollfd fds[2] = {{ssh_get_fd(session_), POLLIN, 0}, {wake_[0], POLLIN, 0}};
    ::poll(fds, 2, static_cast<int>(timeout.count()));
    if (fds[1].revents & POLLIN) {
      char drain[64];
      while (::read(wake_[0], drain, sizeof drain) > 0) {
      }
    }
    return !(fds[0].revents & (POLLHUP | POLLERR | POLLNVAL));
  }

  void release() {
    {
      std::lock_guard lock(fd_mutex_);
      socket_ = -1;  // ssh_free closes it: abort() must not touch the number after that
    }
    if (channel_) {
      ssh_channel_close(channel_);
      ssh_channel_free(channel_);
      channel_ = nullptr;
    }
    if (session_) {
      ssh_disconnect(session_);
      ssh_free(session_);
      session_ = nullptr;
    }
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    std::lock_guard lock(fd_mutex_);
    for (int& end : wake_) {
      if (end >= 0) ::close(end);
      end = -1;
    }
    eof_ = true;
  }

  // One SSH packet's worth: the window is usually larger, and a short write just goes on.
  static constexpr std::size_t kMostPerWrite = 32 * 1024;

  int fd_;
  std::mutex fd_mutex_;  // socket_ and wake_ against abort() and interrupt() from elsewhere
  int socket_ = -1;      // the session's, for abort()
  int wake_[2] = {-1, -1};
  ssh_session session_ = nullptr;
  ssh_channel channel_ = nullptr;
  bool eof_ = false;
};

}  // namespace

std::unique_ptr<util::TerminalStream> open_shell(int fd, const ShellOptions& options) {
  init_once();
  return std::make_unique<Shell>(fd, options);
}

}  // namespace bowline::ssh
