// What a browser terminal's frame says (terminal_bridge.hpp): a first byte 0, the bytes typed;
// 1, the window's size as JSON {"cols": C, "rows": R}. Apart from the bridge so that the unit
// tests and a fuzzer (tests/fuzz/terminal_frames_fuzz.cpp) reach it.
#pragma once

#include <string>
#include <string_view>

namespace bowline::api {

constexpr char kTerminalInput = 0;
constexpr char kTerminalResize = 1;

// The largest side of a terminal window, in cells, in a resize frame and in the terminal
// route's ?cols=&rows= (four digits): more than any screen shows, and what the shell's PTY takes.
inline constexpr unsigned kMaxTerminalCells = 9999;

struct TerminalFrame {
  // Ignored: empty, an unknown first byte, or a resize that is not an object with whole
  // numbers `cols` and `rows` from 1 to kMaxTerminalCells (a client's mistake ends nothing).
  enum class Kind { Input, Resize, Ignored };
  Kind kind = Kind::Ignored;
  std::string input;  // Input: the bytes typed
  unsigned cols = 0;  // Resize
  unsigned rows = 0;
};

// Never throws for any bytes.
TerminalFrame decode_terminal_frame(std::string_view frame);

}  // namespace bowline::api
