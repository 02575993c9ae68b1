// Incremental SHA-256 (OpenSSL EVP), for checking downloads while they are written.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

namespace bowline::image {

class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;
  void reset();
  void update(const void* data, std::size_t size);
  std::string hex();  // lowercase; reset() before using the object again

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Feeds the whole file into `hash`; returns how many bytes it read. Throws ImageError.
std::uint64_t hash_file_into(const std::filesystem::path& file, Sha256& hash);
std::string sha256_file(const std::filesystem::path& file);

}  // namespace bowline::image
