// Which certificate `bowline server` serves HTTPS with: the one given (server.tls.cert and
// .key), a self-signed one it makes in its data directory at the first start and keeps
// (server.tls.mode auto off loopback, or self-signed), or none (plain HTTP).
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "server/settings.hpp"

namespace bowline::server {

// 127.0.0.0/8, ::1 and ::ffff:127.0.0.0/104.
bool is_loopback_address(const std::string& address);

struct TlsPlan {
  enum class Kind { Off, Given, SelfSigned };
  Kind kind = Kind::Off;
  std::filesystem::path cert, key;
  std::string reason;  // why, in a few words ("the listen address is loopback")
};
TlsPlan plan_tls(const ServerSettings& settings);

// Where the self-signed pair lives: <data_dir>/tls-cert.pem and <data_dir>/tls-key.pem.
std::filesystem::path self_signed_cert_path(const ServerSettings& settings);
std::filesystem::path self_signed_key_path(const ServerSettings& settings);

struct TlsReady {
  std::filesystem::path cert, key;
  std::string fingerprint;  // util::certificate_fingerprint form
  bool self_signed = false;
  bool made_now = false;
};

// For a plan that serves HTTPS: the certificate's fingerprint, after making the self-signed
// pair when neither file exists yet; nullopt for plain HTTP. std::runtime_error when a file
// cannot be read or made, or only one of the self-signed pair exists.
std::optional<TlsReady> prepare_tls(const ServerSettings& settings, const TlsPlan& plan);

// The certificate for preview hosts (SNI): the one given (server.preview.cert and .key), or,
// when the server makes its own, a self-signed one for *.DOMAIN in the data directory
// (preview-DOMAIN-cert.pem); nullopt without previews, without HTTPS, or when the server's
// given certificate is to serve them too. Throws as prepare_tls.
std::optional<TlsReady> prepare_preview_tls(const ServerSettings& settings, const TlsPlan& plan);

// "TLS certificate FILE (how), fingerprint SHA256:...": the server's line at start.
std::string describe_ready(const TlsReady& ready);
// One line for --print-config: plain HTTP and why, or the certificate and its fingerprint
// (a self-signed one that is not made yet says so; nothing is made here).
std::string describe_tls(const ServerSettings& settings);

// The fingerprint of the first certificate in a PEM file; std::runtime_error naming the file.
std::string certificate_file_fingerprint(const std::filesystem::path& file);

}  // namespace bowline::server
