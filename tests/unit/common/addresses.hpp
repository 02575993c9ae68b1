// An IPv4 address written out in a test, parsed (the test's own literal: it is valid).
#pragma once

#include "spec/ipv4.hpp"

namespace bowline::test_support {

inline spec::Ipv4Address ip(const char* text) {
  return *spec::Ipv4Address::parse(text);
}

}  // namespace bowline::test_support
