#include "engine/quota.hpp"

#include <cstdio>
#include <limits>

#include "spec/quantity.hpp"
#include "util/strings.hpp"

namespace bowline::engine {

namespace {

// Saturating: a user's sum never wraps into a negative that would pass every check.
std::int64_t add(std::int64_t a, std::int64_t b) {
  if (b > 0 && a > std::numeric_limits<std::int64_t>::max() - b)
    return std::numeric_limits<std::int64_t>::max();
  return a + b;
}

std::int64_t clamp(std::uint64_t value) {
  const auto max = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  return static_cast<std::int64_t>(value > max ? max : value);
}

Limit limit_of(const std::optional<std::int64_t>& user,
               const std::optional<std::int64_t>& fallback) {
  const auto unlimited_if_negative = [](std::int64_t v) {
    return v < 0 ? std::nullopt : std::optional<std::int64_t>(v);
  };
  if (user) return {unlimited_if_negative(*user), LimitSource::User};
  return {fallback ? unlimited_if_negative(*fallback) : std::nullopt, LimitSource::Default};
}

struct Measure {
  const char* name;     // as the message says it: "memory"
  const char* setting;  // the default's key: "server.quota.memory"
  std::int64_t Usage::*field;
  Limit Limits::*limit;
  bool bytes;
};

constexpr Measure kMeasures[] = {
    {"spaces", "server.quota.spaces", &Usage::spaces, &Limits::spaces, false},
    {"vCPUs", "server.quota.cpus", &Usage::cpus, &Limits::cpus, false},
    {"memory", "server.quota.memory", &Usage::memory, &Limits::memory, true},
    {"disk", "server.quota.disk", &Usage::disk, &Limits::disk, true},
};

}  // namespace

Usage& Usage::operator+=(const Usage& other) {
  spaces = add(spaces, other.spaces);
  cpus = add(cpus, other.cpus);
  memory = add(memory, other.memory);
  disk = add(disk, other.disk);
  return *this;
}

Usage usage_of(const spec::Spec& spec) {
  return {1, static_cast<std::int64_t>(spec.sizing.vcpus()), clamp(spec.sizing.memory_bytes),
          clamp(spec.disk_bytes.value_or(0))};
}

const char* to_string(LimitSource source) {
  return source == LimitSource::User ? "user" : "default";
}

Limits effective_limits(const store::Quota& user, const store::Quota& defaults) {
  return {limit_of(user.spaces, defaults.spaces), limit_of(user.cpus, defaults.cpus),
          limit_of(user.memory, defaults.memory), limit_of(user.disk, defaults.disk)};
}

std::optional<std::string> quota_refusal(const std::string& username, const Usage& used,
                                         const Usage& asked, const Limits& limits) {
  std::string out;
  for (const auto& m : kMeasures) {
    const auto& limit = limits.*(m.limit);
    const auto want = asked.*(m.field);
    if (!limit.value || want <= 0 || add(used.*(m.field), want) <= *limit.value) continue;
    const auto text = [&](std::int64_t v) {
      return m.bytes ? format_quota_bytes(v) : std::to_string(v);
    };
    // Where the limit comes from, so the reader knows what to change.
    const std::string from = limit.source == LimitSource::User
                                 ? "set by user set-quota"
                                 : std::string("the server's default, ") + m.setting;
    out += (out.empty() ? "quota: " : "; ") + std::string(m.name) + " " + text(used.*(m.field)) +
           " used + " + text(want) + " asked exceeds " + username + "'s " + text(*limit.value) +
           " (" + from + ")";
  }
  if (out.empty()) return std::nullopt;
  return out;
}

std::variant<std::int64_t, std::string> parse_limit(std::string_view text, bool bytes) {
  const auto trimmed = util::trim(std::string(text));
  if (util::to_lower(trimmed) == "unlimited") return std::int64_t{-1};
  if (bytes) {
    const auto size = spec::parse_size(trimmed);
    if (!size.ok()) return size.error() + ", or unlimited";
    return clamp(size.value());
  }
  const bool digits = !trimmed.empty() && trimmed.size() <= 9 &&
                      trimmed.find_first_not_of("0123456789") == std::string::npos;
  if (!digits) return "\"" + trimmed + "\" is not a whole number (0 to 999999999) or unlimited";
  return std::int64_t{std::stoll(trimmed)};
}

std::string format_quota_bytes(std::int64_t bytes) {
  static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (bytes < 1024) return std::to_string(bytes) + " B";
  int unit = 0;
  double value = static_cast<double>(bytes);
  std::int64_t whole = bytes;
  bool exact = true;
  while (value >= 1024 && unit < 6) {
    value /= 1024;
    exact = exact && whole % 1024 == 0;
    whole /= 1024;
    ++unit;
  }
  if (exact) return std::to_string(whole) + " " + units[unit];
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1f %s", value, units[unit]);
  return buffer;
}

}  // namespace bowline::engine
