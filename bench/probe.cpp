// bowline-bench-probe: the measuring half of bench/run. Each verb does one measured thing and
// prints its figures as one JSON line on stdout; bench/run repeats, orders and summarises.
//
//   raw URI XML_FILE                 define + start through the libvirt C API (the floor)
//   exec URI DOMAIN -- COMMAND...    run COMMAND (a virsh or virt-install pipeline)
//       both: milliseconds until libvirt's lifecycle event says DOMAIN started
//   space URI SERVER TOKEN TEMPLATE NAME
//       one bowline space's life: create -> running (libvirt's event, and bowline's own state
//       on its event stream), -> ready (cloud-init finished, as bowline reports), stop -> off
//       -> bowline's state stopped, delete
//   api SERVER TOKEN TEMPLATE PID    on a server on libvirt's test driver: create throughput,
//       GET /api/v1/spaces latency with 10,000 spaces, the server's RSS
#include <spawn.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>

#include "api_load.hpp"
#include "http_client.hpp"
#include "libvirt_watch.hpp"

extern char** environ;

namespace bowline::bench {
namespace {

double ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

int raw(const std::string& uri, const std::string& xml_file) {
  const auto xml = read_file(xml_file);
  LibvirtWatch watch(uri);
  const auto t0 = Clock::now();
  virDomainPtr dom = virDomainDefineXML(watch.connection(), xml.c_str());
  if (!dom) throw std::runtime_error("define: " + libvirt_error());
  const std::string name = virDomainGetName(dom);
  const int rc = virDomainCreate(dom);
  virDomainFree(dom);
  if (rc < 0) throw std::runtime_error("start: " + libvirt_error());
  const auto started = watch.wait(name, VIR_DOMAIN_EVENT_STARTED, t0, std::chrono::seconds(60));
  if (!started) throw std::runtime_error("no started event for " + name);
  std::cout << nlohmann::json{{"running_ms", ms_between(t0, *started)}}.dump() << "\n";
  return 0;
}

int exec(const std::string& uri, const std::string& domain, std::vector<std::string> command) {
  LibvirtWatch watch(uri);
  std::vector<char*> argv;
  for (auto& a : command) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  const auto t0 = Clock::now();
  if (const int rc = posix_spawnp(&pid, argv[0], nullptr, nullptr, argv.data(), environ); rc != 0)
    throw std::runtime_error("cannot run " + command[0] + ": " + std::strerror(rc));
  const auto started = watch.wait(domain, VIR_DOMAIN_EVENT_STARTED, t0, std::chrono::seconds(120));
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw std::runtime_error(command[0] + " failed (status " + std::to_string(status) + ")");
  if (!started) throw std::runtime_error("no started event for " + domain);
  std::cout << nlohmann::json{{"running_ms", ms_between(t0, *started)}}.dump() << "\n";
  return 0;
}

auto space_state(const std::string& id, const std::string& state) {
  return [id, state](const nlohmann::json& e) {
    return e.value("kind", "") == "space.state" && e.value("spaceId", "") == id &&
           e["payload"].value("state", "") == state;
  };
}

int space(const std::string& uri, const std::string& server, const std::string& token,
          const std::string& tmpl, const std::string& name) {
  LibvirtWatch watch(uri);
  EventStream stream(server, token);
  HttpClient http(server, token);
  using std::chrono::seconds;
  nlohmann::json out;

  const auto t0 = Clock::now();
  const auto created =
      http.request("POST", "/api/v1/spaces", nlohmann::json{{"template", tmpl}, {"name", name}});
  if (created.status != 202)
    throw std::runtime_error("create: " + std::to_string(created.status) + " " + created.body);
  const auto space = created.json()["space"];
  const std::string id = space["id"], domain = space["domain"];
  out["accepted_ms"] = ms_between(t0, Clock::now());
  std::string failure;
  try {
    const auto running = watch.wait(domain, VIR_DOMAIN_EVENT_STARTED, t0, seconds(120));
    if (!running) throw std::runtime_error("libvirt never reported " + domain + " started");
    out["running_ms"] = ms_between(t0, *running);
    const auto state = stream.wait(t0, space_state(id, "running"), seconds(120));
    if (!state) throw std::runtime_error("no space.state running event");
    out["state_running_ms"] = ms_between(t0, state->at);
    // Where the time went: when each step of the create operation showed on the stream.
    nlohmann::json steps = nlohmann::json::object();
    for (const auto& e : stream.all(t0, [&](const nlohmann::json& d) {
           return d.value("kind", "") == "operation.progress" && d.value("spaceId", "") == id;
         }))
      if (e.at <= state->at) steps[e.data["payload"].value("step", "?")] = ms_between(t0, e.at);
    out["steps_ms"] = steps;

    // Readiness is read from the console log when asked: there is no event for it.
    for (const auto deadline = t0 + seconds(600);;) {
      const auto info = http.request("GET", "/api/v1/spaces/" + id).json()["info"]["readiness"];
      if (info.value("ready", false)) {
        out["ready_ms"] = ms_between(t0, Clock::now());
        break;
      }
      if (info.value("failed", false))
        throw std::runtime_error("cloud-init failed: " + info.dump());
      if (Clock::now() > deadline)
        throw std::runtime_error("not ready after 600 s: " + info.dump());
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }

    const auto t1 = Clock::now();
    const auto stop = http.request("POST", "/api/v1/spaces/" + id + "/stop");
    if (stop.status != 202) throw std::runtime_error("stop: " + stop.body);
    const auto off = watch.wait(domain, VIR_DOMAIN_EVENT_STOPPED, t1, seconds(180));
    if (!off) throw std::runtime_error("libvirt never reported " + domain + " stopped");
    const auto stopped = stream.wait(t1, space_state(id, "stopped"), seconds(60));
    if (!stopped) throw std::runtime_error("no space.state stopped event");
    out["stop_to_off_ms"] = ms_between(t1, *off);
    out["off_to_stopped_ms"] = ms_between(*off, stopped->at);
    out["stop_to_stopped_ms"] = ms_between(t1, stopped->at);
  } catch (const std::exception& e) {
    failure = e.what();
  }
  const auto t2 = Clock::now();
  const auto removed = http.request("DELETE", "/api/v1/spaces/" + id);
  if (removed.status == 202)
    stream.wait(
        t2,
        [&](const nlohmann::json& e) {
          return e.value("kind", "") == "space.deleted" && e.value("spaceId", "") == id;
        },
        seconds(120));
  if (!failure.empty()) throw std::runtime_error(failure);
  std::cout << out.dump() << "\n";
  return 0;
}

int usage() {
  std::cerr << "usage: bowline-bench-probe raw URI XML_FILE\n"
               "       bowline-bench-probe exec URI DOMAIN -- COMMAND...\n"
               "       bowline-bench-probe space URI SERVER TOKEN TEMPLATE NAME\n"
               "       bowline-bench-probe api SERVER TOKEN TEMPLATE SERVER_PID\n";
  return 2;
}

}  // namespace
}  // namespace bowline::bench

int main(int argc, char** argv) {
  using namespace bowline::bench;
  std::vector<std::string> args(argv + 1, argv + argc);
  curl_global_init(CURL_GLOBAL_DEFAULT);
  try {
    if (args.size() == 3 && args[0] == "raw") return raw(args[1], args[2]);
    if (args.size() >= 5 && args[0] == "exec" && args[3] == "--")
      return exec(args[1], args[2], {args.begin() + 4, args.end()});
    if (args.size() == 6 && args[0] == "space")
      return space(args[1], args[2], args[3], args[4], args[5]);
    if (args.size() == 5 && args[0] == "api") {
      ApiLoadOptions options;
      options.server = args[1];
      options.token = args[2];
      options.template_name = args[3];
      options.server_pid = std::stoi(args[4]);
      return api_load(options);
    }
    return usage();
  } catch (const std::exception& e) {
    std::cerr << "bowline-bench-probe: " << e.what() << "\n";
    return 1;
  }
}
