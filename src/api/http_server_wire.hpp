// What the HTTP server's Boost translation units share (http_server.cpp: the listener, HTTP
// sessions and event streams; http_websocket.cpp: WebSockets; http_parse.cpp: the request
// parser): Beast and Asio's names, a connection as stop() and the shedding see it, and the
// server's state. Nothing else includes it (Beast and Asio cost ~10 s and 0.7 GB a
// translation unit).
#pragma once

#include <atomic>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/core/detect_ssl.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/beast/websocket/ssl.hpp>
#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>
#include <type_traits>
#include <vector>

#include "api/connection_ledger.hpp"
#include "api/http_server.hpp"

namespace bowline::api {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
using tcp = asio::ip::tcp;
using error_code = boost::system::error_code;
using PlainStream = beast::tcp_stream;
using TlsStream = beast::ssl_stream<beast::tcp_stream>;
template <class Wire>
constexpr bool kTls = std::is_same_v<Wire, TlsStream>;
// HTTPS answers ask browsers to use nothing but HTTPS for this host for a year. Browsers
// ignore it from a certificate they do not trust, so a self-signed one does not lock anyone out.
constexpr const char* kHsts = "max-age=31536000";

namespace detail {

// A connection stop() and the shedding must end: an HTTP session or a WebSocket.
class Connection {
 public:
  virtual ~Connection() = default;
  virtual void shut_now() = 0;  // on the connection's strand
  virtual asio::any_io_executor executor() = 0;
};

// What a stream's open() and close() need to run in that order, each once, on a worker.
struct StreamLifecycle {
  std::mutex mutex;
  bool opened = false;
  bool close_requested = false;
  bool closed = false;
};

using Message = http::request<http::string_body>;
using Parser = http::request_parser<http::string_body>;

// http_parse.cpp: every request's parser with the server's limits, on the wire and in
// parse_request_bytes alike; the answer to a Content-Length over the limit, before the body is
// read; the answer to a read that failed (nullopt when the connection just ends: end of
// stream, timeout, reset); the request as the routes see it (its target is parsed on the
// worker: parse_target).
void configure(Parser& parser, const HttpServerOptions& options);
std::optional<ParsedRequest> refuse_length(const Parser& parser, const HttpServerOptions& options);
std::optional<ParsedRequest> refuse_read(error_code ec, const HttpServerOptions& options);
Request to_request(Message& message, const std::string& remote, bool tls);
// The Host header in lower case without its port ("" when absent).
std::string host_of(const Message& message);

}  // namespace detail

struct HttpServer::Impl {
  using Connection = detail::Connection;
  using Id = ConnectionLedger::Id;
  HttpServerOptions options;
  Handler handler;
  std::atomic<std::size_t> connections{0};
  std::atomic<std::size_t> streams{0};
  std::unique_ptr<ConnectionLedger> ledger;  // made at start(), from the open-files limit
  std::mutex sessions_mutex;
  // By the ledger's id; a WebSocket takes over its HTTP session's entry.
  std::map<Id, std::pair<Connection*, std::weak_ptr<Connection>>> sessions;
  // Deferred answers being worked out (Response::later), each on a thread of its own.
  std::mutex slow_mutex;
  std::condition_variable slow_idle;
  std::size_t slow_running = 0;
  int spare_fd = -1;  // given up for a moment to accept and close when descriptors run out
  std::atomic<bool> stopping{false};
  bool started = false;
  bool stopped = false;
  unsigned short bound_port = 0;
  std::mutex lifecycle_mutex;

  asio::io_context ioc;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work;
  tcp::acceptor acceptor{ioc};
  asio::steady_timer accept_pause{ioc};  // out of file descriptors: wait, do not spin
  std::unique_ptr<asio::thread_pool> workers;
  std::vector<std::thread> threads;
  std::optional<asio::ssl::context> tls;  // set: HTTPS only
  // Other certificates by host name suffix (HostTls), chosen by SNI (http_tls.cpp).
  std::deque<std::pair<std::string, asio::ssl::context>> host_tls;

  Impl(HttpServerOptions o, Handler h) : options(std::move(o)), handler(std::move(h)) {}
  void load_tls();
  void accept();
  void admit(tcp::socket socket);
  void make_room();
  void refuse_one_waiting();
  void enlist(Id id, Connection* connection, std::weak_ptr<Connection> weak);
  void leave(Id id, const Connection* connection);
  void shed(const std::vector<Id>& ids);
  void run_slow(std::function<void()> job);
};

inline void HttpServer::Impl::enlist(Id id, Connection* connection,
                                     std::weak_ptr<Connection> weak) {
  std::lock_guard lock(sessions_mutex);
  sessions[id] = {connection, std::move(weak)};
}

// From a connection's destructor: its entry and its place in the ledger go, unless another
// connection (its WebSocket) has taken them over.
inline void HttpServer::Impl::leave(Id id, const Connection* connection) {
  {
    std::lock_guard lock(sessions_mutex);
    const auto it = sessions.find(id);
    if (it == sessions.end() || it->second.first != connection) return;
    sessions.erase(it);
  }
  ledger->release(id);
}

inline void HttpServer::Impl::shed(const std::vector<Id>& ids) {
  for (const auto id : ids) {
    std::shared_ptr<Connection> victim;
    {
      std::lock_guard lock(sessions_mutex);
      if (const auto it = sessions.find(id); it != sessions.end())
        victim = it->second.second.lock();
    }
    if (victim) asio::post(victim->executor(), [victim] { victim->shut_now(); });
  }
}

// The thread is counted until its job, and what the job holds (a session), is gone: stop()
// waits for that, and each job's own timeouts bound it.
inline void HttpServer::Impl::run_slow(std::function<void()> job) {
  {
    std::lock_guard lock(slow_mutex);
    ++slow_running;
  }
  std::thread([this, job = std::move(job)]() mutable {
    try {
      job();
    } catch (...) {
    }
    job = nullptr;
    std::lock_guard lock(slow_mutex);
    if (--slow_running == 0) slow_idle.notify_all();
  }).detach();
}

namespace detail {

// The stream of an upgraded HTTP session becomes a WebSocket's (http_websocket.cpp), with the
// session's place in the ledger.
template <class Wire>
void start_websocket(Wire stream, HttpServer::Impl& server, HttpServer::Impl::Id id,
                     std::shared_ptr<Message> request, std::shared_ptr<Upgrade> upgrade);

// The stream of a header-only request's session goes to a Relay (http_relay.cpp): `buffer`
// holds what was read past the header, `parser` has the header and reads the body on.
template <class Wire>
void start_relay(Wire stream, beast::flat_buffer buffer, Parser& parser, HttpServer::Impl& server,
                 HttpServer::Impl::Id id, std::shared_ptr<Relay> relay);

}  // namespace detail
}  // namespace bowline::api
