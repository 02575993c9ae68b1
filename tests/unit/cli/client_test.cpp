// The client verbs on the real binary against a scripted server (fake_api.hpp): exit codes,
// what reaches the server, table and JSON output, --wait over the event stream, the login file.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "fake_api.hpp"

namespace {

namespace fs = std::filesystem;
using bowline::clitest::FakeApi;
using bowline::clitest::Reply;
using bowline::clitest::Request;
using bowline::clitest::sse;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using ojson = nlohmann::ordered_json;
using namespace std::chrono_literals;

struct Run {
  int code = -1;
  std::string out, err;
};

// A home directory of its own per test, so no login file of the machine's user leaks in.
struct Home {
  fs::path dir;
  Home() {
    std::string pattern = (fs::temp_directory_path() / "bowline-cli-home-XXXXXX").string();
    dir = ::mkdtemp(pattern.data());
  }
  ~Home() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  fs::path login_file() const { return dir / ".config" / "bowline" / "login.json"; }
};

std::string quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// `env` is prepended as VAR=value words; BOWLINE_SERVER and BOWLINE_TOKEN are cleared first.
Run bowline(const Home& home, const std::string& env, const std::string& args,
            const std::string& stdin_text = "") {
  const auto err_file = home.dir / "stderr.txt";
  const auto in_file = home.dir / "stdin.txt";
  std::ofstream(in_file) << stdin_text;
  const std::string command =
      "env -u BOWLINE_SERVER -u BOWLINE_TOKEN HOME=" + quote(home.dir.string()) + " " + env + " " +
      BOWLINE_BINARY_DIR + "/src/bowline " + args + " <" + quote(in_file.string()) + " 2>" +
      quote(err_file.string());
  Run r;
  FILE* pipe = popen(command.c_str(), "r");
  std::array<char, 4096> buffer{};
  std::size_t n = 0;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) r.out.append(buffer.data(), n);
  const int status = pclose(pipe);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream err(err_file);
  std::ostringstream text;
  text << err.rdbuf();
  r.err = text.str();
  return r;
}

std::string free_port_url() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);  // nothing listens there now
  return "http://127.0.0.1:" + std::to_string(ntohs(addr.sin_port));
}

const char* kId = "0b7e3c1a-5d2f-4e8a-9c3b-1f2e3d4c5b6a";
const char* kOtherId = "7d1c2b3a-0000-4e8a-9c3b-aaaaaaaaaaaa";

std::string space_json(const std::string& state, const std::string& ip = "198.51.100.10") {
  return R"({"id":")" + std::string(kId) + R"(","name":"dev","owner":"alice","template":"nat",)" +
         R"("state":")" + state + R"(","desiredState":"running","error":"","ip":")" + ip +
         R"(","domain":"alice-dev","node":"local","appliedRevision":2,"templateRevision":3,)" +
         R"("redefinePending":true,"createdAt":1714564800000,"updatedAt":1714564860000})";
}

std::string space_with_info(const std::string& state, bool booted, bool finished, bool failed,
                            const std::string& tail = R"(["login: "])") {
  auto j = ojson::parse(space_json(state));
  j["info"] = {{"address", "198.51.100.10"},
               {"redefinePending", true},
               {"readiness",
                {{"booted", booted},
                 {"ready", finished && !failed},
                 {"finished", finished},
                 {"failed", failed},
                 {"detail", failed ? "cloud-init: 1 module failed" : ""}}},
               {"consoleTail", ojson::parse(tail)}};
  return j.dump();
}

std::string accepted_json(long operation, const std::string& kind) {
  return R"({"operation":{"id":)" + std::to_string(operation) + R"(,"spaceId":")" + kId +
         R"(","kind":")" + kind + R"(","state":"pending","step":"","progress":0,"error":""},)" +
         R"("space":)" + space_json("pending", "") + "}";
}

