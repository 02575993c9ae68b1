// One io_context thread runs the socket: reads go into a queue for read(), writes are queued
// on the strand and written one at a time (Beast allows one read and one write at once). The
// socket is a WebSocket over TCP (ws://) or over TLS (wss://); the same code drives either.
#include "cli/ws_client.hpp"

#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <atomic>
#include <boost/asio/connect.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/beast/websocket/ssl.hpp>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "cli/app.hpp"
#include "cli/tls_trust.hpp"

namespace bowline::cli {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
using tcp = asio::ip::tcp;
using PlainWs = websocket::stream<beast::tcp_stream>;
using TlsWs = websocket::stream<beast::ssl_stream<beast::tcp_stream>>;

namespace {
constexpr std::size_t kIncomingLimit = 16 << 20;  // bytes read and not yet taken by read()
constexpr std::size_t kSpareMessages = 8;         // recycled message buffers kept
}  // namespace

struct WsConnection::Impl {
  asio::io_context ioc;
  asio::strand<asio::io_context::executor_type> strand = asio::make_strand(ioc);
  // While reads are paused no operation is pending: without this, run() would return and a
  // later read_next() would never run.
  asio::executor_work_guard<asio::io_context::executor_type> keep_running =
      asio::make_work_guard(ioc);
  std::optional<asio::ssl::context> tls_context;
  TlsTrust trust;  // what the TLS handshake is held to, and saw
  // One of the two, set by the constructor.
  std::optional<PlainWs> plain;
  std::optional<TlsWs> tls;
  beast::flat_buffer buffer;
  std::thread thread;

  std::mutex mutex;
  std::condition_variable arrived;
  std::deque<std::string> incoming;
  std::vector<std::string> spare;  // given back by recycle(), reused by the next reads
  std::size_t incoming_bytes = 0;
  bool read_paused = false;  // incoming is full: no read until read() takes some
  bool ended = false;

  std::deque<std::string> outgoing;    // on the strand
  std::atomic<std::size_t> queued{0};  // bytes of outgoing, for a writer's backpressure
  bool writing = false;
  bool closing = false;

  template <class F>
  void with_ws(F&& f) {
    if (tls)
      f(*tls);
    else
      f(*plain);
  }

  void end() {
    std::lock_guard lock(mutex);
    ended = true;
    arrived.notify_all();
  }

  void read_next() {
    with_ws([this](auto& ws) {
      ws.async_read(buffer, [this](beast::error_code ec, std::size_t) {
        if (ec) return end();
        bool full = false;
        {
          std::lock_guard lock(mutex);
          std::string message;
          if (!spare.empty()) {
            message = std::move(spare.back());
            spare.pop_back();
          }
          // A flat_buffer holds the message in one piece.
          const auto bytes = buffer.data();
          message.assign(static_cast<const char*>(bytes.data()), bytes.size());
          incoming.push_back(std::move(message));
          incoming_bytes += incoming.back().size();
          // A reader slower than the network (an export to a slow disk) must not make the
          // queue as big as the archive: stop reading, and TCP holds the server back.
          full = read_paused = incoming_bytes > kIncomingLimit;
          arrived.notify_all();
        }
        buffer.consume(buffer.size());
        if (!full) read_next();
      });
    });
  }

  void write_next() {
    if (outgoing.empty()) {
      writing = false;
      if (closing) close_now();
      return;
    }
    writing = true;
    with_ws([this](auto& ws) {
      ws.binary(true);
      ws.async_write(asio::buffer(outgoing.front()), [this](beast::error_code ec, std::size_t) {
        queued -= outgoing.front().size();
        outgoing.pop_front();
        if (ec) {
          outgoing.clear();
          queued = 0;
          writing = false;
          return end();
        }
        write_next();
      });
    });
  }

