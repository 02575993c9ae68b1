// One file over HTTP(S) with libcurl into a partial file that survives interruptions: the next
// call resumes it with a Range request. ImageCache decides where the file goes and when it is
// complete; this part only moves bytes, and refuses what it must not move: redirects that
// leave https://, and files larger than the size limit.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>

namespace bowline::image {

// Bytes of the file on disk so far and the file's full size (0 while the server has not said).
using Progress = std::function<void(std::uint64_t done, std::uint64_t total)>;

struct DownloadOptions {
  // PEM file of the certificate authorities to trust instead of the system's (tests); empty:
  // the system's store. Verification of the peer and of its name is never turned off.
  std::string ca_file;
  // A transfer slower than this many bytes per second for `low_speed_time` is abandoned
  // (and resumed by the next attempt). There is no limit on the total time: a large image
  // on a slow but moving link is fine.
  long low_speed_limit = 1024;
  std::chrono::seconds low_speed_time{60};
  std::chrono::seconds connect_timeout{30};
  // Attempts per call. An attempt that fails after receiving data is followed by another,
  // resumed where it stopped; a failure before any data ends the call at once.
  int max_attempts = 3;
  // The largest file accepted, in bytes (kMaxSizeSetting). A larger Content-Length (or
  // Content-Range total) is refused before a byte is written; a body that grows past it is
  // cut off. Either way the partial file is removed.
  std::uint64_t max_size = std::uint64_t{64} << 30;
};

// The server setting behind DownloadOptions::max_size, named in the error that it causes.
inline constexpr const char* kMaxSizeSetting = "server.kvm.max_image_size";

struct Downloaded {
  std::uint64_t size = 0;
  std::string sha256;  // lowercase hex of the whole file
};

// Fetches `url` (https:// or http://) into `part`, keeping what `part` already holds when the
// server honours a Range request and starting over when it does not (200) or cannot (416 with
// another size). Redirects are followed to https:// only: a plain-HTTP hop could be altered
// in transit. An HTTP error status, a refused redirect or a file over max_size removes
// `part`; a transport failure (drop, stall) keeps it for the next call. Progress runs on the
// calling thread; it must not throw — if it does, the transfer stops and the exception propagates,
// `part` kept. Throws ImageError.
Downloaded download_file(const std::string& url, const std::filesystem::path& part,
                         const DownloadOptions& options, const Progress& progress = {});

}  // namespace bowline::image
