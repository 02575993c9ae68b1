// Problems found in a template, each pinned to a line, a column and a field path.
#pragma once

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

class Diagnostics {
 public:
  void add(Diagnostic d) { items_.push_back(std::move(d)); }
  void error(int line, int column, std::string path, std::string message) {
    add({Severity::Error, line, column, std::move(path), std::move(message)});
  }
  void warning(int line, int column, std::string path, std::string message) {
    add({Severity::Warning, line, column, std::move(path), std::move(message)});
  }
  bool has_errors() const {
    for (const auto& d : items_)
      if (d.severity == Severity::Error) return true;
    return false;
  }
  const std::vector<Diagnostic>& items() const { return items_; }
  // Sorted by position, so a reader meets them in file order.
  std::vector<Diagnostic> sorted() const;

 private:
  std::vector<Diagnostic> items_;
};

// "FILE:LINE:COL: error: PATH: MESSAGE" (LINE:COL and PATH left out when unknown).
std::string format(const Diagnostic& d, const std::string& file);

}  // namespace bowline::spec
