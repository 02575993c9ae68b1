// Which server certificates the CLI accepts, the same for libcurl (HTTP) and Beast
// (WebSocket): a fingerprint pinned for the server (bowline login) must match exactly, whatever
// else the certificate says; without a pin, the system's trust store and the host name decide.
// The check runs inside the TLS handshake, so nothing (no token) is sent to a server that
// fails it.
#pragma once

#include <string>

#include "cli/app.hpp"
#include "cli/client.hpp"

typedef struct ssl_ctx_st SSL_CTX;  // OpenSSL's, as <openssl/types.h> declares it

namespace bowline::cli {

// One connection's rule and what its handshake saw.
struct TlsTrust {
  std::string pinned;   // "SHA256:..."; empty: the trust store decides
  std::string seen;     // the server certificate's fingerprint, once it has arrived
  std::string problem;  // why the trust store refused it (OpenSSL's words); empty: it did not
  bool mismatch = false;
};

// Holds the handshakes of `ctx` to `trust` (which must outlive them). Also adds OpenSSL's
// default trust store (the system's, or SSL_CERT_FILE and SSL_CERT_DIR when set) to the
// context. Without a pin the caller still checks the host name (curl does by itself).
void hold_to(SSL_CTX* ctx, TlsTrust& trust);

// A server whose certificate was not trusted: either it cannot be verified (and has no pin),
// or it is not the pinned one. Exit code kExitUnreachable.
class CertificateError : public CliError {
 public:
  enum class Kind { Unverified, Mismatch };
  CertificateError(Kind kind, const std::string& message, std::string seen, std::string reason)
      : CliError(kExitUnreachable, message),
        kind_(kind),
        seen_(std::move(seen)),
        reason_(std::move(reason)) {}
  Kind kind() const { return kind_; }
  const std::string& seen() const { return seen_; }      // the server's fingerprint
  const std::string& reason() const { return reason_; }  // why it cannot be verified

 private:
  Kind kind_;
  std::string seen_, reason_;
};

// After a failed connection: throws CertificateError when the certificate was the reason.
// `verify_failed`: the library says verification failed; `detail`: its words for it.
void throw_if_untrusted(const TlsTrust& trust, const Endpoint& endpoint, bool verify_failed,
                        const std::string& detail);

// The TlsTrust for a connection to `endpoint`.
TlsTrust trust_for(const Endpoint& endpoint);
bool is_https(const std::string& server);

}  // namespace bowline::cli
