#include "ssh/forward.hpp"

#include <libssh/libssh.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <mutex>
#include <thread>
#include <vector>

#include "util/strings.hpp"
#include "util/tcp_connect.hpp"

namespace bowline::ssh {

namespace {

void init_once() {
  static std::once_flag once;
  std::call_once(once, [] { ssh_init(); });
}

struct Session {
  ssh_session s = ssh_new();
  ssh_channel channel = nullptr;
  ~Session() {
    if (channel) {
      ssh_channel_close(channel);
      ssh_channel_free(channel);
    }
    if (s) {
      ssh_disconnect(s);
      ssh_free(s);
    }
  }
  std::string error(const std::string& doing) const {
    const char* why = s ? ssh_get_error(s) : nullptr;
    return doing + ": " + (why && *why ? why : "unknown libssh error");
  }
};

std::pair<std::string, std::string> key_fields(const std::string& line) {
  std::vector<std::string> fields;
  for (auto& field : util::split(line, ' '))
    if (!field.empty()) fields.push_back(std::move(field));
  if (fields.size() < 2) throw ForwardError("the node's pinned host key is not an OpenSSH key");
  return {fields[0], fields[1]};
}

void connect(Session& session, const ForwardOptions& o) {
  int fd = util::tcp_connect(o.host, o.port, o.timeout);
  ssh_options_set(session.s, SSH_OPTIONS_FD, &fd);  // ssh_free closes it
  int no = 0;
  ssh_options_set(session.s, SSH_OPTIONS_PROCESS_CONFIG, &no);
  ssh_options_set(session.s, SSH_OPTIONS_HOST, o.host.c_str());
  ssh_options_set(session.s, SSH_OPTIONS_USER, o.user.c_str());
  const auto [type, base64] = key_fields(o.host_key_public);
  ssh_options_set(session.s, SSH_OPTIONS_HOSTKEYS, type.c_str());
  long seconds = static_cast<long>((o.timeout.count() + 999) / 1000);
  ssh_options_set(session.s, SSH_OPTIONS_TIMEOUT, &seconds);
  if (ssh_connect(session.s) != SSH_OK)
    throw ForwardError(session.error("the node's sshd at " + o.host));
  ssh_key key = nullptr;
  if (ssh_get_server_publickey(session.s, &key) != SSH_OK)
    throw ForwardError(session.error("the node's host key"));
  char* offered = nullptr;
  const int exported = ssh_pki_export_pubkey_base64(key, &offered);
  const std::string offered_type = ssh_key_type_to_char(ssh_key_type(key));
  ssh_key_free(key);
  if (exported != SSH_OK) throw ForwardError("the node's host key cannot be read");
  const bool same = offered_type == type && base64 == offered;
  ssh_string_free_char(offered);
  if (!same)
    throw ForwardError("the node " + o.host +
                       " offered a host key that is not the one in its settings: refused, as "
                       "someone may be in the middle");
}

void log_in(Session& session, const ForwardOptions& o) {
  ssh_key key = nullptr;
  if (ssh_pki_import_privkey_file(o.key_file.c_str(), nullptr, nullptr, nullptr, &key) != SSH_OK)
    throw ForwardError("the node's key " + o.key_file + " cannot be read");
  const int result = ssh_userauth_publickey(session.s, nullptr, key);
  ssh_key_free(key);
  if (result != SSH_AUTH_SUCCESS)
    throw ForwardError(session.error("the node refused the key for " + o.user));
}

// Guest -> caller: what the channel holds now. False once the guest's side has ended.
bool drain_channel(Session& session, int local) {
  std::array<char, 64 * 1024> buffer;
  for (;;) {
    const int available = ssh_channel_poll(session.channel, 0);
    if (available == SSH_ERROR) return false;
    if (available == SSH_EOF) {
      ::shutdown(local, SHUT_WR);
      return false;
    }
    if (available <= 0) return true;
    const int n = ssh_channel_read(session.channel, buffer.data(),
                                   std::min<std::uint32_t>(buffer.size(), available), 0);
    if (n <= 0) return n == 0;
    for (int off = 0; off < n;) {
      const auto w = ::write(local, buffer.data() + off, static_cast<std::size_t>(n - off));
      if (w <= 0) return false;
      off += static_cast<int>(w);
    }
  }
}

// Carries bytes both ways until the guest's side ends (the caller's end only half-closes it).
void pump(Session& session, int local) {
  std::array<char, 64 * 1024> buffer;
  bool caller_open = true;
  for (;;) {
    pollfd fds[2] = {{local, static_cast<short>(caller_open ? POLLIN : 0), 0},
                     {ssh_get_fd(session.s), POLLIN, 0}};
    ::poll(fds, 2, 200);
    if (!drain_channel(session, local)) return;
    if (caller_open && (fds[0].revents & (POLLIN | POLLHUP | POLLERR))) {
      const auto n = ::read(local, buffer.data(), buffer.size());
      if (n <= 0) {
        ssh_channel_send_eof(session.channel);
        caller_open = false;
      } else if (ssh_channel_write(session.channel, buffer.data(), static_cast<std::uint32_t>(n)) !=
                 n) {
        return;
      }
    }
    if (ssh_channel_is_closed(session.channel)) return;
  }
}

}  // namespace

int open_forward(const ForwardOptions& o) {
  init_once();
  auto session = std::make_unique<Session>();
  if (!session->s) throw ForwardError("libssh could not make a session");
  try {
    connect(*session, o);
  } catch (const ForwardError&) {
    throw;
  } catch (const std::exception& e) {
    throw ForwardError("the node's sshd at " + o.host + ": " + e.what());
  }
  log_in(*session, o);
  session->channel = ssh_channel_new(session->s);
  if (!session->channel || ssh_channel_open_forward(session->channel, o.to_host.c_str(), o.to_port,
                                                    "127.0.0.1", 0) != SSH_OK)
    throw ForwardError(
        session->error("the node cannot reach " + o.to_host + ":" + std::to_string(o.to_port)));
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0)
    throw ForwardError("cannot make a socket pair");
  // The thread owns the session and its end; it ends when the guest's side does.
  std::thread([session = std::move(session), local = pair[1]]() mutable {
    pump(*session, local);
    ::close(local);
  }).detach();
  return pair[0];
}

}  // namespace bowline::ssh