std::string operation_json(long id, const std::string& state, const std::string& error = "",
                           const std::string& step = "defining", int progress = 80) {
  return R"({"id":)" + std::to_string(id) + R"(,"spaceId":")" + kId + R"(","kind":"create",)" +
         R"("state":")" + state + R"(","step":")" + step + R"(","progress":)" +
         std::to_string(progress) + R"(,"error":")" + error + "\"}";
}

// ---- usage and transport ------------------------------------------------------------------

TEST(ClientCli, UsageErrorsExitTwo) {
  Home home;
  for (const auto* args :
       {"space create onlyone", "space info", "space list -o yaml", "space stop dev --timeout 5",
        "space start dev --wait --timeout 0", "user add-key alice", "space set-ip dev",
        "node check --domain-type xen", "template create", "template get", "login --bogus"}) {
    const auto r = bowline(home, "", args);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.out << r.err;
  }
}

TEST(ClientCli, UnreachableServerExitsThreeAndNamesTheUrl) {
  Home home;
  const auto url = free_port_url();
  auto r = bowline(home, "BOWLINE_SERVER=" + url, "space list");
  EXPECT_EQ(r.code, 3) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("cannot reach the bowline server at " + url));
  EXPECT_THAT(r.err, HasSubstr("BOWLINE_SERVER"));
  EXPECT_EQ(r.out, "");

  r = bowline(home, "", "template list --server " + url + "/");
  EXPECT_EQ(r.code, 3);
  EXPECT_THAT(r.err, HasSubstr(url + ": ")) << "trailing slash dropped";
  EXPECT_THAT(r.err, HasSubstr("--server"));

  // From the login file.
  fs::create_directories(home.login_file().parent_path());
  std::ofstream(home.login_file()) << R"({"server":")" + url + R"(","token":"t"})";
  r = bowline(home, "", "space info dev -o json");
  EXPECT_EQ(r.code, 3);
  EXPECT_THAT(r.err, HasSubstr(url));
  EXPECT_THAT(r.err, HasSubstr(home.login_file().string()));

  // Nothing anywhere: the default address, and how to name another.
  fs::remove(home.login_file());
  r = bowline(home, "", "user list");
  if (r.code == 3) {  // unless a real server listens on the default port here
    EXPECT_THAT(r.err, HasSubstr("http://127.0.0.1:7470"));
    EXPECT_THAT(r.err, HasSubstr("bowline server"));
  }

  // login does not write a login file for a server it cannot reach.
  r = bowline(home, "", "login --server " + url + " --token secret");
  EXPECT_EQ(r.code, 3);
  EXPECT_FALSE(fs::exists(home.login_file()));
}

TEST(ClientCli, ErrorStatusesMapToExitCodes) {
  Home home;
  FakeApi api;
  api.on(std::string("GET /api/v1/spaces/") + kId,
         Reply{404, R"({"error":"no space with id )" + std::string(kId) + "\"}"});
  api.on("POST /api/v1/spaces",
         Reply{409, R"({"error":"range exhausted: 198.51.100.10-198.51.100.100"})"});
  api.on("GET /api/v1/users", Reply{403, R"({"error":"admins only"})"});
  api.on("GET /api/v1/templates", Reply{401, R"({"error":"no token"})"});
  api.on("GET /api/v1/spaces", Reply{500, "kaboom"});
  const auto env = "BOWLINE_SERVER=" + api.url() + " BOWLINE_TOKEN=tok";

  auto r = bowline(home, env, std::string("space info ") + kId);
  EXPECT_EQ(r.code, 4);
  EXPECT_THAT(r.err, HasSubstr("no space with id"));
  r = bowline(home, env, "space create nat dev");
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("range exhausted"));
  EXPECT_EQ(bowline(home, env, "user list").code, 4);
  r = bowline(home, "BOWLINE_SERVER=" + api.url(), "template list");
  EXPECT_EQ(r.code, 4);
  EXPECT_THAT(r.err, HasSubstr("bowline login --server " + api.url()));
  r = bowline(home, env, "space list");
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("kaboom"));
  r = bowline(home, env, "space info nosuch");  // a name: looked up in the list (which fails)
  EXPECT_EQ(r.code, 1);
}

// ---- what reaches the server, what is printed ---------------------------------------------

