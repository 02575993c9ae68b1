// Export and import over WebSockets, because both are long binary streams with
// backpressure both ways, which the server's WebSockets already have (HTTP bodies here are
// at most 1 MiB and answered whole). Frames are binary; the first byte says what each is:
//   export, server to client: 'M' {"size", "name"} first, then 'D' archive bytes, then 'Z'
//     {"sha256s"...} at the end, or 'E' {"error", "status"} when it fails midway;
//   import, client to server: 'D' archive bytes, then 'Z' (the end); the server answers 'Z'
//     {"space", "operation"} or 'E' {"error", "status"}.
// Each transfer runs on a thread of its own (never an HTTP worker's, whatever its pace).
#include <sys/statvfs.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <fstream>
#include <thread>
#include <utility>

#include "api/api.hpp"
#include "api/error_status.hpp"
#include "api/origin.hpp"
#include "engine/identifiers.hpp"
#include "engine/space_archive.hpp"
#include "engine/space_export.hpp"
#include "spec/loader.hpp"
#include "spec/template_rules.hpp"
#include "util/host_paths.hpp"

namespace bowline::api {

namespace {

namespace fs = std::filesystem;

constexpr std::size_t kFrame = 1024 * 1024;
constexpr std::size_t kHighWater = 4 * 1024 * 1024;  // below the server's 8 MiB stream backlog

std::string frame(char kind, std::string_view body) {
  std::string out(1, kind);
  out.append(body);
  return out;
}

// The words only: an error from qemu-img or the file system names host files.
std::string error_frame(int status, const std::string& message) {
  return frame(
      'E', nlohmann::json{{"error", util::redact_host_paths(message)}, {"status", status}}.dump());
}

// Waits while the client has more than kHighWater unread; false once it went away.
bool send_paced(SocketPeer& peer, std::string bytes) {
  while (peer.pending() > kHighWater) {
    if (peer.closed()) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return peer.send(std::move(bytes));
}

std::optional<std::string> query_value(const Request& request, const char* name) {
  const auto it = request.query.find(name);
  if (it == request.query.end()) return std::nullopt;
  return it->second;
}

bool query_flag(const Request& request, const char* name) {
  const auto value = query_value(request, name);
  return value && *value != "0" && *value != "false";
}

}  // namespace

// One import: frames queued by the I/O thread, consumed by the transfer's thread.
struct ImportState {
  std::mutex mutex;
  std::condition_variable wake;
  std::deque<std::string> frames;
  std::size_t queued = 0;
  bool paused = false, ended = false, closed = false;
  std::shared_ptr<SocketPeer> peer;
};

// What the import route was asked, checked before the upgrade.
struct ImportAsk {
  store::User owner;
  std::string name;
  bool keep_identity = false;
  std::optional<std::string> template_name;
  bool create_template = false;  // an admin adds the archive's template when none has its name
  bool admin = false;
  // The most the archive's disk may hold, as it streams and as a qcow2's virtual size: the
  // owner's disk quota left and the server's hard limit.
  std::uint64_t room = UINT64_MAX;
};

namespace {

// The next frame from the client (nullopt once it ended with 'Z'); throws when it went away.
std::optional<std::string> next_frame(ImportState& state) {
  std::unique_lock lock(state.mutex);
  state.wake.wait(lock, [&] { return !state.frames.empty() || state.closed; });
  if (state.frames.empty()) throw std::runtime_error("the client went away mid-import");
  auto bytes = std::move(state.frames.front());
  state.frames.pop_front();
  state.queued -= bytes.size();
  if (state.paused && state.queued < kHighWater) {
    state.paused = false;
    state.peer->pause_reading(false);
  }
  if (bytes[0] == 'Z') return std::nullopt;
  if (bytes[0] != 'D') throw HttpError(400, "an import sends 'D' and 'Z' frames");
  return bytes;
}

// Why the staged disk could not be written, in the system's words: a full file system says
// so even when the stream's buffered write lost errno on the way.
std::runtime_error staged_write_error(const fs::path& staged) {
  const int error = errno;
  std::string why = error ? std::strerror(error) : "";
  struct statvfs fsinfo {};
  if ((error == 0 || error == ENOSPC) && ::statvfs(staged.parent_path().c_str(), &fsinfo) == 0 &&
      fsinfo.f_bavail * fsinfo.f_frsize < (std::uint64_t{1} << 20))
    why = std::strerror(ENOSPC);
  return std::runtime_error("cannot write the staged disk" + (why.empty() ? "" : ": " + why));
}

// Receives the whole archive into `reader` (the disk into `staged`) and checks it.
void receive_archive(ImportState& state, engine::archive::ArchiveReader& reader, std::ofstream& out,
                     const fs::path& staged) {
  while (auto bytes = next_frame(state)) reader.feed(std::string_view(*bytes).substr(1));
  errno = 0;
  out.close();
  if (!out) throw staged_write_error(staged);
  // Nothing is made until every member matches the manifest.
  reader.finish();
}

void run_export(const std::shared_ptr<engine::SpaceArchiveStream>& stream, engine::DiskFiles& files,
                const std::string& name, const std::shared_ptr<SocketPeer>& peer) {
  try {
    peer->send(frame('M', nlohmann::json{{"size", stream->size()}, {"name", name}}.dump()));
    // Frames of kFrame bytes, each copied once from what the stream gives (4 MiB runs of the
    // disk, small pieces of the rest): `pending` holds only a frame still being filled.
    std::string pending;
    const auto work = files.staging_file("export").parent_path() / ("nbd-" + engine::random_hex(8));
    stream->run(work, [&](std::string_view bytes) {
      while (!bytes.empty()) {
        if (pending.empty()) {
          pending.reserve(kFrame + 1);
          pending.push_back('D');
        }
        const auto n = std::min(bytes.size(), kFrame + 1 - pending.size());
        pending.append(bytes.substr(0, n));
        bytes.remove_prefix(n);
        if (pending.size() == kFrame + 1 && !send_paced(*peer, std::exchange(pending, {})))
          return false;
      }
      return true;
    });
    if (!pending.empty()) send_paced(*peer, std::move(pending));
    send_paced(*peer, frame('Z', "{}"));
  } catch (const std::exception& e) {
    peer->send(error_frame(500, std::string("export failed: ") + e.what()));
  }
  peer->close();
}

}  // namespace

// Runs `body` on a thread of its own that the destructor waits for (as event replays do).
void Api::on_own_thread(std::function<void()> body) {
  {
    std::lock_guard lock(replays_mutex_);
    ++replays_;
  }
  std::thread([this, body = std::move(body)] {
    body();
    std::lock_guard lock(replays_mutex_);
    --replays_;
    replays_done_.notify_all();
  }).detach();
}

void Api::add_export_routes() {
  router_.add(
      "GET", "/api/v1/spaces/{id}/export", Access::OwnerOrAdmin,
      [this](const Caller& caller, const Request& request) {
        check_origin(caller, request);
        const auto space = visible_space(caller, request.param("id"), store::ShareRole::Admin);
        // Refusals come before the upgrade, as ordinary answers (409 running, 422 not here).
        auto* files = engine_.disk_files();
        if (!files) throw HttpError(422, "this server keeps no disks");
        auto stream = std::make_shared<engine::SpaceArchiveStream>(
            engine_.export_source(space.id), files->disks(), store_.clock().now_unix_ms() / 1000);
        auto upgrade = std::make_shared<Upgrade>();
        upgrade->open = [this, stream, files, name = space.name](std::shared_ptr<SocketPeer> peer) {
          on_own_thread([stream, files, name, peer] { run_export(stream, *files, name, peer); });
        };
        // Ends once the credential goes or the space is no longer the caller's to see.
        watch_upgrade(*upgrade, request, [this](const Caller& c, const Request& r) {
          visible_space(c, r.param("id"), store::ShareRole::Admin);
        });
        Response response;
        response.upgrade = upgrade;
        return response;
      });
  add_import_route();
}

void Api::add_import_route() {
  router_.add(
      "GET", "/api/v1/spaces/import", Access::Any,
      [this](const Caller& caller, const Request& request) {
        check_origin(caller, request);
        ImportAsk ask;
        ask.name = query_value(request, "name").value_or("");
        if (ask.name.empty()) throw HttpError(400, "name: the new space's name is required");
        engine::check_space_name(ask.name);
        ask.owner = disk_owner(caller, query_value(request, "owner"));
        if (store_.spaces().find_by_name(ask.owner.id, ask.name))
          throw HttpError(409, ask.owner.username + " already has a space named " + ask.name);
        if (!engine_.disk_files())
          throw HttpError(422, "this server keeps no disks (no libvirt node)");
        ask.keep_identity = query_flag(request, "keepIdentity");
        ask.template_name = query_value(request, "template");
        ask.create_template = query_flag(request, "createTemplate");
        ask.admin = caller.admin();
        if (ask.create_template && !ask.admin)
          throw HttpError(403, "only admins add templates (createTemplate)");
        ask.room = std::min(engine_.disk_room(ask.owner.id), options_.max_import_size);
        if (ask.room == 0)
          throw HttpError(403,
                          "quota: " + ask.owner.username + " has no disk quota left for an import");
        Response response;
        response.upgrade = import_upgrade(ask);
        watch_upgrade(*response.upgrade, request, [](const Caller&, const Request&) {});
        return response;
      });
}

std::shared_ptr<Upgrade> Api::import_upgrade(const ImportAsk& ask) {
  auto state = std::make_shared<ImportState>();
  auto upgrade = std::make_shared<Upgrade>();
  upgrade->message = [state](std::string bytes) {
    std::lock_guard lock(state->mutex);
    if (bytes.empty() || state->ended) return;
    if (bytes[0] == 'Z') state->ended = true;
    state->queued += bytes.size();
    state->frames.push_back(std::move(bytes));
    // The I/O thread must not block: it stops reading the client while the disk falls behind.
    if (state->queued > 2 * kHighWater && state->peer && !state->paused) {
      state->paused = true;
      state->peer->pause_reading(true);
    }
    state->wake.notify_all();
  };
  upgrade->close = [state] {
    std::lock_guard lock(state->mutex);
    state->closed = true;
    state->wake.notify_all();
  };
  upgrade->open = [this, state, ask](std::shared_ptr<SocketPeer> peer) {
    {
      std::lock_guard lock(state->mutex);
      state->peer = peer;
    }
    on_own_thread([this, state, ask, peer] {
      peer->send(import_archive(*state, ask));
      peer->close();
    });
  };
  return upgrade;
}

// The answer frame of one import: 'Z' with the create's answer, or 'E' with why not.
std::string Api::import_archive(ImportState& state, const ImportAsk& ask) {
  auto* files = engine_.disk_files();
  fs::path staged;
  std::optional<std::int64_t> made_template;
  std::string answer;
  try {
    staged = files->staging_file("import-" + engine::random_hex(8));
    std::ofstream out(staged, std::ios::binary | std::ios::trunc);
    fs::permissions(staged, fs::perms::owner_read | fs::perms::owner_write,
                    fs::perm_options::replace);
    std::uint64_t written = 0;
    engine::archive::ArchiveReader reader(
        [&](std::string_view bytes) {
          // The header's size was checked against the room; this holds whatever it said.
          written += bytes.size();
          if (written > ask.room) throw HttpError(413, "the archive's disk is larger than it said");
          errno = 0;
          out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
          if (!out) throw staged_write_error(staged);
        },
        ask.room);
    receive_archive(state, reader, out, staged);
    if (const auto problem = files->standalone_problem(staged, ask.room); !problem.empty())
      throw HttpError(422, "the archive's disk.qcow2 is refused: " + problem);
    answer = make_imported_space(ask, reader, staged, made_template);
  } catch (const HttpError& e) {
    answer = error_frame(e.status(), e.what());
  } catch (const engine::archive::ArchiveError& e) {
    answer = error_frame(422, e.what());
  } catch (const engine::EngineError& e) {
    answer = error_frame(http_status(e.kind()), e.what());
  } catch (const std::exception& e) {
    answer = error_frame(500, std::string("import failed: ") + e.what());
  }
  std::error_code ec;
  if (!staged.empty()) fs::remove(staged, ec);  // moved into place when the import succeeded
  if (made_template && answer[0] == 'E') {
    try {
      store_.templates().remove(*made_template);  // a failed import leaves nothing
    } catch (const std::exception&) {
    }
  }
  return answer;
}

// The space from a checked archive: its template (the server's of that name, or for an admin
// the archive's own), the identity kept or new, the disk moved into place.
std::string Api::make_imported_space(const ImportAsk& ask,
                                     const engine::archive::ArchiveReader& reader,
                                     const fs::path& staged,
                                     std::optional<std::int64_t>& made_template) {
  const auto facts = nlohmann::json::parse(reader.space_json(), nullptr, false);
  if (!facts.is_object() || !facts.contains("identity") || !facts["identity"].is_object())
    throw HttpError(422, "the archive's space.json is not a space's");
  const auto archived = facts.contains("template") && facts["template"].is_object()
                            ? facts["template"].value("name", "")
                            : "";
  const auto use = ask.template_name.value_or(archived);
  auto tmpl = store_.templates().find_by_name(use);
  if (!tmpl && !ask.template_name && ask.create_template) {
    // A template is what every space of it may do: only an admin's import adds one, and only
    // when asked to (createTemplate), never as a side effect.
    if (const auto problem = spec::template_name_problem(use); !problem.empty())
      throw HttpError(422, "the archive's template name: " + problem);
    if (!spec::load_spec(reader.template_yaml(), nullptr).spec)
      throw HttpError(422,
                      "the archive's template.yaml is not a valid template on this server "
                      "(bowline template validate says why)");
    tmpl = store_.templates().create(use, reader.template_yaml(), ask.owner.id);
    made_template = tmpl->id;
  }
  if (!tmpl)
    throw HttpError(422, "no template named " + use +
                             " on this server: give --template NAME, or an admin adds the "
                             "archive's template with --create-template");
  engine::ImportRequest import;
  import.owner_id = ask.owner.id;
  import.name = ask.name;
  import.template_name = tmpl->name;
  import.staged_disk = staged;
  if (ask.keep_identity) {
    const auto& id = facts["identity"];
    import.identity = engine::SpaceIdentity{id.value("id", ""), id.value("uuid", ""),
                                            id.value("hostKey", ""), id.value("hostKeyPublic", "")};
  }
  const auto accepted = engine_.import_space(import);
  auto answer = accepted_json(accepted.space.id, accepted.operation_id);
  if (answer["space"].is_null()) answer["space"] = space_json_of(accepted.space);
  answer["template"] = tmpl->name;
  answer["bytes"] = reader.bytes_read();
  return frame('Z', answer.dump());
}

}  // namespace bowline::api
