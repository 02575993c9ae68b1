// The bowline_space_* series of /metrics (Prometheus text format 0.0.4): one series per
// running space and figure, labelled space, owner and node; what the node counts stays a
// counter (*_total, from the counters last read, not from rates), memory is a gauge.
#include <charconv>
#include <cmath>

#include "api/space_stats.hpp"

namespace bowline::api {

namespace {

using engine::SpaceStats;

// A label value: backslash, double quote and newline escaped, as the format wants.
void append_label(std::string& out, const char* name, const std::string& value) {
  out += name;
  out += "=\"";
  for (const char c : value) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '"')
      out += "\\\"";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  out += '"';
}

void append_number(std::string& out, double value) {
  char buffer[32];
  const auto end = std::to_chars(buffer, buffer + sizeof buffer, value).ptr;
  out.append(buffer, end);
}

// A figure of a space, or nullopt when its node did not report it.
using Reader = std::optional<double> (*)(const SpaceStats&);

std::optional<double> counter(const std::optional<std::uint64_t>& value, double scale = 1) {
  if (!value) return std::nullopt;
  return static_cast<double>(*value) / scale;
}

std::optional<double> gauge(float value) {
  if (std::isnan(value)) return std::nullopt;
  return std::round(static_cast<double>(value));
}

struct Series {
  const char* name;
  const char* type;
  const char* help;
  Reader read;
};

const Series kSeries[] = {
    {"bowline_space_cpu_seconds_total", "counter",
     "CPU time the space's machine used since it started (all vCPUs and its own threads).",
     [](const SpaceStats& s) { return counter(s.totals.cpu_ns, 1e9); }},
    {"bowline_space_vcpus", "gauge", "vCPUs the space's machine runs with.",
     [](const SpaceStats& s) {
       return s.totals.vcpus ? std::optional<double>(s.totals.vcpus) : std::nullopt;
     }},
    {"bowline_space_memory_used_bytes", "gauge",
     "Memory the guest uses, without its page cache (from its balloon driver).",
     [](const SpaceStats& s) { return gauge(s.latest->memory_used); }},
    {"bowline_space_memory_available_bytes", "gauge", "Memory the guest has in all.",
     [](const SpaceStats& s) { return gauge(s.latest->memory_available); }},
    {"bowline_space_memory_rss_bytes", "gauge", "Host memory resident for the space's machine.",
     [](const SpaceStats& s) { return gauge(s.latest->memory_rss); }},
    {"bowline_space_disk_read_bytes_total", "counter", "Bytes read from the space's disks.",
     [](const SpaceStats& s) { return counter(s.totals.disk_read_bytes); }},
    {"bowline_space_disk_written_bytes_total", "counter", "Bytes written to the space's disks.",
     [](const SpaceStats& s) { return counter(s.totals.disk_write_bytes); }},
    {"bowline_space_disk_reads_total", "counter", "Read requests to the space's disks.",
     [](const SpaceStats& s) { return counter(s.totals.disk_reads); }},
    {"bowline_space_disk_writes_total", "counter", "Write requests to the space's disks.",
     [](const SpaceStats& s) { return counter(s.totals.disk_writes); }},
    {"bowline_space_network_receive_bytes_total", "counter",
     "Bytes the space's guest received on its NICs.",
     [](const SpaceStats& s) { return counter(s.totals.net_rx_bytes); }},
    {"bowline_space_network_transmit_bytes_total", "counter",
     "Bytes the space's guest sent on its NICs.",
     [](const SpaceStats& s) { return counter(s.totals.net_tx_bytes); }},
};

void append_family(std::string& out, const char* name, const char* type, const char* help) {
  out += "# HELP ";
  out += name;
  out += ' ';
  out += help;
  out += "\n# TYPE ";
  out += name;
  out += ' ';
  out += type;
  out += '\n';
}

void append_cost(std::string& out, const engine::SamplerCost& cost) {
  const std::pair<const Series, double> figures[] = {
      {{"bowline_stats_rounds_total", "counter", "Rounds of the stats sampler.", nullptr},
       static_cast<double>(cost.rounds)},
      {{"bowline_stats_round_cpu_seconds_total", "counter",
        "CPU time of the stats sampler's rounds in this process.", nullptr},
       cost.cpu_seconds},
      {{"bowline_stats_round_seconds_total", "counter",
        "Time the stats sampler's rounds took, waiting for the nodes included.", nullptr},
       cost.wall_seconds},
      {{"bowline_stats_spaces", "gauge", "Spaces whose statistics the sampler keeps.", nullptr},
       static_cast<double>(cost.spaces)},
      {{"bowline_stats_history_bytes", "gauge",
        "Memory the sampler's histories hold at most, all spaces together.", nullptr},
       static_cast<double>(cost.bytes)},
  };
  for (const auto& [series, value] : figures) {
    append_family(out, series.name, series.type, series.help);
    out += series.name;
    out += ' ';
    append_number(out, value);
    out += '\n';
  }
}

}  // namespace

std::string space_metrics_text(const std::vector<SpaceStats>& spaces,
                               const engine::SamplerCost& cost) {
  std::string out;
  for (const auto& series : kSeries) {
    append_family(out, series.name, series.type, series.help);
    for (const auto& space : spaces) {
      if (!space.running || !space.latest) continue;
      const auto value = series.read(space);
      if (!value) continue;
      out += series.name;
      out += '{';
      append_label(out, "space", space.space_name);
      out += ',';
      append_label(out, "owner", space.owner);
      out += ',';
      append_label(out, "node", space.node);
      out += "} ";
      append_number(out, *value);
      out += '\n';
    }
  }
  append_cost(out, cost);
  return out;
}

}  // namespace bowline::api
