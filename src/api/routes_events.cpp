// GET /api/v1/events: server-sent events. First the events after `since` (or Last-Event-ID)
// from the store, then live ones from the EventBus, without a gap or a duplicate between the
// two; a user sees their own spaces' events, an admin everything.
#include <deque>
#include <mutex>
#include <thread>

#include "api/api.hpp"
#include "api/json.hpp"
#include "engine/event_kinds.hpp"

namespace bowline::api {

namespace {

std::string sse_frame(const store::Event& event) {
  return "id: " + std::to_string(event.seq) + "\nevent: " + event.kind + "\ndata: " +
         event_json(event).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n\n";
}

std::optional<std::int64_t> parse_seq(const std::string& text) {
  if (text.empty() || text.size() > 18 || text.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  return std::stoll(text);
}

}  // namespace

struct EventStreamState {
  std::mutex mutex;
  std::shared_ptr<StreamSink> sink;
  int listener = 0;
  bool live = false;    // replay done: listener events go straight out
  bool closed = false;  // close() ran: nothing more happens
  std::int64_t last = 0;
  std::deque<store::Event> buffered;  // live events that arrived during the replay
};

void Api::add_event_routes() {
  router_.add("GET", "/api/v1/event-kinds", Access::Any, [](const Caller&, const Request&) {
    auto kinds = nlohmann::json::array();
    for (const auto& kind : engine::event_kinds())
      kinds.push_back({{"name", kind.name}, {"payload", kind.payload}});
    return Response::json(200, kinds);
  });
  router_.add(
      "GET", "/api/v1/events", Access::Any, [this](const Caller& caller, const Request& request) {
        std::optional<std::int64_t> since;
        if (auto it = request.query.find("since"); it != request.query.end()) {
          since = parse_seq(it->second);
          if (!since) throw HttpError(400, "since must be an event sequence number (0 or more)");
        } else if (auto id = request.header("last-event-id"); !id.empty()) {
          since = parse_seq(id);  // EventSource's reconnect; a bad one means "from now"
        }
        const bool admin = caller.admin();
        const auto user_id = caller.user.id;
        auto state = std::make_shared<EventStreamState>();
        // Whether this caller may see the event; `may_read` allows a store lookup (not on
        // the publishing thread, where only what SpaceOwners remembers is used).
        auto visible = [this, admin, user_id](const store::Event& e, bool may_read) {
          if (admin) return true;
          if (!e.space_id) return false;
          if (owners_.visible_to(*e.space_id, user_id)) return true;
          if (!may_read || owners_.remembered(*e.space_id)) return false;
          const auto known = owners_.lookup(*e.space_id);
          return known && known->owner == user_id;
        };

        auto stream = std::make_shared<Stream>();
        stream->open = [this, state, since, visible](std::shared_ptr<StreamSink> sink) {
          {
            std::lock_guard lock(state->mutex);
            if (state->closed) return;
            state->sink = sink;
            state->listener = events_.listen([state, visible](const store::Event& e) {
              std::lock_guard inner(state->mutex);
              if (state->closed) return;
              if (!state->live) {
                state->buffered.push_back(e);
              } else if (e.seq > state->last) {
                state->last = e.seq;
                if (visible(e, false)) state->sink->send(sse_frame(e));
              }
            });
            ++stream_listeners_;
          }
          sink->send("retry: 2000\n\n");
          // Without `since`: only what happens from now on.
          std::int64_t last = since ? *since : store_.events().latest_seq();
          if (since) {
            for (;;) {
              const auto batch = store_.events().events_since(last, options_.replay_batch);
              if (batch.empty() || sink->closed()) break;
              for (const auto& e : batch) {
                if (visible(e, true)) sink->send(sse_frame(e));
                last = e.seq;
              }
              // A long history goes out at the client's pace, not into an ever longer
              // queue. A client stuck for 10 s gets no more patience (it blocks a worker):
              // the queue then fills, and the server drops it; it resumes with Last-Event-ID.
              const auto patience = std::chrono::steady_clock::now() + std::chrono::seconds(10);
              while (sink->pending() > options_.replay_window && !sink->closed() &&
                     std::chrono::steady_clock::now() < patience)
                std::this_thread::sleep_for(std::chrono::milliseconds(2));
            }
          }
          std::lock_guard lock(state->mutex);
          state->last = last;
          for (const auto& e : state->buffered)
            if (e.seq > state->last) {
              state->last = e.seq;
              // SpaceOwners' own listener ran before this one's: what it knows is enough.
              if (visible(e, false)) sink->send(sse_frame(e));
            }
          state->buffered.clear();
          state->live = true;
        };
        stream->close = [this, state] {
          int listener = 0;
          {
            std::lock_guard lock(state->mutex);
            if (state->closed) return;
            state->closed = true;
            listener = state->listener;
            state->sink.reset();
          }
          if (listener) {
            events_.unlisten(listener);
            --stream_listeners_;
          }
        };
        Response response;
        response.status = 200;
        response.content_type = "text/event-stream";
        response.stream = stream;
        return response;
      });
}

}  // namespace bowline::api
