#include "cli/client_format.hpp"

#include <cstdio>
#include <ctime>
#include <map>

#include "cli/output.hpp"
#include "engine/quota.hpp"

namespace bowline::cli {

namespace {

const ojson* member(const ojson& object, const char* key) {
  if (!object.is_object()) return nullptr;
  const auto it = object.find(key);
  if (it == object.end() || it->is_null()) return nullptr;
  return &*it;
}

// The first of `keys` that `object` has (not null).
const ojson* any_member(const ojson& object, std::initializer_list<const char*> keys) {
  for (const auto* key : keys)
    if (const auto* value = member(object, key)) return value;
  return nullptr;
}

bool flag(const ojson* object, std::initializer_list<const char*> keys) {
  if (!object) return false;
  const auto* value = any_member(*object, keys);
  return value && value->is_boolean() && value->get<bool>();
}

std::string dash(const std::string& text) {
  return text.empty() ? "-" : text;
}

std::vector<std::string> lines_of(const ojson& value) {
  std::vector<std::string> lines;
  if (value.is_array()) {
    for (const auto& line : value)
      if (line.is_string()) lines.push_back(line.get<std::string>());
  } else if (value.is_string()) {
    const auto& text = value.get_ref<const std::string&>();
    std::size_t start = 0;
    while (start < text.size()) {
      auto end = text.find('\n', start);
      if (end == std::string::npos) end = text.size();
      lines.push_back(text.substr(start, end - start));
      start = end + 1;
    }
  }
  return lines;
}

}  // namespace

std::string text_of(const ojson& object, const char* key, const std::string& absent) {
  const auto* value = member(object, key);
  if (!value) return absent;
  if (value->is_string()) return value->get<std::string>();
  return value->dump();
}

ReadinessView readiness_of(const ojson& space) {
  ReadinessView view;
  const auto* info = member(space, "info");
  const ojson* readiness = info ? member(*info, "readiness") : nullptr;
  if (!readiness) readiness = member(space, "readiness");
  if (readiness && readiness->is_object()) {
    view.known = true;
    view.booted = flag(readiness, {"booted"});
    view.finished = flag(readiness, {"finished", "ready"});
    view.failed = flag(readiness, {"failed"});
    view.detail = text_of(*readiness, "detail");
    if (const auto* lines = any_member(*readiness, {"lastLines", "consoleTail", "console"}))
      view.last_lines = lines_of(*lines);
  }
  if (view.last_lines.empty() && info)
    if (const auto* lines = any_member(*info, {"consoleTail", "lastLines", "console"}))
      view.last_lines = lines_of(*lines);
  return view;
}

std::string readiness_summary(const ReadinessView& r) {
  if (!r.known) return "unknown";
  if (r.failed) return "cloud-init failed";
  if (r.finished) return "ready";
  if (r.booted) return "booting (cloud-init running)";
  return "not booted";
}

std::string format_time(const ojson& value) {
  if (value.is_string()) return value.get<std::string>();
  if (!value.is_number()) return "";
  const auto seconds = static_cast<std::time_t>(value.get<double>() / 1000);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%d %H:%M:%S UTC", &tm);
  return buffer;
}

std::string format_bytes(std::uint64_t bytes) {
  static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024 && unit < 4) {
    value /= 1024;
    ++unit;
  }
  char buffer[32];
  if (unit == 0)
    std::snprintf(buffer, sizeof buffer, "%llu B", static_cast<unsigned long long>(bytes));
  else
    std::snprintf(buffer, sizeof buffer, "%.1f %s", value, units[unit]);
  return buffer;
}

std::string format_progress(const std::string& kind, const std::string& step, int percent,
                            std::optional<std::uint64_t> bytes,
                            std::optional<std::uint64_t> total) {
  std::string out = kind.empty() ? "" : kind + ": ";
  out += step.empty() ? "waiting" : step;
  if (percent > 0) out += " " + std::to_string(percent) + "%";
  if (bytes && total && *total > 0)
    out += " (" + format_bytes(*bytes) + " of " + format_bytes(*total) + ")";
  else if (bytes && *bytes > 0)
    out += " (" + format_bytes(*bytes) + ")";
  return out;
}

