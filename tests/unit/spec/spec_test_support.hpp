// Helpers for the spec tests: load a YAML string, find a diagnostic by field path, and assert
// its exact position and a key part of its message.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "spec/loader.hpp"

namespace bowline::spec::test {

// Drops one leading newline, so a raw string can start on the line after R"( and its first
// line is line 1.
inline std::string doc(std::string_view text) {
  if (!text.empty() && text.front() == '\n') text.remove_prefix(1);
  return std::string(text);
}

// Validation without values (bowline template validate).
inline LoadResult load(std::string_view text) {
  return load_spec(doc(text), nullptr);
}

// Validation with values (bowline template show --var ...).
inline LoadResult load(std::string_view text, const Variables& values) {
  return load_spec(doc(text), &values);
}

// The values most tests need: a user and a space.
inline Variables alice_dev() {
  return {{"user.username", "alice"},
          {"user.email", "alice@example.com"},
          {"user.timezone", "Europe/Berlin"},
          {"user.id", "u-1"},
          {"space.name", "dev"},
          {"space.id", "s-1"},
          {"space.ip_address", "198.51.100.20"},
          {"template.name", "base"},
          {"template.id", "t-1"},
          {"server.url", "https://knot.example.com"}};
}

inline std::string describe(const LoadResult& r) {
  std::string out;
  for (const auto& d : r.diagnostics.sorted()) out += "\n  " + format(d, "t.yaml");
  return out.empty() ? " (no diagnostics)" : out;
}

inline std::vector<Diagnostic> at_path(const LoadResult& r, std::string_view path,
                                       Severity severity = Severity::Error) {
  std::vector<Diagnostic> out;
  for (const auto& d : r.diagnostics.items())
    if (d.path == path && d.severity == severity) out.push_back(d);
  return out;
}

inline std::size_t count(const LoadResult& r, Severity severity) {
  std::size_t n = 0;
  for (const auto& d : r.diagnostics.items()) n += d.severity == severity;
  return n;
}

// Exactly one diagnostic of `severity` at `path`, at line:column, whose message holds `text`.
inline ::testing::AssertionResult HasDiagnostic(const LoadResult& r, Severity severity,
                                                std::string_view path, int line, int column,
                                                std::string_view text) {
  const auto found = at_path(r, path, severity);
  const char* kind = severity == Severity::Error ? "error" : "warning";
  if (found.size() != 1)
    return ::testing::AssertionFailure() << "expected one " << kind << " at path \"" << path
                                         << "\", found " << found.size() << ":" << describe(r);
  const auto& d = found.front();
  if (d.line != line || d.column != column)
    return ::testing::AssertionFailure()
           << "the " << kind << " at \"" << path << "\" is at " << d.line << ":" << d.column
           << ", expected " << line << ":" << column << ":" << describe(r);
  if (d.message.find(text) == std::string::npos)
    return ::testing::AssertionFailure()
           << "the " << kind << " at \"" << path << "\" says \"" << d.message
           << "\", expected it to hold \"" << text << "\"";
  return ::testing::AssertionSuccess();
}

inline ::testing::AssertionResult HasError(const LoadResult& r, std::string_view path, int line,
                                           int column, std::string_view text) {
  return HasDiagnostic(r, Severity::Error, path, line, column, text);
}

inline ::testing::AssertionResult HasWarning(const LoadResult& r, std::string_view path, int line,
                                             int column, std::string_view text) {
  return HasDiagnostic(r, Severity::Warning, path, line, column, text);
}

// No errors at all (warnings allowed); the spec is set.
inline ::testing::AssertionResult Valid(const LoadResult& r) {
  if (r.diagnostics.has_errors() || !r.spec)
    return ::testing::AssertionFailure() << "expected no errors:" << describe(r);
  return ::testing::AssertionSuccess();
}

// Exactly `n` errors in all.
inline ::testing::AssertionResult ErrorCount(const LoadResult& r, std::size_t n) {
  if (count(r, Severity::Error) != n)
    return ::testing::AssertionFailure() << "expected " << n << " error(s), found "
                                         << count(r, Severity::Error) << ":" << describe(r);
  if (r.spec) return ::testing::AssertionFailure() << "the spec is set although there are errors";
  return ::testing::AssertionSuccess();
}

}  // namespace bowline::spec::test
