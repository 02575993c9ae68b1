#include "cli/tls_trust.hpp"

#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "cli/app.hpp"
#include "util/tls_fingerprint.hpp"

namespace bowline::cli {

namespace {

std::string fingerprint_of(X509* cert) {
  unsigned char* der = nullptr;
  const int length = i2d_X509(cert, &der);
  if (length <= 0) return {};
  std::string bytes(reinterpret_cast<const char*>(der), static_cast<std::size_t>(length));
  OPENSSL_free(der);
  return util::certificate_fingerprint(bytes);
}

// Replaces OpenSSL's chain verification (SSL_CTX_set_cert_verify_callback): a pin is compared
// with the server's own certificate and nothing else; without one, the usual verification.
int verify(X509_STORE_CTX* store, void* arg) {
  auto& trust = *static_cast<TlsTrust*>(arg);
  X509* leaf = X509_STORE_CTX_get0_cert(store);
  trust.seen = leaf ? fingerprint_of(leaf) : std::string();
  if (!trust.pinned.empty()) {
    if (!trust.seen.empty() && trust.seen == trust.pinned) return 1;
    trust.mismatch = true;
    X509_STORE_CTX_set_error(store, X509_V_ERR_APPLICATION_VERIFICATION);
    return 0;
  }
  const int ok = X509_verify_cert(store);
  if (ok != 1) trust.problem = X509_verify_cert_error_string(X509_STORE_CTX_get_error(store));
  return ok == 1 ? 1 : 0;
}

}  // namespace

bool is_https(const std::string& server) {
  return server.rfind("https://", 0) == 0;
}

TlsTrust trust_for(const Endpoint& endpoint) {
  TlsTrust trust;
  trust.pinned = endpoint.fingerprint;
  return trust;
}

void hold_to(SSL_CTX* ctx, TlsTrust& trust) {
  SSL_CTX_set_default_verify_paths(ctx);
  SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
  SSL_CTX_set_cert_verify_callback(ctx, &verify, &trust);
}

void throw_if_untrusted(const TlsTrust& trust, const Endpoint& endpoint, bool verify_failed,
                        const std::string& detail) {
  const auto& server = endpoint.server;
  if (trust.mismatch) {
    std::string message = "the certificate of " + server + " has the fingerprint " + trust.seen;
    if (endpoint.fingerprint_from == "--accept-fingerprint")
      throw CertificateError(
          CertificateError::Kind::Mismatch,
          message + ", not " + trust.pinned + " (--accept-fingerprint): refusing to connect",
          trust.seen, "");
    message += ", but " + trust.pinned + " is pinned for it (in " + endpoint.fingerprint_from +
               "): refusing to connect. Someone may be in the middle, or the server has a new "
               "certificate; if its administrator confirms " +
               trust.seen + ", pin it with: bowline login --server " + server +
               " --accept-fingerprint " + trust.seen;
    throw CertificateError(CertificateError::Kind::Mismatch, message, trust.seen, "");
  }
  if (!trust.pinned.empty() || trust.seen.empty() || !(verify_failed || !trust.problem.empty()))
    return;
  const auto reason = trust.problem.empty() ? detail : trust.problem;
  throw CertificateError(
      CertificateError::Kind::Unverified,
      "the certificate of " + server + " cannot be verified (" + reason + "); its fingerprint is " +
          trust.seen +
          ". If that is the server's (bowline server prints it at start), pin it with "
          "bowline login --server " +
          server + " (it asks) or bowline login --server " + server + " --accept-fingerprint " +
          trust.seen,
      trust.seen, reason);
}

}  // namespace bowline::cli
