#include "api_load.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <iostream>
#include <thread>

#include "http_client.hpp"

namespace bowline::bench {
namespace {

std::int64_t unix_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

struct Batch {
  double accept_s = 0;  // until every request was answered
  double done_s = 0;    // until the last operation finished (its finishedAt)
  int failed = 0;
};

// `count` creates named PREFIX<i> from `clients` connections; waits for their operations.
Batch create_batch(const ApiLoadOptions& o, const std::string& token, const std::string& prefix,
                   int count, bool start) {
  std::atomic<int> next{0}, failed{0};
  std::vector<std::vector<std::int64_t>> operations(o.clients);
  const auto t0 = Clock::now();
  const auto t0_unix = unix_ms();
  std::vector<std::thread> threads;
  for (int c = 0; c < o.clients; ++c)
    threads.emplace_back([&, c] {
      HttpClient http(o.server, token);
      for (int i = next++; i < count; i = next++) {
        const auto r = http.request("POST", "/api/v1/spaces",
                                    nlohmann::json{{"template", o.template_name},
                                                   {"name", prefix + std::to_string(i)},
                                                   {"start", start}});
        if (r.status == 202)
          operations[c].push_back(r.json()["operation"]["id"]);
        else if (failed++ < 3)
          std::cerr << "create " << prefix << i << ": " << r.status << " " << r.body << "\n";
      }
    });
  for (auto& t : threads) t.join();
  Batch batch;
  batch.accept_s = std::chrono::duration<double>(Clock::now() - t0).count();
  HttpClient http(o.server, token);
  std::int64_t last_finish = t0_unix;
  for (const auto& list : operations)
    for (const auto id : list)
      for (;;) {
        const auto op = http.request("GET", "/api/v1/operations/" + std::to_string(id)).json();
        const std::string state = op.value("state", "");
        if (state == "succeeded" || state == "failed") {
          if (state == "failed" && failed++ < 3) std::cerr << "operation: " << op.dump() << "\n";
          if (op["finishedAt"].is_number())
            last_finish = std::max<std::int64_t>(last_finish, op["finishedAt"]);
          break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
  batch.done_s = static_cast<double>(last_finish - t0_unix) / 1000.0;
  batch.failed = failed;
  return batch;
}

struct Latency {
  double p50 = 0, p99 = 0, max = 0;
  std::size_t bytes = 0, items = 0;
};

Latency list_latency(const ApiLoadOptions& o, const std::string& token, const std::string& target,
                     int samples) {
  HttpClient http(o.server, token);
  std::vector<double> ms;
  Latency out;
  for (int i = 0; i < samples; ++i) {
    const auto a = Clock::now();
    const auto r = http.request("GET", target);
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - a).count());
    if (r.status != 200)
      throw std::runtime_error("GET " + target + ": " + std::to_string(r.status));
    out.bytes = r.body.size();
    if (i == 0) out.items = r.json().size();
  }
  std::sort(ms.begin(), ms.end());
  const auto rank = [&](double p) {  // nearest rank
    return ms[std::min(ms.size() - 1,
                       static_cast<std::size_t>(p * static_cast<double>(ms.size())))];
  };
  out.p50 = rank(0.50);
  out.p99 = rank(0.99);
  out.max = ms.back();
  return out;
}

long status_kib(int pid, const std::string& field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(field + ":", 0) == 0) return std::stol(line.substr(field.size() + 1));
  return -1;
}

// A new user's first API token.
std::string make_user(const ApiLoadOptions& o, const std::string& username) {
  HttpClient http(o.server, o.token);
  const auto r = http.request("POST", "/api/v1/users", nlohmann::json{{"username", username}});
  if (r.status != 201) throw std::runtime_error("create user " + username + ": " + r.body);
  return r.json()["token"];
}

nlohmann::json latency_json(const Latency& l) {
  return {{"p50_ms", l.p50},
          {"p99_ms", l.p99},
          {"max_ms", l.max},
          {"items", l.items},
          {"bytes", l.bytes}};
}

}  // namespace

int api_load(const ApiLoadOptions& o) {
  nlohmann::json out;
  // alice owns the started spaces, the admin the rest; carol none.
  const auto alice = make_user(o, "alice");
  const auto carol = make_user(o, "carol");
  const auto created = create_batch(o, alice, "t", o.creates, true);
  out["create"] = {{"count", o.creates},
                   {"clients", o.clients},
                   {"accept_s", created.accept_s},
                   {"done_s", created.done_s},
                   {"per_s", o.creates / created.done_s},
                   {"failed", created.failed}};
  const int fill = o.total - o.creates;
  const auto filled = create_batch(o, o.token, "f", fill, false);
  out["fill"] = {{"count", fill},
                 {"done_s", filled.done_s},
                 {"per_s", fill / filled.done_s},
                 {"failed", filled.failed}};
  out["rss_after_creates_kib"] = status_kib(o.server_pid, "VmRSS");

  out["list_all_idle"] = latency_json(list_latency(o, o.token, "/api/v1/spaces?all=1", o.samples));
  out["list_own_idle"] = latency_json(list_latency(o, alice, "/api/v1/spaces", o.samples));
  out["list_none_idle"] = latency_json(list_latency(o, carol, "/api/v1/spaces", o.samples));

  // The same lists while two clients keep creating started spaces, one at a time each (a
  // create, then its operation to the end), so the engine writes all along.
  std::atomic<bool> stop{false};
  std::atomic<int> extra{0};
  std::vector<std::thread> load;
  for (int c = 0; c < 2; ++c)
    load.emplace_back([&] {
      HttpClient http(o.server, o.token);
      while (!stop) {
        const auto r = http.request(
            "POST", "/api/v1/spaces",
            nlohmann::json{{"template", o.template_name}, {"name", "l" + std::to_string(extra++)}});
        if (r.status != 202) break;
        const auto op =
            "/api/v1/operations/" + std::to_string(r.json()["operation"]["id"].get<std::int64_t>());
        for (;;) {
          const std::string state = http.request("GET", op).json().value("state", "");
          if (state == "succeeded" || state == "failed") break;
          std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
      }
    });
  Latency all, own;
  try {
    all = list_latency(o, o.token, "/api/v1/spaces?all=1", o.samples / 2);
    own = list_latency(o, alice, "/api/v1/spaces", o.samples / 2);
  } catch (...) {
    stop = true;
    for (auto& t : load) t.join();
    throw;
  }
  stop = true;
  for (auto& t : load) t.join();
  out["list_all_loaded"] = latency_json(all);
  out["list_own_loaded"] = latency_json(own);
  out["creates_while_loaded"] = extra.load();
  out["rss_kib"] = status_kib(o.server_pid, "VmRSS");
  out["rss_peak_kib"] = status_kib(o.server_pid, "VmHWM");
  std::cout << out.dump() << "\n";
  return 0;
}

}  // namespace bowline::bench
