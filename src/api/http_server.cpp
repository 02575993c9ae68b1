// The listener, HTTP sessions and event streams: one of the two translation units that include
// Boost.Beast and Asio (they cost ~10 s and 0.7 GB to compile; the other, http_websocket.cpp,
// has the WebSockets); everything else speaks api::Request and api::Response. Sessions and
// WebSockets are templates on their Wire, a TCP stream or a TLS stream over one: HTTP and
// HTTPS run the same code.
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "api/http_server_wire.hpp"
#include "util/strings.hpp"

namespace bowline::api {

using namespace detail;

namespace {

// An event stream's sink: text for its session (a Session<PlainStream> or Session<TlsStream>).
template <class Session>
class Sink final : public StreamSink {
 public:
  explicit Sink(std::weak_ptr<Session> session) : session_(std::move(session)) {}
  bool send(std::string text) override {
    if (closed_) return false;
    auto session = session_.lock();
    return session && session->enqueue(std::move(text));
  }
  bool closed() const override { return closed_.load(); }
  std::size_t pending() const override {
    auto session = session_.lock();
    return session ? session->pending() : 0;
  }
  void end() override {
    if (auto session = session_.lock()) session->shut();
  }
  void mark_closed() { closed_.store(true); }

 private:
  std::weak_ptr<Session> session_;
  std::atomic<bool> closed_{false};
};

}  // namespace

namespace {

template <class Wire>
class Session final : public Connection, public std::enable_shared_from_this<Session<Wire>> {
 public:
  Session(Wire stream, HttpServer::Impl& server, HttpServer::Impl::Id id)
      : stream_(std::move(stream)),
        server_(server),
        id_(id),
        executor_(stream_.get_executor()),
        timer_(executor_) {
    ++server_.connections;
    error_code ec;
    const auto peer = transport().socket().remote_endpoint(ec);
    if (!ec) remote_ = peer.address().to_string() + ":" + std::to_string(peer.port());
  }

  ~Session() {
    --server_.connections;
    server_.leave(id_, this);
  }

  void run() {
    server_.enlist(id_, this, this->weak_from_this());
    asio::dispatch(executor_, [self = this->shared_from_this()] { self->begin(); });
  }

  // From stop(): ends the connection whatever it is doing.
  void shut() {
    asio::post(executor_, [self = this->shared_from_this()] { self->shut_now(); });
  }

  // From a Sink, any thread.
  bool enqueue(std::string text) {
    const auto size = text.size();
    if (queued_bytes_.fetch_add(size) + size > server_.options.stream_backlog) {
      // A client that does not read: drop it rather than buffer without end.
      queued_bytes_ -= size;
      shut();
      return false;
    }
    asio::post(executor_, [self = this->shared_from_this(), text = std::move(text)]() mutable {
      self->push(std::move(text));
    });
    return true;
  }

  std::size_t pending() const { return queued_bytes_.load(); }

  // From stop(), on the session's strand: ends the connection now.
  void shut_now() override {
    if (upgraded_) return;  // the WebSocket has the stream now
    if (streaming_)
      finish_stream();
    else
      close();
  }

  asio::any_io_executor executor() override { return executor_; }

 private:
  beast::tcp_stream& transport() { return beast::get_lowest_layer(stream_); }

  // ---- TLS --------------------------------------------------------------------------------

  void begin() {
    if constexpr (kTls<Wire>)
      detect_tls();
    else
      read_header();
  }

  // The first bytes say whether the client speaks TLS; the handshake reuses them.
  void detect_tls() {
    transport().expires_after(server_.options.header_timeout);
    beast::async_detect_ssl(transport(), buffer_,
                            [self = this->shared_from_this()](error_code ec, bool is_tls) {
                              if (ec) return self->close();
                              if (!is_tls) return self->refuse_plain_http();
                              self->handshake();
                            });
  }

  void handshake() {
    // `used` has a default: Boost 1.81's ssl_stream checks a buffered handshake's handler
    // against the unbuffered signature (error_code), then calls it with both.
    stream_.async_handshake(asio::ssl::stream_base::server, buffer_.data(),
                            [self = this->shared_from_this()](error_code ec, std::size_t used = 0) {
                              if (ec) return self->close();
                              self->buffer_.consume(used);
                              self->read_header();
                            });
  }

