#include "kubevirt/ws_stream.hpp"

#include <openssl/rand.h>
#include <openssl/sha.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <nlohmann/json.hpp>
#include <string_view>
#include <thread>

#include "kubevirt/base64.hpp"
#include "kubevirt/curl_client.hpp"
#include "kubevirt/kube_client.hpp"
#include "kubevirt/ws_frames.hpp"
#include "util/curl.hpp"

namespace bowline::kubevirt {

namespace {

constexpr std::string_view kAcceptGuid = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

// A libcurl handle in CONNECT_ONLY mode: TLS is curl's, the bytes on it are ours.
class Wire {
 public:
  Wire(util::CurlEasy handle, const std::string& where) : h_(std::move(handle)), where_(where) {
    curl_socket_t fd = CURL_SOCKET_BAD;
    curl_easy_getinfo(h_.get(), CURLINFO_ACTIVESOCKET, &fd);
    if (fd == CURL_SOCKET_BAD) throw TransportError(where_ + ": no socket after connecting");
    fd_ = fd;
  }
  int fd() const { return fd_; }

  void send_all(std::string_view data) {
    while (!data.empty()) {
      std::size_t sent = 0;
      const CURLcode rc = curl_easy_send(h_.get(), data.data(), data.size(), &sent);
      if (rc == CURLE_AGAIN) {
        pollfd p{fd_, POLLOUT, 0};
        if (::poll(&p, 1, 30000) <= 0)
          throw TransportError(where_ + ": the server stopped reading");
        continue;
      }
      if (rc != CURLE_OK) throw TransportError(where_ + ": " + curl_easy_strerror(rc));
      data.remove_prefix(sent);
    }
  }

  // Appends everything readable now (TLS may hold more than the socket shows); false once the
  // server has closed the connection.
  bool receive_some(std::string& into) {
    char buffer[64 * 1024];
    for (;;) {
      std::size_t got = 0;
      const CURLcode rc = curl_easy_recv(h_.get(), buffer, sizeof buffer, &got);
      if (rc == CURLE_AGAIN) return true;
      if (rc != CURLE_OK || got == 0) return false;
      into.append(buffer, got);
    }
  }

 private:
  util::CurlEasy h_;
  std::string where_;
  int fd_ = -1;
};

std::string random_bytes(std::size_t n) {
  std::string out(n, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(out.data()), static_cast<int>(n)) != 1)
    throw TransportError("no random bytes for a WebSocket key");
  return out;
}

// A client's frame, masked with fresh random bytes (RFC 6455 5.3).
std::string frame(int opcode, std::string_view payload) {
  return encode_client_frame(opcode, payload, random_bytes(4));
}

bool write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    const auto n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

// The value of header `name` (lower case) in a response head; "" when absent.
std::string header_value(const std::string& head, const std::string& name) {
  std::size_t at = 0;
  while ((at = head.find("\r\n", at)) != std::string::npos) {
    at += 2;
    const auto colon = head.find(':', at);
    const auto end = head.find("\r\n", at);
    if (colon == std::string::npos || (end != std::string::npos && colon > end)) continue;
    std::string field = head.substr(at, colon - at);
    for (auto& c : field) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (field != name) continue;
    auto value = head.substr(colon + 1, (end == std::string::npos ? head.size() : end) - colon - 1);
    value.erase(0, value.find_first_not_of(' '));
    value.erase(value.find_last_not_of(" \t") + 1);
    return value;
  }
  return "";
}

std::string accept_for(const std::string& key) {
  const auto text = key + std::string(kAcceptGuid);
  unsigned char digest[SHA_DIGEST_LENGTH];
  SHA1(reinterpret_cast<const unsigned char*>(text.data()), text.size(), digest);
  return base64_encode(std::string_view(reinterpret_cast<const char*>(digest), sizeof digest));
}

// The upgrade's answer: 101 with the right accept key, or the server's status and words.
void check_handshake(Wire& wire, const std::string& key, const std::string& where,
                     std::string& rest, std::chrono::seconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::size_t end;
  while ((end = rest.find("\r\n\r\n")) == std::string::npos) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    pollfd p{wire.fd(), POLLIN, 0};
    if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) <= 0)
      throw TransportError(where + ": no answer to the WebSocket upgrade");
    if (!wire.receive_some(rest) && rest.find("\r\n\r\n") == std::string::npos)
      throw TransportError(where + ": the server closed the connection during the upgrade");
  }
  const auto head = rest.substr(0, end);
  rest.erase(0, end + 4);
  const auto status = head.size() > 12 ? head.substr(9, 3) : std::string("?");
  if (status != "101") {
    // A Kubernetes Status in the body says why (404 no such VMI, 403, ...).
    std::string why = head.substr(0, head.find("\r\n"));
    wire.receive_some(rest);
    if (const auto brace = rest.find('{'); brace != std::string::npos) {
      const auto body = nlohmann::json::parse(rest.substr(brace), nullptr, false);
      if (body.is_object() && body.contains("message")) why += ": " + body.value("message", "");
    }
    throw TransportError(where + ": " + why);
  }
  if (header_value(head, "sec-websocket-accept") != accept_for(key))
    throw TransportError(where + ": the server's WebSocket accept key is wrong");
}