std::string format_spaces(const ojson& spaces) {
  std::vector<std::vector<std::string>> rows{
      {"NAME", "STATE", "IP", "TEMPLATE", "OWNER", "NODE", "ID"}};
  // "address": bowline's choice (bridged) or the node's DHCP lease of a running NAT space;
  // "ip" for a server from before it had addresses in the list.
  const auto address = [](const ojson& s) {
    const auto learned = text_of(s, "address");
    return dash(learned.empty() ? text_of(s, "ip") : learned);
  };
  if (spaces.is_array())
    for (const auto& s : spaces)
      rows.push_back({text_of(s, "name"), dash(text_of(s, "state")), address(s),
                      dash(text_of(s, "template")), dash(text_of(s, "owner")),
                      dash(text_of(s, "node")), text_of(s, "id")});
  return format_table(rows);
}

namespace {

// "running (wants stopped)" while the space is on its way to another state.
std::string state_text(const ojson& space) {
  std::string state = dash(text_of(space, "state"));
  const auto desired = text_of(space, "desiredState");
  // A suspended space wants to run: it does, once anything uses it.
  if (!desired.empty() && desired != state && state != "suspended")
    state += " (wants " + desired + ")";
  return state;
}

// "debian, revision 3"; `info` is the space's info (or an empty object).
std::string template_text(const ojson& space, const ojson& info) {
  std::string revision = text_of(space, "templateRevision");
  if (revision.empty()) revision = text_of(info, "templateRevision");
  std::string tmpl = dash(text_of(space, "template"));
  if (!revision.empty()) tmpl += ", revision " + revision;
  return tmpl;
}

// The template revision the domain was defined from, and whether a newer one waits.
std::string definition_text(const ojson& space, const ojson& info) {
  const auto applied = text_of(space, "appliedRevision");
  const bool pending = flag(&space, {"redefinePending"}) || flag(&info, {"redefinePending"});
  std::string definition;
  if (applied.empty() || applied == "0")
    definition = "not defined yet";
  else
    definition = "from revision " + applied;
  if (pending) definition += "; redefine pending: the template's change applies at the next start";
  return definition;
}

// "environment, account (next start); cloudInit (new spaces only)"; empty when none.
std::string pending_text(const ojson& info) {
  std::string line;
  if (const auto* changes = member(info, "pendingChanges"); changes && changes->is_array()) {
    std::map<std::string, std::string> by_when;
    for (const auto& c : *changes) {
      auto& list = by_when[text_of(c, "applies")];
      list += (list.empty() ? "" : ", ") + text_of(c, "part");
    }
    for (const auto& [when, parts] : by_when)
      line += (line.empty() ? "" : "; ") + parts + " (" + when + ")";
  }
  return line;
}

// "tcp 20000 -> 22, tcp 20001 -> 8080 (forwarded on every address of the server's host)";
// empty when the space has no external ports.
std::string external_ports_text(const ojson& info) {
  const auto* ports = member(info, "externalPorts");
  if (!ports || !ports->is_array() || ports->empty()) return "";
  std::string line;
  bool active = true;
  for (const auto& p : *ports) {
    line += (line.empty() ? "" : ", ") + text_of(p, "protocol") + " " + text_of(p, "hostPort") +
            " -> " + text_of(p, "guestPort");
    active = active && p.value("active", false);
  }
  const auto error = text_of(info, "externalError");
  const auto address = ports->front().is_object() ? text_of(ports->front(), "hostAddress") : "";
  line += !error.empty()    ? " (not forwarded: " + error + ")"
          : !active         ? " (forwarded while the space runs)"
          : address.empty() ? " (forwarded on the server host's addresses)"
                            : " (forwarded on " + address + ")";
  return line;
}

}  // namespace

