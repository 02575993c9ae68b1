// Random identifiers and name rules shared by spaces and pools.
#pragma once

#include <cstddef>
#include <string>

namespace bowline::engine {

// `n` hexadecimal digits from the system's CSPRNG.
std::string random_hex(std::size_t n);
// A random (version 4) UUID, lowercase with dashes.
std::string random_uuid();
// Throws EngineError (Invalid) unless `name` is a DNS label: it becomes part of domain names
// and host names. `what` names it in the message ("space name", "pool name").
void check_name(const std::string& what, const std::string& name);
inline void check_space_name(const std::string& name) {
  check_name("space name", name);
}

}  // namespace bowline::engine
