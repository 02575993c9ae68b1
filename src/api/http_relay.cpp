// A relay: the rest of a client's connection carried to a guest's HTTP server (preview URLs).
// Requests are parsed, one header at a time, so that each one's fields pass the route's
// rewrite (its cookie out, X-Forwarded-* in) whatever came before it on the connection; their
// bodies stream through a buffer of 64 KiB (chunked ones re-chunked by Beast's serializer).
// Answers are not parsed: what the guest writes reaches the client as it comes, so streams,
// server-sent events and a WebSocket's 101 pass unchanged. After a request that asks for an
// Upgrade both directions are bytes.
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <boost/asio/posix/stream_descriptor.hpp>

#include "api/http_server_wire.hpp"
#include "util/strings.hpp"

namespace bowline::api::detail {

namespace {

using BodyParser = http::request_parser<http::buffer_body>;
using BodySerializer = http::request_serializer<http::buffer_body>;
constexpr std::size_t kChunk = 64 * 1024;

template <class Relayed>
class End final : public RelayEnd {
 public:
  explicit End(std::weak_ptr<Relayed> relay) : relay_(std::move(relay)) {}
  void close() override {
    if (auto relay = relay_.lock()) asio::post(relay->executor(), [relay] { relay->finish(); });
  }

 private:
  std::weak_ptr<Relayed> relay_;
};

bool asks_upgrade(const http::request_header<>& header) {
  return !header[http::field::upgrade].empty() &&
         util::to_lower(std::string(header[http::field::connection])).find("upgrade") !=
             std::string::npos;
}

template <class Wire>
class Relayed final : public Connection, public std::enable_shared_from_this<Relayed<Wire>> {
 public:
  Relayed(Wire client, beast::flat_buffer buffer, HttpServer::Impl& server, HttpServer::Impl::Id id,
          std::shared_ptr<Relay> relay)
      : client_(std::move(client)),
        buffer_(std::move(buffer)),
        server_(server),
        id_(id),
        relay_(std::move(relay)),
        upstream_(client_.get_executor()) {
    ++server_.connections;
    error_code ec;
    upstream_.assign(relay_->fd, ec);
    if (ec) ::close(relay_->fd);
    relay_->fd = -1;
  }
  ~Relayed() override {
    --server_.connections;
    server_.leave(id_, this);
  }

  void run(Parser& first) {
    server_.enlist(id_, this, this->weak_from_this());
    beast::get_lowest_layer(client_).expires_never();
    if (!upstream_.is_open()) return finish();
    asio::post(*server_.workers, [self = this->shared_from_this()] { self->open(); });
    parser_.emplace(std::move(first));
    parser_->body_limit(boost::none);
    on_request_header();
    read_down();
  }

  void shut_now() override { finish(); }
  asio::any_io_executor executor() override { return client_.get_executor(); }

  // On the strand: both sockets close; the route's close() follows its open().
  void finish() {
    if (finished_) return;
    finished_ = true;
    error_code ignored;
    upstream_.close(ignored);
    beast::get_lowest_layer(client_).socket().close(ignored);
    bool close_now = false;
    {
      std::lock_guard lock(lifecycle_.mutex);
      lifecycle_.close_requested = true;
      close_now = lifecycle_.opened && !lifecycle_.closed;
      if (close_now) lifecycle_.closed = true;
    }
    if (close_now && relay_->close)
      asio::post(*server_.workers, [relay = relay_] { relay->close(); });
  }

 private:
  void open() {
    try {
      if (relay_->open) relay_->open(std::make_shared<End<Relayed>>(this->weak_from_this()));
    } catch (...) {
      asio::post(executor(), [self = this->shared_from_this()] { self->finish(); });
    }
    bool close_now = false;
    {
      std::lock_guard lock(lifecycle_.mutex);
      lifecycle_.opened = true;
      close_now = lifecycle_.close_requested && !lifecycle_.closed;
      if (close_now) lifecycle_.closed = true;
    }
    if (close_now && relay_->close) relay_->close();
  }

  // ---- client to guest: requests, each rewritten --------------------------------------------

  void next_request() {
    if (finished_) return;
    parser_.emplace();
    parser_->body_limit(boost::none);
    parser_->header_limit(kHeaderLimit);
    http::async_read_header(client_, buffer_, *parser_,
                            [self = this->shared_from_this()](error_code ec, std::size_t) {
                              if (ec) return self->end_up();
                              self->on_request_header();
                            });
  }

  void on_request_header() {
    auto& message = parser_->get();
    HeaderFields fields;
    for (const auto& field : message)
      fields.emplace_back(std::string(field.name_string()), std::string(field.value()));
    if (relay_->rewrite) relay_->rewrite(fields);
    message.clear();
    for (const auto& [name, value] : fields) message.insert(name, value);
    upgrade_ = asks_upgrade(message);
    serializer_.emplace(message);
    http::async_write_header(upstream_, *serializer_,
                             [self = this->shared_from_this()](error_code ec, std::size_t) {
                               if (ec) return self->finish();
                               self->pump_body();
                             });
  }

