#include "kubevirt/curl_client.hpp"
#include "kubevirt/ws_stream.hpp"
#include "util/curl.hpp"

#include <curl/curl.h>

#include <memory>
#include <mutex>

namespace bowline::kubevirt {
namespace {

// A blob option pointing at `pem`, which libcurl copies.
void set_blob(CURL* handle, CURLoption option, const std::string& pem) {
  curl_blob blob{const_cast<char*>(pem.data()), pem.size(), CURL_BLOB_COPY};
  curl_easy_setopt(handle, option, &blob);
}

}  // namespace

void set_trust_and_identity(CURL* h, const Connection& c) {
  // Trust.
  if (!c.ca_pem.empty()) set_blob(h, CURLOPT_CAINFO_BLOB, c.ca_pem);
  if (!c.ca_file.empty()) curl_easy_setopt(h, CURLOPT_CAINFO, c.ca_file.c_str());
  if (c.insecure_skip_tls_verify) {
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
  }
  // Identity.
  if (!c.client_cert_pem.empty()) {
    set_blob(h, CURLOPT_SSLCERT_BLOB, c.client_cert_pem);
    curl_easy_setopt(h, CURLOPT_SSLCERTTYPE, "PEM");
  } else if (!c.client_cert_file.empty()) {
    curl_easy_setopt(h, CURLOPT_SSLCERT, c.client_cert_file.c_str());
  }
  if (!c.client_key_pem.empty()) {
    set_blob(h, CURLOPT_SSLKEY_BLOB, c.client_key_pem);
    curl_easy_setopt(h, CURLOPT_SSLKEYTYPE, "PEM");
  } else if (!c.client_key_file.empty()) {
    curl_easy_setopt(h, CURLOPT_SSLKEY, c.client_key_file.c_str());
  }
}

CurlKubeClient::CurlKubeClient(Connection connection, std::chrono::seconds timeout)
    : c_(std::move(connection)), timeout_(timeout) {}

HttpResponse CurlKubeClient::send(const std::string& method, const std::string& target,
                                  const std::string& content_type, const std::string& body) {
  util::CurlEasy handle;
  try {
    handle = util::curl_easy();
  } catch (const std::runtime_error& e) {
    throw TransportError(e.what());
  }
  CURL* h = handle.get();

  const std::string url = c_.server + target;
  util::curl_request_basics(h, url, std::chrono::seconds(10));
  curl_easy_setopt(h, CURLOPT_TIMEOUT, static_cast<long>(timeout_.count()));
  curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method.c_str());
  if (!body.empty()) {
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, body.data());
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
  }

  curl_slist* raw = nullptr;
  raw = curl_slist_append(raw, "Accept: application/json");
  if (!content_type.empty())
    raw = curl_slist_append(raw, ("Content-Type: " + content_type).c_str());
  if (!c_.token.empty())
    raw = curl_slist_append(raw, ("Authorization: Bearer " + c_.token).c_str());
  // libcurl would add "Expect: 100-continue" to large bodies; the API server needs no such step.
  raw = curl_slist_append(raw, "Expect:");
  util::CurlList headers(raw);
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers.get());

  set_trust_and_identity(h, c_);

  HttpResponse response;
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, util::curl_append);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &response.body);
  char error[CURL_ERROR_SIZE] = {};
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, error);

  const CURLcode code = curl_easy_perform(h);
  if (code != CURLE_OK)
    throw TransportError(method + " " + url + ": " +
                         (error[0] ? std::string(error) : curl_easy_strerror(code)));
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &response.status);
  return response;
}

int CurlKubeClient::open_stream(const std::string& target, const std::string& subprotocol) {
  return open_websocket_stream(c_, target, subprotocol, std::chrono::seconds(10));
}

}  // namespace bowline::kubevirt