TEST(ClientCli, SpaceListTableAndJson) {
  Home home;
  FakeApi api;
  const std::string list =
      "[" + space_json("running") + "," + R"({"id":")" + kOtherId +
      R"(","name":"build","owner":"bob","template":"bridged",)"
      R"("state":"error","desiredState":"running","error":"bridge br0 does not exist",)"
      R"("ip":null,"domain":"bob-build","node":"local","appliedRevision":0,)"
      R"("templateRevision":1,"redefinePending":false,"createdAt":1,"updatedAt":2}])";
  api.on("GET /api/v1/spaces?all=1", Reply{200, list});
  const auto env = "BOWLINE_SERVER=" + api.url() + " BOWLINE_TOKEN=tok";
  auto r = bowline(home, env, "space list --all");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out,
            "NAME   STATE    IP             TEMPLATE  OWNER  NODE   ID\n"
            "dev    running  198.51.100.10  nat       alice  local  "
            "0b7e3c1a-5d2f-4e8a-9c3b-1f2e3d4c5b6a\n"
            "build  error    -              bridged   bob    local  "
            "7d1c2b3a-0000-4e8a-9c3b-aaaaaaaaaaaa\n");
  r = bowline(home, env, "space list --all -o json");
  ASSERT_EQ(r.code, 0);
  EXPECT_EQ(r.out, ojson::parse(list).dump(2) + "\n") << "the server's JSON, keys in its order";
  const auto requests = api.requests();
  ASSERT_FALSE(requests.empty());
  EXPECT_EQ(requests.front().headers.at("authorization"), "Bearer tok");
}

TEST(ClientCli, SpacesByNameOrId) {
  Home home;
  FakeApi api;
  api.on("GET /api/v1/spaces", Reply{200, "[" + space_json("running") + "]"});
  api.on(std::string("GET /api/v1/spaces/") + kId,
         Reply{200, space_with_info("running", true, true, false)});
  api.on(std::string("PUT /api/v1/spaces/") + kId + "/ip",
         Reply{200, space_json("stopped", "198.51.100.20")});
  const auto env = "BOWLINE_SERVER=" + api.url() + " BOWLINE_TOKEN=tok";
  auto r = bowline(home, env, "space info dev");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("redefine pending"));
  r = bowline(home, env, std::string("space info ") + kId);  // an id: no list needed
  ASSERT_EQ(r.code, 0) << r.err;
  r = bowline(home, env, "space set-ip dev 198.51.100.20");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "space dev gets 198.51.100.20 at its next start\n");
  EXPECT_THAT(api.lines(),
              ElementsAre("GET /api/v1/spaces", std::string("GET /api/v1/spaces/") + kId,
                          std::string("GET /api/v1/spaces/") + kId, "GET /api/v1/spaces",
                          std::string("PUT /api/v1/spaces/") + kId + "/ip"));
  EXPECT_EQ(nlohmann::json::parse(api.requests().back().body),
            nlohmann::json::parse(R"({"ip":"198.51.100.20"})"));
}

TEST(ClientCli, UnknownAndAmbiguousNames) {
  Home home;
  FakeApi api;
  api.on("GET /api/v1/spaces", Reply{200, "[]"});
  auto other = ojson::parse(space_json("running"));
  other["id"] = kOtherId;
  other["owner"] = "bob";
  api.on("GET /api/v1/spaces?all=1",
         Reply{200, "[" + space_json("running") + "," + other.dump() + "]"});
  const auto env = "BOWLINE_SERVER=" + api.url() + " BOWLINE_TOKEN=tok";
  auto r = bowline(home, env, "space stop dev");
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("more than one space is named dev"));
  EXPECT_THAT(r.err, HasSubstr(kOtherId));
  r = bowline(home, env, "space stop nosuch");
  EXPECT_EQ(r.code, 4);
  EXPECT_THAT(r.err, HasSubstr("no space named nosuch"));
}