  void close_now() {
    with_ws([this](auto& ws) {
      ws.async_close(websocket::close_code::normal, [this, &ws](beast::error_code) {
        beast::error_code ignored;
        beast::get_lowest_layer(ws).socket().shutdown(tcp::socket::shutdown_both, ignored);
        beast::get_lowest_layer(ws).close();
        end();
      });
    });
  }
};

namespace {

struct Target {
  bool tls = false;
  std::string host, port;
};

// "http://host:port" or "https://host:port" -> where to connect.
Target target_of(const std::string& server) {
  Target t;
  std::string rest = server;
  t.tls = is_https(rest);
  if (t.tls)
    rest = rest.substr(8);
  else if (rest.rfind("http://", 0) == 0)
    rest = rest.substr(7);
  rest = rest.substr(0, rest.find('/'));
  t.host = rest;
  t.port = t.tls ? "443" : "80";
  if (!rest.empty() && rest.front() == '[') {
    const auto close = rest.find(']');
    t.host = rest.substr(1, close - 1);
    if (close + 1 < rest.size() && rest[close + 1] == ':') t.port = rest.substr(close + 2);
  } else if (const auto colon = rest.rfind(':'); colon != std::string::npos) {
    t.host = rest.substr(0, colon);
    t.port = rest.substr(colon + 1);
  }
  return t;
}

bool is_ip_address(const std::string& host) {
  beast::error_code ec;
  asio::ip::make_address(host, ec);
  return !ec;
}

// TLS for `host`: its name for SNI, and without a pin the name the certificate must hold.
void prepare_tls(beast::ssl_stream<beast::tcp_stream>& stream, const std::string& host,
                 bool pinned) {
  SSL* ssl = stream.native_handle();
  const bool ip = is_ip_address(host);
  if (!ip) SSL_set_tlsext_host_name(ssl, host.c_str());
  if (pinned) return;
  if (ip)
    X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host.c_str());
  else
    SSL_set1_host(ssl, host.c_str());
}

[[noreturn]] void throw_refused(const websocket::response_type& response, const Endpoint& endpoint,
                                const beast::error_code& ec) {
  const auto status = response.result_int();
  if (status == 0)
    throw CliError(kExitUnreachable,
                   "no WebSocket handshake with " + endpoint.server + ": " + ec.message());
  std::string message = "the server refused (" + std::to_string(status) + ")";
  ojson body;
  try {
    body = ojson::parse(response.body());
    if (body.contains("error")) message = body["error"].get<std::string>();
  } catch (const std::exception&) {
  }
  throw ApiError(exit_code_for_status(status), message, status, body);
}

// The WebSocket handshake for `path`, authenticated with the endpoint's token.
template <class Ws>
void handshake(Ws& ws, const Endpoint& endpoint, const Target& target, const std::string& path) {
  ws.set_option(websocket::stream_base::decorator([&](websocket::request_type& req) {
    req.set(http::field::user_agent, "bowline-cli");
    if (!endpoint.token.empty()) req.set(http::field::authorization, "Bearer " + endpoint.token);
  }));
  websocket::response_type response;
  beast::error_code ec;
  ws.handshake(response, target.host + ":" + target.port, path, ec);
  if (ec) throw_refused(response, endpoint, ec);
  // Beast's own timeouts: a dead peer ends the session rather than hanging it.
  ws.set_option(websocket::stream_base::timeout::suggested(beast::role_type::client));
  ws.binary(true);
  ws.read_message_max(64 * 1024 * 1024);
}

void connect(beast::tcp_stream& stream, asio::io_context& ioc, const Endpoint& endpoint,
             const Target& target) {
  beast::error_code ec;
  tcp::resolver resolver(ioc);
  const auto found = resolver.resolve(target.host, target.port, ec);
  if (!ec) stream.connect(found, ec);
  if (ec)
    throw CliError(kExitUnreachable,
                   "cannot reach the server at " + endpoint.server + ": " + ec.message());
}

}  // namespace

WsConnection::WsConnection(const Endpoint& endpoint, const std::string& path)
    : impl_(std::make_unique<Impl>()) {
  auto& impl = *impl_;
  const auto target = target_of(endpoint.server);
  if (!target.tls) {
    impl.plain.emplace(impl.strand);
    connect(beast::get_lowest_layer(*impl.plain), impl.ioc, endpoint, target);
    handshake(*impl.plain, endpoint, target, path);
  } else {
    impl.trust = trust_for(endpoint);
    impl.tls_context.emplace(asio::ssl::context::tls_client);
    hold_to(impl.tls_context->native_handle(), impl.trust);
    impl.tls.emplace(impl.strand, *impl.tls_context);
    connect(beast::get_lowest_layer(*impl.tls), impl.ioc, endpoint, target);
    auto& stream = impl.tls->next_layer();
    prepare_tls(stream, target.host, !impl.trust.pinned.empty());
    beast::error_code ec;
    stream.handshake(asio::ssl::stream_base::client, ec);
    if (ec) {
      throw_if_untrusted(impl.trust, endpoint, false, ec.message());
      throw CliError(kExitUnreachable,
                     "no TLS handshake with " + endpoint.server + ": " + ec.message());
    }
    handshake(*impl.tls, endpoint, target, path);
  }
  asio::post(impl.strand, [impl = impl_.get()] { impl->read_next(); });
  impl_->thread = std::thread([impl = impl_.get()] { impl->ioc.run(); });
}

WsConnection::~WsConnection() {
  close();
  // Give the close handshake a moment, then stop whatever is left.
  {
    std::unique_lock lock(impl_->mutex);
    impl_->arrived.wait_for(lock, std::chrono::seconds(2), [&] { return impl_->ended; });
  }
  impl_->ioc.stop();
  if (impl_->thread.joinable()) impl_->thread.join();
}

std::optional<std::string> WsConnection::read() {
  std::unique_lock lock(impl_->mutex);
  impl_->arrived.wait(lock, [&] { return !impl_->incoming.empty() || impl_->ended; });
  if (impl_->incoming.empty()) return std::nullopt;
  auto out = std::move(impl_->incoming.front());
  impl_->incoming.pop_front();
  impl_->incoming_bytes -= out.size();
  if (impl_->read_paused && impl_->incoming_bytes <= kIncomingLimit / 2) {
    impl_->read_paused = false;
    asio::post(impl_->strand, [impl = impl_.get()] { impl->read_next(); });
  }
  return out;
}

void WsConnection::recycle(std::string&& spent) {
  std::lock_guard lock(impl_->mutex);
  if (impl_->spare.size() < kSpareMessages) impl_->spare.push_back(std::move(spent));
}

bool WsConnection::write(std::string bytes) {
  {
    std::lock_guard lock(impl_->mutex);
    if (impl_->ended) return false;
  }
  impl_->queued += bytes.size();
  asio::post(impl_->strand, [impl = impl_.get(), bytes = std::move(bytes)]() mutable {
    if (impl->closing) {
      impl->queued -= bytes.size();
      return;
    }
    impl->outgoing.push_back(std::move(bytes));
    if (!impl->writing) impl->write_next();
  });
  return true;
}

std::size_t WsConnection::pending() const {
  {
    std::lock_guard lock(impl_->mutex);
    if (impl_->ended) return 0;  // nothing more goes out
  }
  return impl_->queued.load();
}

void WsConnection::close() {
  asio::post(impl_->strand, [impl = impl_.get()] {
    if (impl->closing) return;
    impl->closing = true;
    if (!impl->writing) impl->close_now();
  });
}

}  // namespace bowline::cli
