#include "api/terminal_frames.hpp"

#include <nlohmann/json.hpp>

namespace bowline::api {

namespace {

// A side of the window: a whole JSON number from 1 to kMaxTerminalCells. Asked of the number
// itself, never converted first: a string would throw and 1e300 has no int (undefined).
bool cells(const nlohmann::json& size, const char* name, unsigned& out) {
  const auto it = size.find(name);
  if (it == size.end() || !it->is_number_integer()) return false;
  if (it->is_number_unsigned()) {
    const auto value = it->get<std::uint64_t>();
    if (value < 1 || value > kMaxTerminalCells) return false;
    out = static_cast<unsigned>(value);
    return true;
  }
  const auto value = it->get<std::int64_t>();
  if (value < 1 || value > kMaxTerminalCells) return false;
  out = static_cast<unsigned>(value);
  return true;
}

}  // namespace

TerminalFrame decode_terminal_frame(std::string_view frame) {
  TerminalFrame out;
  if (frame.empty()) return out;
  if (frame[0] == kTerminalInput) {
    out.kind = TerminalFrame::Kind::Input;
    out.input = std::string(frame.substr(1));
  } else if (frame[0] == kTerminalResize) {
    const auto size = nlohmann::json::parse(frame.substr(1), nullptr, false);
    if (size.is_object() && cells(size, "cols", out.cols) && cells(size, "rows", out.rows))
      out.kind = TerminalFrame::Kind::Resize;
  }
  return out;
}

}  // namespace bowline::api