TEST(ClientCli, CreateSendsTheRequestAndSaysWhatWasAccepted) {
  Home home;
  FakeApi api;
  api.on("POST /api/v1/spaces", Reply{202, accepted_json(7, "create")});
  const auto env = "BOWLINE_SERVER=" + api.url() + " BOWLINE_TOKEN=tok";
  auto r = bowline(home, env, "space create nat dev --ip 198.51.100.7 --no-start");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("create of space dev accepted"));
  EXPECT_EQ(nlohmann::json::parse(api.requests().back().body),
            nlohmann::json::parse(
                R"({"template":"nat","name":"dev","ip":"198.51.100.7","start":false})"));
  r = bowline(home, env, "space create nat dev -o json");
  ASSERT_EQ(r.code, 0);
  EXPECT_EQ(r.out, ojson::parse(accepted_json(7, "create")).dump(2) + "\n");
}

// ---- --wait ---------------------------------------------------------------------------------

TEST(ClientCli, CreateWaitFollowsTheEventsThenReadiness) {
  Home home;
  FakeApi api;
  api.on("POST /api/v1/spaces", Reply{202, accepted_json(7, "create")});
  Reply events;
  events.content_type = "text/event-stream";
  events.frames = {
      {0ms, "retry: 2000\n\n"},
      {50ms, sse(10, "operation.progress", kId,
                 R"({"operation":6,"step":"somebody else's","progress":50})")},
      {50ms,
       sse(11, "operation.progress", kId,
           R"({"operation":7,"step":"downloading image","progress":20,"bytes":104857600,"total":314572800})")},
      {50ms, ": keep-alive\n\n"},
      {50ms,
       sse(12, "operation.progress", kId, R"({"operation":7,"step":"defining","progress":80})")},
      {50ms, sse(13, "operation.succeeded", kId, R"({"operation":7,"kind":"create"})")}};
  api.on("GET /api/v1/events", events);
  // Polled as the stream opens: the operation has only just begun.
  api.on("GET /api/v1/operations/7",
         Reply{200, operation_json(7, "running", "", "resolving image", 5)});
  std::atomic<int> polls{0};
  api.on(std::string("GET /api/v1/spaces/") + kId, [&polls](const Request&) {
    const int poll = ++polls;
    if (poll == 1) return Reply{200, space_with_info("running", false, false, false, "[]")};
    if (poll == 2)
      return Reply{200, space_with_info("running", true, false, false,
                                        R"(["Cloud-init v. 22.4 running 'modules:config'"])")};
    return Reply{200, space_with_info("running", true, true, false)};
  });
  const auto env = "BOWLINE_SERVER=" + api.url() + " BOWLINE_TOKEN=tok";
  const auto r = bowline(home, env, "space create nat dev --wait");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "space dev is running at 198.51.100.10, ready\n");
  // Not a terminal: one line per step, no carriage returns.
  EXPECT_THAT(r.err, HasSubstr("create: downloading image 20% (100.0 MiB of 300.0 MiB)\n"));
  EXPECT_THAT(r.err, HasSubstr("create: defining 80%\n"));
  EXPECT_THAT(r.err, Not(HasSubstr("somebody else's")));
  EXPECT_THAT(r.err, HasSubstr("waiting for cloud-init (booting"));
  EXPECT_THAT(r.err, HasSubstr("waiting for cloud-init (booted"));
  EXPECT_THAT(r.err, Not(HasSubstr("\r")));
  const auto requests = api.requests();
  const auto stream = std::find_if(requests.begin(), requests.end(),
                                   [](const Request& q) { return q.target == "/api/v1/events"; });
  ASSERT_NE(stream, requests.end());
  EXPECT_EQ(stream->headers.at("accept"), "text/event-stream");
  EXPECT_EQ(stream->headers.at("authorization"), "Bearer tok");
}

TEST(ClientCli, WaitReportsAFailedOperation) {
  Home home;
  FakeApi api;
  api.on("GET /api/v1/spaces", Reply{200, "[" + space_json("stopped") + "]"});
  api.on(std::string("POST /api/v1/spaces/") + kId + "/start",
         Reply{202, accepted_json(9, "start")});
  Reply events;
  events.content_type = "text/event-stream";
  events.frames = {
      {0ms, "retry: 2000\n\n"},
      {100ms,
       sse(20, "operation.failed", kId,
           R"({"operation":9,"kind":"start","error":"bridge br0 does not exist on this host"})")}};
  api.on("GET /api/v1/events", events);
  api.on("GET /api/v1/operations/9", Reply{200, operation_json(9, "running")});
  const auto r =
      bowline(home, "BOWLINE_SERVER=" + api.url() + " BOWLINE_TOKEN=tok", "space start dev --wait");
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("start failed: bridge br0 does not exist on this host"));
}

