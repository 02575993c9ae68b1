// How the client verbs print the server's JSON as text: pure functions of the JSON (docs/api.md
// shapes), so tests check them on fixed samples without a server. `--output json` prints the
// server's JSON itself and never comes here.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace bowline::cli {

using ojson = nlohmann::ordered_json;

// A field as text: strings as they are, numbers and booleans as JSON writes them, null or
// missing as `absent`.
std::string text_of(const ojson& object, const char* key, const std::string& absent = "");

// What `space info` knows about the guest's readiness (the space's `info.readiness`).
struct ReadinessView {
  bool known = false;  // the server reported readiness at all
  bool booted = false;
  bool finished = false;  // cloud-init's final line seen
  bool failed = false;    // cloud-init reported errors
  std::string detail;
  std::vector<std::string> last_lines;  // the console's tail
};
ReadinessView readiness_of(const ojson& space);
// "ready", "cloud-init failed", "booting (cloud-init running)", "not booted", "unknown".
std::string readiness_summary(const ReadinessView& readiness);

std::string format_spaces(
    const ojson& spaces);  // GET /spaces: NAME STATE IP TEMPLATE OWNER NODE ID
std::string format_space_info(const ojson& space);  // GET /spaces/{id}: one field a line
// A running space's "stats" as space info's rows (cpu, memory, disk, network); none without.
std::vector<std::pair<std::string, std::string>> stats_rows(const ojson& space);
// GET /spaces as space top's table: the busiest first, NAME OWNER NODE STATE CPU% MEMORY
// DISK READ DISK WRITE NET IN NET OUT.
std::string format_top(const ojson& spaces);
std::string format_templates(const ojson& templates);  // NAME REVISION UPDATED
std::string format_users(const ojson& users);  // USERNAME EMAIL TIMEZONE PERMISSIONS KEYS STATE
std::string format_user(const ojson& user);    // one field a line, then its quota
// A user's use against their quota ("memory  6 GiB of 8 GiB"), one limit a line, "" when the
// server sent none.
std::string format_quota(const ojson& user);
std::string format_node_report(const ojson& node);  // a node check / GET /nodes entry

// "2024-05-01 12:00:00 UTC" from Unix milliseconds (a string is kept as it is).
std::string format_time(const ojson& value);
// "512.0 MiB", "1.2 GiB".
std::string format_bytes(std::uint64_t bytes);

// The progress line of a waiting verb: "create: downloading image 41% (120.0 MiB of 300.0 MiB)".
std::string format_progress(const std::string& kind, const std::string& step, int percent,
                            std::optional<std::uint64_t> bytes = std::nullopt,
                            std::optional<std::uint64_t> total = std::nullopt);

// 422 template diagnostics as FILE:LINE:COL: SEVERITY: PATH: MESSAGE lines.
std::string format_diagnostics(const ojson& diagnostics, const std::string& file);

}  // namespace bowline::cli
