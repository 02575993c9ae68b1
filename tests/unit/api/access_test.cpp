// Who may do what, route by route: every route of the router × {anonymous, another user, the
// owner without the route's permission, the owner with it, an admin}; browser sessions with
// their CSRF token; the console and VNC WebSockets' refusals before the upgrade.
#include <gtest/gtest.h>

#include <iostream>
#include <set>

#include "access_fixture.hpp"
#include "api/console_hub.hpp"
#include "ws_test_client.hpp"

namespace bowline::api::testing {
namespace {

// The path of a route for a subject: {id} is the subject's space (or an operation of it),
// {username} the space owner's name, {name} the test template (or the test pool).
std::string path_for(const std::string& pattern, const std::string& space,
                     const std::string& username, const std::string& tmpl,
                     std::int64_t operation = 0, const std::string& pool = {}) {
  std::string out = pattern;
  const auto put = [&](const std::string& param, const std::string& value) {
    if (auto at = out.find(param); at != std::string::npos) out.replace(at, param.size(), value);
  };
  put("{id}", pattern.rfind("/api/v1/operations/", 0) == 0 ? std::to_string(operation) : space);
  put("{username}", username);
  put("{name}", pattern.rfind("/api/v1/pools/", 0) == 0 ? pool : tmpl);
  put("{port}", "22");
  put("{token}", "test");  // the name of each test person's token
  return out;
}

bool is_websocket(const Route& route) {
  return route.access == Access::Console || route.access == Access::Vnc ||
         route.access == Access::Tunnel || route.access == Access::Terminal;
}

TEST_F(AccessTest, EveryRouteForEveryKindOfCaller) {
  const auto& routes = api_->router().routes();
  ASSERT_GE(routes.size(), 29u);
  enum class Want { Refused401, Refused403, Refused404, Allowed };
  struct Subject {
    const char* name;
    std::string token;
    std::string space;     // the space the request names
    std::string username;  // the user the request names
    std::int64_t operation;
  };
  const std::string admin_token = stack_.admin_token();
  const std::vector<Subject> subjects{
      {"anonymous", "", granted_space_, granted_.username, granted_op_},
      {"other user", other_.token, granted_space_, granted_.username, granted_op_},
      {"owner without the permission", plain_.token, plain_space_, plain_.username, plain_op_},
      {"owner with the permission", granted_.token, granted_space_, granted_.username, granted_op_},
      {"admin", admin_token, granted_space_, granted_.username, granted_op_},
  };
  // Reads first (the WebSockets want the spaces running), then what changes state.
  std::vector<const Route*> ordered;
  for (const auto& route : routes)
    if (route.method == "GET") ordered.push_back(&route);
  for (const auto& route : routes)
    if (route.method != "GET") ordered.push_back(&route);
  // The figure this test gives (docs/security.md): routes walked, cells checked, and answers
  // the route's rule forbids (whatever a refused cell got but its refusal); the last must be 0.
  int checked = 0, walked = 0, refusals = 0, unauthorised = 0;
  for (const auto* route_ptr : ordered) {
    const auto& route = *route_ptr;
    if (route.access == Access::Public) continue;  // the session routes: SessionTest below
    ++walked;
    // Destructive routes run last on their own subjects (below); here: their refusals.
    // (Revoking a token: the security_access tests.)
    const bool destructive =
        route.method == "DELETE" &&
        (route.pattern == "/api/v1/spaces/{id}" || route.pattern == "/api/v1/pools/{name}" ||
         route.pattern == "/api/v1/users/{username}/tokens/{token}");
    for (std::size_t s = 0; s < subjects.size(); ++s) {
      const auto& subject = subjects[s];
      Want want = Want::Allowed;
      switch (route.access) {
        case Access::Public:
          break;
        case Access::Any:
          break;
        case Access::Admin:
          if (s != 4) want = Want::Refused403;
          break;
        case Access::AdminOrSelf:
          if (s == 1) want = Want::Refused403;
          break;
        case Access::OwnerOrAdmin:
          if (s == 1) want = Want::Refused404;
          break;
        case Access::Console:
        case Access::Vnc:
        case Access::Tunnel:
        case Access::Terminal:
          if (s == 1) want = Want::Refused404;
          if (s == 2) want = Want::Refused403;
          break;
      }
      if (s == 0) want = Want::Refused401;
      if (destructive && want == Want::Allowed) continue;
      const auto target =
          path_for(route.pattern, subject.space, subject.username, tmpl_, subject.operation, pool_);
      int status = 0;
      std::string body;
      if (route.pattern == "/api/v1/events") {
        SseStream stream(port(), subject.token, target);
        status = stream.status();
      } else if (is_websocket(route)) {
        std::vector<std::string> headers{"Origin: http://127.0.0.1:" + std::to_string(port())};
        if (!subject.token.empty()) headers.push_back("Authorization: Bearer " + subject.token);
        WsClient ws(port(), target, headers);
        status = ws.status();
        body = ws.body();
      } else {
        HttpClient client(port());
        const auto r =
            client.request(route.method, target, subject.token, route.method == "GET" ? "" : "{}");
        status = r.status;
        body = r.body;
      }
      const auto what = route.method + " " + target + " as " + subject.name + ": " +
                        std::to_string(status) + " " + body;
      if (want != Want::Allowed) {
        ++refusals;
        const int refused = want == Want::Refused401 ? 401 : want == Want::Refused403 ? 403 : 404;
        if (status != refused) ++unauthorised;
      }
      switch (want) {
        case Want::Refused401:
          EXPECT_EQ(status, 401) << what;
          break;
        case Want::Refused403:
          EXPECT_EQ(status, 403) << what;
          break;
        case Want::Refused404:
          EXPECT_EQ(status, 404) << what;
          break;
        case Want::Allowed:
          // No pool exists here (pools take NAT templates), nor a disk of that name: their
          // 404 says so, not "not yours".
          if (route.pattern.rfind("/api/v1/pools/", 0) == 0 ||
              route.pattern.rfind("/api/v1/disks/", 0) == 0)
            EXPECT_TRUE(status != 401 && status != 403) << what;
          else if (route.pattern.find("/shares/{username}") != std::string::npos)
            // Nor a share of one's own space with oneself: the 404 names the share.
            EXPECT_TRUE(status != 401 && status != 403 &&
                        (status != 404 || body.find("is not shared with") != std::string::npos))
                << what;
          else if (route.pattern.find("/snapshots/{name}") != std::string::npos)
            // Nor a snapshot: the 404 names the snapshot, not the space.
            EXPECT_TRUE(status != 401 && status != 403 &&
                        (status != 404 || body.find("no snapshot named") != std::string::npos))
                << what;
          else
            EXPECT_TRUE(status != 401 && status != 403 && status != 404) << what;
          if (is_websocket(route)) {
            EXPECT_EQ(status, 101) << what;
          }
          break;
      }
      ++checked;
    }
  }
  EXPECT_GE(checked, 100);

  // Deleting: the owner without any permission may, and an admin may delete anyone's.
  HttpClient client(port());
  EXPECT_EQ(client.request("DELETE", "/api/v1/spaces/" + plain_space_, plain_.token).status, 202);
  EXPECT_EQ(
      client.request("DELETE", "/api/v1/spaces/" + granted_space_, stack_.admin_token()).status,
      202);
  checked += 2;

  EXPECT_EQ(unauthorised, 0);
  RecordProperty("routes", static_cast<int>(routes.size()));
  RecordProperty("routes_walked", walked);
  RecordProperty("callers", static_cast<int>(subjects.size()));
  RecordProperty("cells", checked);
  RecordProperty("refusals", refusals);
  RecordProperty("unauthorised_answers", unauthorised);
  std::cout << "[ figure   ] route x caller matrix: " << routes.size() << " routes (" << walked
            << " walked; the " << routes.size() - static_cast<std::size_t>(walked)
            << " public session routes in LogInUseTheSessionAndLogOut), " << subjects.size()
            << " kinds of caller, " << checked << " cells checked, " << refusals
            << " of them refusals, " << unauthorised << " unauthorised answers" << std::endl;
}

TEST_F(AccessTest, WebSocketRoutesWantTheTemplatesSwitchAndARunningSpace) {
  const auto origin = "Origin: http://127.0.0.1:" + std::to_string(port());
  for (const char* kind : {"console", "vnc"}) {
    WsClient off(port(), "/api/v1/spaces/" + switched_off_space_ + "/" + kind,
                 {origin, "Authorization: Bearer " + granted_.token});
    EXPECT_EQ(off.status(), 403) << kind << " " << off.body();
    EXPECT_NE(off.body().find("template"), std::string::npos) << off.body();
  }
  HttpClient client(port());
  const auto stop =
      client.post("/api/v1/spaces/" + granted_space_ + "/stop", granted_.token, json::object());
  ASSERT_EQ(stop.status, 202) << stop.body;
  stack_.wait_operation(stop.parsed()["operation"]["id"].get<std::int64_t>(), granted_.token);
  for (const char* kind : {"console", "vnc"}) {
    WsClient stopped(port(), "/api/v1/spaces/" + granted_space_ + "/" + kind,
                     {origin, "Authorization: Bearer " + granted_.token});
    EXPECT_EQ(stopped.status(), 409) << kind << " " << stopped.body();
  }
}

TEST_F(AccessTest, TheOriginOfAWebSocketMustBeThisServer) {
  const auto target = "/api/v1/spaces/" + granted_space_ + "/vnc";
  const auto bearer = "Authorization: Bearer " + granted_.token;
  EXPECT_EQ(WsClient(port(), target, {"Origin: http://evil.example", bearer}).status(), 403);
  EXPECT_EQ(WsClient(port(), target, {"Origin: null", bearer}).status(), 403);
  // The CLI sends no Origin: fine with a token.
  EXPECT_EQ(WsClient(port(), target, {bearer}).status(), 101);
  // A plain GET of a WebSocket route is not an upgrade.
  HttpClient client(port());
  EXPECT_EQ(client.get(target, granted_.token).status, 426);
}

TEST_F(AccessTest, TheVncBridgeCarriesBytesBothWays) {
  WsClient ws(port(), "/api/v1/spaces/" + granted_space_ + "/vnc",
              {"Authorization: Bearer " + granted_.token});
  ASSERT_EQ(ws.status(), 101) << ws.body();
  EXPECT_EQ(ws.receive_until("\n"), "RFB 003.008\n");
  ws.send("RFB 003.008\n");
  EXPECT_EQ(ws.receive_until("RFB 003.008\n"), "echo:RFB 003.008\n");
  std::string big(300 * 1024, 'x');
  ws.send(big);
  const auto back = ws.receive_until(std::string(64, 'x') + std::string(1, 'x'), 20s);
  std::string all = back;
  while (all.size() < big.size() + 5) {
    auto more = ws.receive(10s);
    if (!more) break;
    all += *more;
  }
  std::size_t xs = 0;
  for (char c : all) xs += c == 'x';
  EXPECT_EQ(xs, big.size());
}

// ---- the browser terminal, a shell over SSH (ctest -R ssh) ------------------------------------

using ssh_terminal = AccessTest;

// Typed bytes reach the shell and its output comes back; the size in the query is the shell's
// first, and a resize frame reaches it; each tab is a shell of its own.
TEST_F(ssh_terminal, TypingAndResizingReachTheShellAndEachTabHasItsOwn) {
  const auto path = "/api/v1/spaces/" + granted_space_ + "/terminal";
  WsClient first(port(), path + "?cols=120&rows=40", {"Authorization: Bearer " + granted_.token});
  ASSERT_EQ(first.status(), 101) << first.body();
  EXPECT_EQ(first.receive_until("size:120x40"), "size:120x40");
  first.send(std::string(1, '\0') + "id -un\r");
  EXPECT_EQ(first.receive_until("id -un\r"), "echo:id -un\r");
  first.send(std::string(1, '\1') + R"({"cols":90,"rows":33})");
  EXPECT_EQ(first.receive_until("size:90x33"), "size:90x33");
  first.send(std::string(1, '\1') + "not json");  // ignored, the session goes on
  first.send(std::string(1, '\0') + "x");
  EXPECT_EQ(first.receive_until("echo:x"), "echo:x");

  WsClient second(port(), path, {"Authorization: Bearer " + granted_.token});
  ASSERT_EQ(second.status(), 101) << second.body();
  EXPECT_EQ(second.receive_until("size:80x24"), "size:80x24");  // the default size
  EXPECT_EQ(access_.terminals.load(), 2);
}

TEST_F(ssh_terminal, ASizeThatIsNotANumberIsRefusedBeforeTheUpgrade) {
  WsClient ws(port(), "/api/v1/spaces/" + granted_space_ + "/terminal?cols=-1",
              {"Authorization: Bearer " + granted_.token});
  EXPECT_EQ(ws.status(), 400);
  EXPECT_NE(ws.body().find("cols must be a number"), std::string::npos) << ws.body();
  EXPECT_EQ(access_.terminals.load(), 0);
}

// ---- the tunnel (ctest -R tunnel) ------------------------------------------------------------

using tunnel = AccessTest;
using security_access = AccessTest;  // ctest -L security

TEST_F(tunnel, TenMegabytesGoThroughByteExactAndEachSideEndsOnItsOwn) {
  WsClient ws(port(), "/api/v1/spaces/" + granted_space_ + "/tunnel/22",
              {"Authorization: Bearer " + granted_.token});
  ASSERT_EQ(ws.status(), 101) << ws.body();
  EXPECT_EQ(access_.ports.back(), 22);
  // Bytes of every value, in frames of uneven sizes, while the echo comes back.
  std::string sent;
  for (std::size_t i = 0; sent.size() < 10 * 1024 * 1024; ++i)
    sent += static_cast<char>((i * 7 + i / 251) & 0xff);
  std::string got;
  std::thread reader([&] {
    while (got.size() < sent.size()) {
      auto frame = ws.receive(20s);
      if (!frame) break;
      got += *frame;
    }
  });
  for (std::size_t at = 0, n = 1; at < sent.size(); at += n, n = n * 3 % 65521 + 1)
    ws.send(sent.substr(at, n));
  reader.join();
  ASSERT_EQ(got.size(), sent.size());
  EXPECT_TRUE(got == sent) << "the bytes differ";
  // The client's end (an empty frame) reaches the guest as EOF; the guest still answers, and
  // its own end comes back as an empty frame, then the socket closes.
  ws.send("");
  EXPECT_EQ(ws.receive(5s), std::optional<std::string>("eof-seen"));
  EXPECT_EQ(ws.receive(5s), std::optional<std::string>(""));
  EXPECT_EQ(ws.receive(5s), std::nullopt);
  EXPECT_TRUE(ws.closed());
}

TEST_F(tunnel, OnlyPortsTheTemplateListsAndOnlyWithThePermission) {
  const auto path = "/api/v1/spaces/" + granted_space_ + "/tunnel/";
  const auto bearer = "Authorization: Bearer " + granted_.token;
  WsClient unlisted(port(), path + "9000", {bearer});
  EXPECT_EQ(unlisted.status(), 403);
  EXPECT_NE(unlisted.body().find("port 9000 is not one the space's template lists in ports: "
                                 "(8000, 3000)"),
            std::string::npos)
      << unlisted.body();
  WsClient no_permission(port(), path + "8000", {bearer});
  EXPECT_EQ(no_permission.status(), 403);
  EXPECT_NE(no_permission.body().find("port 8000 needs the permission use-ports"),
            std::string::npos)
      << no_permission.body();
  EXPECT_EQ(WsClient(port(), path + "0", {bearer}).status(), 400);
  EXPECT_EQ(WsClient(port(), path + "65536", {bearer}).status(), 400);
  EXPECT_EQ(WsClient(port(), path + "22x", {bearer}).status(), 400);
  // Without use-ssh, port 22 is refused too.
  WsClient plain(port(), "/api/v1/spaces/" + plain_space_ + "/tunnel/22",
                 {"Authorization: Bearer " + plain_.token});
  EXPECT_EQ(plain.status(), 403);
  EXPECT_NE(plain.body().find("needs the permission use-ssh"), std::string::npos) << plain.body();
  // An admin has every permission: a listed port opens.
  WsClient listed(port(), path + "3000", {"Authorization: Bearer " + stack_.admin_token()});
  EXPECT_EQ(listed.status(), 101) << listed.body();
  EXPECT_EQ(access_.ports.back(), 3000);
}

TEST_F(tunnel, TheSpaceSaysHowToConnectAndWhichHostKeyToPin) {
  HttpClient client(port());
  const auto keys = client.get("/api/v1/spaces/" + granted_space_ + "/host-keys", granted_.token);
  ASSERT_EQ(keys.status, 200) << keys.body;
  const auto key = keys.parsed()["keys"][0];
  EXPECT_EQ(key["type"], "ssh-ed25519");
  EXPECT_EQ(key["fingerprint"].get<std::string>().rfind("SHA256:", 0), 0u);
  // Another user's space is not there for them.
  EXPECT_EQ(client.get("/api/v1/spaces/" + granted_space_ + "/host-keys", other_.token).status,
            404);
  const auto info = client.get("/api/v1/spaces/" + granted_space_, granted_.token).parsed();
  const auto connect = info["info"]["connect"];
  EXPECT_EQ(connect["hostKeyFingerprint"], key["fingerprint"]);
  EXPECT_EQ(connect["sshHost"], info["name"].get<std::string>() + ".bowline");
  // An admin reaches another user's space as SPACE.OWNER.bowline.
  const auto as_admin =
      client.get("/api/v1/spaces/" + granted_space_, stack_.admin_token()).parsed();
  EXPECT_EQ(as_admin["info"]["connect"]["sshHost"],
            info["name"].get<std::string>() + "." + granted_.username + ".bowline");
  EXPECT_EQ(as_admin["info"]["connect"]["ssh"],
            "bowline ssh " + info["name"].get<std::string>() + "." + granted_.username);
  ASSERT_EQ(connect["ports"].size(), 2u);
  EXPECT_EQ(connect["ports"][1]["name"], "web");
  EXPECT_EQ(connect["ports"][1]["forward"],
            "bowline forward " + info["name"].get<std::string>() + " 3000");
}

// What let a tunnel open must still hold while it is open: each change closes it within a
// second.
TEST_F(tunnel, ClosesWhenThePermissionGoesOrTheSpaceStops) {
  const auto path = "/api/v1/spaces/" + granted_space_ + "/tunnel/22";
  HttpClient client(port());
  {
    WsClient ws(port(), path, {"Authorization: Bearer " + granted_.token});
    ASSERT_EQ(ws.status(), 101) << ws.body();
    ws.send("ping");
    EXPECT_EQ(ws.receive(5s), std::optional<std::string>("ping"));
    const auto patched =
        client.request("PATCH", "/api/v1/users/" + granted_.username, stack_.admin_token(),
                       R"({"permissions": ["use-vnc", "use-web-terminal"]})");
    ASSERT_EQ(patched.status, 200) << patched.body;
    const auto started = std::chrono::steady_clock::now();
    EXPECT_EQ(ws.receive(3s), std::nullopt);
    EXPECT_TRUE(ws.closed());
    EXPECT_LT(std::chrono::steady_clock::now() - started, 1500ms);
  }
  ASSERT_EQ(client
                .request("PATCH", "/api/v1/users/" + granted_.username, stack_.admin_token(),
                         R"({"permissions": ["use-vnc", "use-web-terminal", "use-ssh"]})")
                .status,
            200);
  WsClient ws(port(), path, {"Authorization: Bearer " + granted_.token});
  ASSERT_EQ(ws.status(), 101) << ws.body();
  const auto stop =
      client.post("/api/v1/spaces/" + granted_space_ + "/stop", granted_.token, json::object());
  ASSERT_EQ(stop.status, 202) << stop.body;
  stack_.wait_operation(stop.parsed()["operation"]["id"].get<std::int64_t>(), granted_.token);
  const auto stopped = std::chrono::steady_clock::now();
  EXPECT_EQ(ws.receive(3s), std::nullopt);
  EXPECT_TRUE(ws.closed());
  EXPECT_LT(std::chrono::steady_clock::now() - stopped, 1500ms);
}

// A console viewer is not a connection into the guest: it stays through a stop or a restart
// (and sees the next boot), and goes only with the caller's access.
TEST_F(security_access, AConsoleViewerStaysThroughAStopAndGoesWithThePermission) {
  HttpClient client(port());
  WsClient ws(port(), "/api/v1/spaces/" + granted_space_ + "/console",
              {"Authorization: Bearer " + granted_.token});
  ASSERT_EQ(ws.status(), 101) << ws.body();
  const auto stop =
      client.post("/api/v1/spaces/" + granted_space_ + "/stop", granted_.token, json::object());
  ASSERT_EQ(stop.status, 202) << stop.body;
  stack_.wait_operation(stop.parsed()["operation"]["id"].get<std::int64_t>(), granted_.token);
  // The watch looks every 250 ms: let it look several times.
  const auto stopped = std::chrono::steady_clock::now();
  while (!ws.closed() && std::chrono::steady_clock::now() - stopped < 1500ms) ws.receive(200ms);
  EXPECT_FALSE(ws.closed());
  const auto patched = client.request("PATCH", "/api/v1/users/" + granted_.username,
                                      stack_.admin_token(), R"({"permissions": ["use-vnc"]})");
  ASSERT_EQ(patched.status, 200) << patched.body;
  const auto started = std::chrono::steady_clock::now();
  while (!ws.closed() && std::chrono::steady_clock::now() - started < 3s) ws.receive(200ms);
  EXPECT_TRUE(ws.closed());
  EXPECT_LT(std::chrono::steady_clock::now() - started, 1500ms);
}

// ---- security: what a hostile caller tries (ctest -L security) ----------------------------

// Two owners whose names and space names make the same domain name (al + ice-dev, al-ice +
// dev: both al-ice-dev): the second is refused up front, so a socket kept open on the first
// can never be handed the second's console.
TEST_F(security_access, ASpaceWhoseDomainNameAnotherUsersSpaceHasIsRefused) {
  HttpClient client(port());
  const auto al = person("al", {store::Permission::UseWebTerminal});
  store::NewUser u;
  u.username = al.username + "-ice";  // exactly: al-<n>-ice
  const auto al_ice_id = stack_.store().users().create(u).id;
  const Person al_ice{u.username, issue_token(stack_.store(), al_ice_id, "test")};
  // The template's name is <username>-<space name>.
  auto r = client.post("/api/v1/spaces", al.token,
                       {{"template", tmpl_}, {"name", "ice-dev"}, {"start", false}});
  ASSERT_EQ(r.status, 202) << r.body;
  const auto domain = r.parsed()["space"]["domain"].get<std::string>();
  EXPECT_EQ(domain, al.username + "-ice-dev");
  stack_.wait_operation(r.parsed()["operation"]["id"].get<std::int64_t>(), al.token);
  r = client.post("/api/v1/spaces", al_ice.token,
                  {{"template", tmpl_}, {"name", "dev"}, {"start", false}});
  EXPECT_EQ(r.status, 409) << r.body;
  EXPECT_NE(r.body.find("another space already uses the domain name " + domain), std::string::npos)
      << r.body;
}

// Every socket into a space (console, display, tunnel, terminal) closes within a second of its
// space's delete: none outlives it, so none is left for a space that takes the name later.
TEST_F(security_access, EverySocketIntoASpaceClosesWhenTheSpaceIsDeleted) {
  HttpClient client(port());
  const auto bearer = "Authorization: Bearer " + granted_.token;
  const auto base = "/api/v1/spaces/" + granted_space_;
  std::vector<std::unique_ptr<WsClient>> sockets;
  for (const auto* path : {"/console", "/vnc", "/tunnel/22", "/terminal"}) {
    sockets.push_back(std::make_unique<WsClient>(port(), base + path, std::vector{bearer}));
    ASSERT_EQ(sockets.back()->status(), 101) << path << ": " << sockets.back()->body();
  }
  const auto deleted = client.request("DELETE", base, granted_.token, "");
  ASSERT_EQ(deleted.status, 202) << deleted.body;
  const auto asked = std::chrono::steady_clock::now();
  for (auto& ws : sockets)
    while (!ws->closed() && std::chrono::steady_clock::now() - asked < 3s) ws->receive(100ms);
  for (std::size_t i = 0; i < sockets.size(); ++i) EXPECT_TRUE(sockets[i]->closed()) << i;
  EXPECT_LT(std::chrono::steady_clock::now() - asked, 1500ms);
}

// One user's open WebSockets and event streams are capped (settings): the next is a 429 that
// says so, another user is not affected, and a closed one frees its place.
TEST_F(security_access, OneUsersSocketsAndStreamsAreCapped) {
  ApiOptions options;
  options.access = &access_;
  options.max_sockets_per_user = 2;
  options.max_streams_per_user = 1;
  Api limited(stack_.store(), stack_.engine(), stack_.events(), options);
  HttpServer server(ApiStack::test_http_options(), [&](Request& r) { return limited.handle(r); });
  server.start();
  const auto open_tunnel = [&](const Person& who) {
    return std::make_unique<WsClient>(
        server.port(), "/api/v1/spaces/" + granted_space_ + "/tunnel/22",
        std::vector<std::string>{"Authorization: Bearer " + who.token});
  };
  auto one = open_tunnel(granted_), two = open_tunnel(granted_), three = open_tunnel(granted_);
  EXPECT_EQ(one->status(), 101);
  EXPECT_EQ(two->status(), 101);
  EXPECT_EQ(three->status(), 429);
  EXPECT_NE(three->body().find("you have 2 WebSockets into spaces open"), std::string::npos)
      << three->body();
  // An admin's sockets are counted on their own.
  WsClient admins(server.port(), "/api/v1/spaces/" + granted_space_ + "/tunnel/22",
                  {"Authorization: Bearer " + stack_.admin_token()});
  EXPECT_EQ(admins.status(), 101);
  one.reset();  // closes: its place is free once the server has seen the close
  int again = 0;
  for (int i = 0; i < 50 && again != 101; ++i) {
    std::this_thread::sleep_for(50ms);
    again = open_tunnel(granted_)->status();
  }
  EXPECT_EQ(again, 101);

  SseStream first(server.port(), granted_.token, "/api/v1/events");
  EXPECT_EQ(first.status(), 200);
  SseStream second(server.port(), granted_.token, "/api/v1/events");
  EXPECT_EQ(second.status(), 429);
  server.stop();
}

// The terminal, like every socket, goes with the permission that let it open.
TEST_F(security_access, ATerminalClosesWhenTheOwnerLosesUseWebTerminal) {
  HttpClient client(port());
  WsClient ws(port(), "/api/v1/spaces/" + granted_space_ + "/terminal",
              {"Authorization: Bearer " + granted_.token});
  ASSERT_EQ(ws.status(), 101) << ws.body();
  EXPECT_EQ(ws.receive_until("size:80x24"), "size:80x24");
  const auto patched = client.request("PATCH", "/api/v1/users/" + granted_.username,
                                      stack_.admin_token(), R"({"permissions": ["use-ssh"]})");
  ASSERT_EQ(patched.status, 200) << patched.body;
  const auto started = std::chrono::steady_clock::now();
  while (!ws.closed() && std::chrono::steady_clock::now() - started < 3s) ws.receive(200ms);
  EXPECT_TRUE(ws.closed());
  EXPECT_LT(std::chrono::steady_clock::now() - started, 1500ms);
}

// A failure inside the server answers with an id; its text (paths, library words) goes to the
// log under that id, never to the caller.
TEST_F(security_access, AServerErrorAnswersWithAnIdAndLogsTheDetails) {
  WsClient ws(port(), "/api/v1/spaces/" + granted_space_ + "/tunnel/8000",
              {"Authorization: Bearer " + stack_.admin_token()});
  ASSERT_EQ(ws.status(), 500) << ws.body();
  const auto body = nlohmann::json::parse(ws.body());
  const auto id = body["errorId"].get<std::string>();
  EXPECT_EQ(id.size(), 12u);
  EXPECT_EQ(body["error"].get<std::string>().find("/var/lib"), std::string::npos) << ws.body();
  EXPECT_NE(body["error"].get<std::string>().find(id), std::string::npos) << ws.body();
  std::lock_guard lock(log_mutex_);
  EXPECT_NE(logged_.find("error " + id + " (GET /api/v1/spaces/" + granted_space_ +
                         "/tunnel/8000): cannot open /var/lib/bowline/secret.key"),
            std::string::npos)
      << logged_;
}

// A browser session of `who` (its cookie header and CSRF token).
struct Login {
  std::string cookie_header, csrf;
};
Login log_in(unsigned short port, const Person& who) {
  HttpClient client(port);
  const auto ok = client.post("/api/v1/session", "",
                              {{"username", who.username}, {"password", "pw-" + who.username}});
  EXPECT_EQ(ok.status, 200) << ok.body;
  const auto set = ok.header("set-cookie");
  const auto eq = set.find('=');
  return {"Cookie: bowline_session=" + set.substr(eq + 1, set.find(';') - eq - 1),
          ok.parsed().value("csrf", "")};
}

TEST_F(security_access, TokensAreListedWithoutSecretsMadeWithAnExpiryAndRevokedAtOnce) {
  HttpClient client(port());
  const auto tokens = "/api/v1/users/" + granted_.username + "/tokens";
  const auto made = client.post(tokens, granted_.token, {{"name", "laptop"}, {"expires", "30d"}});
  ASSERT_EQ(made.status, 201) << made.body;
  const auto laptop = made.parsed()["token"].get<std::string>();
  const auto now = stack_.store().clock().now_unix_ms();
  EXPECT_NEAR(made.parsed()["expiresAt"].get<double>(), now + 30.0 * 86400'000, 60'000);
  EXPECT_EQ(client.post(tokens, granted_.token, {{"name", "x"}, {"expires", "forever"}}).status,
            422);
  EXPECT_EQ(client.post(tokens, granted_.token, {{"name", "line\nbreak"}}).status, 422);

  const auto list = client.get(tokens, granted_.token);
  ASSERT_EQ(list.status, 200) << list.body;
  EXPECT_EQ(list.body.find(laptop), std::string::npos);  // the secret is not kept, nor shown
  EXPECT_EQ(list.body.find(token_hash(laptop)), std::string::npos);
  ASSERT_EQ(list.parsed().size(), 2u);  // "test" and "laptop"
  EXPECT_EQ(list.parsed()[1]["name"], "laptop");
  // Another user neither sees nor revokes them.
  EXPECT_EQ(client.get(tokens, other_.token).status, 403);
  EXPECT_EQ(client.request("DELETE", tokens + "/laptop", other_.token).status, 403);

  // A tunnel opened with the token closes when the token is revoked.
  WsClient ws(port(), "/api/v1/spaces/" + granted_space_ + "/tunnel/22",
              {"Authorization: Bearer " + laptop});
  ASSERT_EQ(ws.status(), 101) << ws.body();
  EXPECT_EQ(client.get("/api/v1/whoami", laptop).status, 200);
  const auto revoked = client.request("DELETE", tokens + "/laptop", granted_.token);
  ASSERT_EQ(revoked.status, 200) << revoked.body;
  EXPECT_EQ(client.get("/api/v1/whoami", laptop).status, 401);
  const auto started = std::chrono::steady_clock::now();
  while (!ws.closed() && std::chrono::steady_clock::now() - started < 3s) ws.receive(200ms);
  EXPECT_TRUE(ws.closed());
  EXPECT_LT(std::chrono::steady_clock::now() - started, 1500ms);
  EXPECT_EQ(client.request("DELETE", tokens + "/laptop", granted_.token).status, 404);

  // A token past its expiry is refused like an unknown one.
  const auto user = stack_.store().users().find_by_username(granted_.username);
  const auto old = new_token();
  stack_.store().tokens().create(user->id, token_hash(old), "old", now - 1);
  EXPECT_EQ(client.get("/api/v1/whoami", old).status, 401);
  // Two tokens of one name: revoking by that name asks for the id.
  client.post(tokens, granted_.token, {{"name", "twin"}});
  client.post(tokens, granted_.token, {{"name", "twin"}});
  const auto twins = client.request("DELETE", tokens + "/twin", granted_.token);
  EXPECT_EQ(twins.status, 409);
  EXPECT_NE(twins.body.find("name one by its id"), std::string::npos) << twins.body;
}

TEST_F(security_access, ADisabledUserLosesTokensSessionsLoginsAndSocketsAtOnce) {
  HttpClient client(port());
  const auto user = "/api/v1/users/" + granted_.username;
  const auto session = log_in(port(), granted_);
  WsClient ws(port(), "/api/v1/spaces/" + granted_space_ + "/tunnel/22",
              {"Authorization: Bearer " + granted_.token});
  ASSERT_EQ(ws.status(), 101) << ws.body();
  // Only an admin disables, and not themself.
  EXPECT_EQ(client.request("PATCH", user, granted_.token, R"({"disabled": true})").status, 403);
  EXPECT_EQ(
      client.request("PATCH", "/api/v1/users/admin", stack_.admin_token(), R"({"disabled": true})")
          .status,
      409);
  const auto off = client.request("PATCH", user, stack_.admin_token(), R"({"disabled": true})");
  ASSERT_EQ(off.status, 200) << off.body;
  EXPECT_EQ(off.parsed()["disabled"], true);
  EXPECT_EQ(client.get("/api/v1/whoami", granted_.token).status, 401);
  EXPECT_EQ(client.request("GET", "/api/v1/whoami", "", "", {session.cookie_header}).status, 401);
  const auto login =
      client.post("/api/v1/session", "",
                  {{"username", granted_.username}, {"password", "pw-" + granted_.username}});
  EXPECT_EQ(login.status, 403);
  EXPECT_NE(login.body.find("disabled"), std::string::npos) << login.body;
  const auto started = std::chrono::steady_clock::now();
  while (!ws.closed() && std::chrono::steady_clock::now() - started < 3s) ws.receive(200ms);
  EXPECT_TRUE(ws.closed());
  EXPECT_LT(std::chrono::steady_clock::now() - started, 1500ms);
  // Enabled again: the tokens work again; the ended session stays ended.
  ASSERT_EQ(client.request("PATCH", user, stack_.admin_token(), R"({"disabled": false})").status,
            200);
  EXPECT_EQ(client.get("/api/v1/whoami", granted_.token).status, 200);
  EXPECT_EQ(client.request("GET", "/api/v1/whoami", "", "", {session.cookie_header}).status, 401);
}

TEST_F(security_access, ChangingOnesPasswordNeedsTheCurrentOneAndEndsOtherSessions) {
  HttpClient client(port());
  const auto user = "/api/v1/users/" + granted_.username;
  const auto here = log_in(port(), granted_);
  const auto elsewhere = log_in(port(), granted_);
  const auto patch = [&](const json& body) {
    return client.request(
        "PATCH", user, "", body.dump(),
        {here.cookie_header, "X-CSRF-Token: " + here.csrf, "Origin: http://127.0.0.1"});
  };
  EXPECT_EQ(patch({{"password", "a new long password"}}).status, 422);
  EXPECT_EQ(patch({{"password", "a new long password"}, {"currentPassword", "wrong"}}).status, 403);
  const auto changed =
      patch({{"password", "a new long password"}, {"currentPassword", "pw-" + granted_.username}});
  ASSERT_EQ(changed.status, 200) << changed.body;
  EXPECT_EQ(client.request("GET", "/api/v1/whoami", "", "", {here.cookie_header}).status, 200);
  EXPECT_EQ(client.request("GET", "/api/v1/whoami", "", "", {elsewhere.cookie_header}).status, 401);
  // An admin sets another user's password without theirs, and ends all their sessions.
  ASSERT_EQ(
      client.request("PATCH", user, stack_.admin_token(), R"({"password": "set by the admin"})")
          .status,
      200);
  EXPECT_EQ(client.request("GET", "/api/v1/whoami", "", "", {here.cookie_header}).status, 401);
}

TEST_F(security_access, AUserIsDeletedOnlyWithoutSpacesAndTakesTheirTokensAlong) {
  HttpClient client(port());
  const auto admin = stack_.admin_token();
  const auto refused = client.request("DELETE", "/api/v1/users/" + granted_.username, admin);
  EXPECT_EQ(refused.status, 409);
  EXPECT_NE(refused.body.find("still owns spaces"), std::string::npos) << refused.body;
  EXPECT_EQ(client.request("DELETE", "/api/v1/users/admin", admin).status, 409);  // oneself
  const auto loner = person("loner", {});
  EXPECT_EQ(client.request("DELETE", "/api/v1/users/" + loner.username, granted_.token).status,
            403);
  EXPECT_EQ(client.request("DELETE", "/api/v1/users/" + loner.username, admin).status, 204);
  EXPECT_EQ(client.get("/api/v1/whoami", loner.token).status, 401);
  EXPECT_EQ(client.get("/api/v1/users/" + loner.username, admin).status, 404);
}

TEST_F(security_access, AUsersSpacesAreHandedOverAllOrNoneBeforeTheDeleteWithTransferTo) {
  HttpClient client(port());
  const auto admin = stack_.admin_token();
  const auto path = "/api/v1/users/" + granted_.username + "?transfer_to=";
  const auto heir = person("heir", {});
  // A clash of names refuses the whole transfer: the heir's own space has one of the names.
  const auto granted_names = [&] {
    std::set<std::string> names;
    for (const auto& s : stack_.store().spaces().list())
      if (s.owner_id &&
          *s.owner_id == stack_.store().users().find_by_username(granted_.username)->id)
        names.insert(s.name);
    return names;
  };
  const auto before = granted_names();
  ASSERT_EQ(before.size(), 2u);
  EXPECT_EQ(client.request("DELETE", path + "nobody-here", admin).status, 404);
  EXPECT_EQ(client.request("DELETE", path + granted_.username, admin).status, 400);
  // Over the heir's quota: 403 saying so, and nothing moved.
  ASSERT_EQ(
      client
          .request("PATCH", "/api/v1/users/" + heir.username + "/quota", admin, R"({"spaces": 1})")
          .status,
      200);
  const auto over = client.request("DELETE", path + heir.username, admin);
  EXPECT_EQ(over.status, 403) << over.body;
  EXPECT_NE(over.body.find("quota"), std::string::npos) << over.body;
  EXPECT_EQ(granted_names(), before);
  ASSERT_EQ(client
                .request("PATCH", "/api/v1/users/" + heir.username + "/quota", admin,
                         R"({"spaces": "unlimited"})")
                .status,
            200);
  // Only admins.
  EXPECT_EQ(client.request("DELETE", path + heir.username, granted_.token).status, 403);
  const auto done = client.request("DELETE", path + heir.username, admin);
  ASSERT_EQ(done.status, 204) << done.body;
  EXPECT_EQ(client.get("/api/v1/whoami", granted_.token).status, 401);
  // The heir has them, by the same names, and sees them; the space page says the account
  // changes at the next start.
  const auto theirs = client.get("/api/v1/spaces", heir.token);
  ASSERT_EQ(theirs.status, 200);
  std::set<std::string> names;
  for (const auto& s : theirs.parsed()) names.insert(s["name"].get<std::string>());
  EXPECT_EQ(names, before);
  const auto info = client.get("/api/v1/spaces/" + granted_space_, heir.token);
  ASSERT_EQ(info.status, 200);
  EXPECT_NE(info.body.find("account"), std::string::npos) << info.body;
}

// ---- sessions -------------------------------------------------------------------------------

std::string cookie_of(const HttpResponse& r) {
  const auto set = r.header("set-cookie");
  const auto eq = set.find('=');
  return set.substr(eq + 1, set.find(';') - eq - 1);
}

TEST_F(AccessTest, LogInUseTheSessionAndLogOut) {
  HttpClient client(port());
  const auto login_body =
      json{{"username", granted_.username}, {"password", "pw-" + granted_.username}};
  const auto wrong =
      client.post("/api/v1/session", "", {{"username", granted_.username}, {"password", "nope"}});
  EXPECT_EQ(wrong.status, 401);
  const auto unknown =
      client.post("/api/v1/session", "", {{"username", "nobody"}, {"password", "x"}});
  EXPECT_EQ(unknown.status, 401);
  EXPECT_EQ(unknown.parsed()["error"], wrong.parsed()["error"]);  // nothing to tell them apart

  const auto ok = client.post("/api/v1/session", "", login_body);
  ASSERT_EQ(ok.status, 200) << ok.body;
  const auto set_cookie = ok.header("set-cookie");
  EXPECT_EQ(set_cookie.rfind("bowline_session=", 0), 0u) << set_cookie;
  EXPECT_NE(set_cookie.find("; HttpOnly"), std::string::npos);
  EXPECT_NE(set_cookie.find("; SameSite=Strict"), std::string::npos);
  EXPECT_NE(set_cookie.find("; Path=/"), std::string::npos);
  EXPECT_EQ(set_cookie.find("Secure"), std::string::npos);  // no TLS here
  const auto cookie = cookie_of(ok);
  EXPECT_EQ(cookie.size(), 64u);
  const auto csrf = ok.parsed()["csrf"].get<std::string>();
  EXPECT_EQ(ok.parsed()["user"]["username"], granted_.username);
  EXPECT_EQ(ok.parsed()["user"],
            client.get("/api/v1/users/" + granted_.username, granted_.token).parsed());
  // Only the cookie's hash is stored.
  EXPECT_FALSE(stack_.store().sessions().use(cookie, 3600'000));

  const std::string with_cookie = "Cookie: theme=dark; bowline_session=" + cookie;
  const auto again = client.request("GET", "/api/v1/session", "", "", {with_cookie});
  EXPECT_EQ(again.status, 200);
  EXPECT_EQ(again.parsed()["csrf"], csrf);
  EXPECT_EQ(client.request("GET", "/api/v1/session", "", "").status, 401);
  EXPECT_EQ(client.request("GET", "/api/v1/whoami", "", "", {with_cookie}).parsed()["username"],
            granted_.username);
  // The event stream takes the cookie.
  {
    const int fd = connect_to(port());
    send_all(fd, "GET /api/v1/events HTTP/1.1\r\nHost: 127.0.0.1\r\n" + with_cookie + "\r\n\r\n");
    const auto head = receive_some(fd, 10s);
    EXPECT_EQ(head.substr(0, 12), "HTTP/1.1 200") << head;
    ::close(fd);
  }

  // Changing state needs this server's Origin and the CSRF token on every such route.
  const std::string page = "Origin: http://127.0.0.1";  // the Host HttpClient sends
  for (const auto& route : api_->router().routes()) {
    if (route.method == "GET" || route.access == Access::Public) continue;
    const auto target = path_for(route.pattern, granted_space_, granted_.username, tmpl_);
    const auto none = client.request(route.method, target, "", "{}", {with_cookie, page});
    EXPECT_EQ(none.status, 403) << route.method << " " << target << " " << none.body;
    const auto bad = client.request(route.method, target, "", "{}",
                                    {with_cookie, page, "X-CSRF-Token: " + std::string(64, '0')});
    EXPECT_EQ(bad.status, 403) << route.method << " " << target << " " << bad.body;
    for (const std::string& from : {std::string(), std::string("Origin: https://evil.example")}) {
      std::vector<std::string> headers = {with_cookie, "X-CSRF-Token: " + csrf};
      if (!from.empty()) headers.push_back(from);
      const auto foreign = client.request(route.method, target, "", "{}", headers);
      EXPECT_EQ(foreign.status, 403) << route.method << " " << target << " " << from;
      EXPECT_NE(foreign.body.find("Origin"), std::string::npos) << foreign.body;
    }
  }
  const auto start = client.request("POST", "/api/v1/spaces/" + granted_space_ + "/restart", "",
                                    "{}", {with_cookie, page, "X-CSRF-Token: " + csrf});
  EXPECT_EQ(start.status, 202) << start.body;

  // The browser's WebSocket: the cookie and this server's Origin; without Origin it is refused.
  const auto origin = "Origin: http://127.0.0.1:" + std::to_string(port());
  stack_.wait_operation(start.parsed()["operation"]["id"].get<std::int64_t>(), granted_.token);
  EXPECT_EQ(
      WsClient(port(), "/api/v1/spaces/" + granted_space_ + "/vnc", {with_cookie, origin}).status(),
      101);
  EXPECT_EQ(WsClient(port(), "/api/v1/spaces/" + granted_space_ + "/vnc", {with_cookie}).status(),
            403);

  // Logging out needs the token too, ends the session and clears the cookie.
  EXPECT_EQ(client.request("DELETE", "/api/v1/session", "", "", {with_cookie, page}).status, 403);
  EXPECT_EQ(
      client.request("DELETE", "/api/v1/session", "", "", {with_cookie, "X-CSRF-Token: " + csrf})
          .status,
      403);  // no Origin
  const auto out = client.request("DELETE", "/api/v1/session", "", "",
                                  {with_cookie, page, "X-CSRF-Token: " + csrf});
  EXPECT_EQ(out.status, 204);
  EXPECT_NE(out.header("set-cookie").find("Max-Age=0"), std::string::npos);
  EXPECT_EQ(client.request("GET", "/api/v1/session", "", "", {with_cookie}).status, 401);
  EXPECT_EQ(client.request("GET", "/api/v1/whoami", "", "", {with_cookie}).status, 401);
}

TEST_F(AccessTest, LoginWantsJsonAndSlowsGuessingDown) {
  HttpClient client(port());
  const std::string body = "username=a&password=b";
  const auto form = client.send_raw(
      "POST /api/v1/session HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
      "application/x-www-form-urlencoded\r\nContent-Length: " +
      std::to_string(body.size()) + "\r\n\r\n" + body);
  EXPECT_EQ(form.status, 415);
  // Five wrong guesses; then even the right password waits (the lockout is a minute here).
  for (int i = 0; i < 5; ++i)
    EXPECT_EQ(
        client.post("/api/v1/session", "", {{"username", other_.username}, {"password", "guess"}})
            .status,
        401);
  const auto locked =
      client.post("/api/v1/session", "",
                  {{"username", other_.username}, {"password", "pw-" + other_.username}});
  EXPECT_EQ(locked.status, 429) << locked.body;
}

}  // namespace
}  // namespace bowline::api::testing

namespace bowline::api::testing {
namespace {

// Whether the server ends the connection `fd` within `limit` (what it sends meanwhile is read
// and dropped: heartbeats, events).
bool ends_within(int fd, std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left <= 0ms) return false;
    bool eof = false;
    receive_some(fd, left, &eof);
    if (eof) return true;
  }
}

// An event stream of `token`'s, its head read.
int open_events(unsigned short port, const std::string& token) {
  const int fd = connect_to(port);
  send_all(fd, "GET /api/v1/events HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + token +
                   "\r\n\r\n");
  const auto head = receive_some(fd, 10s);
  EXPECT_EQ(head.substr(0, 12), "HTTP/1.1 200") << head;
  return fd;
}

// Like the sockets into spaces, an event stream lives only as long as its credential and the
// caller's role: a revoked token, a demotion or a disabled user end it within a second.
TEST_F(security_access, AnEventStreamEndsWithinASecondOfItsCredentialOrRoleGoing) {
  HttpClient client(port());
  const auto tokens = "/api/v1/users/" + granted_.username + "/tokens";
  const auto made = client.post(tokens, granted_.token, {{"name", "stream"}});
  ASSERT_EQ(made.status, 201) << made.body;
  const auto timed_end = [](int fd) {
    const auto start = std::chrono::steady_clock::now();
    EXPECT_TRUE(ends_within(fd, 3s));
    EXPECT_LT(std::chrono::steady_clock::now() - start, 1500ms);
    ::close(fd);
  };
  const int revoked = open_events(port(), made.parsed()["token"].get<std::string>());
  EXPECT_FALSE(ends_within(revoked, 600ms));  // open while the token is good
  ASSERT_EQ(client.request("DELETE", tokens + "/stream", granted_.token).status, 200);
  timed_end(revoked);

  const auto boss = person("boss", {store::Permission::Admin});
  const int demoted = open_events(port(), boss.token);
  ASSERT_EQ(client
                .request("PATCH", "/api/v1/users/" + boss.username, stack_.admin_token(),
                         R"({"permissions": []})")
                .status,
            200);
  timed_end(demoted);

  const int disabled = open_events(port(), granted_.token);
  ASSERT_EQ(client
                .request("PATCH", "/api/v1/users/" + granted_.username, stack_.admin_token(),
                         R"({"disabled": true})")
                .status,
            200);
  timed_end(disabled);
}

// Export and import are WebSockets a browser's page could open with the cookie: only this
// server's Origin may.
TEST_F(security_access, ExportAndImportFromABrowserNeedThisServersOrigin) {
  const auto session = log_in(port(), granted_);
  for (const auto& path : {"/api/v1/spaces/" + granted_space_ + "/export",
                           std::string("/api/v1/spaces/import?name=copy")}) {
    EXPECT_EQ(WsClient(port(), path, {session.cookie_header}).status(), 403) << path;
    EXPECT_EQ(
        WsClient(port(), path, {session.cookie_header, "Origin: https://evil.example"}).status(),
        403)
        << path;
  }
}

// A token made with a token that expires ends no later than it, asked for or not; so does the
// first token of a user that an admin's expiring token makes.
TEST_F(security_access, ATokenNeverOutlivesTheTokenThatMadeIt) {
  HttpClient client(port());
  const auto tokens = "/api/v1/users/" + granted_.username + "/tokens";
  const auto hour = client.post(tokens, granted_.token, {{"name", "hour"}, {"expires", "1h"}});
  ASSERT_EQ(hour.status, 201) << hour.body;
  const auto short_lived = hour.parsed()["token"].get<std::string>();
  const auto ends = hour.parsed()["expiresAt"].get<std::int64_t>();
  for (const auto& body :
       {json{{"name", "forever"}}, json{{"name", "month"}, {"expires", "30d"}}}) {
    const auto made = client.post(tokens, short_lived, body);
    ASSERT_EQ(made.status, 201) << made.body;
    EXPECT_EQ(made.parsed()["expiresAt"], ends) << body.dump();
  }
  const auto sooner = client.post(tokens, short_lived, {{"name", "sooner"}, {"expires", "10m"}});
  EXPECT_LT(sooner.parsed()["expiresAt"].get<std::int64_t>(), ends);

  const auto admin_hour = client.post("/api/v1/users/admin/tokens", stack_.admin_token(),
                                      {{"name", "hour"}, {"expires", "1h"}});
  ASSERT_EQ(admin_hour.status, 201) << admin_hour.body;
  const auto fresh = client.post("/api/v1/users", admin_hour.parsed()["token"].get<std::string>(),
                                 {{"username", unique("fresh")}});
  ASSERT_EQ(fresh.status, 201) << fresh.body;
  const auto listed =
      client.get("/api/v1/users/" + fresh.parsed()["username"].get<std::string>() + "/tokens",
                 stack_.admin_token());
  ASSERT_EQ(listed.parsed().size(), 1u) << listed.body;
  EXPECT_EQ(listed.parsed()[0]["expiresAt"], admin_hour.parsed()["expiresAt"]);
}

// A new password can take every API token of the user along (revokeTokens): a token that
// leaked with the password stops working.
TEST_F(security_access, APasswordChangeCanRevokeEveryTokenOfTheUser) {
  HttpClient client(port());
  const auto tokens = "/api/v1/users/" + granted_.username + "/tokens";
  const auto second = client.post(tokens, granted_.token, {{"name", "second"}});
  ASSERT_EQ(second.status, 201);
  const auto here = log_in(port(), granted_);
  const auto patch = [&](const json& body) {
    return client.request(
        "PATCH", "/api/v1/users/" + granted_.username, "", body.dump(),
        {here.cookie_header, "X-CSRF-Token: " + here.csrf, "Origin: http://127.0.0.1"});
  };
  EXPECT_EQ(patch({{"revokeTokens", true}}).status, 422);  // only with a new password
  const auto changed = patch({{"password", "a new long password"},
                              {"currentPassword", "pw-" + granted_.username},
                              {"revokeTokens", true}});
  ASSERT_EQ(changed.status, 200) << changed.body;
  EXPECT_EQ(client.get("/api/v1/whoami", granted_.token).status, 401);
  EXPECT_EQ(client.get("/api/v1/whoami", second.parsed()["token"].get<std::string>()).status, 401);
  EXPECT_EQ(client.request("GET", "/api/v1/whoami", "", "", {here.cookie_header}).status, 200);
  const auto user = stack_.store().users().find_by_username(granted_.username);
  EXPECT_TRUE(stack_.store().tokens().list_for_user(user->id).empty());
}

}  // namespace
}  // namespace bowline::api::testing
