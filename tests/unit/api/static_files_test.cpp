// The web UI's static files: what is served from where, with which headers, and that no path
// (dot segments, encoded or not, hidden files, symbolic links) reaches outside the web root.
#include "api/routes_static.hpp"

#include <gtest/gtest.h>

#include <regex>
#include <set>

#include "api_test_support.hpp"

namespace bowline::api::testing {
namespace {

namespace fs = std::filesystem;

void write(const fs::path& file, const std::string& text) {
  fs::create_directories(file.parent_path());
  std::ofstream(file) << text;
}

Request get(const std::string& path) {
  Request r;
  r.method = "GET";
  r.target = path;
  r.path = path;
  return r;
}

// web/ with the app, a vendored package, and things that must never be served: a file next
// to the root, a hidden file, a package that is not on the list, a link out of the root.
class StaticFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    write(dir_.path() / "secret.txt", "outside");
    write(root() / "package.json", "{}");
    write(root() / "ui/index.html", "<!doctype html><title>bowline</title>");
    write(root() / "ui/app.js", "export const x = 1;");
    write(root() / "ui/style.css", "body{}");
    write(root() / "ui/.hidden.js", "hidden");
    write(root() / "ui/notes.bak", "no type");
    write(root() / "node_modules/@novnc/novnc/core/rfb.js", "export default class RFB {}");
    write(root() / "node_modules/@xterm/xterm/css/xterm.css", ".xterm{}");
    write(root() / "node_modules/other/index.js", "not listed");
    fs::create_symlink(dir_.path() / "secret.txt", root() / "ui/link.txt");
    fs::create_symlink(root() / "ui/app.js", root() / "ui/alias.js");
  }
  fs::path root() const { return dir_.path() / "web"; }

  TempDir dir_;
};

TEST_F(StaticFilesTest, ServesTheAppAndListedPackagesWithTypeAndPolicy) {
  const StaticFiles files(root());
  auto r = files.handle(get("/"));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.body, "<!doctype html><title>bowline</title>");
  EXPECT_EQ(r.content_type, "text/html; charset=utf-8");
  auto header = [](const Response& response, const std::string& name) {
    for (const auto& [n, v] : response.headers)
      if (n == name) return v;
    return std::string();
  };
  const auto csp = header(r, "Content-Security-Policy");
  EXPECT_NE(csp.find("default-src 'self'"), std::string::npos) << csp;
  EXPECT_NE(csp.find("script-src 'self';"), std::string::npos) << csp;
  EXPECT_NE(csp.find("connect-src 'self'"), std::string::npos) << csp;
  EXPECT_EQ(csp.find("unsafe-eval"), std::string::npos) << csp;
  EXPECT_NE(csp.find("object-src 'none'"), std::string::npos) << csp;
  EXPECT_NE(csp.find("frame-ancestors 'none'"), std::string::npos) << csp;
  EXPECT_EQ(header(r, "X-Content-Type-Options"), "nosniff");
  EXPECT_EQ(header(r, "Cache-Control"), "no-cache");

  EXPECT_EQ(files.handle(get("/ui/")).body, r.body);
  r = files.handle(get("/ui/app.js"));
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.content_type, "text/javascript; charset=utf-8");
  EXPECT_EQ(files.handle(get("/ui/style.css")).content_type, "text/css; charset=utf-8");
  r = files.handle(get("/ui/vendor/novnc/core/rfb.js"));
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "export default class RFB {}");
  EXPECT_EQ(files.handle(get("/ui/vendor/xterm/css/xterm.css")).status, 200);
  // A link inside the root is followed.
  EXPECT_EQ(files.handle(get("/ui/alias.js")).body, "export const x = 1;");
}

TEST_F(StaticFilesTest, NothingOutsideTheRootOrOffTheList) {
  const StaticFiles files(root());
  for (const std::string& path : std::vector<std::string>{
           "/ui/../secret.txt", "/ui/../../secret.txt", "/ui/./app.js", "/ui//app.js",
           "/ui/vendor/../../secret.txt", "/ui/vendor/novnc/../../../secret.txt",
           "/ui/vendor/novnc/..", "/ui/vendor/other/index.js", "/ui/vendor/novnc",
           "/ui/vendor/novnc/", "/ui/.hidden.js", "/ui/notes.bak", "/ui/link.txt", "/ui/missing.js",
           "/ui/..\\secret.txt", std::string("/ui/app.js\0.html", 17), "/ui/package.json",
           "/ui/vendor/htm/../../package.json", "/ui/vendor"}) {
    const auto r = files.handle(get(path));
    EXPECT_EQ(r.status, 404) << path << ": " << r.body;
    EXPECT_EQ(r.body.find("outside"), std::string::npos) << path;
  }
  EXPECT_FALSE(file_under(root() / "ui", "../secret.txt"));
  EXPECT_FALSE(file_under(root() / "ui", ""));
  EXPECT_TRUE(file_under(root() / "ui", "app.js"));
}

