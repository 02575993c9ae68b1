// The client's half of RFB read for a viewer: what asks for pictures passes, what acts on the
// guest does not, however the bytes are split, and what it does not know ends the connection.
#include "api/rfb_view_only.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

namespace bowline::api {
namespace {

std::string bytes(std::initializer_list<int> values) {
  std::string out;
  for (int v : values) out.push_back(static_cast<char>(v));
  return out;
}

const std::string kHello = "RFB 003.008\n";
const std::string kPixelFormat =
    bytes({0, 0, 0, 0, 32, 24, 0, 1, 0, 255, 0, 255, 0, 255, 16, 8, 0, 0, 0, 0});
const std::string kEncodings = bytes({2, 0, 0, 2, 0, 0, 0, 0, 255, 255, 255, 33});
const std::string kUpdate = bytes({3, 1, 0, 0, 0, 0, 2, 128, 1, 224});
const std::string kKey = bytes({4, 1, 0, 0, 0, 0, 0, 97});
const std::string kPointer = bytes({5, 1, 0, 10, 0, 20});
const std::string kCut = bytes({6, 0, 0, 0, 0, 0, 0, 3, 'a', 'b', 'c'});
const std::string kQemuKey = bytes({255, 0, 0, 1, 0, 0, 0, 97, 0, 0, 0, 30});
const std::string kFence = bytes({248, 0, 0, 0, 0, 0, 0, 0, 2, 'h', 'i'});
const std::string kXvpReboot = bytes({250, 0, 1, 3});
const std::string kDesktopSize =
    bytes({251, 0, 4, 0, 3, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 3, 0, 0, 0, 0, 0});

TEST(RfbViewOnly, PicturesPassAndInputIsDroppedHoweverTheBytesAreSplit) {
  const auto stream = kHello + bytes({1}) + bytes({0}) + kPixelFormat + kEncodings + kKey +
                      kUpdate + kPointer + kCut + kQemuKey + kFence + kXvpReboot + kDesktopSize +
                      kUpdate;
  const auto wanted =
      kHello + bytes({1}) + bytes({1}) + kPixelFormat + kEncodings + kUpdate + kFence + kUpdate;
  for (std::size_t chunk = 1; chunk <= stream.size(); ++chunk) {
    RfbViewOnly filter;
    std::string out;
    for (std::size_t at = 0; at < stream.size(); at += chunk)
      out += filter.filter(std::string_view(stream).substr(at, chunk));
    EXPECT_EQ(out, wanted) << "in pieces of " << chunk;
  }
}

TEST(RfbViewOnly, AHugeClipboardIsSkippedNotHeld) {
  RfbViewOnly filter;
  filter.filter(kHello + bytes({1, 0}));
  // 2 GiB announced; a megabyte of it sent: nothing passes, nothing waits.
  EXPECT_EQ(filter.filter(bytes({6, 0, 0, 0, 0x7f, 0xff, 0xff, 0xff})), "");
  EXPECT_EQ(filter.filter(std::string(1 << 20, 'x')), "");
}

TEST(RfbViewOnly, VncAuthenticationsAnswerPassesAndOldClientsHaveNoSecurityByte) {
  RfbViewOnly filter;
  const auto answer = std::string(16, '\x7f');
  EXPECT_EQ(filter.filter(kHello + bytes({2}) + answer + bytes({0}) + kKey + kUpdate),
            kHello + bytes({2}) + answer + bytes({1}) + kUpdate);
  RfbViewOnly old;
  EXPECT_EQ(old.filter("RFB 003.003\n" + bytes({0}) + kPointer + kUpdate),
            "RFB 003.003\n" + bytes({1}) + kUpdate);
}

TEST(RfbViewOnly, WhatItDoesNotKnowEndsTheConnection) {
  RfbViewOnly unknown_message;
  unknown_message.filter(kHello + bytes({1, 0}));
  EXPECT_THROW(unknown_message.filter(bytes({77, 0, 0, 0})), std::runtime_error);
  RfbViewOnly unknown_security;
  EXPECT_THROW(unknown_security.filter(kHello + bytes({19})), std::runtime_error);
  RfbViewOnly unknown_qemu;
  unknown_qemu.filter(kHello + bytes({1, 0}));
  EXPECT_THROW(unknown_qemu.filter(bytes({255, 9})), std::runtime_error);
}

}  // namespace
}  // namespace bowline::api
