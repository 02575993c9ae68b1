#include "server/self_signed.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <functional>
#include <memory>
#include <stdexcept>

namespace bowline::server {

namespace fs = std::filesystem;

namespace {

template <class T, void (*Free)(T*)>
struct Deleter {
  void operator()(T* p) const { Free(p); }
};
using Key = std::unique_ptr<EVP_PKEY, Deleter<EVP_PKEY, EVP_PKEY_free>>;
using Cert = std::unique_ptr<X509, Deleter<X509, X509_free>>;
using Bio = std::unique_ptr<BIO, Deleter<BIO, BIO_free_all>>;
using Extension = std::unique_ptr<X509_EXTENSION, Deleter<X509_EXTENSION, X509_EXTENSION_free>>;
using Bignum = std::unique_ptr<BIGNUM, Deleter<BIGNUM, BN_free>>;

[[noreturn]] void fail(const std::string& step) {
  char reason[256] = "unknown error";
  if (const auto code = ERR_get_error()) ERR_error_string_n(code, reason, sizeof reason);
  ERR_clear_error();
  throw std::runtime_error("cannot make a self-signed certificate: " + step + ": " + reason);
}

void add(std::vector<std::string>& list, std::string value) {
  if (std::find(list.begin(), list.end(), value) == list.end()) list.push_back(std::move(value));
}

// A host name OpenSSL's "DNS:" takes: letters, digits, '-' and '.'.
bool is_host_name(const std::string& name) {
  if (name.empty() || name.size() > 253) return false;
  return std::all_of(name.begin(), name.end(),
                     [](unsigned char c) { return std::isalnum(c) || c == '-' || c == '.'; });
}

void add_interface_addresses(bool v4, bool v6, std::vector<std::string>& ips) {
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return;
  for (auto* a = list; a; a = a->ifa_next) {
    if (!a->ifa_addr) continue;
    char text[INET6_ADDRSTRLEN] = {0};
    if (a->ifa_addr->sa_family == AF_INET && v4) {
      const auto* in = reinterpret_cast<const sockaddr_in*>(a->ifa_addr);
      if (::inet_ntop(AF_INET, &in->sin_addr, text, sizeof text)) add(ips, text);
    } else if (a->ifa_addr->sa_family == AF_INET6 && v6) {
      const auto* in = reinterpret_cast<const sockaddr_in6*>(a->ifa_addr);
      if (IN6_IS_ADDR_LINKLOCAL(&in->sin6_addr)) continue;
      if (::inet_ntop(AF_INET6, &in->sin6_addr, text, sizeof text)) add(ips, text);
    }
  }
  ::freeifaddrs(list);
}

std::string pem_of(const std::function<int(BIO*)>& write, const char* what) {
  Bio bio(BIO_new(BIO_s_mem()));
  if (!bio || write(bio.get()) != 1) fail(std::string("writing the ") + what);
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<std::size_t>(size));
}

void add_extension(X509* cert, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, cert, cert, nullptr, nullptr, 0);
  Extension ext(X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str()));
  if (!ext || X509_add_ext(cert, ext.get(), -1) != 1)
    fail(std::string("the extension ") + OBJ_nid2sn(nid) + " = " + value);
}

std::string alt_names(const CertificateNames& names) {
  std::string out;
  for (const auto& dns : names.dns) out += (out.empty() ? "" : ",") + std::string("DNS:") + dns;
  for (const auto& ip : names.ips) out += (out.empty() ? "" : ",") + std::string("IP:") + ip;
  return out;
}

