// The stack and the checks of hostile_inputs_test.cpp: the real store, engine (libvirt's
// test:///default driver), API and HTTP server with the web UI's static files in front, as
// `bowline server` wires them; a user with a running space; and what a refusal must look like.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "../../fuzz/iso9660_entry.hpp"
#include "api/routes_static.hpp"
#include "api_test_support.hpp"
#include "space_access_fakes.hpp"

namespace bowline::api::testing {

// Who sends a row's request.
enum class Who { Anonymous, User, Admin };

// One row of the catalog: what it is, the request, and the answers that count as refusing it
// (empty: any 4xx).
struct Row {
  Row(std::string what_, Who who_, std::string method_, std::string target_, std::string body_,
      std::vector<std::string> headers_, std::vector<int> refused_, std::string raw_ = {})
      : what(std::move(what_)),
        who(who_),
        method(std::move(method_)),
        target(std::move(target_)),
        body(std::move(body_)),
        headers(std::move(headers_)),
        refused(std::move(refused_)),
        raw(std::move(raw_)) {}
  std::string what;
  Who who;
  std::string method;
  std::string target;  // {id}: the user's space, {username}: the user, {name}: a template
  std::string body;
  std::vector<std::string> headers;
  std::vector<int> refused;
  std::string raw;  // set: sent as it is instead of method, target, headers and body
};

// What an answer must not tell a caller: the server's paths, SQL, library internals.
inline std::string leak_in(const std::string& body, const std::filesystem::path& data_dir) {
  for (const std::string& needle :
       {data_dir.string(), std::string("json.exception"), std::string("sqlite"),
        std::string("SQLITE"), std::string("std::"), std::string("boost::"),
        std::string("basic_string"), std::string("internal error"), std::string("what()")})
    if (body.find(needle) != std::string::npos) return needle;
  return {};
}

// A web root as npm ci and the build leave it, with a secret beside it that no path may reach.
inline void write_web_root(const std::filesystem::path& dir) {
  namespace fs = std::filesystem;
  const auto put = [](const fs::path& file, const std::string& text) {
    fs::create_directories(file.parent_path());
    std::ofstream(file) << text;
  };
  put(dir / "web/ui/index.html", "<!doctype html><title>bowline</title>");
  put(dir / "web/ui/app.js", "export const x = 1;");
  put(dir / "web/ui/.hidden.js", "HIDDEN-SECRET");
  put(dir / "web/node_modules/@novnc/novnc/core/rfb.js", "export default class RFB {}");
  put(dir / "web/node_modules/other/index.js", "NOT-LISTED-SECRET");
  put(dir / "etc/passwd", "root:x:0:0:PASSWD-SECRET");
  put(dir / "secret.txt", "OUTSIDE-SECRET");
}

class HostileInputs : public ::testing::Test {
 protected:
  HostileInputs() {
    write_web_root(stack_.dir());
    ApiOptions options;
    options.access = &access_;
    options.log = [](const std::string&) {};
    api_ = std::make_unique<Api>(stack_.store(), stack_.engine(), stack_.events(), options);
    web_ = std::make_unique<StaticFiles>(stack_.dir() / "web");
    server_ = std::make_unique<HttpServer>(ApiStack::test_http_options(), [this](Request& r) {
      return StaticFiles::handles(r.path) ? web_->handle(r) : api_->handle(r);
    });
    server_->start();
    store::NewUser u;
    u.username = unique("hu");
    u.permissions = {store::Permission::UseVnc, store::Permission::UseWebTerminal,
                     store::Permission::UseSsh};
    u.password_hash = hash_password("pw-" + u.username);
    const auto user = stack_.store().users().create(u);
    username_ = u.username;
    token_ = issue_token(stack_.store(), user.id, "test");
    HttpClient client(port());
    const auto made = client.post(
        "/api/v1/templates", stack_.admin_token(),
        {{"name", template_}, {"yaml", bridged_template() + "console: true\ndisplay: true\n"}});
    EXPECT_EQ(made.status, 201) << made.body;
    space_ = make_space(template_, token_);
  }
  ~HostileInputs() override { server_->stop(); }

  unsigned short port() const { return server_->port(); }

  // A running space of `token`'s user from `tmpl`: its id.
  std::string make_space(const std::string& tmpl, const std::string& token) {
    HttpClient client(port());
    const auto r = client.post("/api/v1/spaces", token,
                               {{"template", tmpl}, {"name", unique("s")}, {"start", true}});
    EXPECT_EQ(r.status, 202) << r.body;
    if (r.status != 202) return {};
    stack_.wait_operation(r.parsed()["operation"]["id"].get<std::int64_t>(), token);
    return r.parsed()["space"]["id"].get<std::string>();
  }

  std::string token_of(Who who) const {
    return who == Who::Admin ? stack_.admin_token() : who == Who::User ? token_ : std::string();
  }

  std::string expand(std::string target) const {
    const auto put = [&](const std::string& param, const std::string& value) {
      for (auto at = target.find(param); at != std::string::npos; at = target.find(param))
        target.replace(at, param.size(), value);
    };
    put("{id}", space_);
    put("{username}", username_);
    put("{name}", template_);
    return target;
  }

  HttpResponse send(const Row& row) {
    HttpClient client(port());
    if (!row.raw.empty()) return client.send_raw(expand(row.raw));
    auto headers = row.headers;
    return client.request(row.method, expand(row.target), token_of(row.who), expand(row.body),
                          headers);
  }

  // The row is refused as it says, with a 4xx that tells nothing of the server's insides.
  void expect_refused(const Row& row, const HttpResponse& r) {
    SCOPED_TRACE(row.what);
    const auto said = std::to_string(r.status) + " " + r.body.substr(0, 300);
    EXPECT_GE(r.status, 400) << said;
    EXPECT_LT(r.status, 500) << said;
    if (!row.refused.empty()) {
      EXPECT_NE(std::find(row.refused.begin(), row.refused.end(), r.status), row.refused.end())
          << said;
    }
    EXPECT_EQ(leak_in(r.body, stack_.dir()), "") << said;
  }

  // The seed's user-data of the space `id`, read back out of its ISO's Joliet tree.
  std::string user_data_of(const std::string& id) {
    const auto space = stack_.store().spaces().get(id);
    if (!space) return {};
    std::ifstream in(stack_.images() / space->domain_name / "seed.iso", std::ios::binary);
    const std::string image{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    if (image.size() < 18 * 2048) return {};
    const std::size_t root = 17 * 2048 + 156;
    const auto records = guest::fuzz::read_directory(image, guest::fuzz::both32(image, root + 2),
                                                     guest::fuzz::both32(image, root + 10));
    for (const auto& r : records)
      if (r.identifier.size() > 2 && guest::fuzz::from_ucs2(r.identifier) == "user-data")
        return image.substr(std::size_t{r.extent} * 2048, r.size);
    return {};
  }

  ApiStack stack_;
  DisplayHost host_;
  HostAccess access_{host_};
  std::unique_ptr<Api> api_;
  std::unique_ptr<StaticFiles> web_;
  std::unique_ptr<HttpServer> server_;
  std::string username_, token_, space_;
  std::string template_ = unique("ht");
};

}  // namespace bowline::api::testing
