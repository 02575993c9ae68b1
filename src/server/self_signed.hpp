// A self-signed certificate for a server that has none given: an ECDSA P-256 key and an X.509
// certificate whose subjectAltName names what clients reach the server by (plain OpenSSL; no
// Beast or Asio here).
#pragma once

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

namespace bowline::server {

struct CertificateNames {
  std::vector<std::string> dns;  // host names: this host's, localhost
  std::vector<std::string> ips;  // IPv4 and IPv6 addresses
};

// The names for a server listening on `address`: the host name, localhost, 127.0.0.1 and ::1,
// and the address itself, or for a wildcard (0.0.0.0, ::) every address of this host's
// interfaces (without IPv6 link-local ones, which need a zone).
CertificateNames certificate_names(const std::string& address);

// Writes a new key (mode 0600) and its certificate (0644, valid for `validity` from an hour
// ago, CN the first DNS name), each through a temporary file and a rename, the key first.
// std::runtime_error naming the file or the OpenSSL step that failed.
void write_self_signed(const std::filesystem::path& cert, const std::filesystem::path& key,
                       const CertificateNames& names, std::chrono::hours validity);

}  // namespace bowline::server
