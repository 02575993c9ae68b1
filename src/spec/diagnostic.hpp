// Problems found in a template, each pinned to a line, a column and a field path.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace bowline::spec {

enum class Severity { Error, Warning };

struct Diagnostic {
  Severity severity = Severity::Error;
  int line = 0;      // 1-based; 0 when the problem concerns the whole document
  int column = 0;    // 1-based
  std::string path;  // "network.cidr", "environment[1]"; empty for the document
  std::string message;
};

// Keeps the first kKept problems and counts the rest: a hostile template with a million
// mistakes costs neither memory nor a million lines of answer.
class Diagnostics {
 public:
  static constexpr std::size_t kKept = 100;
  void add(Diagnostic d) {
    if (items_.size() < kKept) {
      items_.push_back(std::move(d));
    } else {
      ++dropped_;
      dropped_error_ = dropped_error_ || d.severity == Severity::Error;
    }
  }
  void error(int line, int column, std::string path, std::string message) {
    add({Severity::Error, line, column, std::move(path), std::move(message)});
  }
  void warning(int line, int column, std::string path, std::string message) {
    add({Severity::Warning, line, column, std::move(path), std::move(message)});
  }
  bool has_errors() const {
    for (const auto& d : items_)
      if (d.severity == Severity::Error) return true;
    return dropped_error_;
  }
  std::size_t dropped() const { return dropped_; }  // problems found beyond kKept
  const std::vector<Diagnostic>& items() const { return items_; }
  // Sorted by position, so a reader meets them in file order.
  std::vector<Diagnostic> sorted() const;

 private:
  std::vector<Diagnostic> items_;
  std::size_t dropped_ = 0;
  bool dropped_error_ = false;
};

// "and N more problems" for `d.dropped()` > 0, else "".
std::string more_problems(const Diagnostics& d);

// "FILE:LINE:COL: error: PATH: MESSAGE" (LINE:COL and PATH left out when unknown).
std::string format(const Diagnostic& d, const std::string& file);

}  // namespace bowline::spec
