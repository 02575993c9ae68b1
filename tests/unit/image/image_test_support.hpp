// Helpers for the image tests: temporary directories, files, test data, and the HTTPS file
// server (tests/unit/image/https_server.py) with a certificate made by openssl.
#pragma once

#include "../common/scratch_files.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <string>
#include <vector>

namespace bowline::image::test {

using test_support::read_file;
using test_support::source_path;
using test_support::TempDir;
using test_support::write_file;

// Deterministic bytes that do not repeat in any short period.
std::string test_bytes(std::size_t size, unsigned seed);
// The names in a directory, sorted; empty when it does not exist.
std::vector<std::string> list_dir(const std::string& path);

// https_server.py serving `root` over HTTPS, with a self-signed certificate for 127.0.0.1 in
// `dir`, and over plain HTTP.
class HttpsServer {
 public:
  HttpsServer(const std::string& dir, const std::string& root);
  ~HttpsServer();
  HttpsServer(const HttpsServer&) = delete;
  HttpsServer& operator=(const HttpsServer&) = delete;

  std::string url(const std::string& mode, const std::string& name) const;
  std::string http_url(const std::string& mode, const std::string& name) const;
  const std::string& ca_file() const { return ca_file_; }
  // Every request so far, oldest first: {method, path, range, status, scheme}.
  std::vector<nlohmann::json> requests() const;

 private:
  int pid_ = -1;
  std::string port_;
  std::string http_port_;
  std::string ca_file_;
  std::string log_;
};

}  // namespace bowline::image::test
