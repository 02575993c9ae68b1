#include "engine/readiness.hpp"

#include <filesystem>
#include <fstream>

#include "util/strings.hpp"

namespace bowline::engine {

Readiness parse_readiness(const std::string& text, std::size_t tail_lines) {
  Readiness r;
  r.booted = !text.empty();
  std::vector<std::string> lines;
  for (auto& line : util::split(text, '\n')) {
    std::string clean;
    for (char c : line)
      if (c != '\r' && (static_cast<unsigned char>(c) >= 0x20 || c == '\t')) clean += c;
    if (clean.empty()) continue;
    // cloud-init: "Cloud-init v. 22.4.2 finished at <date>. Datasource DataSourceNoCloud ..."
    if (clean.find("Cloud-init v. ") != std::string::npos &&
        clean.find(" finished at ") != std::string::npos) {
      r.finished = true;
      r.detail = clean;
    }
    // cloud-init's own failure summaries.
    if (clean.find("Failed to run module") != std::string::npos ||
        (clean.find("cloud-init[") != std::string::npos &&
         clean.find("ERROR") != std::string::npos)) {
      r.failed = true;
      if (!r.finished) r.detail = clean;
    }
    lines.push_back(std::move(clean));
  }
  const auto from = lines.size() > tail_lines ? lines.size() - tail_lines : 0;
  r.last_lines.assign(lines.begin() + static_cast<std::ptrdiff_t>(from), lines.end());
  return r;
}

namespace {

std::string kept_of(const std::string& console_log) {
  return console_log + ".kept";
}

// The last `max_bytes` of `file` (empty when it cannot be read).
std::string tail_of(const std::string& file, std::size_t max_bytes) {
  std::ifstream in(file, std::ios::binary | std::ios::ate);
  if (!in) return {};
  const auto size = static_cast<std::size_t>(in.tellg());
  const auto start = size > max_bytes ? size - max_bytes : 0;
  in.seekg(static_cast<std::streamoff>(start));
  std::string text(size - start, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  return text;
}

}  // namespace

std::string readiness_text(const std::string& console_log, std::size_t max_bytes) {
  auto text = tail_of(console_log, max_bytes);
  if (text.size() < max_bytes) {
    auto kept = tail_of(kept_of(console_log), max_bytes - text.size());
    if (!kept.empty() && kept.back() != '\n') kept.push_back('\n');
    text.insert(0, kept);
  }
  return text;
}

Readiness read_readiness(const std::string& console_log, std::size_t tail_lines,
                         std::size_t max_bytes) {
  return parse_readiness(readiness_text(console_log, max_bytes), tail_lines);
}

void keep_console_before_restore(const std::string& console_log, std::size_t max_bytes) {
  // The kept part first, then what the log holds now: one file, the newest at its end.
  auto kept = tail_of(kept_of(console_log), max_bytes);
  if (!kept.empty() && kept.back() != '\n') kept.push_back('\n');
  kept += tail_of(console_log, max_bytes);
  if (kept.size() > max_bytes) kept.erase(0, kept.size() - max_bytes);
  const auto file = kept_of(console_log);
  const auto part = file + ".part";
  {
    std::ofstream out(part, std::ios::binary | std::ios::trunc);
    out << kept;
    if (!out) return;  // best effort: readiness reads "not booted" as it would have
  }
  std::error_code ec;
  std::filesystem::rename(part, file, ec);
}

void forget_kept_console(const std::string& console_log) {
  std::error_code ec;
  std::filesystem::remove(kept_of(console_log), ec);
}

}  // namespace bowline::engine
