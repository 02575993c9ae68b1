// GET /api/v1/events: server-sent events. First the events after `since` (or Last-Event-ID)
// from the store, then live ones from the EventBus, without a gap or a duplicate between the
// two; a user sees their own spaces' events, an admin everything. A stream lives only as long
// as the credential that opened it, and the caller's role.
#include <atomic>
#include <chrono>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
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
  bool live = false;        // replay done: listener events go straight out
  bool closed = false;      // close() ran: nothing more happens
  std::uint64_t watch = 0;  // its credential's (Api::watch_credential)
  std::int64_t last = 0;
  std::deque<store::Event> buffered;  // live events that arrived during the replay
};

namespace {

// Whether the caller may see an event; `may_read` allows a store lookup (not on the
// publishing thread, where only what SpaceOwners remembers is used).
struct EventVisibility {
  SpaceOwners* owners;
  bool admin;
  std::int64_t user_id;

  bool operator()(const store::Event& e, bool may_read) const {
    if (admin) return true;
    if (!e.space_id) return false;
    if (owners->visible_to(*e.space_id, user_id)) return true;
    // The end of one's own share (the share is already forgotten when this is asked).
    if (e.kind == engine::event::kSpaceUnshared.name && e.payload.value("userId", 0) == user_id)
      return true;
    if (!may_read || owners->remembered(*e.space_id)) return false;
    const auto known = owners->lookup(*e.space_id);
    return known && known->owner == user_id;
  }
};

// The sequence number to replay from: `since`, else Last-Event-ID; none means "from now".
std::optional<std::int64_t> requested_since(const Request& request) {
  if (auto it = request.query.find("since"); it != request.query.end()) {
    auto since = parse_seq(it->second);
    if (!since) throw HttpError(400, "since must be an event sequence number (0 or more)");
    return since;
  }
  if (auto id = request.header("last-event-id"); !id.empty())
    return parse_seq(id);  // EventSource's reconnect; a bad one means "from now"
  return std::nullopt;
}

// Listens on the bus before the replay starts, so nothing falls between the two: events are
// buffered until go_live. False when the stream closed first.
bool start_listening(const std::shared_ptr<EventStreamState>& state,
                     const std::shared_ptr<StreamSink>& sink, engine::EventBus& events,
                     const EventVisibility& visible, std::atomic<int>& listeners) {
  std::lock_guard lock(state->mutex);
  if (state->closed) return false;
  state->sink = sink;
  state->listener = events.listen([state, visible](const store::Event& e) {
    std::lock_guard inner(state->mutex);
    if (state->closed) return;
    if (!state->live) {
      state->buffered.push_back(e);
    } else if (e.seq > state->last) {
      state->last = e.seq;
      if (visible(e, false)) state->sink->send(sse_frame(e));
    }
  });
  ++listeners;
  return true;
}

// Sends the stored events after `since` that the caller may see; returns the last sequence
// number read.
std::int64_t replay(store::Store& store, StreamSink& sink, std::int64_t since,
                    const EventVisibility& visible, const ApiOptions& options) {
  std::int64_t last = since;
  for (;;) {
    const auto batch = store.events().events_since(last, options.replay_batch);
    if (batch.empty() || sink.closed()) break;
    for (const auto& e : batch) {
      if (visible(e, true)) sink.send(sse_frame(e));
      last = e.seq;
    }
    // A long history goes out at the client's pace, not into an ever longer queue. A client
    // stuck for 10 s gets no more patience: the queue then fills, and the server drops it; it
    // resumes with Last-Event-ID.
    const auto patience = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (sink.pending() > options.replay_window && !sink.closed() &&
           std::chrono::steady_clock::now() < patience)
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return last;
}

// Ends the replay at `last`: sends the newer events buffered meanwhile, then lets the
// listener send straight out.
void go_live(EventStreamState& state, StreamSink& sink, std::int64_t last,
             const EventVisibility& visible) {
  std::lock_guard lock(state.mutex);
  state.last = last;
  for (const auto& e : state.buffered)
    if (e.seq > state.last) {
      state.last = e.seq;
      // SpaceOwners' own listener ran before this one's: what it knows is enough.
      if (visible(e, false)) sink.send(sse_frame(e));
    }
  state.buffered.clear();
  state.live = true;
}

void stop_listening(EventStreamState& state, engine::EventBus& events,
                    std::atomic<int>& listeners) {
  int listener = 0;
  {
    std::lock_guard lock(state.mutex);
    if (state.closed) return;
    state.closed = true;
    listener = state.listener;
    state.sink.reset();
  }
  if (listener) {
    events.unlisten(listener);
    --listeners;
  }
}

}  // namespace

void Api::add_event_routes() {
  router_.add("GET", "/api/v1/event-kinds", Access::Any, [](const Caller&, const Request&) {
    auto kinds = nlohmann::json::array();
    for (const auto& kind : engine::event_kinds())
      kinds.push_back({{"name", kind.name}, {"payload", kind.payload}});
    return Response::json(200, kinds);
  });
  router_.add(
      "GET", "/api/v1/events", Access::Any, [this](const Caller& caller, const Request& request) {
        const auto since = requested_since(request);
        const EventVisibility visible{&owners_, caller.admin(), caller.user.id};
        auto state = std::make_shared<EventStreamState>();
        auto stream = std::make_shared<Stream>();
        stream->open = [this, state, since, visible, request](std::shared_ptr<StreamSink> sink) {
          // Ends within a second of the credential going (revoked, logged out, disabled) or
          // the caller's role changing: what they may see was decided at the start.
          state->watch = watch_credential(
              request,
              [admin = visible.admin](const Caller& now, const Request&) {
                if (now.admin() != admin) throw HttpError(403, "the caller's role changed");
              },
              [sink] { sink->end(); });
          if (!start_listening(state, sink, events_, visible, stream_listeners_)) return;
          sink->send("retry: 2000\n\n");
          // Without `since`: only what happens from now on.
          if (!since) return go_live(*state, *sink, store_.events().latest_seq(), visible);
          // A long history goes at the client's pace, on a thread of its own: a slow reader
          // holds no HTTP worker (the per-user stream limit bounds these threads).
          {
            std::lock_guard lock(replays_mutex_);
            ++replays_;
          }
          std::thread([this, state, since, visible, sink] {
            std::int64_t last = *since;
            try {
              last = replay(store_, *sink, *since, visible, options_);
            } catch (const std::exception&) {
              // The store failed midway: live events still flow; the history stops here.
            }
            go_live(*state, *sink, last, visible);
            std::lock_guard lock(replays_mutex_);
            --replays_;
            replays_done_.notify_all();
          }).detach();
        };
        stream->close = [this, state] {
          sockets_->remove(state->watch);
          stop_listening(*state, events_, stream_listeners_);
        };
        Response response;
        response.status = 200;
        response.content_type = "text/event-stream";
        response.stream = stream;
        return response;
      });
}

}  // namespace bowline::api
