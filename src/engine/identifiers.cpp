#include "engine/identifiers.hpp"

#include <openssl/rand.h>

#include <stdexcept>
#include <vector>

#include "engine/engine.hpp"
#include "spec/validators.hpp"

namespace bowline::engine {

// UUIDs and VNC passwords come from the system's CSPRNG: a guessable VNC password would let
// any local user onto the display.
std::string random_hex(std::size_t n) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::vector<unsigned char> bytes(n);
  if (RAND_bytes(bytes.data(), static_cast<int>(bytes.size())) != 1)
    throw std::runtime_error("no randomness available (RAND_bytes failed)");
  std::string out;
  for (auto b : bytes) out += kHex[b & 15];
  return out;
}

std::string random_uuid() {
  auto h = random_hex(32);
  h[12] = '4';
  h[16] = "89ab"[h[16] % 4];
  return h.substr(0, 8) + "-" + h.substr(8, 4) + "-" + h.substr(12, 4) + "-" + h.substr(16, 4) +
         "-" + h.substr(20, 12);
}

void check_name(const std::string& what, const std::string& name) {
  if (auto problem = spec::check_dns_label(name); !problem.empty())
    throw EngineError(EngineError::Kind::Invalid, what + ": " + problem);
}

}  // namespace bowline::engine
