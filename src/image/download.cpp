#include "image/download.hpp"

#include <curl/curl.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <string_view>

#include "image/errors.hpp"
#include "image/sha256.hpp"
#include "spec/quantity.hpp"
#include "util/curl.hpp"
#include "util/strings.hpp"

namespace bowline::image {
namespace {

constexpr std::uint64_t kReportEvery = 256 * 1024;

class File {
 public:
  explicit File(const std::filesystem::path& path) {
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0)
      throw ImageError("cannot open " + path.string() + " for writing: " + std::strerror(errno));
  }
  ~File() {
    if (fd_ >= 0) ::close(fd_);
  }
  File(const File&) = delete;
  File& operator=(const File&) = delete;
  int get() const { return fd_; }

 private:
  int fd_ = -1;
};

std::optional<std::uint64_t> parse_number(std::string_view text) {
  std::uint64_t value = 0;
  const auto* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end || text.empty()) return std::nullopt;
  return value;
}

// Content-Range: "bytes 100-199/200", "bytes 100-199/*" or "bytes */200".
struct ContentRange {
  std::optional<std::uint64_t> start;
  std::optional<std::uint64_t> total;
};

std::optional<ContentRange> parse_content_range(std::string_view value) {
  if (!util::starts_with_ci(value, "bytes ")) return std::nullopt;
  value.remove_prefix(6);
  const auto slash = value.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  ContentRange range;
  const auto span = value.substr(0, slash);
  const auto total = value.substr(slash + 1);
  if (total != "*") {
    range.total = parse_number(total);
    if (!range.total) return std::nullopt;
  }
  if (span != "*") {
    const auto dash = span.find('-');
    if (dash == std::string_view::npos) return std::nullopt;
    range.start = parse_number(span.substr(0, dash));
    if (!range.start) return std::nullopt;
  }
  return range;
}

std::string status_text(long status) {
  switch (status) {
    case 400:
      return "400 Bad Request";
    case 401:
      return "401 Unauthorized";
    case 403:
      return "403 Forbidden";
    case 404:
      return "404 Not Found";
    case 410:
      return "410 Gone";
    case 429:
      return "429 Too Many Requests";
    case 500:
      return "500 Internal Server Error";
    case 502:
      return "502 Bad Gateway";
    case 503:
      return "503 Service Unavailable";
    case 504:
      return "504 Gateway Timeout";
    default:
      return std::to_string(status);
  }
}

// The state of one request, shared with libcurl's callbacks.
struct Attempt {
  CURL* handle = nullptr;
  const DownloadOptions* options = nullptr;
  int fd = -1;
  Sha256* hash = nullptr;
  const Progress* progress = nullptr;
  std::uint64_t offset = 0;    // bytes in the part when the request was sent
  std::uint64_t size = 0;      // bytes in the part now
  std::uint64_t received = 0;  // body bytes written by this request
  std::uint64_t total = 0;     // the whole file's size, 0 while unknown
  std::uint64_t reported = 0;  // the size last reported
  bool reported_any = false;
  bool decided = false;  // the response was judged and its body is being written
  // The latest response's status line and headers (a redirect's, then the file's).
  long status = 0;
  std::optional<ContentRange> content_range;
  std::optional<std::uint64_t> content_length;
  std::string location;
  std::string failure;  // why we stopped the transfer ourselves
  std::exception_ptr callback_error;

  bool report(bool force) {
    if (!progress || !*progress) return true;
    if (!force && size - reported < kReportEvery && size != total) return true;
    if (force && reported_any && size == reported) return true;
    try {
      (*progress)(size, total);
    } catch (...) {
      callback_error = std::current_exception();
      return false;
    }
    reported = size;
    reported_any = true;
    return true;
  }
};

// "HTTP/1.1 302 Found" -> 302; 0 when the line is not a status line.
long parse_status(std::string_view line) {
  const auto space = line.find(' ');
  if (space == std::string_view::npos) return 0;
  const auto code = parse_number(line.substr(space + 1, 3));
  return code ? static_cast<long>(*code) : 0;
}

std::string limit_text(std::uint64_t limit) {
  return std::string(kMaxSizeSetting) + " (" + spec::format_binary_size(limit) + ")";
}

