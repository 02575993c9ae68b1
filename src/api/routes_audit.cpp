// The audit log's two sides (docs/audit.md): what each request that changes state or opens a
// socket records, and GET /api/v1/audit, the log for admins, filtered by user, space and age.
#include <charconv>
#include <ctime>

#include "api/api.hpp"
#include "api/audit_trail.hpp"
#include "util/duration.hpp"
#include "util/strings.hpp"

namespace bowline::api {
namespace {

// "1765000000000" (unix ms), "24h" / "7d" (that long ago) or "2026-12-06T01:00:00Z" (UTC).
std::int64_t since_of(const std::string& text, std::int64_t now) {
  std::int64_t ms = 0;
  const auto* end = text.data() + text.size();
  if (auto [p, ec] = std::from_chars(text.data(), end, ms); ec == std::errc() && p == end)
    return ms;
  if (auto ago = util::parse_duration(text)) return now - ago->count() * 1000;
  std::tm tm{};
  const char* rest = ::strptime(text.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
  if (rest && (std::string_view(rest) == "Z" || std::string_view(rest).empty()))
    return static_cast<std::int64_t>(::timegm(&tm)) * 1000;
  throw HttpError(400, "since: \"" + text +
                           "\" is not a time (unix ms, an age such as 24h or 7d, or "
                           "2026-12-06T01:00:00Z)");
}

std::size_t limit_of(const std::string& text) {
  std::size_t n = 0;
  const auto* end = text.data() + text.size();
  if (auto [p, ec] = std::from_chars(text.data(), end, n);
      ec != std::errc() || p != end || n < 1 || n > 100'000)
    throw HttpError(400, "limit: \"" + text + "\" is not a number from 1 to 100000");
  return n;
}

// The space a request was about: its path's, or the one a create made.
std::optional<std::string> space_of(const Request& request, const Response& response) {
  if (request.path.rfind("/api/v1/spaces/", 0) == 0)
    if (auto it = request.params.find("id"); it != request.params.end()) return it->second;
  if (request.method == "POST" && request.path == "/api/v1/spaces" && response.status / 100 == 2) {
    const auto body = nlohmann::json::parse(response.body, nullptr, false);
    if (body.is_object() && body.contains("space") && body["space"].is_object() &&
        body["space"].contains("id") && body["space"]["id"].is_string())
      return body["space"]["id"].get<std::string>();
  }
  return std::nullopt;
}

// A login names the user it tries in its body (and nothing else of the body is kept).
std::string attempted_username(const Request& request) {
  if (request.method != "POST" || request.path != "/api/v1/session") return "";
  const auto body = nlohmann::json::parse(request.body, nullptr, false);
  if (body.is_object() && body.contains("username") && body["username"].is_string())
    return body["username"].get<std::string>().substr(0, 200);
  return "";
}

// The agent a request says it comes from (X-Bowline-Agent: "mcp/get_space"), kept short and
// printable: it is the caller's word, recorded as such.
std::string agent_of(const Request& request) {
  std::string agent;
  for (const char c : request.header("x-bowline-agent").substr(0, 64))
    if (c > ' ' && c < 0x7f) agent += c;
  return agent;
}

}  // namespace

void Api::audit(const Request& request, const Routed& routed, Response& response) {
  const bool changes =
      request.method != "GET" && request.method != "HEAD" && request.method != "OPTIONS";
  // An agent's calls are all recorded, reads too: what it looked at is part of what it did.
  const auto agent = agent_of(request);
  if (!audit_->enabled() || (!changes && !routed.socket && agent.empty())) return;
  store::AuditEntry entry;
  if (routed.user) {
    entry.user_id = routed.user->id;
    entry.username = routed.user->username;
  } else {
    entry.username = attempted_username(request);
  }
  entry.peer = client_address(request, options_.sessions.trusted_proxies);
  // The path only: a query string or a body may carry secrets.
  entry.action = request.method + " " + request.path + (agent.empty() ? "" : " [" + agent + "]");
  if (!response.later) {
    entry.space_id = space_of(request, response);
    entry.status = response.upgrade ? 101 : response.status;
    audit_->record(std::move(entry));
    return;
  }
  // A deferred answer is recorded when it is given (record() never throws, as run must not).
  auto saved = std::make_shared<Request>(request);
  response.later->run = [this, entry, saved, run = std::move(response.later->run)]() mutable {
    auto answer = run();
    entry.space_id = space_of(*saved, answer);
    entry.status = answer.upgrade ? 101 : answer.status;
    audit_->record(std::move(entry));
    return answer;
  };
}

// A preview connection is a socket into a space: recorded when it opens (101) or is refused;
// the redirects of its login are not. The action names the preview's host.
void Api::audit_preview(const Request& request, const std::optional<store::User>& user,
                        const Response& response, const std::string& space_id) {
  if (!audit_->enabled() || (!response.relay && response.status < 400)) return;
  store::AuditEntry entry;
  if (user) {
    entry.user_id = user->id;
    entry.username = user->username;
  }
  entry.peer = client_address(request, options_.sessions.trusted_proxies);
  entry.action =
      request.method + " preview " + util::to_lower(request.header("host")) + request.path;
  entry.status = response.relay ? 101 : response.status;
  if (!space_id.empty()) entry.space_id = space_id;
  audit_->record(std::move(entry));
}

void Api::add_audit_routes() {
  router_.add("GET", "/api/v1/audit", Access::Admin, [this](const Caller&, const Request& request) {
    store::AuditFilter filter;
    if (auto it = request.query.find("user"); it != request.query.end())
      filter.username = it->second;
    // By id: names are per owner and come back after a delete, ids never (the CLI turns a
    // live space's name into its id).
    if (auto it = request.query.find("space"); it != request.query.end())
      filter.space_id = it->second;
    const auto now = (options_.clock ? *options_.clock : system_clock_).now_unix_ms();
    if (auto it = request.query.find("since"); it != request.query.end())
      filter.since = since_of(it->second, now);
    if (auto it = request.query.find("limit"); it != request.query.end())
      filter.limit = limit_of(it->second);
    auto out = nlohmann::json::array();
    for (const auto& entry : store_.audit().list(filter)) out.push_back(audit_json(entry));
    return Response::json(200, out);
  });
}

}  // namespace bowline::api
