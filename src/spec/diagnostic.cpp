#include "spec/diagnostic.hpp"

#include <algorithm>
#include <tuple>

namespace bowline::spec {

std::vector<Diagnostic> Diagnostics::sorted() const {
  auto out = items_;
  std::stable_sort(out.begin(), out.end(), [](const Diagnostic& a, const Diagnostic& b) {
    return std::tie(a.line, a.column) < std::tie(b.line, b.column);
  });
  return out;
}

std::string more_problems(const Diagnostics& d) {
  if (d.dropped() == 0) return "";
  return "and " + std::to_string(d.dropped()) + " more problem" + (d.dropped() == 1 ? "" : "s") +
         " (only the first " + std::to_string(Diagnostics::kKept) + " are listed)";
}

std::string format(const Diagnostic& d, const std::string& file) {
  std::string out = file;
  if (d.line > 0) out += ":" + std::to_string(d.line) + ":" + std::to_string(d.column);
  out += d.severity == Severity::Error ? ": error: " : ": warning: ";
  if (!d.path.empty()) out += d.path + ": ";
  out += d.message;
  return out;
}

}  // namespace bowline::spec