// The poll right after the stream opens shows the operation as it is now; an event of an
// earlier step that the stream delivers afterwards does not take the progress back.
TEST(ClientCli, WaitProgressNeverGoesBackwards) {
  Home home;
  FakeApi api;
  api.on("GET /api/v1/spaces", Reply{200, "[" + space_json("stopped") + "]"});
  api.on(std::string("POST /api/v1/spaces/") + kId + "/start",
         Reply{202, accepted_json(8, "start")});
  Reply events;
  events.content_type = "text/event-stream";
  events.frames = {
      {0ms, "retry: 2000\n\n"},
      // Another operation's: the stream is open, and the watch polls (defining 80%).
      {50ms, sse(29, "operation.progress", kId,
                 R"({"operation":6,"step":"somebody else's","progress":50})")},
      {700ms, sse(30, "operation.progress", kId,
                  R"({"operation":8,"step":"preparing disk","progress":70})")},
      {100ms,
       sse(31, "operation.progress", kId, R"({"operation":8,"step":"starting","progress":95})")},
      {100ms, sse(32, "operation.succeeded", kId, R"({"operation":8,"kind":"start"})")}};
  api.on("GET /api/v1/events", events);
  api.on("GET /api/v1/operations/8", Reply{200, operation_json(8, "running")});  // defining 80%
  api.on(std::string("GET /api/v1/spaces/") + kId,
         Reply{200, space_with_info("running", true, true, false)});
  const auto r = bowline(home, "BOWLINE_SERVER=" + api.url() + " BOWLINE_TOKEN=tok",
                         "space start dev --wait --no-ready");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("start: defining 80%\n"));
  EXPECT_THAT(r.err, Not(HasSubstr("preparing disk"))) << r.err;
  EXPECT_THAT(r.err, HasSubstr("start: starting 95%\n"));
}

TEST(ClientCli, WaitCatchesAnOperationThatEndedBeforeTheStreamOpened) {
  Home home;
  FakeApi api;
  api.on("GET /api/v1/spaces", Reply{200, "[" + space_json("running") + "]"});
  api.on(std::string("POST /api/v1/spaces/") + kId + "/stop", Reply{202, accepted_json(4, "stop")});
  Reply quiet;
  quiet.content_type = "text/event-stream";
  quiet.frames = {{0ms, "retry: 2000\n\n"}};
  api.on("GET /api/v1/events", quiet);
  api.on("GET /api/v1/operations/4", Reply{200, operation_json(4, "succeeded")});
  api.on(std::string("GET /api/v1/spaces/") + kId,
         Reply{200, space_with_info("stopped", true, true, false)});
  const auto r = bowline(home, "BOWLINE_SERVER=" + api.url() + " BOWLINE_TOKEN=tok",
                         "space stop dev --wait -o json");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(ojson::parse(r.out)["state"], "stopped");
}

TEST(ClientCli, WaitPollsWhenThereIsNoEventStream) {
  Home home;
  FakeApi api;
  api.on("GET /api/v1/spaces", Reply{200, "[" + space_json("running") + "]"});
  api.on(std::string("DELETE /api/v1/spaces/") + kId, Reply{202, accepted_json(5, "delete")});
  api.on("GET /api/v1/events", Reply{404, R"({"error":"no such route"})"});
  std::atomic<int> polls{0};
  api.on("GET /api/v1/operations/5", [&polls](const Request&) {
    return ++polls < 2 ? Reply{200, operation_json(5, "running")}
                       : Reply{200, operation_json(5, "succeeded")};
  });
  const auto r = bowline(home, "BOWLINE_SERVER=" + api.url() + " BOWLINE_TOKEN=tok",
                         "space delete dev --wait");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "space dev deleted\n");
}

