#include "api/rfb_view_only.hpp"

#include <algorithm>
#include <cstdint>
#include <stdexcept>

namespace bowline::api {

namespace {

// The client-to-server message types of RFC 6143 and the extensions noVNC sends.
constexpr unsigned char kSetPixelFormat = 0, kSetEncodings = 2, kUpdateRequest = 3, kKeyEvent = 4,
                        kPointerEvent = 5, kCutText = 6, kContinuousUpdates = 150, kFence = 248,
                        kXvp = 250, kSetDesktopSize = 251, kQemu = 255;

std::uint32_t be16(const std::string& s, std::size_t at) {
  return (static_cast<unsigned char>(s[at]) << 8) | static_cast<unsigned char>(s[at + 1]);
}

std::uint32_t be32(const std::string& s, std::size_t at) {
  return (be16(s, at) << 16) | be16(s, at + 2);
}

}  // namespace

std::size_t RfbViewOnly::message_length() const {
  const auto have = pending_.size();
  const auto type = static_cast<unsigned char>(pending_[0]);
  switch (type) {
    case kSetPixelFormat:
      return 20;
    case kSetEncodings:
      return have < 4 ? 0 : 4 + 4 * std::size_t{be16(pending_, 2)};
    case kUpdateRequest:
    case kContinuousUpdates:
      return 10;
    case kKeyEvent:
      return 8;
    case kPointerEvent:
      return 6;
    case kCutText: {
      if (have < 8) return 0;
      // A negative length is the extended clipboard's: its size is the absolute value.
      const auto length = static_cast<std::int32_t>(be32(pending_, 4));
      return 8 + static_cast<std::size_t>(length < 0 ? -static_cast<std::int64_t>(length) : length);
    }
    case kFence:
      return have < 9 ? 0 : 9 + static_cast<unsigned char>(pending_[8]);
    case kXvp:
      return 4;
    case kSetDesktopSize:
      return have < 7 ? 0 : 8 + 16 * std::size_t{static_cast<unsigned char>(pending_[6])};
    case kQemu: {
      if (have < 2) return 0;
      const auto sub = static_cast<unsigned char>(pending_[1]);
      if (sub == 0) return 12;  // extended key event
      if (sub == 1) {           // audio: enable, disable, or set its format
        if (have < 4) return 0;
        return be16(pending_, 2) == 2 ? 10 : 4;
      }
      throw std::runtime_error("unknown QEMU VNC message " + std::to_string(sub));
    }
    default:
      throw std::runtime_error("unknown VNC client message " + std::to_string(type));
  }
}

bool RfbViewOnly::passes() const {
  switch (static_cast<unsigned char>(pending_[0])) {
    case kSetPixelFormat:
    case kSetEncodings:
    case kUpdateRequest:
    case kContinuousUpdates:
    case kFence:
      return true;
    default:
      return false;
  }
}

std::string RfbViewOnly::filter(std::string_view bytes) {
  pending_.append(bytes);
  std::string out;
  // Takes the first n pending bytes, passing them on or not.
  const auto take = [&](std::size_t n, bool pass) {
    if (pass) out.append(pending_, 0, n);
    pending_.erase(0, n);
  };
  while (!pending_.empty()) {
    if (skip_ > 0) {  // the rest of a message dropped, never held whole (a 2 GiB clipboard)
      const auto n = std::min(skip_, pending_.size());
      take(n, false);
      skip_ -= n;
      continue;
    }
    switch (stage_) {
      case Stage::Version:
        if (pending_.size() < 12) return out;
        version_3_3_ = pending_.compare(0, 12, "RFB 003.003\n") == 0;
        take(12, true);
        stage_ = version_3_3_ ? Stage::ClientInit : Stage::Security;
        break;
      case Stage::Security: {
        const auto type = static_cast<unsigned char>(pending_[0]);
        if (type != 1 && type != 2)
          throw std::runtime_error("VNC security type " + std::to_string(type) +
                                   " is not one a view-only display can follow");
        security_answer_ = type == 2 ? 16 : 0;
        take(1, true);
        stage_ = security_answer_ ? Stage::SecurityAnswer : Stage::ClientInit;
        break;
      }
      case Stage::SecurityAnswer:
        if (pending_.size() < security_answer_) return out;
        take(security_answer_, true);
        stage_ = Stage::ClientInit;
        break;
      case Stage::ClientInit:
        // Shared, always: a watcher never pushes the owner's own display off.
        out.push_back('\1');
        pending_.erase(0, 1);
        stage_ = Stage::Messages;
        break;
      case Stage::Messages: {
        const auto length = message_length();
        if (length == 0) return out;
        if (!passes()) {
          skip_ = length;
          break;
        }
        if (pending_.size() < length) return out;
        take(length, true);
        break;
      }
    }
  }
  return out;
}

}  // namespace bowline::api
