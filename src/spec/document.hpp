// A template's YAML text, parsed with positions kept, and checked for what yaml-cpp lets
// through silently: duplicate keys (it keeps the first, cloud-init's PyYAML the last) and
// merge keys (`<<`, which it does not implement).
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <string>
#include <vector>

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
  // Both in O(log n) on tables made once: a template with thousands of problems costs linear
  // time, not quadratic.
  Position position_of_offset(std::size_t offset) const;
  // What walking the tree has cost, aliases counted at every use.
  struct Budget {
    std::size_t nodes = 0;
    std::size_t bytes = 0;  // of keys and scalar values
    bool exceeded = false;
  };
  void check_keys(const YAML::Node& node, const std::string& path, int depth, Budget& budget,
                  Diagnostics& diagnostics);
  bool spend(Budget& budget, const YAML::Node& at, const std::string& path, std::size_t bytes,
             Diagnostics& diagnostics);

  std::string text_;
  std::vector<std::size_t> line_starts_;  // the offset of each line's first byte
  std::vector<std::size_t> expressions_;  // the offset of each `${{` in the text
  YAML::Node root_;
  bool ok_ = false;
};

// What follows the first YAML document of `text`, which is all YAML::Load reads. YAML::LoadAll
// is no help: on a stray ',' at the top level (",x", "[a],") yaml-cpp yields null documents
// without consuming it, forever. Throws YAML::Exception on a syntax error in a later document.
struct Trailing {
  enum Kind { Nothing, Document, Stray } kind = Nothing;
  YAML::Mark mark;  // of the second document's first node, or of the stray token
};
Trailing after_first_document(const std::string& text);

// yaml-cpp tags plain scalars "?" and quoted or block scalars "!".
inline bool is_plain_scalar(const YAML::Node& node) {
  return node.Tag() == "?";
}

}  // namespace bowline::spec
