#include "fake_sshd.hpp"

#include <arpa/inet.h>
#include <libssh/libssh.h>
#include <libssh/server.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <stdexcept>

// libssh's message API (deprecated for callbacks) is the shortest way to a stand-in server.
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

namespace bowline::testing {

namespace {

ssh_key import_key(const std::string& text) {
  ssh_key key = nullptr;
  if (ssh_pki_import_privkey_base64(text.c_str(), nullptr, nullptr, nullptr, &key) != SSH_OK)
    throw std::runtime_error("fake sshd: the host key cannot be read");
  return key;
}

// Answers the session's requests until the client has a shell; false when it went away.
bool grant_shell(ssh_session session, ssh_channel& channel) {
  for (;;) {
    ssh_message message = ssh_message_get(session);
    if (!message) return false;
    const int type = ssh_message_type(message);
    const int subtype = ssh_message_subtype(message);
    bool shell = false;
    if (type == SSH_REQUEST_AUTH && subtype == SSH_AUTH_METHOD_PUBLICKEY) {
      const auto state = ssh_message_auth_publickey_state(message);
      if (state == SSH_PUBLICKEY_STATE_VALID)
        ssh_message_auth_reply_success(message, 0);
      else if (state == SSH_PUBLICKEY_STATE_NONE)
        ssh_message_auth_reply_pk_ok_simple(message);
      else
        ssh_message_reply_default(message);
    } else if (type == SSH_REQUEST_CHANNEL_OPEN && subtype == SSH_CHANNEL_SESSION && !channel) {
      channel = ssh_message_channel_request_open_reply_accept(message);
    } else if (type == SSH_REQUEST_CHANNEL && channel &&
               (subtype == SSH_CHANNEL_REQUEST_PTY || subtype == SSH_CHANNEL_REQUEST_SHELL ||
                subtype == SSH_CHANNEL_REQUEST_WINDOW_CHANGE)) {
      ssh_message_channel_request_reply_success(message);
      shell = subtype == SSH_CHANNEL_REQUEST_SHELL;
    } else {
      ssh_message_reply_default(message);
    }
    ssh_message_free(message);
    if (shell) return true;
  }
}

}  // namespace

SshKeyPair make_ssh_key() {
  ssh_key key = nullptr;
  if (ssh_pki_generate(SSH_KEYTYPE_ED25519, 0, &key) != SSH_OK)
    throw std::runtime_error("cannot make an ed25519 key");
  char* priv = nullptr;
  char* pub = nullptr;
  ssh_pki_export_privkey_base64(key, nullptr, nullptr, nullptr, &priv);
  ssh_pki_export_pubkey_base64(key, &pub);
  SshKeyPair out{priv, std::string(ssh_key_type_to_char(ssh_key_type(key))) + " " + pub};
  ssh_string_free_char(priv);
  ssh_string_free_char(pub);
  ssh_key_free(key);
  return out;
}

FakeSshd::FakeSshd(const std::string& address, unsigned short port, const std::string& host_key,
                   SshdMode mode)
    : mode_(mode) {
  ssh_init();
  auto bind = ssh_bind_new();
  bind_ = bind;
  ssh_bind_options_set(bind, SSH_BIND_OPTIONS_BINDADDR, address.c_str());
  unsigned int bind_port = port;
  ssh_bind_options_set(bind, SSH_BIND_OPTIONS_BINDPORT, &bind_port);
  ssh_bind_options_set(bind, SSH_BIND_OPTIONS_IMPORT_KEY, import_key(host_key));
  if (ssh_bind_listen(bind) != SSH_OK)
    throw std::runtime_error("fake sshd: cannot listen on " + address + ":" + std::to_string(port) +
                             ": " + ssh_get_error(bind));
  sockaddr_storage bound{};
  socklen_t length = sizeof bound;
  ::getsockname(ssh_bind_get_fd(bind), reinterpret_cast<sockaddr*>(&bound), &length);
  port_ = ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6&>(bound).sin6_port
                                            : reinterpret_cast<sockaddr_in&>(bound).sin_port);
  if (::pipe(stop_pipe_) != 0) throw std::runtime_error("fake sshd: pipe");
  acceptor_ = std::thread([this] { accept_loop(); });
}

FakeSshd::~FakeSshd() {
  stopping_ = true;
  [[maybe_unused]] auto n = ::write(stop_pipe_[1], "x", 1);
  acceptor_.join();
  {
    std::lock_guard lock(mutex_);
    for (int fd : open_fds_) ::shutdown(fd, SHUT_RDWR);
  }
  for (auto& t : threads_) t.join();
  ssh_bind_free(static_cast<ssh_bind>(bind_));
  ::close(stop_pipe_[0]);
  ::close(stop_pipe_[1]);
}

int FakeSshd::connections() const {
  std::lock_guard lock(mutex_);
  return static_cast<int>(open_fds_.size());
}

void FakeSshd::accept_loop() {
  auto bind = static_cast<ssh_bind>(bind_);
  while (!stopping_) {
    pollfd fds[2] = {{ssh_bind_get_fd(bind), POLLIN, 0}, {stop_pipe_[0], POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0 || (fds[1].revents & POLLIN)) return;
    ssh_session session = ssh_new();
    if (ssh_bind_accept(bind, session) != SSH_OK) {
      ssh_free(session);
      continue;
    }
    std::lock_guard lock(mutex_);
    open_fds_.push_back(ssh_get_fd(session));
    threads_.emplace_back([this, session] { serve(session); });
  }
}

void FakeSshd::serve(void* opaque) {
  auto session = static_cast<ssh_session>(opaque);
  const int fd = ssh_get_fd(session);
  ssh_channel channel = nullptr;
  if (ssh_handle_key_exchange(session) == SSH_OK) {
    ssh_set_auth_methods(session, SSH_AUTH_METHOD_PUBLICKEY);
    if (grant_shell(session, channel)) {
      ++shells_;
      ssh_channel_write(channel, "$ ", 2);
      char buffer[16 * 1024];
      while (!stopping_) {
        if (mode_ == SshdMode::Stall) {
          // Reads nothing, so the channel's window is never given back; only a client that
          // goes away (or the end of the test) ends it.
          pollfd watch{fd, POLLRDHUP, 0};
          if (::poll(&watch, 1, 100) > 0 && watch.revents) break;
          continue;
        }
        const int n = ssh_channel_read_timeout(channel, buffer, sizeof buffer, 0, 100);
        if (n == SSH_ERROR || (n == 0 && ssh_channel_is_eof(channel))) break;
        if (n > 0) ssh_channel_write(channel, buffer, static_cast<std::uint32_t>(n));
      }
    }
  }
  {
    std::lock_guard lock(mutex_);
    open_fds_.erase(std::remove(open_fds_.begin(), open_fds_.end(), fd), open_fds_.end());
  }
  if (channel) ssh_channel_free(channel);
  ssh_disconnect(session);
  ssh_free(session);
}

}  // namespace bowline::testing
