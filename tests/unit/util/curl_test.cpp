#include "util/curl.hpp"

#include <gtest/gtest.h>

#include <chrono>

namespace bowline::util {
namespace {

CURLcode perform(const std::string& url) {
  auto handle = curl_easy();
  curl_request_basics(handle.get(), url, std::chrono::seconds(1));
  return curl_easy_perform(handle.get());
}

// A URL from a template or a kubeconfig must not read this host's files or speak another
// protocol: libcurl refuses before it opens anything.
TEST(CurlRequestBasics, RefusesSchemesOtherThanHttp) {
  EXPECT_EQ(perform("file:///etc/hostname"), CURLE_UNSUPPORTED_PROTOCOL);
  EXPECT_EQ(perform("ftp://127.0.0.1/x"), CURLE_UNSUPPORTED_PROTOCOL);
  EXPECT_EQ(perform("dict://127.0.0.1/x"), CURLE_UNSUPPORTED_PROTOCOL);
}

TEST(CurlRequestBasics, SetsTheUrl) {
  auto handle = curl_easy();
  curl_request_basics(handle.get(), "http://127.0.0.1:1/path", std::chrono::seconds(1));
  curl_easy_perform(handle.get());  // refused: nothing listens on port 1
  char* effective = nullptr;
  ASSERT_EQ(curl_easy_getinfo(handle.get(), CURLINFO_EFFECTIVE_URL, &effective), CURLE_OK);
  ASSERT_NE(effective, nullptr);
  EXPECT_STREQ(effective, "http://127.0.0.1:1/path");
}

}  // namespace
}  // namespace bowline::util
