// Quotas: what a user may hold (spaces, vCPUs, memory, disk) and the refusal of a create or a
// claim that would take them over. Pure counting and checking, no store and no node: the
// engine (engine_quota.cpp) feeds it each space's spec and runs the check in the transaction
// that writes the space, so two creates never both pass on the same room.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "spec/spec.hpp"
#include "store/records.hpp"

namespace bowline::engine {

// What a user holds, or what one space asks for. Memory and disk in bytes.
struct Usage {
  std::int64_t spaces = 0;
  std::int64_t cpus = 0;
  std::int64_t memory = 0;
  std::int64_t disk = 0;
  Usage& operator+=(const Usage& other);
  bool operator==(const Usage&) const = default;
};

// What one space counts for: its resolved sizing (vCPUs, memory) and its disk as the template
// sizes it. A template without a disk size keeps the image's size, which is not known before
// the image is there: such a disk counts 0.
Usage usage_of(const spec::Spec& spec);

enum class LimitSource { User, Default };   // set for the user, or the server's default
const char* to_string(LimitSource source);  // user | default

struct Limit {
  std::optional<std::int64_t> value;  // nullopt: no limit
  LimitSource source = LimitSource::Default;
};

struct Limits {
  Limit spaces, cpus, memory, disk;
};

// The limits in effect: the user's own where set, else the server's defaults. In both, a
// negative value is no limit, and an unset default is no limit too.
Limits effective_limits(const store::Quota& user, const store::Quota& defaults);

// Why `asked` on top of `used` goes over `limits` (every limit it exceeds, "; " between), e.g.
// "quota: memory 6 GiB used + 4 GiB asked exceeds alice's 8 GiB (set by user set-quota)";
// nullopt when it fits.
std::optional<std::string> quota_refusal(const std::string& username, const Usage& used,
                                         const Usage& asked, const Limits& limits);

// A limit as people write it (settings, the API, the CLI): "unlimited" (-1), a whole number for
// spaces and vCPUs, a size for memory and disk (8G = 8Gi = 8 GiB; a bare number is bytes).
// The value, or what is wrong in words.
std::variant<std::int64_t, std::string> parse_limit(std::string_view text, bool bytes);

// 8589934592 -> "8 GiB", 1610612736 -> "1.5 GiB", 512 -> "512 B".
std::string format_quota_bytes(std::int64_t bytes);

}  // namespace bowline::engine
