// The server's WebSockets: a session's stream after the upgrade, frames both ways, the route's
// open(), message() and close().
#include "api/http_server_wire.hpp"

namespace bowline::api::detail {

namespace {

// A route's side of a WebSocket (a WebSocket<PlainStream> or WebSocket<TlsStream>).
template <class WebSocket>
class Peer final : public SocketPeer {
 public:
  explicit Peer(std::weak_ptr<WebSocket> socket) : socket_(std::move(socket)) {}
  bool send(std::string bytes) override {
    if (closed_) return false;
    auto socket = socket_.lock();
    return socket && socket->enqueue(std::move(bytes));
  }
  void close() override {
    if (closed_) return;
    if (auto socket = socket_.lock()) socket->request_close();
  }
  bool closed() const override { return closed_.load(); }
  std::size_t pending() const override {
    auto socket = socket_.lock();
    return socket ? socket->pending() : 0;
  }
  void pause_reading(bool paused) override {
    if (auto socket = socket_.lock()) socket->pause_reading(paused);
  }
  void mark_closed() { closed_.store(true); }

 private:
  std::weak_ptr<WebSocket> socket_;
  std::atomic<bool> closed_{false};
};

template <class Wire>
class WebSocket final : public Connection, public std::enable_shared_from_this<WebSocket<Wire>> {
 public:
  WebSocket(Wire stream, HttpServer::Impl& server, HttpServer::Impl::Id id,
            std::shared_ptr<Upgrade> upgrade)
      : ws_(std::move(stream)), server_(server), id_(id), upgrade_(std::move(upgrade)) {
    ++server_.connections;
  }
  ~WebSocket() override {
    --server_.connections;
    server_.leave(id_, this);
  }

  void run(std::shared_ptr<Message> request) {
    server_.enlist(id_, this, this->weak_from_this());
    peer_ = std::make_shared<Peer<WebSocket>>(this->weak_from_this());
    beast::get_lowest_layer(ws_).expires_never();
    auto timeouts = websocket::stream_base::timeout::suggested(beast::role_type::server);
    timeouts.idle_timeout = server_.options.idle_timeout;
    timeouts.keep_alive_pings = true;  // a ping at half the idle time keeps a quiet console open
    ws_.set_option(timeouts);
    ws_.set_option(websocket::stream_base::decorator(
        [](websocket::response_type& res) { res.set(http::field::server, "bowline"); }));
    ws_.binary(true);
    // One frame per message: Beast's default splits a message into frames of 4 KiB and writes
    // each on its own, which held a VNC bridge to ~250 MB/s on loopback.
    ws_.auto_fragment(false);
    ws_.read_message_max(server_.options.body_limit);
    ws_.async_accept(*request, [self = this->shared_from_this(), request](error_code ec) {
      if (ec) return self->finish();
      self->accepted_ = true;
      asio::post(*self->server_.workers, [self] { self->open(); });
    });
  }

  void shut_now() override { finish(); }
  asio::any_io_executor executor() override { return ws_.get_executor(); }

  bool enqueue(std::string bytes) {
    if (finished_flag_.load()) return false;
    const auto size = bytes.size();
    if (queued_bytes_.fetch_add(size) + size > server_.options.stream_backlog) {
      queued_bytes_ -= size;
      asio::post(ws_.get_executor(), [self = this->shared_from_this()] { self->finish(); });
      return false;
    }
    asio::post(ws_.get_executor(),
               [self = this->shared_from_this(), bytes = std::move(bytes)]() mutable {
                 if (self->finished_) return;
                 self->queue_.push_back(std::move(bytes));
                 if (!self->writing_) self->write_next();
               });
    return true;
  }

  void request_close() {
    asio::post(ws_.get_executor(), [self = this->shared_from_this()] {
      self->closing_ = true;
      if (!self->writing_) self->close_now();
    });
  }

  std::size_t pending() const { return queued_bytes_.load(); }

  void pause_reading(bool paused) {
    reads_paused_ = paused;
    if (paused) return;
    asio::post(ws_.get_executor(), [self = this->shared_from_this()] {
      if (!self->read_parked_ || self->finished_) return;
      self->read_parked_ = false;
      self->parked_self_.reset();
      self->read();
    });
  }