namespace {

// 90 -> "1m30s", 1800 -> "30m", 7200 -> "2h".
std::string duration_text(long long s) {
  if (s >= 3600 && s % 3600 == 0) return std::to_string(s / 3600) + "h";
  if (s >= 60 && s % 60 == 0) return std::to_string(s / 60) + "m";
  if (s >= 60) return std::to_string(s / 60) + "m" + std::to_string(s % 60) + "s";
  return std::to_string(s) + "s";
}

// "idle for 30m, at 2026-12-02 10:00:00 UTC"; "after 30m idle (idle 4m10s now)"; "off".
std::string suspended_text(const ojson& info) {
  const auto* s = member(info, "suspended");
  if (!s || !s->is_object()) return "";
  return text_of(*s, "reason", "suspended") + ", at " + format_time(s->value("at", ojson())) +
         " (start, console, display, tunnel or ssh resumes it)";
}

std::string idle_text(const ojson& space, const ojson& info) {
  const auto* idle = member(info, "idleSuspend");
  if (!idle || !idle->is_object()) return "";
  const auto after = idle->value("after", 0);
  if (after <= 0) return "off";
  auto text = "after " + duration_text(after) + " idle";
  if (const auto* now = member(*idle, "idleFor"); now && now->is_number())
    text += " (idle " + duration_text(now->get<long long>()) + " now)";
  else if (text_of(space, "state") == "running")
    text += " (in use now)";
  return text;
}

// connect.sshPort in words: "open" only when the guest's sshd sent its identification line.
std::string ssh_port_text(const std::string& state) {
  if (state == "open") return "open (sshd answers)";
  if (state == "no banner")
    return "open (no SSH banner: something accepts the connection but it is not an sshd, or "
           "not yet)";
  return state;
}

}  // namespace

std::string format_space_info(const ojson& space) {
  const auto* info = member(space, "info");
  const ojson empty = ojson::object();
  const ojson& i = info ? *info : empty;
  std::vector<std::vector<std::string>> rows;
  auto row = [&](const std::string& key, const std::string& value) {
    rows.push_back({key + ":", value});
  };
  auto row_unless_empty = [&](const std::string& key, const std::string& value) {
    if (!value.empty()) row(key, value);
  };
  row("name", text_of(space, "name"));
  row("id", text_of(space, "id"));
  row("owner", dash(text_of(space, "owner")));
  if (const auto access = text_of(space, "access"); access.rfind("shared-", 0) == 0)
    row("your role", access.substr(7) + " (shared with you)");
  if (const auto* shares = member(space, "shares"); shares && shares->is_array()) {
    std::string with;
    for (const auto& s : *shares)
      with += (with.empty() ? "" : ", ") + text_of(s, "user") + " (" + text_of(s, "role") + ")";
    row_unless_empty("shared with", with);
  }
  row("state", state_text(space));
  row_unless_empty("error", text_of(space, "error"));
  row_unless_empty("suspended", suspended_text(i));
  row_unless_empty("idle suspend", idle_text(space, i));
  const auto away = text_of(space, "nodeUnreachable");
  row("node", dash(text_of(space, "node")) +
                  (away.empty() ? "" : " (unreachable since the last check: " + away + ")"));
  row("domain", dash(text_of(space, "domain")));
  auto address = text_of(i, "address");
  if (address.empty()) address = text_of(space, "ip");
  row("ip", dash(address));
  row("template", template_text(space, i));
  row("domain definition", definition_text(space, i));
  row_unless_empty("pending", pending_text(i));
  row_unless_empty("external", external_ports_text(i));
  if (const auto* connect = member(i, "connect")) {
    auto ssh = text_of(*connect, "ssh");
    if (const auto key = text_of(*connect, "hostKeyFingerprint"); !key.empty())
      ssh += "  (host key " + key + ")";
    row_unless_empty("ssh", ssh);
    if (const auto port = text_of(*connect, "sshPort"); !port.empty())
      row("port 22", ssh_port_text(port));
    if (const auto host = text_of(*connect, "sshHost"); !host.empty())
      row("ssh config", "ssh " + host + "  (after bowline ssh-config --write)");
    std::string forwards;
    if (const auto* ports = member(*connect, "ports"))
      for (const auto& p : *ports)
        forwards += (forwards.empty() ? "" : "; ") + text_of(p, "forward") +
                    (text_of(p, "name").empty() ? "" : " (" + text_of(p, "name") + ")");
    row_unless_empty("ports", forwards);
    if (const auto* ports = member(*connect, "ports"))
      for (const auto& p : *ports) {
        const auto who = text_of(p, "preview");
        if (who.empty()) continue;
        const auto url = text_of(p, "previewUrl");
        row("preview " + text_of(p, "port"),
            (url.empty() ? text_of(p, "previewNote") : url) + "  (" + who + ")");
      }
  }
  const auto readiness = readiness_of(space);
  std::string ready = readiness_summary(readiness);
  if (!readiness.detail.empty()) ready += ": " + readiness.detail;
  row("readiness", ready);
  for (const auto& [key, value] : stats_rows(space)) row(key, value);
  row_unless_empty("created", format_time(space.value("createdAt", ojson())));
  row_unless_empty("updated", format_time(space.value("updatedAt", ojson())));

  auto out = format_table(rows);
  if (!readiness.last_lines.empty()) {
    out += "console (last " + std::to_string(readiness.last_lines.size()) + " lines):\n";
    for (const auto& line : readiness.last_lines) out += "  " + line + "\n";
  }
  return out;
}

