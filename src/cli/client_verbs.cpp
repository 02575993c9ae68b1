#include "cli/client_verbs.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <iostream>
#include <memory>
#include <thread>
#include <utility>

#include "cli/app.hpp"
#include "cli/client_format.hpp"
#include "engine/event_kinds.hpp"
#include "util/strings.hpp"

namespace bowline::cli {

void add_client_options(CLI::App& command, ClientOptions& options) {
  command
      .add_option("--server", options.server,
                  "The server's URL (default: BOWLINE_SERVER, the login file, then " +
                      std::string(kDefaultServer) + ")")
      ->type_name("URL");
  command.add_option("--output,-o", options.output, "Output format: table, or the server's JSON")
      ->check(CLI::IsMember({"table", "json"}));
}

void run_client_verb(int& exit_code, const std::function<int()>& body) {
  try {
    exit_code = body();
  } catch (const CliError& e) {
    std::cerr << "bowline: " << e.what() << "\n";
    exit_code = e.exit_code();
  }
}

void print_json(const ojson& value) {
  std::cout << value.dump(2) << "\n";
}

namespace {

std::vector<ojson> matching(const ojson& spaces, const std::string& id_or_name) {
  std::vector<ojson> found;
  if (!spaces.is_array()) return found;
  for (const auto& s : spaces)
    if (text_of(s, "id") == id_or_name) return {s};
  for (const auto& s : spaces)
    if (text_of(s, "name") == id_or_name) found.push_back(s);
  // NAME.OWNER: another user's, shared with the caller (or an admin's view of it).
  if (const auto dot = id_or_name.rfind('.'); found.empty() && dot != std::string::npos)
    for (const auto& s : spaces)
      if (text_of(s, "name") == id_or_name.substr(0, dot) &&
          text_of(s, "owner") == id_or_name.substr(dot + 1))
        found.push_back(s);
  return found;
}

}  // namespace

std::string resolve_space(Client& client, const std::string& id_or_name) {
  if (util::looks_like_uuid(id_or_name)) return id_or_name;
  auto found = matching(client.get("/api/v1/spaces"), id_or_name);
  if (found.size() > 1) {
    // One's own first: a colleague's space shared under the same name never takes its place.
    const auto me = text_of(client.get("/api/v1/whoami"), "username");
    std::vector<ojson> own;
    for (const auto& s : found)
      if (text_of(s, "owner") == me) own.push_back(s);
    if (own.size() == 1) return text_of(own.front(), "id");
  }
  if (found.empty()) {
    try {
      found = matching(client.get("/api/v1/spaces?all=1"), id_or_name);
    } catch (const ApiError& e) {
      if (e.status() != 403 && e.status() != 400) throw;
    }
  }
  if (found.empty()) throw CliError(kExitNotFound, "no space named " + id_or_name);
  if (found.size() > 1) {
    std::string which;
    for (const auto& s : found)
      which += "\n  " + text_of(s, "id") + " (owner " + text_of(s, "owner", "-") + ": " +
               text_of(s, "name") + "." + text_of(s, "owner", "-") + ")";
    throw CliError(kExitUsage, "more than one space is named " + id_or_name +
                                   "; name one by its id or as NAME.OWNER:" + which);
  }
  return text_of(found.front(), "id");
}

// ---- progress -------------------------------------------------------------------------------

ProgressLine::ProgressLine(std::ostream& out, bool terminal) : out_(out), terminal_(terminal) {}
ProgressLine::~ProgressLine() {
  done();
}

namespace {

std::size_t terminal_width() {
  winsize size{};
  if (::ioctl(STDERR_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 10) return size.ws_col;
  return 100;
}

// Console text is the guest's: keep control characters (escape sequences) off our terminal.
std::string printable(const std::string& text) {
  std::string out;
  for (const char c : text) out += (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) ? ' ' : c;
  return out;
}

}  // namespace

void ProgressLine::show(const std::string& text, const std::string& step_key) {
  const auto clean = printable(text);
  if (terminal_) {
    auto line = clean;
    const auto width = terminal_width() - 1;
    if (line.size() > width) line = line.substr(0, width - 3) + "...";
    out_ << "\r" << line << "\x1b[K" << std::flush;
    drawn_ = line.size();
    return;
  }
  if (step_key == last_key_) return;
  last_key_ = step_key;
  out_ << clean << "\n" << std::flush;
}

void ProgressLine::done() {
  if (terminal_ && drawn_ > 0) out_ << "\n" << std::flush;
  drawn_ = 0;
}

void add_wait_options(CLI::App& command, bool& wait, WaitOptions& options, bool with_ready) {
  auto* wait_flag = command.add_flag(
      "--wait", wait,
      with_ready ? "Follow the operation until it ends, then wait until the guest is ready "
                   "(cloud-init finished); exit 1 if either fails"
                 : "Follow the operation until it ends; exit 1 if it fails");
  command
      .add_option_function<long>(
          "--timeout",
          [&options](long seconds) {
            if (seconds <= 0) throw CLI::ValidationError("--timeout", "must be above 0");
            options.timeout = std::chrono::seconds(seconds);
          },
          "With --wait: give up after SECONDS (exit 5; the operation goes on)")
      ->type_name("SECONDS")
      ->needs(wait_flag);
  if (with_ready)
    command
        .add_flag_function(
            "--no-ready", [&options](std::int64_t) { options.ready = false; },
            "With --wait: return when the operation ends, without waiting for cloud-init")
        ->needs(wait_flag);
}

// ---- waiting for an operation -------------------------------------------------------------

namespace {

std::string id_text(const ojson& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_null()) return "";
  return value.dump();
}

std::optional<std::uint64_t> number(const ojson& object, const char* key) {
  if (!object.is_object() || !object.contains(key) || !object[key].is_number()) return std::nullopt;
  return object[key].get<std::uint64_t>();
}

int gave_up(ProgressLine& progress, const std::string& what) {
  progress.done();
  std::cerr << "bowline: gave up waiting at --timeout: " << what << " goes on\n";
  return kExitTimeout;
}

std::optional<std::chrono::milliseconds> left(std::optional<Clock::time_point> deadline) {
  if (!deadline) return std::nullopt;
  return std::chrono::duration_cast<std::chrono::milliseconds>(*deadline - Clock::now());
}

void sleep_bounded(std::chrono::milliseconds wanted, std::optional<Clock::time_point> deadline) {
  if (const auto remaining = left(deadline); remaining && *remaining < wanted) wanted = *remaining;
  if (wanted.count() > 0) std::this_thread::sleep_for(wanted);
}

// Follows one operation to its end: its events from the server's stream, and polls of the
// operation itself before the stream opens, after it breaks, and instead of it when the server
// has none.
class OperationWatch {
 public:
  OperationWatch(Client& client, std::string space_id, std::string kind, std::string op_id,
                 std::optional<Clock::time_point> deadline, ProgressLine& progress)
      : client_(client),
        space_id_(std::move(space_id)),
        kind_(std::move(kind)),
        op_id_(std::move(op_id)),
        op_path_("/api/v1/operations/" + escape_segment(op_id_)),
        deadline_(deadline),
        progress_(progress) {}

