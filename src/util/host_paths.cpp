#include "util/host_paths.hpp"

namespace bowline::util {

namespace {

// Characters a path token stops at: whitespace, quotes, brackets and separators of a sentence.
bool ends_path(char c) {
  switch (c) {
    case ' ':
    case '\t':
    case '\n':
    case '\r':
    case '\'':
    case '"':
    case '`':
    case '(':
    case ')':
    case '[':
    case ']':
    case '<':
    case '>':
    case ',':
    case ';':
      return true;
    default:
      return false;
  }
}

// A '/' starts a path where it does not continue a word, a number or a URL ("a/b", "10/s",
// "https://h/x", "198.51.100.0/24" all stay).
bool starts_path(std::string_view text, std::size_t at) {
  if (text[at] != '/' || at + 1 >= text.size()) return false;
  const char next = text[at + 1];
  if (next == '/' || ends_path(next)) return false;
  if (at == 0) return true;
  const char before = text[at - 1];
  return ends_path(before) || before == '=' || before == ':';
}

// [begin, end) of the path token that starts at `at`, without trailing punctuation that ends
// the sentence around it ("... /x/y: no such file", "... /x/y.").
std::size_t path_end(std::string_view text, std::size_t at) {
  auto end = at + 1;
  while (end < text.size() && !ends_path(text[end])) ++end;
  while (end > at + 1 && (text[end - 1] == ':' || text[end - 1] == '.')) --end;
  return end;
}

bool is_api_path(std::string_view path) {
  return path.starts_with("/api/");
}

}  // namespace

std::string redact_host_paths(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  std::size_t i = 0;
  while (i < text.size()) {
    if (!starts_path(text, i)) {
      out += text[i++];
      continue;
    }
    const auto end = path_end(text, i);
    const auto path = text.substr(i, end - i);
    if (is_api_path(path)) {
      out += path;
    } else {
      auto last = path;
      while (last.size() > 1 && last.back() == '/') last.remove_suffix(1);
      const auto slash = last.rfind('/');
      last = last.substr(slash + 1);
      out += last.empty() ? std::string_view("/") : last;
    }
    i = end;
  }
  return out;
}

bool names_host_path(std::string_view text) {
  return redact_host_paths(text) != text;
}

}  // namespace bowline::util