  // Plain HTTP on an HTTPS port: a plain answer that says so (a token in the request has
  // crossed in the clear already; the client should hear why it gets nothing).
  void refuse_plain_http() {
    const std::string body = R"({"error":"this server speaks HTTPS only: use an https:// URL"})"
                             "\n";
    auto text = std::make_shared<std::string>(
        "HTTP/1.1 400 Bad Request\r\nServer: bowline\r\nContent-Type: application/json\r\n"
        "Content-Length: " +
        std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body);
    transport().expires_after(std::chrono::seconds(5));
    asio::async_write(transport(), asio::buffer(*text),
                      [self = this->shared_from_this(), text](error_code ec, std::size_t) {
                        if (ec) return self->close();
                        error_code ignored;
                        self->transport().socket().shutdown(tcp::socket::shutdown_send, ignored);
                        self->drain_plain();
                      });
  }

  void drain_plain() {
    drain_buffer_.resize(64 * 1024);
    transport().async_read_some(asio::buffer(drain_buffer_),
                                [self = this->shared_from_this()](error_code ec, std::size_t n) {
                                  self->drained_ += n;
                                  if (ec || self->drained_ > 1024 * 1024) return self->close();
                                  self->drain_plain();
                                });
  }

  // After the last answer: TLS says close_notify first (an OpenSSL 3 client takes an end
  // without it for a truncated answer).
  void end_connection() {
    if constexpr (kTls<Wire>) {
      transport().expires_after(std::chrono::seconds(2));
      stream_.async_shutdown([self = this->shared_from_this()](error_code) { self->close(); });
    } else {
      close();
    }
  }

  // ---- requests ---------------------------------------------------------------------------

  void read_header() {
    if (server_.stopping) return close();
    server_.ledger->waiting(id_);  // sheddable again, unless it authenticated
    parser_.emplace();
    configure(*parser_, server_.options);
    transport().expires_after(server_.options.header_timeout);
    http::async_read_header(
        stream_, buffer_, *parser_,
        [self = this->shared_from_this()](error_code ec, std::size_t) { self->on_header(ec); });
  }

  void on_header(error_code ec) {
    if (ec) return on_read_error(ec);
    const auto& header = parser_->get();
    if (server_.options.header_only && server_.options.header_only(host_of(header)))
      return dispatch_header_only();
    if (const auto refused = refuse_length(*parser_, server_.options))
      return reject(refused->status, refused->error);
    if (util::to_lower(std::string(header[http::field::expect])) == "100-continue") {
      // curl waits a second for this before it sends a body of more than 1 KiB.
      auto cont = std::make_shared<http::response<http::empty_body>>(http::status::continue_,
                                                                     header.version());
      http::async_write(stream_, *cont,
                        [self = this->shared_from_this(), cont](error_code e, std::size_t) {
                          if (e) return self->close();
                          self->read_body();
                        });
      return;
    }
    read_body();
  }

  void read_body() {
    transport().expires_after(server_.options.idle_timeout);
    http::async_read(stream_, buffer_, *parser_,
                     [self = this->shared_from_this()](error_code ec, std::size_t) {
                       if (ec) return self->on_read_error(ec);
                       self->dispatch_request();
                     });
  }

  void on_read_error(error_code ec) {
    if (const auto refused = refuse_read(ec, server_.options))
      return reject(refused->status, refused->error);
    close();  // end of stream, timeout, reset
  }

  void dispatch_request() {
    auto message = parser_->release();
    parser_.reset();
    // A WebSocket handshake keeps its request: the upgrade answers it.
    std::shared_ptr<Message> handshake;
    if (websocket::is_upgrade(message)) handshake = std::make_shared<Message>(message);
    Request request = to_request(message, remote_, kTls<Wire>);
    handle(std::move(request), message.keep_alive(), message.version(), std::move(handshake));
  }

  // A relayed host's request: the handler sees its header; the parser keeps its place in the
  // stream for the relay. Unless the request has no body, the connection ends after an
  // answer that is not a relay (its body is not read).
  void dispatch_header_only() {
    auto message = parser_->get();
    Request request = to_request(message, remote_, kTls<Wire>);
    request.header_only = true;
    handle(std::move(request), message.keep_alive() && parser_->is_done(), message.version(),
           nullptr);
  }