TEST(ClientCli, WaitShowsACloudInitFailureWithTheConsole) {
  Home home;
  FakeApi api;
  api.on("GET /api/v1/spaces", Reply{200, "[" + space_json("stopped") + "]"});
  api.on(std::string("POST /api/v1/spaces/") + kId + "/start",
         Reply{202, accepted_json(3, "start")});
  api.on("GET /api/v1/events", Reply{404, "{}"});
  api.on("GET /api/v1/operations/3", Reply{200, operation_json(3, "succeeded")});
  api.on(
      std::string("GET /api/v1/spaces/") + kId,
      Reply{
          200,
          space_with_info(
              "running", true, true, true,
              R"(["2024 - util.py[WARNING]: Failed running /var/lib/cloud/scripts/per-once/x", "Cloud-init v. 22.4 finished"])")});
  const auto r =
      bowline(home, "BOWLINE_SERVER=" + api.url() + " BOWLINE_TOKEN=tok", "space start dev --wait");
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("cloud-init failed in space dev: cloud-init: 1 module failed"));
  EXPECT_THAT(r.err, HasSubstr("  2024 - util.py[WARNING]: Failed running"));
}

TEST(ClientCli, WaitTimesOutWithExitFive) {
  Home home;
  FakeApi api;
  api.on("GET /api/v1/spaces", Reply{200, "[" + space_json("stopped") + "]"});
  api.on(std::string("POST /api/v1/spaces/") + kId + "/start",
         Reply{202, accepted_json(3, "start")});
  api.on("GET /api/v1/events", Reply{404, "{}"});
  api.on("GET /api/v1/operations/3", Reply{200, operation_json(3, "succeeded")});
  api.on(std::string("GET /api/v1/spaces/") + kId,
         Reply{200, space_with_info("running", true, false, false)});
  const auto r = bowline(home, "BOWLINE_SERVER=" + api.url() + " BOWLINE_TOKEN=tok",
                         "space start dev --wait --timeout 2");
  EXPECT_EQ(r.code, 5) << r.err;
  EXPECT_THAT(r.err, HasSubstr("gave up waiting"));
  // --no-ready: the operation is enough.
  const auto quick = bowline(home, "BOWLINE_SERVER=" + api.url() + " BOWLINE_TOKEN=tok",
                             "space start dev --wait --no-ready");
  EXPECT_EQ(quick.code, 0) << quick.err;
}

// ---- templates, users, login ----------------------------------------------------------------

TEST(ClientCli, TemplateVerbs) {
  Home home;
  FakeApi api;
  const auto file = home.dir / "web.yaml";
  std::ofstream(file) << "image: debian-12\nmemory: 2048\n";
  api.on(
      "POST /api/v1/templates",
      Reply{
          422,
          R"({"error":"the template is not valid","diagnostics":[{"line":2,"column":9,"path":"memory","severity":"error","message":"below 1 MiB"}]})"});
  api.on("PUT /api/v1/templates/web",
         Reply{200, R"({"id":1,"name":"web","revision":4,"yaml":"x"})"});
  api.on(
      "GET /api/v1/templates/web",
      Reply{200, R"({"id":1,"name":"web","revision":4,"yaml":"image: debian-12\nmemory: 2G\n"})"});
  api.on("GET /api/v1/templates",
         Reply{200,
               R"([{"id":1,"name":"web","revision":4,"createdAt":0,"updatedAt":1714564800000}])"});
  api.on("DELETE /api/v1/templates/web", Reply{204, ""});
  const auto env = "BOWLINE_SERVER=" + api.url() + " BOWLINE_TOKEN=tok";

  auto r = bowline(home, env, "template create " + file.string());
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.out, file.string() + ":2:9: error: memory: below 1 MiB\n");
  EXPECT_EQ(nlohmann::json::parse(api.requests().back().body),
            nlohmann::json({{"name", "web"}, {"yaml", "image: debian-12\nmemory: 2048\n"}}));
  r = bowline(home, env, "template update " + file.string());
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("updated to revision 4"));
  r = bowline(home, env, "template get web");
  EXPECT_EQ(r.out, "image: debian-12\nmemory: 2G\n");
  r = bowline(home, env, "template list");
  EXPECT_EQ(r.out, "NAME  REVISION  UPDATED\nweb   4         2024-05-01 12:00:00 UTC\n");
  r = bowline(home, env, "template delete web");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "template web deleted\n");
  EXPECT_EQ(bowline(home, env, "template create /nonexistent.yaml").code, 2);
  // The offline verbs keep working on files.
  EXPECT_EQ(bowline(home, "", "template validate " + file.string()).code, 1);
}

