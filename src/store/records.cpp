#include "store/records.hpp"

#include <array>
#include <utility>

namespace bowline::store {

namespace {

template <class Enum, std::size_t N>
std::optional<Enum> parse(const std::array<std::pair<Enum, const char*>, N>& names,
                          std::string_view text) {
  for (const auto& [value, name] : names)
    if (text == name) return value;
  return std::nullopt;
}

template <class Enum, std::size_t N>
const char* name_of(const std::array<std::pair<Enum, const char*>, N>& names, Enum value) {
  for (const auto& [candidate, name] : names)
    if (candidate == value) return name;
  return "?";
}

constexpr std::array<std::pair<Permission, const char*>, 5> kPermissions{{
    {Permission::Admin, "admin"},
    {Permission::UseVnc, "use-vnc"},
    {Permission::UseWebTerminal, "use-web-terminal"},
    {Permission::UseSsh, "use-ssh"},
    {Permission::UsePorts, "use-ports"},
}};

constexpr std::array<std::pair<SpaceState, const char*>, 10> kSpaceStates{{
    {SpaceState::Pending, "pending"},
    {SpaceState::Creating, "creating"},
    {SpaceState::Running, "running"},
    {SpaceState::Stopping, "stopping"},
    {SpaceState::Stopped, "stopped"},
    {SpaceState::Starting, "starting"},
    {SpaceState::Deleting, "deleting"},
    {SpaceState::Error, "error"},
    {SpaceState::Suspending, "suspending"},
    {SpaceState::Suspended, "suspended"},
}};

constexpr std::array<std::pair<DesiredState, const char*>, 2> kDesiredStates{{
    {DesiredState::Running, "running"},
    {DesiredState::Stopped, "stopped"},
}};

constexpr std::array<std::pair<OperationState, const char*>, 4> kOperationStates{{
    {OperationState::Pending, "pending"},
    {OperationState::Running, "running"},
    {OperationState::Succeeded, "succeeded"},
    {OperationState::Failed, "failed"},
}};

}  // namespace

const char* to_string(Permission value) {
  return name_of(kPermissions, value);
}
std::optional<Permission> parse_permission(std::string_view text) {
  return parse(kPermissions, text);
}
std::string permission_names() {
  std::string out;
  for (const auto& [value, name] : kPermissions)
    out += (out.empty() ? "" : ", ") + std::string(name);
  return out;
}

const char* to_string(SpaceState value) {
  return name_of(kSpaceStates, value);
}
std::optional<SpaceState> parse_space_state(std::string_view text) {
  return parse(kSpaceStates, text);
}

bool operation_owns(SpaceState state) {
  return state == SpaceState::Pending || state == SpaceState::Creating ||
         state == SpaceState::Starting || state == SpaceState::Stopping ||
         state == SpaceState::Deleting || state == SpaceState::Suspending;
}

bool holds_node_resources(SpaceState state) {
  return state == SpaceState::Running || state == SpaceState::Creating ||
         state == SpaceState::Starting || state == SpaceState::Stopping ||
         // Its resume takes them again at once: nobody else may have them meanwhile.
         state == SpaceState::Suspending || state == SpaceState::Suspended;
}

const char* to_string(DesiredState value) {
  return name_of(kDesiredStates, value);
}
std::optional<DesiredState> parse_desired_state(std::string_view text) {
  return parse(kDesiredStates, text);
}

const char* to_string(OperationState value) {
  return name_of(kOperationStates, value);
}
std::optional<OperationState> parse_operation_state(std::string_view text) {
  return parse(kOperationStates, text);
}

std::string format_ipv4(std::uint32_t ip) {
  return std::to_string(ip >> 24) + "." + std::to_string((ip >> 16) & 255) + "." +
         std::to_string((ip >> 8) & 255) + "." + std::to_string(ip & 255);
}

}  // namespace bowline::store