 private:
  // On a worker: the route's open(), then frames start flowing in.
  void open() {
    try {
      if (upgrade_->open) upgrade_->open(peer_);
    } catch (...) {
      request_close();
    }
    bool close_now = false;
    {
      std::lock_guard lock(lifecycle_.mutex);
      lifecycle_.opened = true;
      close_now = lifecycle_.close_requested && !lifecycle_.closed;
      if (close_now) lifecycle_.closed = true;
    }
    if (close_now) {
      if (upgrade_->close) upgrade_->close();
      return;
    }
    asio::post(ws_.get_executor(), [self = this->shared_from_this()] { self->read(); });
  }

  void read() {
    if (finished_) return;
    ws_.async_read(buffer_, [self = this->shared_from_this()](error_code ec, std::size_t) {
      if (ec) return self->finish();
      auto bytes = beast::buffers_to_string(self->buffer_.data());
      self->buffer_.consume(self->buffer_.size());
      try {
        if (self->upgrade_->message) self->upgrade_->message(std::move(bytes));
      } catch (...) {
        return self->finish();
      }
      // Paused: the next read waits for pause_reading(false), on this executor. With no
      // read in flight nothing else may hold the socket: it holds itself until then.
      if (self->reads_paused_) {
        self->read_parked_ = true;
        self->parked_self_ = self;
        return;
      }
      self->read();
    });
  }

  void write_next() {
    if (queue_.empty() || finished_) {
      writing_ = false;
      if (closing_ && !finished_) close_now();
      return;
    }
    writing_ = true;
    ws_.binary(true);
    ws_.async_write(asio::buffer(queue_.front()),
                    [self = this->shared_from_this()](error_code ec, std::size_t) {
                      if (ec) return self->finish();
                      self->queued_bytes_ -= self->queue_.front().size();
                      self->queue_.pop_front();
                      self->write_next();
                    });
  }

  void close_now() {
    if (finished_ || close_sent_) return;
    close_sent_ = true;
    ws_.async_close(websocket::close_code::normal,
                    [self = this->shared_from_this()](error_code) { self->finish(); });
  }

  void finish() {
    if (finished_) return;
    finished_ = true;
    finished_flag_ = true;
    auto keep = std::move(parked_self_);  // until this returns
    if (peer_) peer_->mark_closed();
    error_code ignored;
    beast::get_lowest_layer(ws_).socket().shutdown(tcp::socket::shutdown_both, ignored);
    beast::get_lowest_layer(ws_).close();
    if (!accepted_) return;
    bool close_now = false;
    {
      std::lock_guard lock(lifecycle_.mutex);
      lifecycle_.close_requested = true;
      close_now = lifecycle_.opened && !lifecycle_.closed;
      if (close_now) lifecycle_.closed = true;
    }
    if (close_now && upgrade_->close)
      asio::post(*server_.workers, [upgrade = upgrade_] { upgrade->close(); });
  }

  websocket::stream<Wire> ws_;
  HttpServer::Impl& server_;
  const HttpServer::Impl::Id id_;  // the HTTP session's place in the ledger, now this one's
  std::shared_ptr<Upgrade> upgrade_;
  std::shared_ptr<Peer<WebSocket>> peer_;
  beast::flat_buffer buffer_;
  std::deque<std::string> queue_;
  std::atomic<std::size_t> queued_bytes_{0};
  StreamLifecycle lifecycle_;
  bool accepted_ = false;
  bool writing_ = false;
  bool closing_ = false;
  bool close_sent_ = false;
  bool finished_ = false;
  std::atomic<bool> finished_flag_{false};
  std::atomic<bool> reads_paused_{false};
  bool read_parked_ = false;                // on the executor: a read is owed once reading resumes
  std::shared_ptr<WebSocket> parked_self_;  // while parked; released by resume or finish
};

}  // namespace

template <class Wire>
void start_websocket(Wire stream, HttpServer::Impl& server, HttpServer::Impl::Id id,
                     std::shared_ptr<Message> request, std::shared_ptr<Upgrade> upgrade) {
  std::make_shared<WebSocket<Wire>>(std::move(stream), server, id, std::move(upgrade))
      ->run(std::move(request));
}

template void start_websocket<PlainStream>(PlainStream, HttpServer::Impl&, HttpServer::Impl::Id,
                                           std::shared_ptr<Message>, std::shared_ptr<Upgrade>);
template void start_websocket<TlsStream>(TlsStream, HttpServer::Impl&, HttpServer::Impl::Id,
                                         std::shared_ptr<Message>, std::shared_ptr<Upgrade>);

}  // namespace bowline::api::detail
