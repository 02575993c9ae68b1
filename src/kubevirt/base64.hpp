// Standard base64 (RFC 4648, with padding): Secret data and kubeconfig's *-data fields.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace bowline::kubevirt {

std::string base64_encode(std::string_view bytes);
// Whitespace is skipped (kubeconfig files sometimes wrap); anything else not base64 fails.
std::optional<std::string> base64_decode(std::string_view text);

}  // namespace bowline::kubevirt
