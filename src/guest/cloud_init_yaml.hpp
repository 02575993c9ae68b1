// Internal to guest/: the YAML value tree behind the cloud-init documents. Our documents are
// built as trees, a user's #cloud-config is converted from yaml-cpp's nodes and deep-merged,
// and emit() writes the result through YAML::Emitter.
//
// Styles, chosen so that yaml-cpp and PyYAML (YAML 1.1: cloud-init) read back the same data:
//   * String: plain only when plain_safe() (no YAML 1.1 or 1.2 resolver can take it for
//     anything but that string, and it needs no quoting); else a literal block when
//     literal_safe() (multi-line printable ASCII that `|` keeps byte for byte); else
//     double-quoted, with every non-ASCII or non-printable character escaped.
//   * Plain: a plain scalar from the user's YAML, written plain as it was, so that a reader
//     resolves it as before (`yes`, `0755`, `1:30`, `2024-01-01`...). yaml-cpp double-quotes
//     the few texts that cannot be plain (non-ASCII, since we escape it): those resolve to
//     strings either way.
//   * A user's explicit tag (!!str, !!binary, !custom...) is kept, written verbatim (!<...>).
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace bowline::guest::detail {

struct Yaml {
  enum class Kind { Null, String, Plain, Bool, Sequence, Mapping };

  Kind kind = Kind::Null;
  std::string text;     // String, Plain
  bool flag = false;    // Bool
  bool quoted = false;  // String: always double-quoted
  std::string tag;      // an explicit tag of the user's (full form), written verbatim
  std::vector<Yaml> items;
  std::vector<std::pair<Yaml, Yaml>> entries;

  static Yaml null() { return {}; }
  static Yaml str(std::string s, bool always_quoted = false);
  static Yaml plain(std::string s);
  static Yaml boolean(bool b);
  static Yaml seq(std::vector<Yaml> items = {});
  static Yaml map();

  // Mapping: appends `key: value` (key a string); returns *this for chaining.
  Yaml& add(std::string key, Yaml value);
  // Mapping: the value of the string key `key`, or null.
  const Yaml* find(std::string_view key) const;
};

// Limits on a user's document, counted after aliases are expanded.
inline constexpr std::size_t kMaxNodes = 100000;
inline constexpr std::size_t kMaxDepth = 64;

// A user's YAML as a tree; of duplicate keys the last value wins, at the first one's place (as
// PyYAML builds a dict). Throws std::invalid_argument beyond kMaxNodes or kMaxDepth.
Yaml from_node(const YAML::Node& node);

// Deep merge (see cloud_init.hpp): mappings merge recursively, sequences concatenate ours
// first, otherwise theirs win; a null of theirs changes nothing. With `top`, the `users` key is
// special: ours stay first, theirs are appended in cloud-init's list form.
Yaml merge(const Yaml& ours, const Yaml& theirs, bool top = false);

// The document as YAML text ending with a newline. Throws std::invalid_argument for text
// that is not valid UTF-8 or holds a Unicode noncharacter (yaml-cpp would replace it), or a
// tag the emitter rejects.
std::string emit(const Yaml& doc);

bool plain_safe(std::string_view s);
bool literal_safe(std::string_view s);
// Well-formed UTF-8 without surrogates, overlong forms or noncharacters.
bool valid_utf8(std::string_view s);

}  // namespace bowline::guest::detail
