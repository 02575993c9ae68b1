// Plain TCP in, TLS out: the tests' raw HTTP, event-stream and WebSocket clients
// (api_test_support.hpp, ws_test_client.hpp) reach an HTTPS server through a relay on
// 127.0.0.1:port(), which does the TLS handshake (trusting any certificate) and remembers the
// certificate the server showed.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "api_test_support.hpp"
#include "util/tls_fingerprint.hpp"

namespace bowline::api::testing {

class TlsRelay {
 public:
  explicit TlsRelay(unsigned short server_port) : server_port_(server_port) {
    ctx_ = SSL_CTX_new(TLS_client_method());
    SSL_CTX_set_verify(ctx_, SSL_VERIFY_NONE, nullptr);
    // A read that finds no application data (TLS 1.3 session tickets after the handshake)
    // returns instead of blocking while the client's bytes wait.
    SSL_CTX_clear_mode(ctx_, SSL_MODE_AUTO_RETRY);
    listener_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::bind(listener_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        ::listen(listener_, 16) != 0)
      throw std::runtime_error("the relay cannot listen");
    socklen_t length = sizeof addr;
    ::getsockname(listener_, reinterpret_cast<sockaddr*>(&addr), &length);
    port_ = ntohs(addr.sin_port);
    acceptor_ = std::thread([this] { accept_loop(); });
  }
  ~TlsRelay() {
    stopping_ = true;
    ::shutdown(listener_, SHUT_RDWR);
    ::close(listener_);
    acceptor_.join();
    std::lock_guard lock(mutex_);
    for (auto& t : relays_) t.join();
    SSL_CTX_free(ctx_);
  }
  TlsRelay(const TlsRelay&) = delete;
  TlsRelay& operator=(const TlsRelay&) = delete;

  unsigned short port() const { return port_; }
  // The fingerprint of the certificate the server showed last; "" before any handshake.
  std::string server_fingerprint() const {
    std::lock_guard lock(mutex_);
    return fingerprint_;
  }

 private:
  void accept_loop() {
    while (!stopping_) {
      const int client = ::accept(listener_, nullptr, nullptr);
      if (client < 0) continue;
      std::lock_guard lock(mutex_);
      relays_.emplace_back([this, client] { relay(client); });
    }
  }

  void remember(SSL* ssl) {
    X509* cert = SSL_get1_peer_certificate(ssl);
    if (!cert) return;
    unsigned char* der = nullptr;
    const int n = i2d_X509(cert, &der);
    std::lock_guard lock(mutex_);
    fingerprint_ =
        util::certificate_fingerprint(std::string(reinterpret_cast<char*>(der), std::size_t(n)));
    OPENSSL_free(der);
    X509_free(cert);
  }

  void relay(int client) {
    int server = -1;
    try {
      server = connect_to(server_port_);
    } catch (const std::exception&) {
      ::close(client);
      return;
    }
    SSL* ssl = SSL_new(ctx_);
    SSL_set_fd(ssl, server);
    if (SSL_connect(ssl) == 1) {
      remember(ssl);
      pump(client, ssl);
      SSL_shutdown(ssl);
    }
    SSL_free(ssl);
    ::close(server);
    ::close(client);
  }

  // Bytes both ways until either side ends or the relay stops.
  void pump(int client, SSL* ssl) {
    char buffer[16384];
    while (!stopping_) {
      pollfd fds[2] = {{client, POLLIN, 0}, {SSL_get_fd(ssl), POLLIN, 0}};
      if (SSL_pending(ssl) == 0 && ::poll(fds, 2, 100) <= 0) continue;
      if (SSL_pending(ssl) > 0 || (fds[1].revents & (POLLIN | POLLHUP | POLLERR))) {
        const int n = SSL_read(ssl, buffer, sizeof buffer);
        if (n <= 0 && SSL_get_error(ssl, n) == SSL_ERROR_WANT_READ) continue;
        if (n <= 0) return;
        for (int done = 0; done < n;) {
          const auto sent = ::send(client, buffer + done, std::size_t(n - done), MSG_NOSIGNAL);
          if (sent <= 0) return;
          done += static_cast<int>(sent);
        }
      }
      if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
        const auto n = ::read(client, buffer, sizeof buffer);
        if (n <= 0) return;
        if (SSL_write(ssl, buffer, static_cast<int>(n)) != n) return;
      }
    }
  }

  unsigned short server_port_;
  unsigned short port_ = 0;
  int listener_ = -1;
  SSL_CTX* ctx_ = nullptr;
  std::atomic<bool> stopping_{false};
  std::thread acceptor_;
  mutable std::mutex mutex_;
  std::vector<std::thread> relays_;
  std::string fingerprint_;
};

}  // namespace bowline::api::testing