TEST(ClientCli, UserVerbs) {
  Home home;
  FakeApi api;
  const auto key = home.dir / "id.pub";
  std::ofstream(key)
      << "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAINtedWGMx11mVnlDFXSYEDMjE2u+BZ972j8XfPu8NgjK bob@x\n";
  api.on(
      "POST /api/v1/users",
      Reply{
          201,
          R"({"id":2,"username":"bob","email":"bob@example.org","timezone":"Europe/Berlin","sshKeys":[],"permissions":["use-vnc"],"hasPassword":false,"hasServicePassword":true,"createdAt":0,"token":"bwl_secret"})"});
  api.on("PATCH /api/v1/users/bob", Reply{200, R"({"username":"bob"})"});
  api.on("POST /api/v1/users/bob/keys", Reply{200, R"({"username":"bob"})"});
  api.on(
      "GET /api/v1/users",
      Reply{
          200,
          R"([{"username":"admin","email":"","timezone":"","sshKeys":[],"permissions":["admin"]},{"username":"bob","email":"bob@example.org","timezone":"Europe/Berlin","sshKeys":["k"],"permissions":["use-vnc","use-web-terminal"]}])"});
  const auto env = "BOWLINE_SERVER=" + api.url() + " BOWLINE_TOKEN=tok";
  auto r = bowline(home, env,
                   "user create bob --email bob@example.org --timezone Europe/Berlin "
                   "--service-password pw --ssh-key " +
                       key.string() + " --permission use-vnc");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("token (shown once): bwl_secret"));
  const auto body = nlohmann::json::parse(api.requests().back().body);
  EXPECT_EQ(
      body["sshKeys"][0],
      "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAINtedWGMx11mVnlDFXSYEDMjE2u+BZ972j8XfPu8NgjK bob@x");
  EXPECT_EQ(body["servicePassword"], "pw");
  EXPECT_EQ(body["permissions"], nlohmann::json::array({"use-vnc"}));
  r = bowline(home, env, "user set-password bob --service", "s3cret\n");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(api.requests().back().body),
            nlohmann::json({{"servicePassword", "s3cret"}}));
  r = bowline(home, env, "user add-key bob 'ssh-ed25519 AAAA bob@y'");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(api.requests().back().body),
            nlohmann::json({{"key", "ssh-ed25519 AAAA bob@y"}}));
  r = bowline(home, env, "user list");
  EXPECT_EQ(
      r.out,
      "USERNAME  EMAIL            TIMEZONE       PERMISSIONS               SSH KEYS  STATE\n"
      "admin     -                -              admin                     0         enabled\n"
      "bob       bob@example.org  Europe/Berlin  use-vnc,use-web-terminal  1         enabled\n");
}

