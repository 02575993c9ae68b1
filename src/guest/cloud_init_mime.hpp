// Internal to guest/: multipart MIME user-data, as cloud-init reads it (Python's email parser
// walks the parts, nested multiparts included; text parts are base64-decoded when so marked).
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace bowline::guest::detail {

struct MimePart {
  // Either a body with its content type ("text/cloud-config"), for which the headers are
  // written, or (verbatim) a complete MIME entity, headers included, copied as it is.
  std::string content_type;
  std::string body;
  bool verbatim = false;
};

// A multipart/mixed message of the parts, in order. A body that is not 7-bit text (printable
// ASCII, tabs and LF, lines of at most 998 characters) is base64-encoded: cloud-init's
// decoding of an unencoded part mangles non-ASCII text.
std::string multipart_mixed(const std::vector<MimePart>& parts);

// The first candidate(attempt) for attempt = 0, 1, ... that occurs in none of `texts`.
std::string pick_boundary(const std::vector<std::string_view>& texts,
                          const std::function<std::string(unsigned attempt)>& candidate);

std::string base64(std::string_view data);  // lines of 76 characters, each ending with LF

}  // namespace bowline::guest::detail