  void handle(Request request, bool keep_alive, unsigned version,
              std::shared_ptr<Message> handshake) {
    transport().expires_never();
    server_.ledger->busy(id_);  // a whole request: not shed while it is answered
    asio::post(*server_.workers, [self = this->shared_from_this(), request = std::move(request),
                                  keep_alive, version, handshake]() mutable {
      Response response;
      try {
        parse_target(request.target, request.path, request.query);
        response = self->server_.handler(request);
      } catch (const HttpError& e) {
        response = Response::error(e.status(), e.what());
      } catch (const std::exception& e) {
        response = Response::error(500, std::string("internal error: ") + e.what());
      }
      if (response.authenticated) self->server_.ledger->authenticated(self->id_);
      if (!response.later) return self->answer(std::move(response), keep_alive, version, handshake);
      // Upstream I/O goes off the workers: the worker is free again now.
      self->server_.run_slow(
          [self, later = std::move(response.later), keep_alive, version, handshake]() mutable {
            Response answer;
            try {
              answer = later->run();
            } catch (const std::exception& e) {
              answer = Response::error(500, std::string("internal error: ") + e.what());
            }
            if (answer.later) answer = Response::error(500, "internal error: deferred twice");
            if (answer.authenticated) self->server_.ledger->authenticated(self->id_);
            self->answer(std::move(answer), keep_alive, version, handshake);
          });
    });
  }

  // Any thread: the handler's answer, written on the session's strand.
  void answer(Response response, bool keep_alive, unsigned version,
              std::shared_ptr<Message> handshake) {
    if (response.upgrade && !handshake)
      response = Response::error(426, "this is a WebSocket: send Upgrade: websocket");
    asio::post(executor_, [self = this->shared_from_this(), response = std::move(response),
                           keep_alive, version, handshake]() mutable {
      if (response.upgrade) return self->upgrade(std::move(response.upgrade), handshake);
      if (response.relay) return self->relay(std::move(response.relay));
      // A refused handshake: the answer, then the connection ends.
      self->respond(std::move(response), keep_alive && !handshake, version);
    });
  }

  void respond(Response response, bool keep_alive, unsigned version) {
    if (response.stream && server_.stopping) return close();
    if (response.stream) return start_stream(std::move(response));
    if (response.shared_body) {
      // The shared text is written in place; the completion keeps it alive until then.
      const auto& text = *response.shared_body;
      auto res = std::make_shared<http::response<http::span_body<const char>>>(
          static_cast<http::status>(response.status), version);
      res->body() = http::span_body<const char>::value_type(text.data(), text.size());
      write(std::move(response), res, keep_alive);
    } else {
      auto res = std::make_shared<http::response<http::string_body>>(
          static_cast<http::status>(response.status), version);
      res->body() = std::move(response.body);
      write(std::move(response), res, keep_alive);
    }
  }

  template <class Message>
  void write(Response response, std::shared_ptr<Message> res, bool keep_alive) {
    res->set(http::field::server, "bowline");
    if (!response.content_type.empty()) res->set(http::field::content_type, response.content_type);
    // Set-Cookie is the one header sent more than once (one per cookie); the others replace.
    for (const auto& [name, value] : response.headers)
      if (util::to_lower(name) == "set-cookie")
        res->insert(name, value);
      else
        res->set(name, value);
    if constexpr (kTls<Wire>) res->set(http::field::strict_transport_security, kHsts);
    res->keep_alive(keep_alive && !server_.stopping);
    res->prepare_payload();
    transport().expires_after(server_.options.idle_timeout);
    http::async_write(stream_, *res,
                      [self = this->shared_from_this(), res,
                       keep = std::move(response.shared_body)](error_code ec, std::size_t) {
                        if (ec) return self->close();
                        if (!res->keep_alive()) return self->end_connection();
                        self->read_header();
                      });
  }

  void upgrade(std::shared_ptr<Upgrade> upgrade, std::shared_ptr<Message> handshake) {
    if (server_.stopping) return close();
    // The stream moves to a WebSocket session; this session ends with nothing left to do.
    upgraded_ = true;
    start_websocket(std::move(stream_), server_, id_, std::move(handshake), std::move(upgrade));
  }

