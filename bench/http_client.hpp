// A small blocking HTTP client over libcurl for the bench (one keep-alive connection per
// object), and an event-stream reader that timestamps every event as it arrives.
#pragma once

#include <curl/curl.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace bowline::bench {

using Clock = std::chrono::steady_clock;

struct HttpResult {
  long status = 0;
  std::string body;
  nlohmann::json json() const { return nlohmann::json::parse(body); }
};

class HttpClient {
 public:
  HttpClient(std::string base_url, std::string token);
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // Throws std::runtime_error when the server cannot be reached.
  HttpResult request(const std::string& method, const std::string& path,
                     const std::optional<nlohmann::json>& body = std::nullopt);

 private:
  CURL* curl_;
  curl_slist* headers_ = nullptr;
  std::string base_;
};

struct StreamEvent {
  nlohmann::json data;  // {seq, time, kind, spaceId, payload}
  Clock::time_point at;
};

// GET /api/v1/events on its own thread. The server writes "retry:" only once this stream
// listens, so the constructor returns when nothing that happens next can be missed.
class EventStream {
 public:
  EventStream(const std::string& base_url, const std::string& token);
  ~EventStream();
  EventStream(const EventStream&) = delete;
  EventStream& operator=(const EventStream&) = delete;

  // The first event at or after `after` for which `match` holds; nullopt on timeout.
  std::optional<StreamEvent> wait(Clock::time_point after,
                                  const std::function<bool(const nlohmann::json&)>& match,
                                  std::chrono::seconds timeout);
  // Every event so far at or after `after` for which `match` holds.
  std::vector<StreamEvent> all(Clock::time_point after,
                               const std::function<bool(const nlohmann::json&)>& match);

 private:
  static std::size_t on_data(char* data, std::size_t size, std::size_t n, void* self);
  static int on_progress(void* self, curl_off_t, curl_off_t, curl_off_t, curl_off_t);
  void parse_lines();

  CURL* curl_;
  curl_slist* headers_ = nullptr;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::mutex mutex_;
  std::condition_variable changed_;
  std::string pending_;
  std::string data_;  // the current event's data lines
  bool listening_ = false;
  bool ended_ = false;
  std::string error_;
  std::vector<StreamEvent> events_;
};

}  // namespace bowline::bench
