#include "engine/host_keys.hpp"

#include <sodium.h>

#include <cstdint>
#include <stdexcept>
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

}  // namespace

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
