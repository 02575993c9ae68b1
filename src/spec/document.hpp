// A template's YAML text, parsed with positions kept, and checked for what yaml-cpp lets
// through silently: duplicate keys (it keeps the first, cloud-init's PyYAML the last) and
// merge keys (`<<`, which it does not implement).
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <string>

#include "spec/diagnostic.hpp"

namespace bowline::spec {

struct Position {
  int line = 0;  // 1-based
  int column = 0;
};

class Document {
 public:
  // Parses `text`. On a syntax error, or when the root is not a mapping, reports it and
  // leaves root() null.
  Document(std::string text, Diagnostics& diagnostics);

  const YAML::Node& root() const { return root_; }
  bool ok() const { return ok_; }
  const std::string& text() const { return text_; }

  Position position(const YAML::Node& node) const;
  // Where the `offset`-th byte of the `expression`-th `${{` inside a scalar sits.
  Position expression_position(const YAML::Node& scalar, std::size_t expression,
                               std::size_t offset) const;

 private:
  Position position_of_offset(std::size_t offset) const;
  void check_keys(const YAML::Node& node, const std::string& path, int depth, std::size_t& visited,
                  Diagnostics& diagnostics);

  std::string text_;
  YAML::Node root_;
  bool ok_ = false;
};

// yaml-cpp tags plain scalars "?" and quoted or block scalars "!".
inline bool is_plain_scalar(const YAML::Node& node) {
  return node.Tag() == "?";
}

}  // namespace bowline::spec
