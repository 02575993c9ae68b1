#include "engine/host_keys.hpp"

#include <sodium.h>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <vector>

namespace bowline::engine {

namespace {

using Bytes = std::vector<unsigned char>;

void put_u32(Bytes& out, std::uint32_t value) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back((value >> shift) & 0xff);
}

void put_string(Bytes& out, const unsigned char* data, std::size_t size) {
  put_u32(out, static_cast<std::uint32_t>(size));
  out.insert(out.end(), data, data + size);
}

void put_string(Bytes& out, const std::string& text) {
  put_string(out, reinterpret_cast<const unsigned char*>(text.data()), text.size());
}

std::string base64(const Bytes& bytes, int variant = sodium_base64_VARIANT_ORIGINAL) {
  std::string out(sodium_base64_encoded_len(bytes.size(), variant), '\0');
  sodium_bin2base64(out.data(), out.size(), bytes.data(), bytes.size(), variant);
  out.resize(out.find('\0'));
  return out;
}

// The public key as SSH puts it on the wire: string "ssh-ed25519", string key.
Bytes public_blob(const unsigned char* pk) {
  Bytes blob;
  put_string(blob, "ssh-ed25519");
  put_string(blob, pk, crypto_sign_PUBLICKEYBYTES);
  return blob;
}

std::optional<Bytes> unbase64(std::string_view text) {
  Bytes out(text.size());
  std::size_t size = 0;
  if (sodium_base642bin(out.data(), out.size(), text.data(), text.size(), "\n", &size, nullptr,
                        sodium_base64_VARIANT_ORIGINAL) != 0)
    return std::nullopt;
  out.resize(size);
  return out;
}

// Reads SSH wire data (PROTOCOL.key): each read fails once the bytes run out.
class WireReader {
 public:
  explicit WireReader(const Bytes& bytes) : bytes_(bytes) {}
  std::optional<std::uint32_t> u32() {
    if (bytes_.size() - at_ < 4) return std::nullopt;
    std::uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v = (v << 8) | bytes_[at_++];
    return v;
  }
  std::optional<Bytes> string() {
    const auto size = u32();
    if (!size || bytes_.size() - at_ < *size) return std::nullopt;
    Bytes out(bytes_.begin() + static_cast<long>(at_),
              bytes_.begin() + static_cast<long>(at_ + *size));
    at_ += *size;
    return out;
  }
  bool skip(std::size_t n) {
    if (bytes_.size() - at_ < n) return false;
    at_ += n;
    return true;
  }

 private:
  const Bytes& bytes_;
  std::size_t at_ = 0;
};

bool equals(const std::optional<Bytes>& got, const std::string& text) {
  return got && std::string(got->begin(), got->end()) == text;
}

// The public key blob an OpenSSH private key file names, once its secret half is checked to
// be the ed25519 key of that public key; nullopt otherwise.
std::optional<Bytes> checked_private_key(const std::string& pem) {
  constexpr std::string_view begin = "-----BEGIN OPENSSH PRIVATE KEY-----";
  constexpr std::string_view end = "-----END OPENSSH PRIVATE KEY-----";
  const auto b = pem.find(begin), e = pem.find(end);
  if (b != 0 || e == std::string::npos) return std::nullopt;
  const auto file = unbase64(std::string_view(pem).substr(begin.size(), e - begin.size()));
  const std::string magic("openssh-key-v1\0", 15);
  if (!file || file->size() < magic.size() ||
      std::string(file->begin(), file->begin() + 15) != magic)
    return std::nullopt;
  WireReader r(*file);
  r.skip(magic.size());
  if (!equals(r.string(), "none") || !equals(r.string(), "none") || !r.string())
    return std::nullopt;
  if (r.u32() != 1u) return std::nullopt;
  auto blob = r.string();
  auto secret = r.string();
  if (!blob || !secret) return std::nullopt;
  WireReader s(*secret);
  const auto c1 = s.u32(), c2 = s.u32();
  if (!c1 || c1 != c2 || !equals(s.string(), "ssh-ed25519")) return std::nullopt;
  const auto pk = s.string(), sk = s.string();
  if (!pk || !sk || pk->size() != crypto_sign_PUBLICKEYBYTES ||
      sk->size() != crypto_sign_SECRETKEYBYTES)
    return std::nullopt;
  unsigned char derived_pk[crypto_sign_PUBLICKEYBYTES];
  unsigned char derived_sk[crypto_sign_SECRETKEYBYTES];
  crypto_sign_seed_keypair(derived_pk, derived_sk, sk->data());  // the seed is sk's first half
  sodium_memzero(derived_sk, sizeof derived_sk);
  if (sodium_memcmp(derived_pk, pk->data(), sizeof derived_pk) != 0 ||
      public_blob(derived_pk) != *blob)
    return std::nullopt;
  return blob;
}

}  // namespace

