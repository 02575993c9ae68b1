#include "engine/readiness.hpp"

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

Readiness read_readiness(const std::string& console_log, std::size_t tail_lines,
                         std::size_t max_bytes) {
  std::ifstream in(console_log, std::ios::binary | std::ios::ate);
  if (!in) return {};
  const auto size = static_cast<std::size_t>(in.tellg());
  const auto start = size > max_bytes ? size - max_bytes : 0;
  in.seekg(static_cast<std::streamoff>(start));
  std::string text(size - start, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  return parse_readiness(text, tail_lines);
}

}  // namespace bowline::engine