// Where a redirect leads, resolved against the URL it came from: "https://host/x" or, when
// libcurl cannot parse it, the Location header as sent. Empty scheme: not a URL it knows.
struct Target {
  std::string url;
  std::string scheme;
};

Target redirect_target(CURL* handle, const std::string& location) {
  Target target{location, ""};
  char* base = nullptr;
  curl_easy_getinfo(handle, CURLINFO_EFFECTIVE_URL, &base);
  std::unique_ptr<CURLU, decltype(&curl_url_cleanup)> url(curl_url(), curl_url_cleanup);
  if (!url || !base || curl_url_set(url.get(), CURLUPART_URL, base, 0) != CURLUE_OK ||
      curl_url_set(url.get(), CURLUPART_URL, location.c_str(), CURLU_NON_SUPPORT_SCHEME) !=
          CURLUE_OK)
    return target;
  char* text = nullptr;
  if (curl_url_get(url.get(), CURLUPART_URL, &text, 0) == CURLUE_OK) {
    target.url = text;
    curl_free(text);
  }
  if (curl_url_get(url.get(), CURLUPART_SCHEME, &text, 0) == CURLUE_OK) {
    target.scheme = util::to_lower(text);
    curl_free(text);
  }
  return target;
}

// At the end of a response's headers: a redirect must stay on https:// and the file must fit
// under the size limit. Returns why the transfer stops here, or nothing.
std::string judge_headers(const Attempt& a) {
  if (a.status >= 300 && a.status < 400 && !a.location.empty()) {
    const auto target = redirect_target(a.handle, a.location);
    if (target.scheme == "https") return {};
    return "the server redirected to " + target.url +
           ", which is not https://: bowline follows redirects only to https:// (a plain-HTTP "
           "hop could be altered in transit); use the final https:// URL in the template";
  }
  std::optional<std::uint64_t> total;
  if (a.status == 200) total = a.content_length;
  if (a.status == 206) {
    total = a.content_range ? a.content_range->total : std::nullopt;
    if (!total && a.content_length) total = a.offset + *a.content_length;
  }
  if (!total || *total <= a.options->max_size) return {};
  return "the image is " + std::to_string(*total) + " bytes, larger than " +
         limit_text(a.options->max_size) + " allows; nothing was kept. Raise " + kMaxSizeSetting +
         " to download it";
}

std::size_t on_header(char* data, std::size_t size, std::size_t count, void* user) {
  auto& a = *static_cast<Attempt*>(user);
  const std::string_view line(data, size * count);
  if (line.starts_with("HTTP/")) {
    // A new response (after a redirect, say).
    a.status = parse_status(line);
    a.content_range.reset();
    a.content_length.reset();
    a.location.clear();
  } else if (util::starts_with_ci(line, "content-range:")) {
    a.content_range = parse_content_range(util::trim(line.substr(14)));
  } else if (util::starts_with_ci(line, "content-length:")) {
    a.content_length = parse_number(util::trim(line.substr(15)));
  } else if (util::starts_with_ci(line, "location:")) {
    a.location = util::trim(line.substr(9));
  } else if (util::trim(line).empty()) {
    a.failure = judge_headers(a);
    if (!a.failure.empty()) return 0;
  }
  return size * count;
}

