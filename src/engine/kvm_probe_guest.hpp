// The KVM probe's guest (kvm_probe_guest.S): its boot image, carried in the binary, and the
// steps it reports on COM1. A KVM guest without a boot disk can run on for ever where a real
// guest's boot stops at its first protected-mode interrupt, so the probe boots this program and
// waits for its last marker.
#pragma once

#include <cstddef>
#include <span>
#include <string_view>

namespace bowline::engine {

struct ProbeStep {
  std::string_view marker;  // the guest prints "bowline-probe:MARKER\n"
  std::string_view what;    // for people: "interrupts in 32-bit protected mode"
};

// In the order the guest takes them; the last one means the guest booted.
std::span<const ProbeStep> kvm_probe_steps();

// The boot image (a boot sector and what it loads); empty where it is not built (not x86).
std::span<const unsigned char> kvm_probe_guest_image();

// How many steps' markers the serial output shows, in order (0: none).
std::size_t kvm_probe_steps_done(std::string_view serial);

}  // namespace bowline::engine
