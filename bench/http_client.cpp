#include "http_client.hpp"

#include <stdexcept>

namespace bowline::bench {

namespace {

std::size_t append(char* data, std::size_t size, std::size_t n, void* out) {
  static_cast<std::string*>(out)->append(data, size * n);
  return size * n;
}

curl_slist* auth_headers(const std::string& token) {
  curl_slist* list = curl_slist_append(nullptr, ("Authorization: Bearer " + token).c_str());
  list = curl_slist_append(list, "Content-Type: application/json");
  return curl_slist_append(list, "Expect:");  // no 100-continue round trip
}

}  // namespace

HttpClient::HttpClient(std::string base_url, std::string token)
    : curl_(curl_easy_init()), base_(std::move(base_url)) {
  if (!curl_) throw std::runtime_error("curl_easy_init failed");
  headers_ = auth_headers(token);
  curl_easy_setopt(curl_, CURLOPT_HTTPHEADER, headers_);
  curl_easy_setopt(curl_, CURLOPT_WRITEFUNCTION, &append);
  curl_easy_setopt(curl_, CURLOPT_TCP_NODELAY, 1L);
  curl_easy_setopt(curl_, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl_, CURLOPT_TIMEOUT, 120L);
}

HttpClient::~HttpClient() {
  curl_easy_cleanup(curl_);
  curl_slist_free_all(headers_);
}

HttpResult HttpClient::request(const std::string& method, const std::string& path,
                               const std::optional<nlohmann::json>& body) {
  HttpResult result;
  const std::string url = base_ + path;
  const std::string payload = body ? body->dump() : std::string();
  curl_easy_setopt(curl_, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl_, CURLOPT_WRITEDATA, &result.body);
  curl_easy_setopt(curl_, CURLOPT_HTTPGET, 1L);  // resets POST state from an earlier call
  curl_easy_setopt(curl_, CURLOPT_CUSTOMREQUEST, nullptr);
  if (method == "POST" || method == "PUT" || (method == "DELETE" && body)) {
    curl_easy_setopt(curl_, CURLOPT_POSTFIELDS, payload.c_str());
    curl_easy_setopt(curl_, CURLOPT_POSTFIELDSIZE, static_cast<long>(payload.size()));
  }
  if (method != "GET" && method != "POST")
    curl_easy_setopt(curl_, CURLOPT_CUSTOMREQUEST, method.c_str());
  if (const auto rc = curl_easy_perform(curl_); rc != CURLE_OK)
    throw std::runtime_error(method + " " + url + ": " + curl_easy_strerror(rc));
  curl_easy_getinfo(curl_, CURLINFO_RESPONSE_CODE, &result.status);
  return result;
}

EventStream::EventStream(const std::string& base_url, const std::string& token)
    : curl_(curl_easy_init()) {
  if (!curl_) throw std::runtime_error("curl_easy_init failed");
  headers_ = auth_headers(token);
  const std::string url = base_url + "/api/v1/events";
  curl_easy_setopt(curl_, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl_, CURLOPT_HTTPHEADER, headers_);
  curl_easy_setopt(curl_, CURLOPT_WRITEFUNCTION, &EventStream::on_data);
  curl_easy_setopt(curl_, CURLOPT_WRITEDATA, this);
  curl_easy_setopt(curl_, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(curl_, CURLOPT_XFERINFOFUNCTION, &EventStream::on_progress);
  curl_easy_setopt(curl_, CURLOPT_XFERINFODATA, this);
  curl_easy_setopt(curl_, CURLOPT_TCP_NODELAY, 1L);
  curl_easy_setopt(curl_, CURLOPT_NOSIGNAL, 1L);
  thread_ = std::thread([this] {
    const auto rc = curl_easy_perform(curl_);
    std::lock_guard lock(mutex_);
    ended_ = true;
    if (rc != CURLE_OK && !stop_) error_ = curl_easy_strerror(rc);
    changed_.notify_all();
  });
  std::unique_lock lock(mutex_);
  if (!changed_.wait_for(lock, std::chrono::seconds(30), [&] { return listening_ || ended_; }) ||
      !listening_) {
    const auto why = error_.empty() ? std::string("no answer") : error_;
    lock.unlock();
    stop_ = true;
    thread_.join();
    curl_easy_cleanup(curl_);
    curl_slist_free_all(headers_);
    throw std::runtime_error("event stream " + url + ": " + why);
  }
}

EventStream::~EventStream() {
  stop_ = true;
  thread_.join();
  curl_easy_cleanup(curl_);
  curl_slist_free_all(headers_);
}

int EventStream::on_progress(void* self, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  return static_cast<EventStream*>(self)->stop_ ? 1 : 0;
}

std::size_t EventStream::on_data(char* data, std::size_t size, std::size_t n, void* self) {
  auto* stream = static_cast<EventStream*>(self);
  {
    std::lock_guard lock(stream->mutex_);
    stream->pending_.append(data, size * n);
    stream->parse_lines();
  }
  stream->changed_.notify_all();
  return size * n;
}

// Under mutex_: consumes whole lines of pending_.
void EventStream::parse_lines() {
  const auto now = Clock::now();
  std::size_t start = 0;
  for (auto end = pending_.find('\n'); end != std::string::npos;
       start = end + 1, end = pending_.find('\n', start)) {
    const std::string_view line(pending_.data() + start, end - start);
    if (line.starts_with("retry:")) {
      listening_ = true;
    } else if (line.starts_with("data: ")) {
      data_.append(line.substr(6));
    } else if (line.empty() && !data_.empty()) {
      events_.push_back({nlohmann::json::parse(data_, nullptr, false), now});
      data_.clear();
    }
  }
  pending_.erase(0, start);
}

std::optional<StreamEvent> EventStream::wait(
    Clock::time_point after, const std::function<bool(const nlohmann::json&)>& match,
    std::chrono::seconds timeout) {
  std::unique_lock lock(mutex_);
  std::optional<StreamEvent> found;
  changed_.wait_for(lock, timeout, [&] {
    for (const auto& e : events_)
      if (e.at >= after && !e.data.is_discarded() && match(e.data)) {
        found = e;
        return true;
      }
    return ended_;
  });
  return found;
}

std::vector<StreamEvent> EventStream::all(Clock::time_point after,
                                          const std::function<bool(const nlohmann::json&)>& match) {
  std::lock_guard lock(mutex_);
  std::vector<StreamEvent> out;
  for (const auto& e : events_)
    if (e.at >= after && !e.data.is_discarded() && match(e.data)) out.push_back(e);
  return out;
}

}  // namespace bowline::bench