bool write_all(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    const auto n = ::write(fd, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

std::size_t on_body(char* data, std::size_t size, std::size_t count, void* user) {
  auto& a = *static_cast<Attempt*>(user);
  const std::size_t n = size * count;
  if (!a.decided) {
    long status = 0;
    curl_easy_getinfo(a.handle, CURLINFO_RESPONSE_CODE, &status);
    if (status == 206) {
      const auto start = a.content_range ? a.content_range->start : std::nullopt;
      if (start != a.offset) {
        a.failure = "the server answered a Range request for bytes " + std::to_string(a.offset) +
                    "- with another part of the file";
        return 0;
      }
      a.total = a.content_range->total.value_or(0);
    } else if (status == 200) {
      if (a.offset > 0) {
        // The server ignored the Range header and sends the whole file: start over.
        if (::ftruncate(a.fd, 0) != 0 || ::lseek(a.fd, 0, SEEK_SET) != 0) {
          a.failure = std::string("cannot truncate the partial file: ") + std::strerror(errno);
          return 0;
        }
        a.hash->reset();
        a.offset = a.size = a.reported = 0;
      }
      curl_off_t length = -1;
      curl_easy_getinfo(a.handle, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length);
      a.total = length > 0 ? static_cast<std::uint64_t>(length) : 0;
    } else {
      return 0;  // an error page: judged after the transfer, never written
    }
    a.decided = true;
  }
  // The headers did not say (or said less): the bytes themselves must stay under the limit.
  if (a.size + n > a.options->max_size) {
    a.failure = "the image grew past " + limit_text(a.options->max_size) + " at " +
                std::to_string(a.size + n) +
                " bytes, more than its headers announced; the partial download was removed. "
                "Raise " +
                kMaxSizeSetting + " to download it";
    return 0;
  }
  if (!write_all(a.fd, data, n)) {
    a.failure = std::string("cannot write the partial file: ") + std::strerror(errno);
    return 0;
  }
  a.hash->update(data, n);
  a.size += n;
  a.received += n;
  return a.report(false) ? n : 0;
}

struct AttemptResult {
  bool done = false;
  bool restart = false;  // the part is useless (416 with another size): truncate and go again
  std::string error;     // a transport failure; the part is kept
  bool progressed = false;
  std::uint64_t size = 0;
  std::uint64_t total = 0;
};

[[noreturn]] void fail_and_remove(const std::filesystem::path& part, const std::string& message) {
  std::error_code ignored;
  std::filesystem::remove(part, ignored);
  throw ImageError(message);
}

util::CurlEasy new_curl_handle() {
  try {
    return util::curl_easy();
  } catch (const std::runtime_error& e) {
    throw ImageError(e.what());
  }
}

// The request: `url` from byte `existing` on, the callbacks writing into `a`, libcurl's error
// text into `error` (CURL_ERROR_SIZE bytes, alive until the transfer ends).
void set_request_options(CURL* h, const std::string& url, std::uint64_t existing,
                         const DownloadOptions& options, Attempt& a, char* error) {
  util::curl_request_basics(h, url, options.connect_timeout);
  // The template may name http:// (pinned by imageChecksum); a hop the server picks may not.
  // judge_headers says so first, naming the target; this is the backstop.
  curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, "https");
  // No CURLOPT_MAXFILESIZE_LARGE: libcurl would stop on Content-Length before the header
  // callback saw it, with a message that cannot name the size; judge_headers and on_body
  // enforce max_size instead, with or without a Content-Length.
  curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 1L);
  curl_easy_setopt(h, CURLOPT_MAXREDIRS, 10L);
  curl_easy_setopt(h, CURLOPT_USERAGENT, "bowline");
  curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, options.low_speed_limit);
  curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, static_cast<long>(options.low_speed_time.count()));
  curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
  if (!options.ca_file.empty()) curl_easy_setopt(h, CURLOPT_CAINFO, options.ca_file.c_str());
  // libcurl copies string options: the range need not outlive this call.
  const std::string range = std::to_string(existing) + "-";
  if (existing > 0) curl_easy_setopt(h, CURLOPT_RANGE, range.c_str());
  curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(h, CURLOPT_HEADERDATA, &a);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &a);
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, error);
}

// A 416 to a Range request from `existing`: nothing is left at that offset, so the part is
// either the whole file or not this file.
AttemptResult range_not_satisfiable(Attempt& a, std::uint64_t existing) {
  AttemptResult r;
  r.progressed = a.received > 0;
  if (a.content_range && a.content_range->total == existing) {
    r.done = true;
    r.size = r.total = existing;
    a.total = existing;
    a.report(true);
  } else {
    r.restart = true;
  }
  return r;
}

// Why the transfer failed, in libcurl's words (a stall named as one).
std::string transfer_error(CURLcode code, const char* error, const DownloadOptions& options) {
  std::string reason = error[0] ? std::string(error) : curl_easy_strerror(code);
  if (code == CURLE_OPERATION_TIMEDOUT)
    reason = "the transfer stalled (under " + std::to_string(options.low_speed_limit) +
             " bytes/s for " + std::to_string(options.low_speed_time.count()) + " s): " + reason;
  return reason;
}