  void relay(std::shared_ptr<Relay> relay) {
    if (server_.stopping || !parser_ || parser_->is_header_done() == false) {
      if (relay->fd >= 0) ::close(relay->fd);
      return close();
    }
    upgraded_ = true;  // the relay has the stream now
    start_relay(std::move(stream_), std::move(buffer_), *parser_, server_, id_, std::move(relay));
    parser_.reset();
  }

  // An error before the request was read whole: answer, then close without a reset (the
  // client may still be sending the body we refused, so read and drop it for a moment).
  void reject(int status, const std::string& message) {
    auto res =
        std::make_shared<http::response<http::string_body>>(static_cast<http::status>(status), 11);
    res->set(http::field::server, "bowline");
    res->set(http::field::content_type, "application/json");
    if constexpr (kTls<Wire>) res->set(http::field::strict_transport_security, kHsts);
    res->body() = Response::error(status, message).body;
    res->keep_alive(false);
    res->prepare_payload();
    transport().expires_after(std::chrono::seconds(5));
    http::async_write(stream_, *res,
                      [self = this->shared_from_this(), res](error_code ec, std::size_t) {
                        if (ec) return self->close();
                        error_code ignored;
                        self->transport().socket().shutdown(tcp::socket::shutdown_send, ignored);
                        self->drain();
                      });
  }

  void drain() {
    drain_buffer_.resize(64 * 1024);
    stream_.async_read_some(asio::buffer(drain_buffer_),
                            [self = this->shared_from_this()](error_code ec, std::size_t n) {
                              self->drained_ += n;
                              if (ec || self->drained_ > 16 * 1024 * 1024) return self->close();
                              self->drain();
                            });
  }

  void close() {
    if (upgraded_) return;
    error_code ignored;
    transport().socket().shutdown(tcp::socket::shutdown_both, ignored);
    transport().close();
  }

  // ---- event streams ----------------------------------------------------------------------

  void start_stream(Response response) {
    std::string head = "HTTP/1.1 " + std::to_string(response.status) + " " +
                       reason_phrase(response.status) + "\r\n";
    head +=
        "Server: bowline\r\nContent-Type: " +
        (response.content_type.empty() ? std::string("text/event-stream") : response.content_type) +
        "\r\nCache-Control: no-cache\r\nX-Accel-Buffering: no\r\nConnection: close\r\n";
    for (const auto& [name, value] : response.headers) head += name + ": " + value + "\r\n";
    if constexpr (kTls<Wire>) head += std::string("Strict-Transport-Security: ") + kHsts + "\r\n";
    head += "\r\n";
    streaming_ = true;
    ++server_.streams;
    stream_definition_ = std::move(response.stream);
    sink_ = std::make_shared<Sink<Session>>(this->weak_from_this());
    last_write_ = std::chrono::steady_clock::now();
    transport().expires_never();
    queued_bytes_ += head.size();
    push(std::move(head));
    watch_for_disconnect();
    arm_heartbeat();
    // open() replays history from the store: a worker's job, not an I/O thread's.
    asio::post(*server_.workers, [self = this->shared_from_this()] {
      try {
        if (self->stream_definition_->open) self->stream_definition_->open(self->sink_);
      } catch (...) {
        self->shut();
      }
      bool close_now = false;
      {
        std::lock_guard lock(self->lifecycle_.mutex);
        self->lifecycle_.opened = true;
        close_now = self->lifecycle_.close_requested && !self->lifecycle_.closed;
        if (close_now) self->lifecycle_.closed = true;
      }
      if (close_now && self->stream_definition_->close) self->stream_definition_->close();
    });
  }

  // On the strand; the bytes are counted by whoever queued them (enqueue, or += before).
  void push(std::string text) {
    if (finished_) return;
    queue_.push_back(std::move(text));
    if (!writing_) write_next();
  }

  void write_next() {
    if (queue_.empty() || finished_) {
      writing_ = false;
      return;
    }
    writing_ = true;
    asio::async_write(stream_, asio::buffer(queue_.front()),
                      [self = this->shared_from_this()](error_code ec, std::size_t) {
                        if (ec) return self->finish_stream();
                        self->queued_bytes_ -= self->queue_.front().size();
                        self->queue_.pop_front();
                        self->last_write_ = std::chrono::steady_clock::now();
                        self->write_next();
                      });
  }

