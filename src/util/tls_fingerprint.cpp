#include "util/tls_fingerprint.hpp"

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <memory>
#include <stdexcept>

#include "util/hash.hpp"

namespace bowline::util {

std::string certificate_fingerprint(std::string_view der) {
  const auto digest = sha256(der);
  unsigned char text[64] = {0};
  const int length = EVP_EncodeBlock(text, digest.data(), static_cast<int>(digest.size()));
  std::string out(reinterpret_cast<const char*>(text), static_cast<std::size_t>(length));
  while (!out.empty() && out.back() == '=') out.pop_back();
  return "SHA256:" + out;
}

std::string pem_certificate_fingerprint(std::string_view pem) {
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(
      BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())), &BIO_free);
  if (!bio) throw std::runtime_error("out of memory reading a certificate");
  std::unique_ptr<X509, decltype(&X509_free)> cert(
      PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr), &X509_free);
  if (!cert) throw std::runtime_error("no PEM certificate in it");
  unsigned char* der = nullptr;
  const int length = i2d_X509(cert.get(), &der);
  if (length <= 0) throw std::runtime_error("the certificate cannot be encoded");
  std::string bytes(reinterpret_cast<const char*>(der), static_cast<std::size_t>(length));
  OPENSSL_free(der);
  return certificate_fingerprint(bytes);
}

bool is_certificate_fingerprint(std::string_view text) {
  constexpr std::string_view prefix = "SHA256:";
  if (text.substr(0, prefix.size()) != prefix || text.size() != prefix.size() + 43) return false;
  for (const char c : text.substr(prefix.size()))
    if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' ||
          c == '/'))
      return false;
  return true;
}

}  // namespace bowline::util