std::string host_key_problem(const HostKey& key) {
  if (sodium_init() < 0) throw std::runtime_error("libsodium cannot start");
  const auto& line = key.public_line;
  for (char c : line)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
      return "the public host key must be one line of printable characters";
  if (!line.starts_with("ssh-ed25519 ")) return "the public host key is not an ssh-ed25519 key";
  const auto start = std::string("ssh-ed25519 ").size();
  const auto stop = line.find(' ', start);
  const auto blob = unbase64(std::string_view(line).substr(
      start, stop == std::string::npos ? std::string::npos : stop - start));
  if (!blob) return "the public host key is not base64";
  const auto named = checked_private_key(key.private_key);
  if (!named) return "the private host key is not an unencrypted OpenSSH ed25519 key";
  if (*named != *blob) return "the private host key does not belong to the public one";
  return {};
}

HostKey make_host_key(const std::string& comment) {
  if (sodium_init() < 0) throw std::runtime_error("libsodium cannot start");
  unsigned char pk[crypto_sign_PUBLICKEYBYTES];
  unsigned char sk[crypto_sign_SECRETKEYBYTES];  // the seed, then the public key: as OpenSSH
  crypto_sign_keypair(pk, sk);
  const auto blob = public_blob(pk);

  // OpenSSH's key format (PROTOCOL.key), unencrypted: one key, its check number twice.
  Bytes secret;
  const auto check = randombytes_random();
  put_u32(secret, check);
  put_u32(secret, check);
  put_string(secret, "ssh-ed25519");
  put_string(secret, pk, sizeof pk);
  put_string(secret, sk, sizeof sk);
  put_string(secret, comment);
  for (unsigned char pad = 1; secret.size() % 8 != 0; ++pad) secret.push_back(pad);
  sodium_memzero(sk, sizeof sk);

  Bytes file;
  const std::string magic = "openssh-key-v1";
  file.insert(file.end(), magic.begin(), magic.end());
  file.push_back(0);
  put_string(file, "none");
  put_string(file, "none");
  put_string(file, "");
  put_u32(file, 1);
  put_string(file, blob.data(), blob.size());
  put_string(file, secret.data(), secret.size());
  sodium_memzero(secret.data(), secret.size());

  const auto encoded = base64(file);
  sodium_memzero(file.data(), file.size());
  HostKey key;
  key.private_key = "-----BEGIN OPENSSH PRIVATE KEY-----\n";
  for (std::size_t at = 0; at < encoded.size(); at += 70)
    key.private_key += encoded.substr(at, 70) + "\n";
  key.private_key += "-----END OPENSSH PRIVATE KEY-----\n";
  key.public_line = "ssh-ed25519 " + base64(blob) + (comment.empty() ? "" : " " + comment);
  return key;
}

std::string fingerprint(const std::string& public_line) {
  const auto start = public_line.find(' ');
  if (start == std::string::npos) return {};
  auto end = public_line.find(' ', start + 1);
  if (end == std::string::npos) end = public_line.size();
  const auto encoded = public_line.substr(start + 1, end - start - 1);
  Bytes blob(encoded.size());
  std::size_t size = 0;
  if (sodium_base642bin(blob.data(), blob.size(), encoded.data(), encoded.size(), nullptr, &size,
                        nullptr, sodium_base64_VARIANT_ORIGINAL) != 0)
    return {};
  blob.resize(size);
  Bytes digest(crypto_hash_sha256_BYTES);
  crypto_hash_sha256(digest.data(), blob.data(), blob.size());
  return "SHA256:" + base64(digest, sodium_base64_VARIANT_ORIGINAL_NO_PADDING);
}

}  // namespace bowline::engine
