// The server's TLS contexts: the certificate given, and others chosen by the host name the
// client asks for (SNI), such as a preview domain's wildcard.
#include <openssl/ssl.h>

#include "api/http_server_wire.hpp"
#include "util/strings.hpp"

namespace bowline::api {

namespace {

void load_into(asio::ssl::context& context, const TlsFiles& files) {
  SSL_CTX_set_min_proto_version(context.native_handle(), TLS1_2_VERSION);
  context.set_options(asio::ssl::context::default_workarounds | asio::ssl::context::single_dh_use);
  error_code ec;
  context.use_certificate_chain_file(files.certificate_chain, ec);
  if (ec)
    throw std::runtime_error("cannot load the TLS certificate " + files.certificate_chain + ": " +
                             ec.message());
  context.use_private_key_file(files.private_key, asio::ssl::context::pem, ec);
  if (ec)
    throw std::runtime_error("cannot load the TLS key " + files.private_key + ": " + ec.message());
  if (SSL_CTX_check_private_key(context.native_handle()) != 1)
    throw std::runtime_error("the TLS key " + files.private_key +
                             " does not belong to the certificate " + files.certificate_chain);
}

// OpenSSL's SNI callback: a name that ends in a HostTls suffix gets that certificate; any
// other (or none) keeps the server's own.
int pick_certificate(SSL* ssl, int*, void* arg) {
  const auto* impl = static_cast<const HttpServer::Impl*>(arg);
  const char* name = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name);
  if (!name) return SSL_TLSEXT_ERR_OK;
  const auto host = util::to_lower(name);
  for (const auto& [suffix, context] : impl->host_tls)
    if (host.size() > suffix.size() && host.ends_with(suffix)) {
      SSL_set_SSL_CTX(ssl, const_cast<asio::ssl::context&>(context).native_handle());
      break;
    }
  return SSL_TLSEXT_ERR_OK;
}

}  // namespace

void HttpServer::Impl::load_tls() {
  tls.emplace(asio::ssl::context::tls_server);
  load_into(*tls, *options.tls);
  for (const auto& named : options.host_tls) {
    auto& [suffix, context] =
        host_tls.emplace_back(util::to_lower(named.suffix), asio::ssl::context::tls_server);
    load_into(context, named.files);
  }
  if (host_tls.empty()) return;
  SSL_CTX_set_tlsext_servername_callback(tls->native_handle(), pick_certificate);
  SSL_CTX_set_tlsext_servername_arg(tls->native_handle(), this);
}

}  // namespace bowline::api
