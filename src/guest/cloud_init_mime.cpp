#include "guest/cloud_init_mime.hpp"

#include <algorithm>
#include <cstdint>
#include <stdexcept>

#include "util/hash.hpp"

namespace bowline::guest::detail {
namespace {

bool seven_bit(std::string_view s) {
  std::size_t line = 0;
  for (char c : s) {
    if (c == '\n') {
      line = 0;
      continue;
    }
    if (++line > 998) return false;
    if (c != '\t' && (c < 0x20 || c > 0x7e)) return false;
  }
  return true;
}

}  // namespace

std::string base64(std::string_view data) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  std::size_t column = 0;
  const auto put = [&](char c) {
    out += c;
    if (++column == 76) {
      out += '\n';
      column = 0;
    }
  };
  for (std::size_t i = 0; i < data.size(); i += 3) {
    const std::size_t n = std::min<std::size_t>(3, data.size() - i);
    std::uint32_t v = 0;
    for (std::size_t k = 0; k < 3; ++k)
      v = (v << 8) | (k < n ? static_cast<unsigned char>(data[i + k]) : 0u);
    put(kAlphabet[(v >> 18) & 63]);
    put(kAlphabet[(v >> 12) & 63]);
    put(n > 1 ? kAlphabet[(v >> 6) & 63] : '=');
    put(n > 2 ? kAlphabet[v & 63] : '=');
  }
  if (column != 0) out += '\n';
  return out;
}

std::string pick_boundary(const std::vector<std::string_view>& texts,
                          const std::function<std::string(unsigned attempt)>& candidate) {
  for (unsigned attempt = 0; attempt < 1000; ++attempt) {
    std::string b = candidate(attempt);
    bool found = false;
    for (auto t : texts) found = found || t.find(b) != t.npos;
    if (!found) return b;
  }
  throw std::logic_error("no MIME boundary found");  // unreachable with hashed candidates
}

std::string multipart_mixed(const std::vector<MimePart>& parts) {
  std::vector<std::string> entities;
  for (const auto& p : parts) {
    if (p.verbatim) {
      entities.push_back(p.body);
      continue;
    }
    const bool plain = seven_bit(p.body);
    std::string e = "Content-Type: " + p.content_type + "; charset=\"utf-8\"\n";
    e += "MIME-Version: 1.0\n";
    e += std::string("Content-Transfer-Encoding: ") + (plain ? "7bit" : "base64") + "\n\n";
    e += plain ? p.body : base64(p.body);
    entities.push_back(std::move(e));
  }

  // The boundary: a hash of the parts, checked against them. (The delimiter is "--boundary"
  // at the start of a line; a boundary absent from every part cannot be matched inside one.)
  std::string all;
  for (const auto& e : entities) all += util::sha256_hex(e);
  std::vector<std::string_view> texts(entities.begin(), entities.end());
  const auto boundary = pick_boundary(texts, [&](unsigned attempt) {
    return "bowline-" +
           util::sha256_hex(all + (attempt ? "/" + std::to_string(attempt) : "")).substr(0, 32);
  });

  std::string out = "Content-Type: multipart/mixed; boundary=\"" + boundary + "\"\n";
  out += "MIME-Version: 1.0\n\n";
  for (const auto& e : entities) {
    // The line break before a delimiter belongs to the delimiter: an entity's own final
    // newline stays part of it.
    out += "--" + boundary + "\n" + e + "\n";
  }
  out += "--" + boundary + "--\n";
  return out;
}

}  // namespace bowline::guest::detail
