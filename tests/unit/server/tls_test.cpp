// HTTPS settings and the self-signed certificate: both files or neither, the modes, which
// listen addresses get HTTPS, and the pair made once in the data directory (key 0600) with the
// names clients use, then kept.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <memory>

#include "../common/scratch_files.hpp"
#include "server/self_signed.hpp"
#include "server/settings.hpp"
#include "server/tls.hpp"

namespace bowline::server::testing {
namespace {

namespace fs = std::filesystem;
using test_support::TempDir;

std::string settings_error(const SettingsInput& in) {
  try {
    resolve_settings(in);
  } catch (const SettingsError& e) {
    return e.what();
  }
  return "accepted";
}

TEST(security_tls_settings, BothFilesOrNeitherAndAModeThatFits) {
  SettingsInput in;
  in.cwd = "/start";
  auto s = resolve_settings(in);
  EXPECT_TRUE(s.tls_cert.empty());
  EXPECT_EQ(s.tls_mode, TlsMode::Auto);
  in.flags = {{"server.tls.cert", "c.pem"}, {"server.tls.key", "k.pem"}};
  s = resolve_settings(in);
  EXPECT_EQ(s.tls_cert, fs::path("/start/c.pem"));
  EXPECT_EQ(s.tls_key, fs::path("/start/k.pem"));
  EXPECT_NE(describe_settings(s).find("flag (--tls-cert)"), std::string::npos);

  in.flags = {{"server.tls.cert", "c.pem"}};
  EXPECT_NE(settings_error(in).find("server.tls.cert (flag --tls-cert) is set but server.tls.key "
                                    "is not"),
            std::string::npos)
      << settings_error(in);
  in.flags = {};
  in.env = {{"BOWLINE_TLS_KEY", "k.pem"}};
  EXPECT_NE(settings_error(in).find("server.tls.key (environment variable BOWLINE_TLS_KEY) is set"),
            std::string::npos)
      << settings_error(in);
  in.env = {{"BOWLINE_TLS_KEY", "k.pem"}, {"BOWLINE_TLS_CERT", "c.pem"}};
  for (const auto& mode : {"self-signed", "off"}) {
    in.flags = {{"server.tls.mode", mode}};
    EXPECT_NE(settings_error(in).find("keep one of them"), std::string::npos) << mode;
  }
  in.env = {};
  for (const auto& [text, mode] : std::vector<std::pair<std::string, TlsMode>>{
           {"auto", TlsMode::Auto}, {"Self-Signed", TlsMode::SelfSigned}, {"off", TlsMode::Off}}) {
    in.flags = {{"server.tls.mode", text}};
    EXPECT_EQ(resolve_settings(in).tls_mode, mode) << text;
  }
  in.flags = {{"server.tls.mode", "on"}};
  EXPECT_NE(settings_error(in).find("none of auto, self-signed and off"), std::string::npos);
}

TEST(security_tls_settings, TheConfigFileHasATlsSection) {
  TempDir dir;
  std::ofstream(dir.path() / "bowline.yaml")
      << "server:\n  tls:\n    cert: /etc/b/cert.pem\n    key: /etc/b/key.pem\n";
  SettingsInput in;
  in.config_file = dir.path() / "bowline.yaml";
  const auto s = resolve_settings(in);
  EXPECT_EQ(s.tls_cert, fs::path("/etc/b/cert.pem"));
  EXPECT_EQ(s.sources.at("server.tls.key"), SettingSource::File);
  std::ofstream(dir.path() / "bowline.yaml") << "server:\n  tls:\n    certificate: x\n";
  EXPECT_NE(settings_error(in).find("unknown setting server.tls.certificate"), std::string::npos)
      << settings_error(in);
}

TEST(security_tls_plan, LoopbackIsPlainHttpAnythingElseHttpsUnlessOff) {
  EXPECT_TRUE(is_loopback_address("127.0.0.1"));
  EXPECT_TRUE(is_loopback_address("127.8.9.10"));
  EXPECT_TRUE(is_loopback_address("::1"));
  EXPECT_TRUE(is_loopback_address("::ffff:127.0.0.1"));
  for (const auto* other : {"0.0.0.0", "::", "192.0.2.1", "10.0.0.1", "::ffff:10.0.0.1", "fe80::1"})
    EXPECT_FALSE(is_loopback_address(other)) << other;

  ServerSettings s;
  s.data_dir = "/var/lib/bowline";
  s.listen = "127.0.0.1:7470";
  EXPECT_EQ(plan_tls(s).kind, TlsPlan::Kind::Off);
  EXPECT_EQ(plan_tls(s).reason, "the listen address is loopback");
  s.listen = "0.0.0.0:7470";
  auto plan = plan_tls(s);
  EXPECT_EQ(plan.kind, TlsPlan::Kind::SelfSigned);
  EXPECT_EQ(plan.cert, fs::path("/var/lib/bowline/tls-cert.pem"));
  EXPECT_EQ(plan.key, fs::path("/var/lib/bowline/tls-key.pem"));
  s.tls_mode = TlsMode::Off;
  EXPECT_EQ(plan_tls(s).kind, TlsPlan::Kind::Off);
  s.listen = "[::1]:7470";
  s.tls_mode = TlsMode::SelfSigned;
  EXPECT_EQ(plan_tls(s).kind, TlsPlan::Kind::SelfSigned);
  s.tls_mode = TlsMode::Auto;
  s.tls_cert = "/etc/c.pem";
  s.tls_key = "/etc/k.pem";
  plan = plan_tls(s);
  EXPECT_EQ(plan.kind, TlsPlan::Kind::Given);
  EXPECT_EQ(plan.cert, fs::path("/etc/c.pem"));
  EXPECT_EQ(plan.key, fs::path("/etc/k.pem"));
}

using X509Ptr = std::unique_ptr<X509, decltype(&X509_free)>;

X509Ptr read_certificate(const fs::path& file) {
  FILE* f = std::fopen(file.c_str(), "r");
  X509* cert = f ? PEM_read_X509(f, nullptr, nullptr, nullptr) : nullptr;
  if (f) std::fclose(f);
  return X509Ptr(cert, &X509_free);
}

// Verifies as its own trust anchor for `host` (what a client that was given it does).
bool verifies_for(X509* cert, const std::string& host) {
  X509_STORE* store = X509_STORE_new();
  X509_STORE_add_cert(store, cert);
  X509_STORE_CTX* ctx = X509_STORE_CTX_new();
  X509_STORE_CTX_init(ctx, store, cert, nullptr);
  X509_VERIFY_PARAM* param = X509_STORE_CTX_get0_param(ctx);
  unsigned char address[16];
  if (::inet_pton(AF_INET, host.c_str(), address) == 1 ||
      ::inet_pton(AF_INET6, host.c_str(), address) == 1)
    X509_VERIFY_PARAM_set1_ip_asc(param, host.c_str());
  else
    X509_VERIFY_PARAM_set1_host(param, host.c_str(), 0);
  const bool ok = X509_verify_cert(ctx) == 1;
  X509_STORE_CTX_free(ctx);
  X509_STORE_free(store);
  return ok;
}

TEST(security_tls_self_signed, MadeAtTheFirstStartWithItsNamesThenKept) {
  TempDir dir;
  ServerSettings s;
  s.data_dir = dir.path();
  s.listen = "192.0.2.10:7470";  // never bound here: the plan and the files only
  EXPECT_NE(describe_tls(s).find("made at the first start"), std::string::npos) << describe_tls(s);
  const auto first = prepare_tls(s, plan_tls(s));
  ASSERT_TRUE(first.has_value());
  EXPECT_TRUE(first->made_now);
  EXPECT_TRUE(first->self_signed);
  EXPECT_EQ(first->cert, dir.path() / "tls-cert.pem");
  struct stat st {};
  ASSERT_EQ(::stat(first->key.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(::stat(first->cert.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
  EXPECT_EQ(first->fingerprint.rfind("SHA256:", 0), 0u);
  EXPECT_EQ(first->fingerprint.size(), 7u + 43u);
  EXPECT_NE(describe_ready(*first).find("self-signed, made now"), std::string::npos);
  EXPECT_NE(describe_tls(s).find("fingerprint " + first->fingerprint), std::string::npos)
      << describe_tls(s);

  const auto cert = read_certificate(first->cert);
  ASSERT_TRUE(cert);
  char host[256] = {0};
  ::gethostname(host, sizeof host - 1);
  for (const auto& name :
       std::vector<std::string>{"192.0.2.10", "127.0.0.1", "::1", "localhost", host})
    EXPECT_TRUE(verifies_for(cert.get(), name)) << name;
  EXPECT_FALSE(verifies_for(cert.get(), "192.0.2.11"));
  EXPECT_EQ(X509_check_ca(cert.get()), 0) << "a server's certificate, not a CA's";

  const auto again = prepare_tls(s, plan_tls(s));
  ASSERT_TRUE(again.has_value());
  EXPECT_FALSE(again->made_now);
  EXPECT_EQ(again->fingerprint, first->fingerprint);
  EXPECT_NE(describe_ready(*again).find("made at an earlier start"), std::string::npos);

  // Half a pair is not completed behind the operator's back.
  fs::remove(first->key);
  try {
    prepare_tls(s, plan_tls(s));
    ADD_FAILURE() << "half a pair was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("but not " + first->key.string()), std::string::npos)
        << e.what();
  }
}

TEST(security_tls_self_signed, AWildcardListenNamesTheHostsAddresses) {
  const auto names = certificate_names("0.0.0.0");
  EXPECT_NE(std::find(names.ips.begin(), names.ips.end(), "127.0.0.1"), names.ips.end());
  EXPECT_EQ(std::find(names.ips.begin(), names.ips.end(), "0.0.0.0"), names.ips.end());
  EXPECT_NE(std::find(names.dns.begin(), names.dns.end(), "localhost"), names.dns.end());
  const auto one = certificate_names("198.51.100.7");
  EXPECT_EQ(one.ips.front(), "198.51.100.7");
}

TEST(security_tls_given, ItsFingerprintOrWhyItCannotBeRead) {
  TempDir dir;
  ServerSettings s;
  s.data_dir = dir.path();
  s.tls_cert = dir.path() / "missing.pem";
  s.tls_key = dir.path() / "missing-key.pem";
  EXPECT_NE(describe_tls(s).find("cannot read the TLS certificate"), std::string::npos)
      << describe_tls(s);
  EXPECT_THROW(prepare_tls(s, plan_tls(s)), std::runtime_error);
  write_self_signed(s.tls_cert, s.tls_key, certificate_names("127.0.0.1"), std::chrono::hours(24));
  const auto ready = prepare_tls(s, plan_tls(s));
  ASSERT_TRUE(ready.has_value());
  EXPECT_FALSE(ready->self_signed);
  EXPECT_EQ(ready->fingerprint, certificate_file_fingerprint(s.tls_cert));
  EXPECT_NE(describe_ready(*ready).find("(given)"), std::string::npos);
}

}  // namespace
}  // namespace bowline::server::testing
