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

void append_space(std::string& out, const store::SpaceListRow& row);

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
  // About the size of the last answer, so a list of thousands is not copied as it grows.
  static std::atomic<std::size_t> last_size{64 * 1024};
  std::string out = "[";
  out.reserve(last_size.load(std::memory_order_relaxed) + 4096);
  bool first = true;
  std::string id, ip;
  store.read_space_list().each(owner_id, [&](const store::SpaceListRow& row) {
    if (!std::exchange(first, false)) out += ',';
    id.assign(row.id);
    if (row.ip) ip.assign(*row.ip);
    append_address(out, row.ip ? &ip : learned(&addresses, row.state == "running", id));
    append_space(out, row);
  });
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
                                                         std::shared_ptr<const StatsTexts> stats,
                                                         const std::set<std::string>& shared) {
  std::lock_guard lock(mutex_);
  const auto wanted = [&](const Entry& entry) {
    return !owner_id || entry.owner == owner_id || shared.count(entry.id) > 0;
  };
  catch_up(store);
  if (!owner_id && all_valid_ && all_addresses_ == addresses && all_stats_ == stats) return all_;
  // Each object's "address" key with its value: at most 32 bytes.
  std::size_t size = 3;
  for (const auto& [rowid, entry] : spaces_)
    if (wanted(entry)) size += entry.json.size() + 32;
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
    if (!wanted(entry)) continue;
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
  auto& rows = store.read_space_list();
  // The newest sequence number first, the rows after: a write committed in between is read
  // now and again next time (its number is above the one kept), never missed.
  const auto seq = rows.newest_change();
  if (seq_ == seq) return;
  rows.changes_since(seq_.value_or(-1), [&](std::int64_t rowid, const store::SpaceListRow* row) {
    if (!row) {  // the space is gone
      spaces_.erase(rowid);
      return;
    }
    auto& entry = spaces_[rowid];
    entry.owner = row->owner_id;
    entry.id = std::string(row->id);
    entry.ip = row->ip ? std::optional<std::string>(*row->ip) : std::nullopt;
    entry.running = row->state == "running";
    entry.json.clear();
    append_space(entry.json, *row);
  });
  seq_ = seq;
  all_valid_ = false;
}

namespace {

// One space's object from `row`, after its "address" (append_address): from the key after it
// to the closing brace.
void append_space(std::string& out, const store::SpaceListRow& row) {
  const auto text = [&](const char* key, std::string_view value) {
    out += key;
    append_json_string(out, value);
  };
  const auto number = [&](const char* key, std::int64_t value) {
    out += key;
    append_int(out, value);
  };
  number("\"appliedRevision\":", row.applied_revision);
  number(",\"createdAt\":", row.created_at);
  text(",\"desiredState\":", row.desired_state);
  text(",\"domain\":", row.domain);
  text(",\"error\":", row.error);
  text(",\"id\":", row.id);
  if (row.ip)
    text(",\"ip\":", *row.ip);
  else
    out += ",\"ip\":null";
  text(",\"name\":", row.name);
  text(",\"node\":", row.node);
  text(",\"owner\":", row.owner);
  out += row.applied_revision != 0 && row.applied_revision != row.template_revision
             ? ",\"redefinePending\":true"
             : ",\"redefinePending\":false";
  text(",\"state\":", row.state);
  text(",\"template\":", row.template_name);
  number(",\"templateRevision\":", row.template_revision);
  number(",\"updatedAt\":", row.updated_at);
  out += '}';
}

}  // namespace

}  // namespace bowline::api