void set_identity(X509* cert, const CertificateNames& names, std::chrono::hours validity) {
  // A random 127-bit serial: positive, and unique enough that no two of ours collide.
  Bignum serial(BN_new());
  if (!serial || BN_rand(serial.get(), 127, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY) != 1 ||
      !BN_to_ASN1_INTEGER(serial.get(), X509_get_serialNumber(cert)))
    fail("the serial number");
  if (X509_set_version(cert, X509_VERSION_3) != 1 ||
      !X509_gmtime_adj(X509_getm_notBefore(cert), -3600) ||
      !X509_gmtime_adj(X509_getm_notAfter(cert),
                       std::chrono::duration_cast<std::chrono::seconds>(validity).count()))
    fail("the validity");
  X509_NAME* subject = X509_get_subject_name(cert);
  const auto common_name = names.dns.empty() ? std::string("bowline") : names.dns.front();
  if (X509_NAME_add_entry_by_txt(subject, "O", MBSTRING_UTF8,
                                 reinterpret_cast<const unsigned char*>("bowline"), -1, -1,
                                 0) != 1 ||
      X509_NAME_add_entry_by_txt(subject, "CN", MBSTRING_UTF8,
                                 reinterpret_cast<const unsigned char*>(common_name.c_str()), -1,
                                 -1, 0) != 1 ||
      X509_set_issuer_name(cert, subject) != 1)
    fail("the subject");
}

std::pair<std::string, std::string> make_pair_pem(const CertificateNames& names,
                                                  std::chrono::hours validity) {
  Key key(EVP_EC_gen("P-256"));
  if (!key) fail("the P-256 key");
  Cert cert(X509_new());
  if (!cert) fail("a certificate");
  set_identity(cert.get(), names, validity);
  if (X509_set_pubkey(cert.get(), key.get()) != 1) fail("the public key");
  // An end-entity certificate (Firefox refuses a CA certificate as a server's), for TLS servers.
  add_extension(cert.get(), NID_basic_constraints, "critical,CA:FALSE");
  add_extension(cert.get(), NID_key_usage, "critical,digitalSignature");
  add_extension(cert.get(), NID_ext_key_usage, "serverAuth");
  add_extension(cert.get(), NID_subject_key_identifier, "hash");
  add_extension(cert.get(), NID_subject_alt_name, alt_names(names));
  if (X509_sign(cert.get(), key.get(), EVP_sha256()) <= 0) fail("signing");
  auto key_pem = pem_of(
      [&](BIO* b) {
        return PEM_write_bio_PrivateKey(b, key.get(), nullptr, nullptr, 0, nullptr, nullptr);
      },
      "key");
  auto cert_pem = pem_of([&](BIO* b) { return PEM_write_bio_X509(b, cert.get()); }, "certificate");
  return {std::move(cert_pem), std::move(key_pem)};
}

// Through a temporary file in the same directory and a rename: never half a file.
void write_file(const fs::path& file, const std::string& text, mode_t mode) {
  const auto temp = file.string() + ".tmp." + std::to_string(::getpid());
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode);
  if (fd < 0) throw std::runtime_error("cannot write " + temp + ": " + std::strerror(errno));
  ::fchmod(fd, mode);
  std::size_t done = 0;
  while (done < text.size()) {
    const auto n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<std::size_t>(n);
  }
  const bool ok = done == text.size() && ::fsync(fd) == 0;
  const auto reason = std::strerror(errno);
  ::close(fd);
  if (!ok || ::rename(temp.c_str(), file.c_str()) != 0) {
    ::unlink(temp.c_str());
    throw std::runtime_error("cannot write " + file.string() + ": " + reason);
  }
}

}  // namespace

CertificateNames certificate_names(const std::string& address) {
  CertificateNames names;
  char host[256] = {0};
  if (::gethostname(host, sizeof host - 1) == 0 && is_host_name(host)) add(names.dns, host);
  add(names.dns, "localhost");
  if (address == "0.0.0.0" || address == "::") {
    add_interface_addresses(true, address == "::", names.ips);
  } else {
    add(names.ips, address);
  }
  add(names.ips, "127.0.0.1");
  add(names.ips, "::1");
  return names;
}

void write_self_signed(const fs::path& cert, const fs::path& key, const CertificateNames& names,
                       std::chrono::hours validity) {
  const auto [cert_pem, key_pem] = make_pair_pem(names, validity);
  write_file(key, key_pem, 0600);
  write_file(cert, cert_pem, 0644);
}

}  // namespace bowline::server
