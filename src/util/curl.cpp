#include "util/curl.hpp"

#include <mutex>
#include <stdexcept>

namespace bowline::util {

CurlEasy curl_easy() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
      throw std::runtime_error("libcurl failed to initialise");
  });
  CurlEasy handle(curl_easy_init());
  if (!handle) throw std::runtime_error("libcurl could not make a handle");
  return handle;
}

void curl_request_basics(CURL* handle, const std::string& url,
                         std::chrono::seconds connect_timeout) {
  curl_easy_setopt(handle, CURLOPT_URL, url.c_str());
  curl_easy_setopt(handle, CURLOPT_PROTOCOLS_STR, "https,http");
  curl_easy_setopt(handle, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(handle, CURLOPT_CONNECTTIMEOUT, static_cast<long>(connect_timeout.count()));
}

std::size_t curl_append(char* data, std::size_t size, std::size_t count, void* string) {
  static_cast<std::string*>(string)->append(data, size * count);
  return size * count;
}

}  // namespace bowline::util