  // The client never speaks on an event stream: a read that ends means it went away.
  void watch_for_disconnect() {
    drain_buffer_.resize(4096);
    stream_.async_read_some(asio::buffer(drain_buffer_),
                            [self = this->shared_from_this()](error_code ec, std::size_t) {
                              if (ec) return self->finish_stream();
                              self->watch_for_disconnect();
                            });
  }

  void arm_heartbeat() {
    timer_.expires_at(last_write_ + server_.options.heartbeat);
    timer_.async_wait([self = this->shared_from_this()](error_code ec) {
      if (ec || self->finished_) return;
      if (std::chrono::steady_clock::now() - self->last_write_ >= self->server_.options.heartbeat &&
          self->queue_.empty()) {
        self->queued_bytes_ += self->stream_definition_->heartbeat.size();
        self->push(self->stream_definition_->heartbeat);
        self->last_write_ = std::chrono::steady_clock::now();
      }
      self->arm_heartbeat();
    });
  }

  void finish_stream() {
    if (finished_) return;
    finished_ = true;
    sink_->mark_closed();
    timer_.cancel();
    close();
    --server_.streams;
    bool close_now = false;
    {
      std::lock_guard lock(lifecycle_.mutex);
      lifecycle_.close_requested = true;
      close_now = lifecycle_.opened && !lifecycle_.closed;
      if (close_now) lifecycle_.closed = true;
    }
    if (close_now && stream_definition_->close)
      asio::post(*server_.workers, [definition = stream_definition_] { definition->close(); });
  }

  Wire stream_;
  HttpServer::Impl& server_;
  const HttpServer::Impl::Id id_;   // in the ledger; a WebSocket takes it over
  asio::any_io_executor executor_;  // the strand; kept, since the stream may move to a WebSocket
  bool upgraded_ = false;           // it has: nothing here may touch the stream
  std::string remote_;
  beast::flat_buffer buffer_;
  std::optional<Parser> parser_;
  std::vector<char> drain_buffer_;
  std::size_t drained_ = 0;

  bool streaming_ = false;
  bool finished_ = false;
  bool writing_ = false;
  std::shared_ptr<Stream> stream_definition_;
  std::shared_ptr<Sink<Session>> sink_;
  StreamLifecycle lifecycle_;
  std::deque<std::string> queue_;
  std::atomic<std::size_t> queued_bytes_{0};
  std::chrono::steady_clock::time_point last_write_;
  asio::steady_timer timer_;
};

}  // namespace

void HttpServer::Impl::accept() {
  acceptor.async_accept(asio::make_strand(ioc), [this](error_code ec, tcp::socket socket) {
    if (ec == asio::error::operation_aborted || !acceptor.is_open() || stopping) return;
    if (ec == asio::error::no_descriptors || ec.value() == ENFILE ||
        ec == asio::error::no_buffer_space || ec == asio::error::no_memory)
      return make_room();
    if (!ec) admit(std::move(socket));
    accept();
  });
}

// Out of descriptors: the oldest stranger goes and accepting goes on at once. With none to
// shed, a waiting client is accepted on the spare descriptor and closed (it hears "no" rather
// than nothing), then a pause instead of a spin.
void HttpServer::Impl::make_room() {
  const auto victim = ledger->shed_oldest_stranger();
  if (victim) {
    shed({*victim});
  } else {
    refuse_one_waiting();
  }
  accept_pause.expires_after(std::chrono::milliseconds(victim ? 2 : 100));
  accept_pause.async_wait([this](error_code e) {
    if (!e && !stopping) accept();
  });
}

void HttpServer::Impl::refuse_one_waiting() {
  if (spare_fd < 0) return;
  ::close(spare_fd);
  const int fd = ::accept4(acceptor.native_handle(), nullptr, nullptr, SOCK_CLOEXEC);
  if (fd >= 0) ::close(fd);
  spare_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
}

void HttpServer::Impl::admit(tcp::socket socket) {
  error_code ec;
  const auto peer = socket.remote_endpoint(ec);
  if (ec) return;  // gone already
  const auto admission = ledger->admit(peer.address().to_string());
  shed(admission.shed);
  if (!admission.id) {
    socket.close(ec);  // full of authenticated clients: they are not slowed by a flood
    return;
  }
  socket.set_option(tcp::no_delay(true), ec);
  if (tls)
    std::make_shared<Session<TlsStream>>(TlsStream(std::move(socket), *tls), *this, admission.id)
        ->run();
  else
    std::make_shared<Session<PlainStream>>(PlainStream(std::move(socket)), *this, admission.id)
        ->run();
}

HttpServer::HttpServer(HttpServerOptions options, Handler handler)
    : impl_(std::make_unique<Impl>(std::move(options), std::move(handler))) {}

HttpServer::~HttpServer() {
  stop();
}

void HttpServer::start() {
  std::lock_guard lock(impl_->lifecycle_mutex);
  if (impl_->started) throw std::logic_error("HttpServer::start: already started");
  auto& o = impl_->options;
  if (o.tls) impl_->load_tls();
  error_code ec;
  const auto address = asio::ip::make_address(o.address, ec);
  if (ec) throw std::runtime_error("listen address \"" + o.address + "\" is not an IP address");
  const tcp::endpoint endpoint(address, o.port);
  const auto where = o.address + ":" + std::to_string(o.port);
  impl_->acceptor.open(endpoint.protocol(), ec);
  if (!ec) impl_->acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) impl_->acceptor.bind(endpoint, ec);
  if (!ec) impl_->acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    error_code ignored;
    impl_->acceptor.close(ignored);
    throw std::runtime_error("cannot listen on " + where + ": " + ec.message());
  }
  impl_->bound_port = impl_->acceptor.local_endpoint(ec).port();
  rlimit files{};
  const std::size_t descriptors =
      ::getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur != RLIM_INFINITY ? files.rlim_cur
                                                                                 : 1 << 20;
  auto limits = connection_limits(o.max_connections, descriptors);
  limits.max_per_address = std::min(limits.max_connections, o.max_connections_per_address);
  limits.max_strangers_per_address = o.max_strangers_per_address;
  impl_->ledger = std::make_unique<ConnectionLedger>(limits);
  impl_->spare_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  impl_->workers = std::make_unique<asio::thread_pool>(std::max(1u, o.workers));
  impl_->work.emplace(impl_->ioc.get_executor());
  impl_->accept();
  for (unsigned i = 0; i < std::max(1u, o.io_threads); ++i)
    impl_->threads.emplace_back([this] { impl_->ioc.run(); });
  impl_->started = true;
}

