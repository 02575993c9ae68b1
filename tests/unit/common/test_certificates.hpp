// TLS certificates for tests, made by the `openssl` command: a self-signed P-256 pair valid for
// two days whose subjectAltName is what the test says (127.0.0.1 and localhost by default).
#pragma once

#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>

namespace bowline::test_support {

struct TestCertificate {
  std::filesystem::path cert, key;
};

inline TestCertificate make_test_certificate(
    const std::filesystem::path& dir, const std::string& name,
    const std::string& alt_names = "IP:127.0.0.1,DNS:localhost") {
  TestCertificate out{dir / (name + "-cert.pem"), dir / (name + "-key.pem")};
  const std::string command =
      "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj "
      "/CN=" +
      name + " -addext subjectAltName=" + alt_names + " -keyout '" + out.key.string() + "' -out '" +
      out.cert.string() + "' 2>/dev/null";
  if (std::system(command.c_str()) != 0) throw std::runtime_error("openssl req failed: " + command);
  return out;
}

}  // namespace bowline::test_support
