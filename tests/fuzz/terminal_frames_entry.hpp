// The browser terminal's frames (api/terminal_frames.hpp) under fuzzing, shared by the
// libFuzzer target (terminal_frames_fuzz.cpp) and the corpus replay test
// (tests/unit/api/terminal_frames_fuzz_replay_test.cpp).
//
// Any bytes: no exception; input is exactly the bytes after a 0; a resize only for an object
// whose cols and rows are whole numbers in range, and then exactly those numbers; anything
// else ignored.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

#include "api/terminal_frames.hpp"

namespace bowline::api::fuzz {

inline void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "terminal frame invariant broken: %s\n", what);
    std::abort();
  }
}

// The side named `name` as a resize must give it: an integer JSON number from 1 to the limit.
inline bool side(const nlohmann::json& size, const char* name, unsigned& out) {
  if (!size.contains(name)) return false;
  const auto& v = size[name];
  if (v.is_number_unsigned() && v.get<std::uint64_t>() >= 1 &&
      v.get<std::uint64_t>() <= kMaxTerminalCells) {
    out = static_cast<unsigned>(v.get<std::uint64_t>());
    return true;
  }
  if (v.is_number_integer() && !v.is_number_unsigned() && v.get<std::int64_t>() >= 1 &&
      v.get<std::int64_t>() <= kMaxTerminalCells) {
    out = static_cast<unsigned>(v.get<std::int64_t>());
    return true;
  }
  return false;
}

inline void run_one(const std::uint8_t* data, std::size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  TerminalFrame frame;
  try {
    frame = decode_terminal_frame(bytes);
  } catch (...) {
    check(false, "decoding never throws");
  }
  if (bytes.empty()) return check(frame.kind == TerminalFrame::Kind::Ignored, "empty: ignored");
  if (bytes[0] == kTerminalInput) {
    check(frame.kind == TerminalFrame::Kind::Input && frame.input == bytes.substr(1),
          "input is the bytes after the 0");
    return;
  }
  if (bytes[0] != kTerminalResize)
    return check(frame.kind == TerminalFrame::Kind::Ignored, "an unknown type is ignored");
  const auto json = nlohmann::json::parse(bytes.substr(1), nullptr, false);
  unsigned cols = 0, rows = 0;
  const bool valid = json.is_object() && side(json, "cols", cols) && side(json, "rows", rows);
  if (!valid) return check(frame.kind == TerminalFrame::Kind::Ignored, "a bad resize is ignored");
  check(frame.kind == TerminalFrame::Kind::Resize && frame.cols == cols && frame.rows == rows,
        "a resize carries the sizes asked for");
}

}  // namespace bowline::api::fuzz