// A transfer that ended without a transport error and with a success status: the body must
// be there, and whole; then it is synced to disk.
AttemptResult finish_transfer(Attempt& a, long status, const std::filesystem::path& part,
                              const std::string& where) {
  AttemptResult r;
  r.progressed = a.received > 0;
  if (!a.decided) {
    if (status == 200 || status == 206)
      fail_and_remove(part, where + "the server sent an empty file");
    fail_and_remove(part, where + "unexpected answer " + std::to_string(status));
  }
  if (a.size == 0) fail_and_remove(part, where + "the server sent an empty file");
  if (a.total != 0 && a.size != a.total) {
    r.error =
        where + "received " + std::to_string(a.size) + " of " + std::to_string(a.total) + " bytes";
    return r;
  }
  if (::fsync(a.fd) != 0)
    throw ImageError("cannot sync " + part.string() + ": " + std::strerror(errno));
  if (a.total == 0) a.total = a.size;
  a.report(true);
  r.done = true;
  r.size = a.size;
  r.total = a.total;
  return r;
}

AttemptResult attempt_once(const std::string& url, const std::filesystem::path& part,
                           const DownloadOptions& options, const Progress& progress, Sha256& hash) {
  File file(part);
  hash.reset();
  const std::uint64_t existing = hash_file_into(part, hash);
  if (existing > options.max_size)  // kept from before the limit was lowered
    fail_and_remove(part, "downloading " + url + ": the partial download of " +
                              std::to_string(existing) + " bytes is already larger than " +
                              limit_text(options.max_size) + "; it was removed");
  if (::lseek(file.get(), static_cast<off_t>(existing), SEEK_SET) < 0)
    throw ImageError("cannot seek in " + part.string() + ": " + std::strerror(errno));

  util::CurlEasy handle = new_curl_handle();
  CURL* h = handle.get();
  Attempt a;
  a.handle = h;
  a.options = &options;
  a.fd = file.get();
  a.hash = &hash;
  a.progress = &progress;
  a.offset = a.size = a.reported = existing;
  char error[CURL_ERROR_SIZE] = {};
  set_request_options(h, url, existing, options, a, error);

  const CURLcode code = curl_easy_perform(h);
  long status = 0;
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
  const std::string where = "downloading " + url + ": ";

  if (a.callback_error) std::rethrow_exception(a.callback_error);
  if (!a.failure.empty()) fail_and_remove(part, where + a.failure);
  if (status == 416 && existing > 0) return range_not_satisfiable(a, existing);
  if (status >= 400) fail_and_remove(part, where + "the server answered " + status_text(status));
  if (code != CURLE_OK) {
    AttemptResult r;
    r.progressed = a.received > 0;
    r.error = where + transfer_error(code, error, options);
    return r;
  }
  return finish_transfer(a, status, part, where);
}

}  // namespace

Downloaded download_file(const std::string& url, const std::filesystem::path& part,
                         const DownloadOptions& options, const Progress& progress) {
  Sha256 hash;
  bool restarted = false;
  for (int attempt = 1;;) {
    auto r = attempt_once(url, part, options, progress, hash);
    if (r.done) return Downloaded{r.size, hash.hex()};
    if (r.restart) {
      if (restarted)
        fail_and_remove(part, "downloading " + url + ": the server refuses every range");
      restarted = true;
      if (::truncate(part.c_str(), 0) != 0)
        throw ImageError("cannot truncate " + part.string() + ": " + std::strerror(errno));
      continue;
    }
    if (!r.progressed || attempt >= options.max_attempts) {
      std::error_code ec;
      const auto kept = std::filesystem::file_size(part, ec);
      if (!ec && kept == 0) std::filesystem::remove(part, ec);
      throw ImageError(r.error + (!ec && kept > 0 ? " (" + std::to_string(kept) +
                                                        " bytes kept; the next try resumes)"
                                                  : ""));
    }
    ++attempt;
  }
}

}  // namespace bowline::image
