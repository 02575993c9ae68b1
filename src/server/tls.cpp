#include "server/tls.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <fstream>
#include <sstream>
#include <stdexcept>

#include "api/http_server.hpp"
#include "server/self_signed.hpp"
#include "util/files.hpp"
#include "util/tls_fingerprint.hpp"

namespace bowline::server {

namespace fs = std::filesystem;

namespace {

// Long enough not to surprise anyone; rotating is deleting the pair (docs/tls.md).
constexpr std::chrono::hours kSelfSignedValidity{24 * 3650};

bool file_exists(const fs::path& file) {
  std::error_code ec;
  return fs::exists(file, ec);
}

}  // namespace

bool is_loopback_address(const std::string& address) {
  in_addr v4{};
  in6_addr v6{};
  if (::inet_pton(AF_INET, address.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  if (::inet_pton(AF_INET6, address.c_str(), &v6) != 1) return false;
  return IN6_IS_ADDR_LOOPBACK(&v6) || (IN6_IS_ADDR_V4MAPPED(&v6) && v6.s6_addr[12] == 127);
}

fs::path self_signed_cert_path(const ServerSettings& settings) {
  return settings.data_dir / "tls-cert.pem";
}
fs::path self_signed_key_path(const ServerSettings& settings) {
  return settings.data_dir / "tls-key.pem";
}

TlsPlan plan_tls(const ServerSettings& settings) {
  TlsPlan plan;
  if (!settings.tls_cert.empty()) {
    plan.kind = TlsPlan::Kind::Given;
    plan.cert = settings.tls_cert;
    plan.key = settings.tls_key;
    plan.reason = "server.tls.cert";
    return plan;
  }
  const auto address = api::split_listen_address(settings.listen).first;
  if (settings.tls_mode == TlsMode::Off) {
    plan.reason = "server.tls.mode is off";
    return plan;
  }
  if (settings.tls_mode == TlsMode::Auto && is_loopback_address(address)) {
    plan.reason = "the listen address is loopback";
    return plan;
  }
  plan.kind = TlsPlan::Kind::SelfSigned;
  plan.cert = self_signed_cert_path(settings);
  plan.key = self_signed_key_path(settings);
  plan.reason = settings.tls_mode == TlsMode::SelfSigned ? "server.tls.mode is self-signed"
                                                         : "the listen address is not loopback";
  return plan;
}

std::string certificate_file_fingerprint(const fs::path& file) {
  const auto text = util::read_file(file.string());
  if (!text) throw std::runtime_error("cannot read the TLS certificate " + file.string());
  try {
    return util::pem_certificate_fingerprint(*text);
  } catch (const std::runtime_error& e) {
    throw std::runtime_error("the TLS certificate " + file.string() + ": " + e.what());
  }
}

std::optional<TlsReady> prepare_tls(const ServerSettings& settings, const TlsPlan& plan) {
  if (plan.kind == TlsPlan::Kind::Off) return std::nullopt;
  TlsReady ready;
  ready.cert = plan.cert;
  ready.key = plan.key;
  ready.self_signed = plan.kind == TlsPlan::Kind::SelfSigned;
  if (ready.self_signed) {
    const bool cert = file_exists(plan.cert), key = file_exists(plan.key);
    if (cert != key)
      throw std::runtime_error("found " + (cert ? plan.cert : plan.key).string() + " but not " +
                               (cert ? plan.key : plan.cert).string() +
                               ": delete it to have a new self-signed pair made");
    if (!cert) {
      const auto address = api::split_listen_address(settings.listen).first;
      write_self_signed(plan.cert, plan.key, certificate_names(address), kSelfSignedValidity);
      ready.made_now = true;
    }
  }
  ready.fingerprint = certificate_file_fingerprint(plan.cert);
  return ready;
}

std::optional<TlsReady> prepare_preview_tls(const ServerSettings& settings, const TlsPlan& plan) {
  if (settings.preview_domain.empty() || plan.kind == TlsPlan::Kind::Off) return std::nullopt;
  if (settings.preview_cert.empty() != settings.preview_key.empty())
    throw std::runtime_error("server.preview.cert and server.preview.key go together: give both");
  TlsReady ready;
  if (!settings.preview_cert.empty()) {
    ready.cert = settings.preview_cert;
    ready.key = settings.preview_key;
  } else {
    if (plan.kind != TlsPlan::Kind::SelfSigned) return std::nullopt;
    ready.self_signed = true;
    ready.cert = settings.data_dir / ("preview-" + settings.preview_domain + "-cert.pem");
    ready.key = settings.data_dir / ("preview-" + settings.preview_domain + "-key.pem");
    if (!file_exists(ready.cert) || !file_exists(ready.key)) {
      write_self_signed(ready.cert, ready.key, {{"*." + settings.preview_domain}, {}},
                        kSelfSignedValidity);
      ready.made_now = true;
    }
  }
  ready.fingerprint = certificate_file_fingerprint(ready.cert);
  return ready;
}

std::string describe_ready(const TlsReady& ready) {
  const std::string how = !ready.self_signed ? "given"
                          : ready.made_now   ? "self-signed, made now"
                                             : "self-signed, made at an earlier start";
  return "TLS certificate " + ready.cert.string() + " (" + how + "), fingerprint " +
         ready.fingerprint;
}

std::string describe_tls(const ServerSettings& settings) {
  const auto plan = plan_tls(settings);
  if (plan.kind == TlsPlan::Kind::Off) return "tls: off, plain HTTP (" + plan.reason + ")\n";
  std::string line = "tls: HTTPS with ";
  line += plan.kind == TlsPlan::Kind::Given ? "" : "the self-signed ";
  line += plan.cert.string() + " (" + plan.reason + ")";
  if (plan.kind == TlsPlan::Kind::SelfSigned && !file_exists(plan.cert))
    return line + ", made at the first start\n";
  try {
    return line + ", fingerprint " + certificate_file_fingerprint(plan.cert) + "\n";
  } catch (const std::runtime_error& e) {
    return line + ": " + e.what() + "\n";
  }
}

}  // namespace bowline::server
