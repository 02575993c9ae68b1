// A TLS certificate's fingerprint, in the one form bowline shows and takes everywhere (the
// server's log and --print-config, the CLI's prompts, pins and --accept-fingerprint):
// "SHA256:" and the unpadded base64 of the SHA-256 of the certificate's DER, as OpenSSH
// writes key fingerprints (and as bowline shows guests' host keys).
#pragma once

#include <string>
#include <string_view>

namespace bowline::util {

std::string certificate_fingerprint(std::string_view der);
// The fingerprint of the first certificate in a PEM text; std::runtime_error when it holds none.
std::string pem_certificate_fingerprint(std::string_view pem);
// Whether `text` has the form above (43 base64 characters after "SHA256:").
bool is_certificate_fingerprint(std::string_view text);

}  // namespace bowline::util