  // The exit code once the operation has ended or the deadline passed.
  int run();

 private:
  std::optional<int> finish(const std::string& state, const std::string& error);
  void show(const std::string& step, int percent, std::optional<std::uint64_t> bytes,
            std::optional<std::uint64_t> total);
  std::optional<int> poll_operation();
  std::optional<int> read_stream();
  std::optional<int> on_event(const SseEvent& event);
  void follow_stream_status();

  Client& client_;
  const std::string space_id_;
  const std::string kind_;
  const std::string op_id_;
  const std::string op_path_;
  const std::optional<Clock::time_point> deadline_;
  ProgressLine& progress_;
  std::optional<std::int64_t> last_seq_;
  std::unique_ptr<EventStream> stream_;
  bool use_stream_ = true;
  bool polled_since_open_ = false;
  Clock::time_point next_poll_;
  int shown_percent_ = 0;
};

int OperationWatch::run() {
  const std::string what = kind_ + " of space " + space_id_;
  show("waiting", 0, std::nullopt, std::nullopt);
  stream_ = std::make_unique<EventStream>(client_.endpoint(), last_seq_);
  next_poll_ = Clock::now() + std::chrono::seconds(3);
  while (true) {
    if (deadline_ && Clock::now() >= *deadline_) return gave_up(progress_, what);
    if (use_stream_) {
      if (auto code = read_stream()) return *code;
      follow_stream_status();
    } else {
      sleep_bounded(std::chrono::milliseconds(1000), deadline_);
    }
    if (Clock::now() >= next_poll_) {
      if (auto code = poll_operation()) return *code;
      next_poll_ = Clock::now() + std::chrono::seconds(use_stream_ ? 3 : 1);
    }
  }
}

// Returns an exit code when the operation has ended.
std::optional<int> OperationWatch::finish(const std::string& state, const std::string& error) {
  if (state == "succeeded") {
    progress_.done();
    return kExitOk;
  }
  if (state == "failed") {
    progress_.done();
    std::cerr << "bowline: " << kind_ << " failed: " << (error.empty() ? "no reason given" : error)
              << "\n";
    return kExitInvalid;
  }
  return std::nullopt;
}

void OperationWatch::show(const std::string& step, int percent, std::optional<std::uint64_t> bytes,
                          std::optional<std::uint64_t> total) {
  // A poll answers with the operation as it is now, the stream with what happened in order:
  // an event that arrives after a poll may be older than what the poll showed. Progress
  // shown only goes forward.
  if (percent < shown_percent_) return;
  shown_percent_ = percent;
  const auto key = step + (bytes ? "|" + std::to_string(percent / 10) : "");
  progress_.show(format_progress(kind_, step, percent, bytes, total), key);
}

std::optional<int> OperationWatch::poll_operation() {
  ojson op;
  try {
    op = client_.get(op_path_);
  } catch (const ApiError& e) {
    if (e.status() != 404 || kind_ != "delete") throw;
    // A deleted space may take its operations along: gone is done.
    try {
      client_.get("/api/v1/spaces/" + escape_segment(space_id_));
    } catch (const ApiError& gone) {
      if (gone.status() == 404) return finish("succeeded", "");
      throw;
    }
    return std::nullopt;
  }
  if (auto code = finish(text_of(op, "state"), text_of(op, "error"))) return code;
  show(text_of(op, "step"), op.value("progress", 0), std::nullopt, std::nullopt);
  return std::nullopt;
}

// Handles the events that arrive within a second (or until the deadline).
std::optional<int> OperationWatch::read_stream() {
  auto wait = std::chrono::milliseconds(1000);
  if (const auto remaining = left(deadline_); remaining && *remaining < wait) wait = *remaining;
  for (const auto& event : stream_->poll(std::max(wait, std::chrono::milliseconds(1))))
    if (auto code = on_event(event)) return code;
  return std::nullopt;
}

std::optional<int> OperationWatch::on_event(const SseEvent& event) {
  ojson data;
  try {
    data = ojson::parse(event.data);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (const auto seq = number(data, "seq")) last_seq_ = static_cast<std::int64_t>(*seq);
  const auto payload = data.value("payload", ojson::object());
  if (id_text(payload.value("operation", ojson())) != op_id_) return std::nullopt;
  auto event_kind = text_of(data, "kind");
  if (event_kind.empty()) event_kind = event.event;
  if (event_kind == engine::event::kOperationProgress.name) {
    show(text_of(payload, "step"), payload.value("progress", 0), number(payload, "bytes"),
         number(payload, "total"));
  } else if (event_kind == engine::event::kOperationSucceeded.name) {
    return finish("succeeded", "");
  } else if (event_kind == engine::event::kOperationFailed.name) {
    return finish("failed", text_of(payload, "error"));
  }
  return std::nullopt;
}

// Polls the operation once the stream opens (what happened before is only there), and when
// it ends: reconnects, or gives the stream up when the server has none for us.
void OperationWatch::follow_stream_status() {
  switch (stream_->status()) {
    case EventStream::Status::Open:
      if (!polled_since_open_) {
        polled_since_open_ = true;
        next_poll_ = Clock::now();
      }
      break;
    case EventStream::Status::Connecting:
      break;
    case EventStream::Status::Failed:
    case EventStream::Status::Closed: {
      const auto status = stream_->http_status();
      if (status != 0 && status != 200 && status != 503) {
        use_stream_ = false;  // no event stream here (or not for us): poll instead
      } else {
        sleep_bounded(std::chrono::milliseconds(500), deadline_);
        stream_ = std::make_unique<EventStream>(client_.endpoint(), last_seq_);
        polled_since_open_ = false;
      }
      next_poll_ = Clock::now();
      break;
    }
  }
}

}  // namespace

int wait_for_operation(Client& client, const std::string& space_id, const ojson& operation,
                       const std::string& kind, std::optional<Clock::time_point> deadline,
                       ProgressLine& progress) {
  auto op_id = id_text(operation.value("id", ojson()));
  if (op_id.empty()) throw CliError(kExitInvalid, "the server's answer names no operation");
  return OperationWatch(client, space_id, kind, std::move(op_id), deadline, progress).run();
}

// ---- waiting for the guest ----------------------------------------------------------------

namespace {

std::string elapsed_text(Clock::duration elapsed) {
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(elapsed).count();
  if (seconds < 60) return std::to_string(seconds) + "s";
  return std::to_string(seconds / 60) + "m" + std::to_string(seconds % 60) + "s";
}

}  // namespace

int wait_for_ready(Client& client, const std::string& space_id,
                   std::optional<Clock::time_point> deadline, ProgressLine& progress) {
  const auto started = Clock::now();
  const auto path = "/api/v1/spaces/" + escape_segment(space_id);
  while (true) {
    const auto space = client.get(path);
    const auto state = text_of(space, "state");
    const auto readiness = readiness_of(space);
    if (state == "error") {
      progress.done();
      std::cerr << "bowline: space " << text_of(space, "name")
                << " failed: " << text_of(space, "error", "no reason given") << "\n";
      return kExitInvalid;
    }
    if (!readiness.known) {
      progress.done();
      std::cerr << "bowline: the server reports no readiness for this space; not waiting for "
                   "cloud-init\n";
      return kExitOk;
    }
    if (readiness.failed) {
      progress.done();
      std::cerr << "bowline: cloud-init failed in space " << text_of(space, "name")
                << (readiness.detail.empty() ? "" : ": " + readiness.detail) << "\n";
      if (!readiness.last_lines.empty()) {
        std::cerr << "console (last lines):\n";
        for (const auto& line : readiness.last_lines) std::cerr << "  " << printable(line) << "\n";
      }
      return kExitInvalid;
    }
    if (readiness.finished) {
      progress.done();
      return kExitOk;
    }
    if (state == "stopped" || state == "stopping" || state == "deleting" || state == "suspended" ||
        state == "suspending") {
      progress.done();
      std::cerr << "bowline: space " << text_of(space, "name") << " is " << state
                << " before it was ready\n";
      return kExitInvalid;
    }
    std::string text = "waiting for cloud-init (" +
                       std::string(readiness.booted ? "booted" : "booting") + ", " +
                       elapsed_text(Clock::now() - started) + ")";
    if (!readiness.last_lines.empty() && !readiness.last_lines.back().empty())
      text += ": " + readiness.last_lines.back();
    progress.show(text, readiness.booted ? "booted" : "booting");
    if (deadline && Clock::now() >= *deadline)
      return gave_up(progress, "cloud-init in space " + text_of(space, "name"));
    sleep_bounded(std::chrono::milliseconds(2000), deadline);
  }
}

}  // namespace bowline::cli
