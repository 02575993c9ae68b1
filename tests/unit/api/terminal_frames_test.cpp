// What the browser terminal makes of a client's frame (api/terminal_frames.hpp): typed bytes
// pass as they are; a resize counts only with whole numbers of cells in range; everything else
// is ignored, and nothing throws.
#include "api/terminal_frames.hpp"

#include <gtest/gtest.h>

namespace bowline::api {
namespace {

using Kind = TerminalFrame::Kind;

std::string resize(const std::string& json) {
  return std::string(1, kTerminalResize) + json;
}

TEST(TerminalFramesTest, InputIsTheBytesAfterTheFirst) {
  const auto frame = decode_terminal_frame(std::string("\0ls -l\r\0\xff", 9));
  EXPECT_EQ(frame.kind, Kind::Input);
  EXPECT_EQ(frame.input, std::string("ls -l\r\0\xff", 8));
  EXPECT_EQ(decode_terminal_frame(std::string(1, '\0')).kind, Kind::Input);
}

TEST(TerminalFramesTest, AResizeTakesWholeCellsFromOneToTheLimit) {
  const auto ok = decode_terminal_frame(resize(R"({"cols": 120, "rows": 40})"));
  EXPECT_EQ(ok.kind, Kind::Resize);
  EXPECT_EQ(ok.cols, 120u);
  EXPECT_EQ(ok.rows, 40u);
  const auto largest = decode_terminal_frame(resize(R"({"cols": 9999, "rows": 1})"));
  EXPECT_EQ(largest.kind, Kind::Resize);
  EXPECT_EQ(largest.cols, kMaxTerminalCells);
}

// Before: the bridge read the sizes with json::value(name, 0), which throws for a string
// (the socket then closed) and converts 1e300 to an int (undefined behaviour); a size of 2^32+1
// wrapped to 1. Each of these is now a frame that changes nothing.
TEST(TerminalFramesTest, AnythingElseIsIgnoredWithoutThrowing) {
  for (const char* json :
       {R"({"cols": "80", "rows": 24})", R"({"cols": 1e300, "rows": 24})",
        R"({"cols": 80.5, "rows": 24})", R"({"cols": -1, "rows": 24})",
        R"({"cols": 0, "rows": 24})", R"({"cols": 10000, "rows": 24})",
        R"({"cols": 4294967297, "rows": 24})", R"({"cols": 18446744073709551615, "rows": 24})",
        R"({"cols": 80})", R"([80, 24])", R"({"cols": null, "rows": null})",
        R"({"cols": true, "rows": 24})", "", "{", "\xff\xfe",
        R"({"cols": {"x": 1}, "rows": [24]})"}) {
    SCOPED_TRACE(json);
    TerminalFrame frame;
    EXPECT_NO_THROW(frame = decode_terminal_frame(resize(json)));
    EXPECT_EQ(frame.kind, Kind::Ignored);
  }
  EXPECT_EQ(decode_terminal_frame("").kind, Kind::Ignored);
  EXPECT_EQ(decode_terminal_frame("\x02{}").kind, Kind::Ignored);
  EXPECT_EQ(decode_terminal_frame("ls").kind, Kind::Ignored);
  EXPECT_EQ(decode_terminal_frame(resize(std::string(100000, '['))).kind, Kind::Ignored);
}

}  // namespace
}  // namespace bowline::api
