#include "api/spaces_list.hpp"
#include "util/utf8.hpp"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <utility>

namespace bowline::api {

namespace {

void append_int(std::string& out, std::int64_t value) {
  char buffer[24];
  const auto end = std::to_chars(buffer, buffer + sizeof buffer, value).ptr;
  out.append(buffer, end);
}

// The columns of space_json(), in its (alphabetical) key order, then the owner's id.
constexpr const char* kColumns =
    "s.applied_template_revision, s.created_at, s.desired_state, s.domain_name, s.error, s.id, "
    "s.ip, s.name, s.node, u.username, s.state, t.name, t.revision, s.updated_at, s.owner_id";
constexpr const char* kJoins =
    " LEFT JOIN users u ON u.id = s.owner_id LEFT JOIN templates t ON t.id = s.template_id";
constexpr int kIdColumn = 5;
constexpr int kOwnerColumn = 14;

constexpr int kIpColumn = 6;
constexpr int kStateColumn = 10;

void append_space(std::string& out, store::Statement& row, int at);

// `{"address":...,`: the first key of a space's object (keys are in alphabetical order, as
// nlohmann writes them).
void append_address(std::string& out, const std::string* address) {
  out += "{\"address\":";
  if (address)
    append_json_string(out, *address);
  else
    out += "null";
  out += ',';
}

const std::string* learned(const SpacesListCache::Addresses* addresses, bool running,
                           const std::string& id) {
  if (!addresses || !running) return nullptr;
  const auto it = addresses->find(id);
  return it == addresses->end() ? nullptr : &it->second;
}

}  // namespace

void append_json_string(std::string& out, std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += '"';
  // Names, ids and states are plain ASCII: one append when nothing needs escaping.
  if (std::all_of(text.begin(), text.end(), [](char ch) {
        const auto c = static_cast<unsigned char>(ch);
        return c >= 0x20 && c < 0x80 && c != '"' && c != '\\';
      })) {
    out.append(text);
    out += '"';
    return;
  }
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x80) {
      if (const auto cp = util::decode_utf8(text, i)) {
        out.append(text.substr(i, cp->length));
        i += cp->length;
      } else {
        out += "\xEF\xBF\xBD";  // U+FFFD, as nlohmann's error_handler_t::replace does
        ++i;
      }
      continue;
    }
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20) {
          out += "\\u00";
          out += kHex[c >> 4];
          out += kHex[c & 15];
        } else {
          out += static_cast<char>(c);
        }
    }
    ++i;
  }
  out += '"';
}

std::string spaces_list_json(store::Store& store, std::optional<std::int64_t> owner_id,
                             const SpacesListCache::Addresses& addresses) {
  // Its own connection: the list neither waits for the engine's writes nor holds them up.
  auto& db = store.reader();
  auto guard = db.lock();
  auto select = db.cached(std::string("SELECT ") + kColumns + " FROM spaces s" + kJoins +
                          (owner_id ? " WHERE s.owner_id = ?" : "") +
                          // rowid is creation order too; ordering by created_at made SQLite
                          // walk an index and sort (3x slower at 10,000 spaces).
                          " ORDER BY s.rowid");
  if (owner_id) select->bind(1, *owner_id);
  // About the size of the last answer, so a list of thousands is not copied as it grows.
  static std::atomic<std::size_t> last_size{64 * 1024};
  std::string out = "[";
  out.reserve(last_size.load(std::memory_order_relaxed) + 4096);
  bool first = true;
  while (select->step()) {
    if (!std::exchange(first, false)) out += ',';
    const auto id = std::string(select->column_view(kIdColumn));
    const auto ip = select->is_null(kIpColumn)
                        ? std::nullopt
                        : std::optional<std::string>(select->column_view(kIpColumn));
    const bool running = select->column_view(kStateColumn) == "running";
    append_address(out, ip ? &*ip : learned(&addresses, running, id));
    append_space(out, *select, 0);
  }
  out += "]\n";
  last_size.store(out.size(), std::memory_order_relaxed);
  return out;
}

// The space's object, with "stats" before its closing brace when it has figures.
void SpacesListCache::append_entry(std::string& out, const Entry& entry, const Addresses* addresses,
                                   const StatsTexts* stats) const {
  append_address(out, entry.ip ? &*entry.ip : learned(addresses, entry.running, entry.id));
  const auto found = stats ? stats->find(entry.id) : StatsTexts::const_iterator();
  if (!stats || found == stats->end()) {
    out += entry.json;
    return;
  }
  out.append(entry.json, 0, entry.json.size() - 1);
  out += ",\"stats\":";
  out += found->second;
  out += '}';
}