TEST(ClientCli, UserSetQuotaSendsTheGivenLimitsAndUserInfoShowsUseAgainstThem) {
  Home home;
  FakeApi api;
  const std::string user =
      R"({"username":"bob","email":"","timezone":"","sshKeys":[],"permissions":[],)"
      R"("quota":{"spaces":{"limit":3,"source":"user"},"cpus":{"limit":null,"source":"user"},)"
      R"("memory":{"limit":8589934592,"source":"user"},"disk":{"limit":null,"source":"default"}},)"
      R"("usage":{"spaces":1,"cpus":2,"memory":268435456,"disk":1073741824}})";
  api.on("PATCH /api/v1/users/bob/quota", Reply{200, user});
  api.on("GET /api/v1/users/bob", Reply{200, user});
  api.on("GET /api/v1/whoami", Reply{200, user});
  const auto env = "BOWLINE_SERVER=" + api.url() + " BOWLINE_TOKEN=tok";
  auto r = bowline(home, env, "user set-quota bob --spaces 3 --cpus unlimited --memory 8G");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(api.requests().back().target, "/api/v1/users/bob/quota");
  // Only what was given, as given: the server reads "default", "unlimited" and sizes.
  EXPECT_EQ(nlohmann::json::parse(api.requests().back().body),
            nlohmann::json({{"spaces", "3"}, {"cpus", "unlimited"}, {"memory", "8G"}}));
  EXPECT_EQ(r.out,
            "bob's quota:\n"
            "  spaces  1 of 3\n"
            "  vCPUs   2, no limit\n"
            "  memory  256 MiB of 8 GiB\n"
            "  disk    1 GiB, no limit (server default)\n");
  r = bowline(home, env, "user set-quota bob --disk default");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(api.requests().back().body),
            nlohmann::json({{"disk", "default"}}));
  const auto sent = api.requests().size();
  r = bowline(home, env, "user set-quota bob");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("give at least one of --spaces, --cpus, --memory, --disk"));
  EXPECT_EQ(api.requests().size(), sent);  // nothing sent

  r = bowline(home, env, "user info bob");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("username:     bob\n"));
  EXPECT_THAT(r.out, HasSubstr("  memory  256 MiB of 8 GiB\n"));
  r = bowline(home, env, "user info");  // oneself
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(api.requests().back().target, "/api/v1/whoami");
}

TEST(ClientCli, LoginWritesAPrivateFileThatLaterVerbsUse) {
  Home home;
  FakeApi api;
  api.on("GET /api/v1/whoami", [](const Request& q) {
    const auto auth = q.headers.count("authorization") ? q.headers.at("authorization") : "";
    return auth == "Bearer good" ? Reply{200, R"({"id":1,"username":"alice"})"}
                                 : Reply{401, R"({"error":"invalid token"})"};
  });
  api.on("GET /api/v1/templates", Reply{200, "[]"});
  auto r = bowline(home, "", "login --server " + api.url() + " --token bad");
  EXPECT_EQ(r.code, 4);
  EXPECT_THAT(r.err, HasSubstr("invalid token"));
  EXPECT_FALSE(fs::exists(home.login_file()));

  r = bowline(home, "", "login --server " + api.url(), "good\n");  // the token from stdin
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "logged in to " + api.url() + " as alice (saved in " +
                       home.login_file().string() + ")\n");
  struct stat st {};
  ASSERT_EQ(::stat(home.login_file().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(::stat(home.login_file().parent_path().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  std::ifstream in(home.login_file());
  const auto saved = nlohmann::json::parse(in);
  EXPECT_EQ(saved["server"], api.url());
  EXPECT_EQ(saved["token"], "good");

  // Later verbs: the login file's server and token...
  r = bowline(home, "", "template list");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(api.requests().back().headers.at("authorization"), "Bearer good");
  // ...BOWLINE_TOKEN over the file's token...
  r = bowline(home, "BOWLINE_TOKEN=env", "template list");
  EXPECT_EQ(api.requests().back().headers.at("authorization"), "Bearer env");
  // ...and the token never goes to another server.
  FakeApi other;
  other.on("GET /api/v1/templates", Reply{401, R"({"error":"no token"})"});
  r = bowline(home, "", "template list --server " + other.url());
  EXPECT_EQ(r.code, 4);
  EXPECT_EQ(other.requests().back().headers.count("authorization"), 0u);
  EXPECT_THAT(r.err, HasSubstr("the login file is for " + api.url()));
}

}  // namespace
