#include "engine/kvm_probe_guest.hpp"

#include <array>
#include <string>

namespace bowline::engine {

// Made by cmake/embed_bytes.cmake from the assembled kvm_probe_guest.S.
extern const unsigned char kKvmProbeGuest[];
extern const std::size_t kKvmProbeGuestSize;

namespace {

constexpr std::array<ProbeStep, 6> kSteps{{
    {"boot", "the firmware starting the boot sector"},
    {"real", "a BIOS disk read in real mode"},
    {"big-real", "big real mode"},
    {"irq", "interrupts in 32-bit protected mode"},
    {"long", "long mode with paging"},
    {"ok", "CPUID in long mode"},
}};

}  // namespace

std::span<const ProbeStep> kvm_probe_steps() {
  return kSteps;
}

std::span<const unsigned char> kvm_probe_guest_image() {
  return {kKvmProbeGuest, kKvmProbeGuestSize};
}

std::size_t kvm_probe_steps_done(std::string_view serial) {
  std::size_t done = 0;
  std::size_t from = 0;
  for (const auto& step : kSteps) {
    const auto at = serial.find("bowline-probe:" + std::string(step.marker) + "\n", from);
    if (at == std::string_view::npos) break;
    from = at;
    ++done;
  }
  return done;
}

}  // namespace bowline::engine
