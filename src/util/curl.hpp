// libcurl, set up once per process for every folder that speaks HTTP (image downloads, the
// CLI's client, the Kubernetes API): its global init and handles that clean up after
// themselves.
#pragma once

#include <curl/curl.h>

#include <chrono>
#include <memory>
#include <string>

namespace bowline::util {

struct CurlEasyDeleter {
  void operator()(CURL* handle) const { curl_easy_cleanup(handle); }
};
struct CurlListDeleter {
  void operator()(curl_slist* list) const { curl_slist_free_all(list); }
};
using CurlEasy = std::unique_ptr<CURL, CurlEasyDeleter>;
using CurlList = std::unique_ptr<curl_slist, CurlListDeleter>;

// curl_global_init, once, before any handle (it is not thread-safe by itself); a new handle.
// std::runtime_error when libcurl cannot start.
CurlEasy curl_easy();

// What every request of bowline's sets the same way: `url`, http(s) only (never file:// or
// another scheme a URL could name), no signals (handles run on worker threads) and how long a
// connect may take.
void curl_request_basics(CURL* handle, const std::string& url,
                         std::chrono::seconds connect_timeout);

// A CURLOPT_WRITEFUNCTION that appends to the std::string in CURLOPT_WRITEDATA.
std::size_t curl_append(char* data, std::size_t size, std::size_t count, void* string);

}  // namespace bowline::util