std::shared_ptr<const std::string> SpacesListCache::list(store::Store& store,
                                                         std::optional<std::int64_t> owner_id,
                                                         std::shared_ptr<const Addresses> addresses,
                                                         std::shared_ptr<const StatsTexts> stats) {
  std::lock_guard lock(mutex_);
  catch_up(store);
  if (!owner_id && all_valid_ && all_addresses_ == addresses && all_stats_ == stats) return all_;
  // Each object's "address" key with its value: at most 32 bytes.
  std::size_t size = 3;
  for (const auto& [rowid, entry] : spaces_)
    if (!owner_id || entry.owner == owner_id) size += entry.json.size() + 32;
  if (stats)
    for (const auto& [id, text] : *stats) size += text.size() + 9;
  std::shared_ptr<std::string> out;
  if (!owner_id && all_ && all_.use_count() == 1) {
    out = all_;  // nobody is writing it out: reuse its memory
    out->clear();
  } else {
    out = std::make_shared<std::string>();
  }
  out->reserve(size);
  *out += '[';
  bool first = true;
  for (const auto& [rowid, entry] : spaces_) {
    if (owner_id && entry.owner != owner_id) continue;
    if (!std::exchange(first, false)) *out += ',';
    append_entry(*out, entry, addresses.get(), stats.get());
  }
  *out += "]\n";
  if (!owner_id) {
    all_ = out;
    all_valid_ = true;
    all_addresses_ = std::move(addresses);
    all_stats_ = std::move(stats);
  }
  return out;
}

void SpacesListCache::catch_up(store::Store& store) {
  auto& db = store.reader();
  auto guard = db.lock();
  // The newest sequence number first, the rows after: a write committed in between is read
  // now and again next time (its number is above the one kept), never missed.
  auto newest = db.cached("SELECT coalesce(max(seq), 0) FROM space_changes");
  if (!newest->step()) return;
  const auto seq = newest->column_int64(0);
  newest->reset();
  if (seq_ == seq) return;
  auto changed = db.cached(std::string("SELECT c.space_rowid, ") + kColumns +
                           " FROM space_changes c LEFT JOIN spaces s ON s.rowid = c.space_rowid" +
                           kJoins + " WHERE c.seq > ?");
  changed->bind(1, seq_.value_or(-1));
  while (changed->step()) {
    const auto rowid = changed->column_int64(0);
    if (changed->is_null(1 + kIdColumn)) {  // the space is gone
      spaces_.erase(rowid);
      continue;
    }
    auto& entry = spaces_[rowid];
    entry.owner = changed->is_null(1 + kOwnerColumn)
                      ? std::nullopt
                      : std::optional<std::int64_t>(changed->column_int64(1 + kOwnerColumn));
    entry.id = std::string(changed->column_view(1 + kIdColumn));
    entry.ip = changed->is_null(1 + kIpColumn)
                   ? std::nullopt
                   : std::optional<std::string>(changed->column_view(1 + kIpColumn));
    entry.running = changed->column_view(1 + kStateColumn) == "running";
    entry.json.clear();
    append_space(entry.json, *changed, 1);
  }
  seq_ = seq;
  all_valid_ = false;
}

namespace {

// One space's object from the kColumns of `row`, starting at column `at`, after its
// "address" (append_address): from the key after it to the closing brace.
void append_space(std::string& out, store::Statement& row, int at) {
  const auto text = [&](const char* key, int i) {
    out += key;
    append_json_string(out, row.column_view(at + i));
  };
  const auto number = [&](const char* key, std::int64_t value) {
    out += key;
    append_int(out, value);
  };
  const auto applied = row.column_int64(at + 0);
  const auto revision = row.column_int64(at + 12);
  number("\"appliedRevision\":", applied);
  number(",\"createdAt\":", row.column_int64(at + 1));
  text(",\"desiredState\":", 2);
  text(",\"domain\":", 3);
  text(",\"error\":", 4);
  text(",\"id\":", 5);
  if (row.is_null(at + 6))
    out += ",\"ip\":null";
  else
    text(",\"ip\":", 6);
  text(",\"name\":", 7);
  text(",\"node\":", 8);
  text(",\"owner\":", 9);
  out += applied != 0 && applied != revision ? ",\"redefinePending\":true"
                                             : ",\"redefinePending\":false";
  text(",\"state\":", 10);
  text(",\"template\":", 11);
  number(",\"templateRevision\":", revision);
  number(",\"updatedAt\":", row.column_int64(at + 13));
  out += '}';
}

}  // namespace

}  // namespace bowline::api
