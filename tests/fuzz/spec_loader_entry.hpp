// The spec loader's fuzzing entry point, shared by the libFuzzer target (spec_loader_fuzz.cpp,
// clang only) and the corpus replay test (tests/unit/spec/fuzz_corpus_replay_test.cpp, any
// compiler), so CI runs every corpus input through exactly what the fuzzer runs.
//
// The loader must never crash or throw, whatever the text; and its results must hang together.
// A broken invariant aborts, which both libFuzzer and the replay test report.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "spec/loader.hpp"
#include "spec/spec_json.hpp"

namespace bowline::spec::fuzz {

inline void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "spec loader invariant broken: %s\n", what);
    std::abort();
  }
}

inline void check_result(const LoadResult& result, const std::string& text) {
  check(result.spec.has_value() == !result.diagnostics.has_errors(),
        "a spec is returned exactly when there are no errors");
  std::size_t lines = 1;
  for (char c : text) lines += c == '\n';
  for (const auto& d : result.diagnostics.items()) {
    check(!d.message.empty(), "every diagnostic has a message");
    check(d.line >= 0 && d.column >= 0, "positions are not negative");
    check(static_cast<std::size_t>(d.line) <= lines + 1, "the line is inside the text");
    check((d.line == 0) == (d.column == 0), "line and column are known together");
    (void)format(d, "fuzz.yaml");
  }
  if (result.spec) (void)to_json(*result.spec).dump();
}

// Runs one input: without values (template validate), then with values (template show),
// including values that try to break out of their field.
inline void run_one(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  check_result(load_spec(text, nullptr), text);

  const Variables values = {{"user.username", "alice"},
                            {"user.email", "a@example.com"},
                            {"user.timezone", "UTC"},
                            {"user.id", "1"},
                            {"space.name", "dev"},
                            {"space.id", "2"},
                            {"space.ip_address", "198.51.100.20"},
                            {"template.name", "t"},
                            {"template.id", "3"},
                            {"server.url", "https://x.example"},
                            {"var.x", "4G"}};
  check_result(load_spec(text, &values), text);

  const Variables hostile = {{"user.username", "a\nimage: evil\n"},
                             {"user.email", "\"}} ${{ .user.id }}"},
                             {"space.name", "x: {y}\n- z #"},
                             {"var.x", std::string("\0\xff\n---\n", 7)}};
  check_result(load_spec(text, &hostile), text);
}

}  // namespace bowline::spec::fuzz