  void pump_body() {
    auto& body = parser_->get().body();
    if (parser_->is_done()) {
      body.data = nullptr;
      body.size = 0;
      body.more = false;
      return write_body();
    }
    body.data = up_.data();
    body.size = up_.size();
    http::async_read_some(client_, buffer_, *parser_,
                          [self = this->shared_from_this()](error_code ec, std::size_t) {
                            if (ec == http::error::need_buffer) ec = {};
                            if (ec) return self->finish();  // a body cut short
                            auto& b = self->parser_->get().body();
                            b.size = self->up_.size() - b.size;
                            b.data = self->up_.data();
                            b.more = !self->parser_->is_done();
                            self->write_body();
                          });
  }

  void write_body() {
    http::async_write(upstream_, *serializer_,
                      [self = this->shared_from_this()](error_code ec, std::size_t) {
                        if (ec == http::error::need_buffer) ec = {};
                        if (ec) return self->finish();
                        if (!self->serializer_->is_done()) return self->pump_body();
                        if (self->upgrade_) return self->flush_raw_up();
                        self->next_request();
                      });
  }

  // After an Upgrade: what the client sent past the request's header, then bytes as they come.
  void flush_raw_up() {
    serializer_.reset();
    parser_.reset();
    if (buffer_.size() == 0) return raw_up();
    asio::async_write(upstream_, buffer_.data(),
                      [self = this->shared_from_this()](error_code ec, std::size_t n) {
                        if (ec) return self->finish();
                        self->buffer_.consume(n);
                        self->raw_up();
                      });
  }

  void raw_up() {
    client_.async_read_some(asio::buffer(up_),
                            [self = this->shared_from_this()](error_code ec, std::size_t n) {
                              if (ec) return self->end_up();
                              asio::async_write(self->upstream_, asio::buffer(self->up_.data(), n),
                                                [self](error_code e, std::size_t) {
                                                  if (e) return self->finish();
                                                  self->raw_up();
                                                });
                            });
  }

  // The client has sent all it will: the guest reads its end; its answers still flow.
  void end_up() {
    if (finished_) return;
    ::shutdown(upstream_.native_handle(), SHUT_WR);
  }

  // ---- guest to client: bytes ---------------------------------------------------------------

  void read_down() {
    upstream_.async_read_some(
        asio::buffer(down_), [self = this->shared_from_this()](error_code ec, std::size_t n) {
          if (ec) return self->end_down();
          asio::async_write(self->client_, asio::buffer(self->down_.data(), n),
                            [self](error_code e, std::size_t) {
                              if (e) return self->finish();
                              self->read_down();
                            });
        });
  }

  // The guest closed: over TLS the client hears close_notify first (an answer delimited by the
  // connection's end is then whole, not truncated).
  void end_down() {
    if (finished_) return;
    if constexpr (kTls<Wire>) {
      beast::get_lowest_layer(client_).expires_after(std::chrono::seconds(2));
      client_.async_shutdown([self = this->shared_from_this()](error_code) { self->finish(); });
    } else {
      error_code ignored;
      beast::get_lowest_layer(client_).socket().shutdown(tcp::socket::shutdown_send, ignored);
      finish();
    }
  }

  Wire client_;
  beast::flat_buffer buffer_;
  HttpServer::Impl& server_;
  const HttpServer::Impl::Id id_;
  std::shared_ptr<Relay> relay_;
  asio::posix::stream_descriptor upstream_;
  std::optional<BodyParser> parser_;
  std::optional<BodySerializer> serializer_;
  std::array<char, kChunk> up_{}, down_{};
  bool upgrade_ = false;
  bool finished_ = false;
  StreamLifecycle lifecycle_;
};

}  // namespace

template <class Wire>
void start_relay(Wire stream, beast::flat_buffer buffer, Parser& parser, HttpServer::Impl& server,
                 HttpServer::Impl::Id id, std::shared_ptr<Relay> relay) {
  std::make_shared<Relayed<Wire>>(std::move(stream), std::move(buffer), server, id,
                                  std::move(relay))
      ->run(parser);
}

template void start_relay<PlainStream>(PlainStream, beast::flat_buffer, Parser&, HttpServer::Impl&,
                                       HttpServer::Impl::Id, std::shared_ptr<Relay>);
template void start_relay<TlsStream>(TlsStream, beast::flat_buffer, Parser&, HttpServer::Impl&,
                                     HttpServer::Impl::Id, std::shared_ptr<Relay>);

}  // namespace bowline::api::detail
