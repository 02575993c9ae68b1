#include "guest/cloud_init_yaml.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <stdexcept>

#include "util/strings.hpp"
#include "util/utf8.hpp"

namespace bowline::guest::detail {
namespace {

constexpr std::size_t kSimpleKeyBytes = 128;

bool is_alpha(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

// "a.b.c.d" or "a.b.c.d/n" with 1-3 digit groups: no YAML resolver reads two or more dots as a
// number, a date or a boolean.
bool dotted_quad(std::string_view s) {
  int groups = 0;
  std::size_t i = 0;
  while (true) {
    std::size_t digits = 0;
    while (i < s.size() && is_digit(s[i]) && digits < 4) ++i, ++digits;
    if (digits == 0 || digits > 3) return false;
    ++groups;
    if (i == s.size()) return groups == 4;
    if (s[i] == '/' && groups == 4) {
      const auto rest = s.substr(i + 1);
      return !rest.empty() && rest.size() <= 2 &&
             std::all_of(rest.begin(), rest.end(), [](char c) { return is_digit(c); });
    }
    if (s[i] != '.' || groups == 4) return false;
    ++i;
  }
}

// A scalar key identity for comparing keys as PyYAML would: strings by text; a plain scalar
// counts as that string when it is plain_safe (then every resolver reads it as a string).
// Collections and tagged keys have none and never compare equal.
std::optional<std::string> key_identity(const Yaml& k) {
  if (!k.tag.empty()) return std::nullopt;
  switch (k.kind) {
    case Yaml::Kind::String:
      return "s" + k.text;
    case Yaml::Kind::Plain:
      return (plain_safe(k.text) ? "s" : "p") + k.text;
    case Yaml::Kind::Null:
      return std::string("n");
    case Yaml::Kind::Bool:
      return std::string(k.flag ? "b1" : "b0");
    default:
      return std::nullopt;
  }
}

bool same_key(const Yaml& a, const Yaml& b) {
  const auto ia = key_identity(a);
  return ia && ia == key_identity(b);
}

class Converter {
 public:
  Yaml convert(const YAML::Node& node, std::size_t depth) {
    if (++nodes_ > kMaxNodes)
      throw std::invalid_argument("the #cloud-config is too large to merge (more than " +
                                  std::to_string(kMaxNodes) + " values once aliases expand)");
    if (depth > kMaxDepth)
      throw std::invalid_argument("the #cloud-config is nested too deeply to merge (more than " +
                                  std::to_string(kMaxDepth) + " levels)");
    const std::string& tag = node.Tag();
    Yaml v;
    switch (node.Type()) {
      case YAML::NodeType::Undefined:
      case YAML::NodeType::Null:
        break;
      case YAML::NodeType::Scalar:
        // yaml-cpp tags a plain scalar "?" and a quoted one "!" (non-specific).
        v = tag == "?" ? Yaml::plain(node.Scalar()) : Yaml::str(node.Scalar());
        break;
      case YAML::NodeType::Sequence:
        v = Yaml::seq();
        for (const auto& child : node) v.items.push_back(convert(child, depth + 1));
        break;
      case YAML::NodeType::Map:
        v = Yaml::map();
        for (auto it = node.begin(); it != node.end(); ++it) {
          Yaml key = convert(it->first, depth + 1);
          Yaml value = convert(it->second, depth + 1);
          auto same = std::find_if(v.entries.begin(), v.entries.end(),
                                   [&](const auto& e) { return same_key(e.first, key); });
          if (same != v.entries.end())
            same->second = std::move(value);  // the last wins, at the first one's place
          else
            v.entries.emplace_back(std::move(key), std::move(value));
        }
        break;
    }
    if (!tag.empty() && tag != "?" && tag != "!") v.tag = tag;
    return v;
  }

 private:
  std::size_t nodes_ = 0;
};

// cloud-init's util.is_true for a scalar of the user's.
bool truthy(const Yaml& v) {
  if (v.kind == Yaml::Kind::Bool) return v.flag;
  if (v.kind != Yaml::Kind::String && v.kind != Yaml::Kind::Plain) return false;
  const auto t = util::to_lower(util::trim(v.text));
  return t == "true" || t == "1" || t == "on" || t == "yes";
}

// Their `users` value as list items, the form cloud-init normalises it to.
std::vector<Yaml> user_items(const Yaml& theirs) {
  if (!theirs.tag.empty()) return {theirs};
  switch (theirs.kind) {
    case Yaml::Kind::Null:
      return {};
    case Yaml::Kind::Sequence:
      return theirs.items;
    case Yaml::Kind::Mapping: {
      // {bob: {shell: /bin/zsh}, carol: true}: a mapping value is bob's config, a true value
      // a user with defaults, anything else no user.
      std::vector<Yaml> out;
      for (const auto& [name, config] : theirs.entries) {
        if (config.kind == Yaml::Kind::Mapping && config.tag.empty()) {
          Yaml user = Yaml::map();
          user.entries.emplace_back(Yaml::str("name"), name);
          for (const auto& e : config.entries)
            if (!same_key(e.first, Yaml::str("name"))) user.entries.push_back(e);
          out.push_back(std::move(user));
        } else if (truthy(config)) {
          out.push_back(name);
        }
      }
      return out;
    }
    default:
      return {theirs};  // "default" or "bob, carol": cloud-init splits the string
  }
}

void check_text(std::string_view s) {
  if (valid_utf8(s)) return;
  std::string shown;
  for (unsigned char c : s.substr(0, 40))
    if (c >= 0x20 && c < 0x7f) {
      shown += static_cast<char>(c);
    } else {
      static constexpr char kHex[] = "0123456789abcdef";
      shown += "\\x";
      shown += kHex[c >> 4];
      shown += kHex[c & 15];
    }
  throw std::invalid_argument("\"" + shown + (s.size() > 40 ? "..." : "") +
                              "\" is not valid UTF-8 text (or holds a Unicode noncharacter)");
}

void write(YAML::Emitter& out, const Yaml& v, bool as_key) {
  if (!v.tag.empty()) out << YAML::VerbatimTag(v.tag);
  switch (v.kind) {
    case Yaml::Kind::Null:
      out << YAML::Null;
      break;
    case Yaml::Kind::Bool:
      out << v.flag;
      break;
    case Yaml::Kind::Plain:
      check_text(v.text);
      out << v.text;  // yaml-cpp writes it plain unless it cannot be (then quoted: a string)
      break;
    case Yaml::Kind::String:
      check_text(v.text);
      if (v.tag.empty() && !v.quoted && plain_safe(v.text))
        out << v.text;
      else if (v.tag.empty() && !v.quoted && !as_key && literal_safe(v.text))
        out << YAML::Literal << v.text;
      else
        out << YAML::DoubleQuoted << v.text;
      break;
    case Yaml::Kind::Sequence:
      if (v.items.empty()) {
        out << YAML::Flow << YAML::BeginSeq << YAML::EndSeq;
        break;
      }
      out << YAML::BeginSeq;
      for (const auto& item : v.items) write(out, item, false);
      out << YAML::EndSeq;
      break;
    case Yaml::Kind::Mapping:
      if (v.entries.empty()) {
        out << YAML::Flow << YAML::BeginMap << YAML::EndMap;
        break;
      }
      out << YAML::BeginMap;
      for (const auto& [key, value] : v.entries) {
        // A simple key may span at most 1024 characters; escapes can quadruple a text's
        // length, so a long one is written as an explicit key (`? key`).
        if ((key.kind == Yaml::Kind::String || key.kind == Yaml::Kind::Plain) &&
            key.text.size() > kSimpleKeyBytes)
          out << YAML::LongKey;
        out << YAML::Key;
        write(out, key, true);
        out << YAML::Value;
        write(out, value, false);
      }
      out << YAML::EndMap;
      break;
  }
  if (!out.good()) throw std::invalid_argument("cannot write YAML: " + out.GetLastError());
}

}  // namespace

Yaml Yaml::str(std::string s, bool always_quoted) {
  Yaml v;
  v.kind = Kind::String;
  v.text = std::move(s);
  v.quoted = always_quoted;
  return v;
}

Yaml Yaml::plain(std::string s) {
  Yaml v;
  v.kind = Kind::Plain;
  v.text = std::move(s);
  return v;
}

Yaml Yaml::boolean(bool b) {
  Yaml v;
  v.kind = Kind::Bool;
  v.flag = b;
  return v;
}

Yaml Yaml::seq(std::vector<Yaml> items) {
  Yaml v;
  v.kind = Kind::Sequence;
  v.items = std::move(items);
  return v;
}

Yaml Yaml::map() {
  Yaml v;
  v.kind = Kind::Mapping;
  return v;
}

Yaml& Yaml::add(std::string key, Yaml value) {
  entries.emplace_back(str(std::move(key)), std::move(value));
  return *this;
}

const Yaml* Yaml::find(std::string_view key) const {
  const Yaml k = str(std::string(key));
  for (const auto& e : entries)
    if (same_key(e.first, k)) return &e.second;
  return nullptr;
}

Yaml from_node(const YAML::Node& node) {
  Converter c;
  return c.convert(node, 0);
}

Yaml merge(const Yaml& ours, const Yaml& theirs, bool top) {
  if (theirs.kind == Yaml::Kind::Null && theirs.tag.empty()) return ours;
  const bool untagged = ours.tag.empty() && theirs.tag.empty();
  if (untagged && ours.kind == Yaml::Kind::Mapping && theirs.kind == Yaml::Kind::Mapping) {
    Yaml out = ours;
    for (const auto& [key, value] : theirs.entries) {
      auto it = std::find_if(out.entries.begin(), out.entries.end(),
                             [&](const auto& e) { return same_key(e.first, key); });
      if (it == out.entries.end()) {
        out.entries.emplace_back(key, value);
      } else if (top && same_key(key, Yaml::str("users"))) {
        // Our user stays, first: cloud-init merges same-named users with the first winning.
        if (it->second.kind != Yaml::Kind::Sequence) it->second = Yaml::seq({it->second});
        for (auto& item : user_items(value)) it->second.items.push_back(std::move(item));
      } else {
        it->second = merge(it->second, value);
      }
    }
    return out;
  }
  if (untagged && ours.kind == Yaml::Kind::Sequence && theirs.kind == Yaml::Kind::Sequence) {
    Yaml out = ours;
    out.items.insert(out.items.end(), theirs.items.begin(), theirs.items.end());
    return out;
  }
  return theirs;
}

std::string emit(const Yaml& doc) {
  YAML::Emitter out;
  out.SetIndent(2);
  out.SetOutputCharset(YAML::EscapeNonAscii);
  out.SetMapFormat(YAML::Block);
  out.SetSeqFormat(YAML::Block);
  write(out, doc, false);
  std::string text(out.c_str(), out.size());
  // yaml-cpp ends a document after a literal block with that block's newline already.
  if (text.empty() || text.back() != '\n') text += '\n';
  return text;
}

bool plain_safe(std::string_view s) {
  if (s.empty()) return false;
  if (!is_alpha(s.front()) && s.front() != '/' && !dotted_quad(s)) return false;
  for (char c : s)
    if (!is_alpha(c) && !is_digit(c) && std::string_view(" ._/@+=:(),-").find(c) == s.npos)
      return false;
  if (s.back() == ' ' || s.back() == ':' || s.find(": ") != s.npos) return false;
  // YAML 1.1 booleans and nulls (PyYAML knows some casings; all are refused here).
  static constexpr std::array<std::string_view, 9> kWords = {"y",     "n",  "yes", "no",  "true",
                                                             "false", "on", "off", "null"};
  const auto lower = util::to_lower(s);
  return std::find(kWords.begin(), kWords.end(), lower) == kWords.end();
}

bool literal_safe(std::string_view s) {
  // One final newline (the clip chomping of `|` keeps exactly one), no leading blank or empty
  // first line (a `|` without an indentation indicator would misread it), printable ASCII,
  // no blank at the end of a line.
  if (s.size() < 2 || s.back() != '\n' || s[s.size() - 2] == '\n') return false;
  if (s.front() == ' ' || s.front() == '\n') return false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '\n') {
      if (i > 0 && s[i - 1] == ' ') return false;
      continue;
    }
    if (c < 0x20 || c > 0x7e) return false;
  }
  return true;
}

bool valid_utf8(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    const auto cp = util::decode_utf8(s, i);
    if (!cp) return false;
    // Noncharacters: U+FDD0..U+FDEF and the last two of every plane.
    if ((cp->value >= 0xfdd0 && cp->value <= 0xfdef) || (cp->value & 0xfffeu) == 0xfffeu)
      return false;
    i += cp->length;
  }
  return true;
}

}  // namespace bowline::guest::detail