void HttpServer::stop() {
  std::lock_guard lock(impl_->lifecycle_mutex);
  if (!impl_->started || impl_->stopped) return;
  impl_->stopped = true;
  impl_->stopping = true;
  {
    std::promise<void> closed;
    asio::post(impl_->ioc, [this, &closed] {
      error_code ignored;
      impl_->acceptor.close(ignored);
      impl_->accept_pause.cancel();
      closed.set_value();
    });
    closed.get_future().wait();
  }
  std::vector<std::shared_ptr<Connection>> live;
  {
    std::lock_guard sessions_lock(impl_->sessions_mutex);
    for (auto& [id, entry] : impl_->sessions)
      if (auto session = entry.second.lock()) live.push_back(std::move(session));
  }
  for (auto& session : live) {
    std::promise<void> shut;
    asio::dispatch(session->executor(), [&session, &shut] {
      session->shut_now();
      shut.set_value();
    });
    shut.get_future().wait();
  }
  live.clear();
  // Deferred answers end by their own timeouts (a TCP connect, an SSH login); their sessions
  // are closed, so the answers go nowhere.
  {
    std::unique_lock slow_lock(impl_->slow_mutex);
    impl_->slow_idle.wait(slow_lock, [this] { return impl_->slow_running == 0; });
  }
  // Handlers that are running finish (their answers go nowhere); streams' close() runs.
  impl_->workers->join();
  // Closed sockets end their pending operations at once; let the sessions go before the
  // threads do.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (impl_->connections.load() != 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  impl_->work.reset();
  impl_->ioc.stop();
  for (auto& thread : impl_->threads) thread.join();
  impl_->threads.clear();
  if (impl_->spare_fd >= 0) ::close(impl_->spare_fd);
  impl_->spare_fd = -1;
}

unsigned short HttpServer::port() const {
  return impl_->bound_port;
}

std::size_t HttpServer::open_connections() const {
  return impl_->connections.load();
}

std::size_t HttpServer::open_streams() const {
  return impl_->streams.load();
}

}  // namespace bowline::api