std::string format_templates(const ojson& templates) {
  std::vector<std::vector<std::string>> rows{{"NAME", "REVISION", "UPDATED"}};
  if (templates.is_array())
    for (const auto& t : templates) {
      auto updated = format_time(t.value("updatedAt", ojson()));
      rows.push_back({text_of(t, "name"), dash(text_of(t, "revision")), dash(updated)});
    }
  return format_table(rows);
}

namespace {

std::string joined(const ojson& user, const char* key) {
  std::string out;
  if (const auto* list = member(user, key); list && list->is_array())
    for (const auto& item : *list)
      out += (out.empty() ? "" : ",") + (item.is_string() ? item.get<std::string>() : item.dump());
  return out;
}

std::size_t count(const ojson& user, const char* key) {
  const auto* list = member(user, key);
  return list && list->is_array() ? list->size() : 0;
}

}  // namespace

std::string format_users(const ojson& users) {
  std::vector<std::vector<std::string>> rows{
      {"USERNAME", "EMAIL", "TIMEZONE", "PERMISSIONS", "SSH KEYS", "STATE"}};
  if (users.is_array())
    for (const auto& u : users) {
      const auto* disabled = member(u, "disabled");
      rows.push_back(
          {text_of(u, "username"), dash(text_of(u, "email")), dash(text_of(u, "timezone")),
           dash(joined(u, "permissions")), std::to_string(count(u, "sshKeys")),
           disabled && disabled->is_boolean() && disabled->get<bool>() ? "disabled" : "enabled"});
    }
  return format_table(rows);
}

std::string format_quota(const ojson& user) {
  const auto* quota = member(user, "quota");
  const auto* usage = member(user, "usage");
  if (!quota || !usage || !quota->is_object() || !usage->is_object()) return "";
  struct Measure {
    const char* key;
    const char* label;
    bool bytes;
  };
  static const Measure measures[] = {{"spaces", "spaces", false},
                                     {"cpus", "vCPUs", false},
                                     {"memory", "memory", true},
                                     {"disk", "disk", true}};
  const auto text = [](const ojson& value, bool bytes) {
    if (!value.is_number_integer()) return std::string("?");
    const auto n = value.get<std::int64_t>();
    return bytes ? engine::format_quota_bytes(n) : std::to_string(n);
  };
  std::vector<std::vector<std::string>> rows;
  for (const auto& m : measures) {
    const auto* limit = member(*quota, m.key);
    const auto used = text(usage->value(m.key, ojson(0)), m.bytes);
    const ojson* value = limit ? member(*limit, "limit") : nullptr;
    const bool fallback = limit && text_of(*limit, "source") == "default";
    std::string line = value ? used + " of " + text(*value, m.bytes) : used + ", no limit";
    if (fallback) line += " (server default)";
    rows.push_back({std::string("  ") + m.label, line});
  }
  return "quota:\n" + format_table(rows);
}

