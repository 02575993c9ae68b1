// What spaces use as text: space info's cpu/memory/disk/network lines and space top's table,
// from the "stats" object the server adds to a running space (docs/api.md).
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "cli/client_format.hpp"
#include "cli/output.hpp"

namespace bowline::cli {

namespace {

std::optional<double> figure(const ojson& stats, const char* key) {
  const auto it = stats.find(key);
  if (it == stats.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

std::string bytes_text(const std::optional<double>& value) {
  if (!value) return "-";
  return format_bytes(static_cast<std::uint64_t>(std::llround(std::max(0.0, *value))));
}

std::string rate_text(const std::optional<double>& value) {
  return value ? bytes_text(value) + "/s" : "-";
}

std::string fixed(const std::optional<double>& value, const char* format) {
  if (!value) return "-";
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, format, *value);
  return buffer;
}

std::string or_dash(std::string text) {
  return text.empty() ? "-" : text;
}

const ojson* stats_of(const ojson& space) {
  const auto it = space.find("stats");
  return it != space.end() && it->is_object() ? &*it : nullptr;
}

// "40.2 MiB / 229.5 MiB": used of what the guest has.
std::string memory_text(const ojson& stats) {
  return bytes_text(figure(stats, "memoryUsedBytes")) + " / " +
         bytes_text(figure(stats, "memoryAvailableBytes"));
}

// Running ones first, the busiest on top; then by name.
bool busier(const ojson& a, const ojson& b) {
  const auto cpu = [](const ojson& s) {
    const auto* stats = stats_of(s);
    return stats ? figure(*stats, "cpuPercent").value_or(-1) : -2.0;
  };
  if (cpu(a) != cpu(b)) return cpu(a) > cpu(b);
  return text_of(a, "name") < text_of(b, "name");
}

}  // namespace

std::vector<std::pair<std::string, std::string>> stats_rows(const ojson& space) {
  const auto* found = stats_of(space);
  if (!found) return {};
  const auto& s = *found;
  bool known = false;
  for (const auto& [key, value] : s.items()) known = known || (key != "time" && value.is_number());
  if (!known) return {{"usage", "not reported by its node"}};
  const auto vcpus = text_of(s, "vcpus");
  std::string cpu = fixed(figure(s, "cpuPercent"), "%.1f%%");
  if (!vcpus.empty()) cpu += " of " + vcpus + (vcpus == "1" ? " vCPU" : " vCPUs");
  std::string memory = bytes_text(figure(s, "memoryUsedBytes")) + " used of " +
                       bytes_text(figure(s, "memoryAvailableBytes"));
  if (const auto rss = figure(s, "memoryRssBytes")) memory += " (host: " + bytes_text(rss) + ")";
  const auto disk = "read " + rate_text(figure(s, "diskReadBytesPerSecond")) + " (" +
                    fixed(figure(s, "diskReadsPerSecond"), "%.1f") + " IOPS), write " +
                    rate_text(figure(s, "diskWriteBytesPerSecond")) + " (" +
                    fixed(figure(s, "diskWritesPerSecond"), "%.1f") + " IOPS)";
  const auto network = "in " + rate_text(figure(s, "networkReceiveBytesPerSecond")) + ", out " +
                       rate_text(figure(s, "networkTransmitBytesPerSecond"));
  return {{"cpu", cpu}, {"memory", memory}, {"disk", disk}, {"network", network}};
}

std::string format_top(const ojson& spaces) {
  std::vector<const ojson*> sorted;
  if (spaces.is_array())
    for (const auto& s : spaces) sorted.push_back(&s);
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const ojson* a, const ojson* b) { return busier(*a, *b); });
  std::vector<std::vector<std::string>> rows{{"NAME", "OWNER", "NODE", "STATE", "CPU%", "MEMORY",
                                              "DISK READ", "DISK WRITE", "NET IN", "NET OUT"}};
  for (const auto* space : sorted) {
    const auto& s = *space;
    std::vector<std::string> row{text_of(s, "name"), or_dash(text_of(s, "owner")),
                                 or_dash(text_of(s, "node")), or_dash(text_of(s, "state"))};
    if (const auto* stats = stats_of(s)) {
      row.push_back(fixed(figure(*stats, "cpuPercent"), "%.1f"));
      row.push_back(memory_text(*stats));
      row.push_back(rate_text(figure(*stats, "diskReadBytesPerSecond")));
      row.push_back(rate_text(figure(*stats, "diskWriteBytesPerSecond")));
      row.push_back(rate_text(figure(*stats, "networkReceiveBytesPerSecond")));
      row.push_back(rate_text(figure(*stats, "networkTransmitBytesPerSecond")));
    } else {
      row.insert(row.end(), 6, "-");
    }
    rows.push_back(std::move(row));
  }
  return format_table(rows);
}

}  // namespace bowline::cli