// Carries bytes between the caller's socket `fd` and the WebSocket until either ends.
void pump(Wire wire, int fd, std::string in) {
  bool local_open = true;
  try {
    for (;;) {
      while (auto f = take_frame(in)) {
        if (f->opcode == kWsClose) {
          if (local_open) wire.send_all(frame(kWsClose, f->payload.substr(0, 2)));
          throw std::runtime_error("closed");
        }
        if (f->opcode == kWsPing) wire.send_all(frame(kWsPong, f->payload));
        if ((f->opcode == kWsBinary || f->opcode == kWsText || f->opcode == kWsContinuation) &&
            !write_all(fd, f->payload))
          throw std::runtime_error("the caller went away");
      }
      pollfd p[2] = {{wire.fd(), POLLIN, 0}, {fd, static_cast<short>(local_open ? POLLIN : 0), 0}};
      // Once the caller has ended, the server's close is waited for a little, not forever.
      const int ready = ::poll(p, 2, local_open ? -1 : 2000);
      if (ready < 0 && errno == EINTR) continue;
      if (ready <= 0) break;
      if ((p[0].revents & (POLLIN | POLLHUP | POLLERR)) && !wire.receive_some(in)) break;
      if (p[1].revents & (POLLIN | POLLHUP | POLLERR)) {
        char buffer[64 * 1024];
        const auto n = ::recv(fd, buffer, sizeof buffer, 0);
        if (n > 0) {
          wire.send_all(frame(kWsBinary, std::string_view(buffer, static_cast<std::size_t>(n))));
        } else {
          wire.send_all(frame(kWsClose, std::string("\x03\xe8", 2)));  // 1000: done
          local_open = false;
        }
      }
    }
  } catch (const std::exception&) {
    // A closed WebSocket or caller ends the stream; the caller sees its end of the pair close.
  }
  ::close(fd);
}

}  // namespace

int open_websocket_stream(const Connection& connection, const std::string& target,
                          const std::string& subprotocol, std::chrono::seconds timeout) {
  const std::string where = "stream " + target;
  util::CurlEasy handle;
  try {
    handle = util::curl_easy();
  } catch (const std::runtime_error& e) {
    throw TransportError(e.what());
  }
  CURL* h = handle.get();
  const std::string url = connection.server + target;
  curl_easy_setopt(h, CURLOPT_URL, url.c_str());
  curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "https,http");
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, static_cast<long>(timeout.count()));
  curl_easy_setopt(h, CURLOPT_CONNECT_ONLY, 1L);
  set_trust_and_identity(h, connection);
  char error[CURL_ERROR_SIZE] = {};
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, error);
  if (const CURLcode rc = curl_easy_perform(h); rc != CURLE_OK)
    throw TransportError(where + ": " + (error[0] ? std::string(error) : curl_easy_strerror(rc)));
  // `error` dies with this frame, and the handle lives on in the pump's thread: curl must not
  // write a later error (a reset, an EOF without close_notify) into it.
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, nullptr);

  Wire wire(std::move(handle), where);
  const auto key = base64_encode(random_bytes(16));
  const auto after_scheme = connection.server.find("://");
  const auto host =
      connection.server.substr(after_scheme == std::string::npos ? 0 : after_scheme + 3);
  std::string request =
      "GET " + target + " HTTP/1.1\r\nHost: " + host +
      "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: " + key +
      "\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: " + subprotocol + "\r\n";
  if (!connection.token.empty()) request += "Authorization: Bearer " + connection.token + "\r\n";
  wire.send_all(request + "\r\n");
  std::string rest;
  check_handshake(wire, key, where, rest, timeout);

  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0)
    throw TransportError(where + ": no socket pair");
  std::thread(pump, std::move(wire), pair[1], std::move(rest)).detach();
  return pair[0];
}

}  // namespace bowline::kubevirt