std::string format_user(const ojson& user) {
  std::vector<std::vector<std::string>> rows{
      {"username:", text_of(user, "username")},
      {"email:", dash(text_of(user, "email"))},
      {"timezone:", dash(text_of(user, "timezone"))},
      {"permissions:", dash(joined(user, "permissions"))},
  };
  if (const auto* has = member(user, "hasServicePassword"); has && has->is_boolean())
    rows.push_back({"service password:", has->get<bool>() ? "set" : "not set"});
  if (const auto* disabled = member(user, "disabled"); disabled && disabled->is_boolean())
    rows.push_back({"state:", disabled->get<bool>() ? "disabled" : "enabled"});
  auto out = format_table(rows);
  const auto* keys = member(user, "sshKeys");
  if (keys && keys->is_array() && !keys->empty()) {
    out += "ssh keys:\n";
    for (const auto& key : *keys)
      out += "  " + (key.is_string() ? key.get<std::string>() : key.dump()) + "\n";
  } else {
    out += "ssh keys: none\n";
  }
  return out + format_quota(user);
}

std::string format_node_report(const ojson& node) {
  std::string out;
  const auto name = dash(text_of(node, "name"));
  std::string where;
  if (const auto uri = text_of(node, "uri"); !uri.empty()) where = uri;
  if (const auto type = text_of(node, "domainType"); !type.empty()) {
    where += (where.empty() ? "" : ", ") + std::string("domain type ") + type;
    if (const auto setting = text_of(node, "domainTypeSetting");
        !setting.empty() && setting != type)
      where += " (" + setting + ")";
  }
  out += "node " + name + (where.empty() ? "" : " (" + where + ")") + "\n";
  if (const auto* warnings = member(node, "warnings"); warnings && warnings->is_array())
    for (const auto& w : *warnings)
      if (w.is_string()) out += "warning: " + w.get<std::string>() + "\n";
  std::vector<std::string> failed;
  if (const auto* checks = member(node, "checks"); checks && checks->is_array()) {
    for (const auto& c : *checks) {
      const auto status = text_of(c, "status", "missing");
      const bool required = !c.contains("required") || c["required"] == true;
      std::string label = status;
      label.resize(8, ' ');
      std::string line = label + text_of(c, "title", text_of(c, "name"));
      if (const auto detail = text_of(c, "detail"); !detail.empty()) line += ": " + detail;
      if (status != "ok" && !required) line += " (optional)";
      out += line + "\n";
      if (const auto fix = text_of(c, "fix"); !fix.empty() && status != "ok")
        out += "        fix: " + fix + "\n";
      if (status != "ok" && required) failed.push_back(text_of(c, "name"));
    }
  }
  std::string runtimes;
  if (const auto* list = member(node, "runtimes"); list && list->is_array())
    for (const auto& r : *list) runtimes += (runtimes.empty() ? "" : ", ") + r.get<std::string>();
  if (!runtimes.empty()) {
    out += "ready: runtimes " + runtimes + "\n";
  } else {
    std::string names;
    for (const auto& f : failed) names += (names.empty() ? "" : ", ") + f;
    out += "not ready: " + std::to_string(failed.size()) + " required check" +
           (failed.size() == 1 ? "" : "s") + " failed" + (names.empty() ? "" : " (" + names + ")") +
           "\n";
  }
  return out;
}

std::string format_diagnostics(const ojson& diagnostics, const std::string& file) {
  std::string out;
  if (!diagnostics.is_array()) return out;
  for (const auto& d : diagnostics) {
    std::string line = file;
    const auto row = text_of(d, "line"), column = text_of(d, "column");
    if (!row.empty() && row != "0") line += ":" + row + ":" + (column.empty() ? "1" : column);
    line += ": " + text_of(d, "severity", "error") + ": ";
    if (const auto path = text_of(d, "path"); !path.empty()) line += path + ": ";
    line += text_of(d, "message");
    out += line + "\n";
  }
  return out;
}

}  // namespace bowline::cli
