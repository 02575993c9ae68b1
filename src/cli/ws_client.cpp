// One io_context thread runs the socket: reads go into a queue for read(), writes are queued
// on the strand and written one at a time (Beast allows one read and one write at once).
#include "cli/ws_client.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "cli/app.hpp"

namespace bowline::cli {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
using tcp = asio::ip::tcp;

struct WsConnection::Impl {
  asio::io_context ioc;
  websocket::stream<beast::tcp_stream> ws{asio::make_strand(ioc)};
  beast::flat_buffer buffer;
  std::thread thread;

  std::mutex mutex;
  std::condition_variable arrived;
  std::deque<std::string> incoming;
  bool ended = false;

  std::deque<std::string> outgoing;  // on the strand
  bool writing = false;
  bool closing = false;

  void end() {
    std::lock_guard lock(mutex);
    ended = true;
    arrived.notify_all();
  }

  void read_next() {
    ws.async_read(buffer, [this](beast::error_code ec, std::size_t) {
      if (ec) return end();
      {
        std::lock_guard lock(mutex);
        incoming.push_back(beast::buffers_to_string(buffer.data()));
        arrived.notify_all();
      }
      buffer.consume(buffer.size());
      read_next();
    });
  }

  void write_next() {
    if (outgoing.empty()) {
      writing = false;
      if (closing) close_now();
      return;
    }
    writing = true;
    ws.binary(true);
    ws.async_write(asio::buffer(outgoing.front()), [this](beast::error_code ec, std::size_t) {
      outgoing.pop_front();
      if (ec) {
        outgoing.clear();
        writing = false;
        return end();
      }
      write_next();
    });
  }

  void close_now() {
    ws.async_close(websocket::close_code::normal, [this](beast::error_code) {
      beast::error_code ignored;
      beast::get_lowest_layer(ws).socket().shutdown(tcp::socket::shutdown_both, ignored);
      beast::get_lowest_layer(ws).close();
      end();
    });
  }
};

namespace {

// "http://host:port" -> host, port.
std::pair<std::string, std::string> host_port(const std::string& server) {
  std::string rest = server;
  if (rest.rfind("https://", 0) == 0)
    throw CliError(kExitUsage, "the console and VNC need a plain http:// server URL here");
  if (rest.rfind("http://", 0) == 0) rest = rest.substr(7);
  rest = rest.substr(0, rest.find('/'));
  std::string host = rest, port = "80";
  if (!rest.empty() && rest.front() == '[') {
    const auto close = rest.find(']');
    host = rest.substr(1, close - 1);
    if (close + 1 < rest.size() && rest[close + 1] == ':') port = rest.substr(close + 2);
  } else if (const auto colon = rest.rfind(':'); colon != std::string::npos) {
    host = rest.substr(0, colon);
    port = rest.substr(colon + 1);
  }
  return {host, port};
}

}  // namespace

WsConnection::WsConnection(const Endpoint& endpoint, const std::string& path)
    : impl_(std::make_unique<Impl>()) {
  const auto [host, port] = host_port(endpoint.server);
  beast::error_code ec;
  tcp::resolver resolver(impl_->ioc);
  const auto found = resolver.resolve(host, port, ec);
  if (!ec) beast::get_lowest_layer(impl_->ws).connect(found, ec);
  if (ec)
    throw CliError(kExitUnreachable,
                   "cannot reach the server at " + endpoint.server + ": " + ec.message());
  auto& ws = impl_->ws;
  ws.set_option(websocket::stream_base::decorator([&](websocket::request_type& req) {
    req.set(http::field::user_agent, "bowline-cli");
    if (!endpoint.token.empty()) req.set(http::field::authorization, "Bearer " + endpoint.token);
  }));
  websocket::response_type response;
  ws.handshake(response, host + ":" + port, path, ec);
  if (ec) {
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
  // Beast's own timeouts: a dead peer ends the session rather than hanging it.
  ws.set_option(websocket::stream_base::timeout::suggested(beast::role_type::client));
  ws.binary(true);
  ws.read_message_max(64 * 1024 * 1024);
  asio::post(ws.get_executor(), [impl = impl_.get()] { impl->read_next(); });
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
  return out;
}

bool WsConnection::write(std::string bytes) {
  {
    std::lock_guard lock(impl_->mutex);
    if (impl_->ended) return false;
  }
  asio::post(impl_->ws.get_executor(), [impl = impl_.get(), bytes = std::move(bytes)]() mutable {
    if (impl->closing) return;
    impl->outgoing.push_back(std::move(bytes));
    if (!impl->writing) impl->write_next();
  });
  return true;
}

void WsConnection::close() {
  asio::post(impl_->ws.get_executor(), [impl = impl_.get()] {
    if (impl->closing) return;
    impl->closing = true;
    if (!impl->writing) impl->close_now();
  });
}

}  // namespace bowline::cli
