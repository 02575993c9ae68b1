#include "image/sha256.hpp"

#include <openssl/evp.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <vector>

#include "image/errors.hpp"

namespace bowline::image {

struct Sha256::Impl {
  EVP_MD_CTX* ctx = nullptr;
};

Sha256::Sha256() : impl_(std::make_unique<Impl>()) {
  impl_->ctx = EVP_MD_CTX_new();
  if (!impl_->ctx) throw std::bad_alloc();
  reset();
}

Sha256::~Sha256() {
  EVP_MD_CTX_free(impl_->ctx);
}

void Sha256::reset() {
  if (EVP_DigestInit_ex(impl_->ctx, EVP_sha256(), nullptr) != 1)
    throw ImageError("SHA-256 is not available from OpenSSL");
}

void Sha256::update(const void* data, std::size_t size) {
  if (EVP_DigestUpdate(impl_->ctx, data, size) != 1) throw ImageError("SHA-256 update failed");
}

std::string Sha256::hex() {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (EVP_DigestFinal_ex(impl_->ctx, digest, &length) != 1)
    throw ImageError("SHA-256 final failed");
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(length * 2);
  for (unsigned int i = 0; i < length; ++i) {
    out += kDigits[digest[i] >> 4];
    out += kDigits[digest[i] & 0xf];
  }
  return out;
}

std::uint64_t hash_file_into(const std::filesystem::path& file, Sha256& hash) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw ImageError("cannot read " + file.string() + ": " + std::strerror(errno));
  std::vector<char> buffer(1 << 20);
  std::uint64_t total = 0;
  while (in) {
    in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    const auto n = in.gcount();
    if (n > 0) {
      hash.update(buffer.data(), static_cast<std::size_t>(n));
      total += static_cast<std::uint64_t>(n);
    }
  }
  if (in.bad()) throw ImageError("cannot read " + file.string());
  return total;
}

std::string sha256_file(const std::filesystem::path& file) {
  Sha256 hash;
  hash_file_into(file, hash);
  return hash.hex();
}

}  // namespace bowline::image