TEST_F(StaticFilesTest, OnlyGetAndRevalidationByETag) {
  const StaticFiles files(root());
  auto post = get("/ui/app.js");
  post.method = "POST";
  EXPECT_EQ(files.handle(post).status, 405);

  const auto first = files.handle(get("/ui/app.js"));
  std::string etag;
  for (const auto& [n, v] : first.headers)
    if (n == "ETag") etag = v;
  ASSERT_FALSE(etag.empty());
  auto again = get("/ui/app.js");
  again.headers["if-none-match"] = etag;
  const auto r = files.handle(again);
  EXPECT_EQ(r.status, 304);
  EXPECT_TRUE(r.body.empty());
  // A changed file has another tag.
  write(root() / "ui/app.js", "export const x = 22;");
  EXPECT_EQ(files.handle(again).status, 200);
}

TEST_F(StaticFilesTest, EncodedDotSegmentsOverTheWireStayInside) {
  const StaticFiles files(root());
  HttpServerOptions options;
  options.port = 0;
  HttpServer server(options, [&files](Request& request) {
    return StaticFiles::handles(request.path) ? files.handle(request)
                                              : Response::error(404, "not static");
  });
  server.start();
  HttpClient client(server.port());
  EXPECT_EQ(client.get("/ui/app.js", "").status, 200);
  for (const std::string target :
       {"/ui/%2e%2e/secret.txt", "/ui/%2E%2E/%2e%2e/secret.txt", "/ui/..%2fsecret.txt",
        "/ui/vendor/novnc/%2e%2e/%2e%2e/%2e%2e/secret.txt", "/ui/../secret.txt",
        "/ui/app.js%00.html"}) {
    const auto r = client.get(target, "");
    EXPECT_TRUE(r.status == 404 || r.status == 400) << target << ": " << r.status;
    EXPECT_EQ(r.body.find("outside"), std::string::npos) << target;
  }
  server.stop();
}

// /ui/event-kinds.js is made by the server from the engine's list: the UI spells no kind.
TEST(StaticFilesGenerated, EventKindsModuleIsServedWithRevalidation) {
  StaticFiles files(fs::path(BOWLINE_SOURCE_DIR) / "web");
  files.add_generated("/ui/event-kinds.js", event_kinds_module(), "text/javascript; charset=utf-8");
  const auto r = files.handle(get("/ui/event-kinds.js"));
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.content_type, "text/javascript; charset=utf-8");
  EXPECT_NE(r.body.find("export const SPACE_STATE = \"space.state\";"), std::string::npos)
      << r.body;
  EXPECT_NE(r.body.find("export const SPACE_PERSONALISE_FAILED = \"space.personalise_failed\";"),
            std::string::npos)
      << r.body;
  std::string tag;
  for (const auto& [name, value] : r.headers)
    if (name == "ETag") tag = value;
  auto again = get("/ui/event-kinds.js");
  again.headers["if-none-match"] = tag;
  EXPECT_EQ(files.handle(again).status, 304);
  // And the UI uses it, spelling no kind itself.
  for (const char* page : {"space_store.js", "api.js"}) {
    const auto text =
        test_support::read_file(test_support::source_path(std::string("web/ui/") + page));
    EXPECT_NE(text.find("from \"/ui/event-kinds.js\""), std::string::npos) << page;
    EXPECT_EQ(text.find("\"operation.progress\""), std::string::npos) << page;
  }
}

TEST(StaticFilesDefaults, TheCommittedUiLoadsOnlyFilesThisServerHas) {
  // The committed UI is there and its page loads only files this server has.
  const StaticFiles files(fs::path(BOWLINE_SOURCE_DIR) / "web");
  const auto page = files.handle(get("/"));
  ASSERT_EQ(page.status, 200);
  EXPECT_EQ(page.body.find("<script>"), std::string::npos) << "no inline scripts";
  EXPECT_EQ(files.handle(get("/ui/app.js")).status, 200);
}

TEST(StaticFilesDefaults, EveryFileTheUiLoadsIsServed) {
  // What index.html links and every module of web/ui imports, vendored packages included
  // (uplot for the space page's charts): each must be a file the server answers.
  const auto web = fs::path(BOWLINE_SOURCE_DIR) / "web";
  if (!fs::exists(web / "node_modules")) GTEST_SKIP() << "no web/node_modules: run scripts/setup";
  StaticFiles files(web);
  files.add_generated("/ui/event-kinds.js", event_kinds_module(),
                      "text/javascript");  // as the server
  std::set<std::string> paths;
  const std::regex reference(R"re((?:href|src)="(/ui/[^"]+)"|from "(/ui/[^"]+)")re");
  std::vector<fs::path> sources{web / "ui" / "index.html"};
  for (const auto& entry : fs::directory_iterator(web / "ui"))
    if (entry.path().extension() == ".js") sources.push_back(entry.path());
  for (const auto& file : sources) {
    const auto text = test_support::read_file(file.string());
    for (std::sregex_iterator it(text.begin(), text.end(), reference), end; it != end; ++it)
      paths.insert((*it)[1].matched ? (*it)[1].str() : (*it)[2].str());
  }
  EXPECT_TRUE(paths.count("/ui/vendor/uplot/dist/uPlot.esm.js"));
  EXPECT_TRUE(paths.count("/ui/vendor/uplot/dist/uPlot.min.css"));
  for (const auto& path : paths)
    EXPECT_EQ(files.handle(get(path)).status, 200)
        << path << " (after a change of web/package-lock.json, scripts/setup runs npm ci)";
}

}  // namespace
}  // namespace bowline::api::testing
