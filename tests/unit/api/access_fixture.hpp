// The fixture of the access tests (access_test.cpp, shares_test.cpp): a server on libvirt's
// test driver with fake display and console hosts, two templates (display and console on,
// and off), and three users: one without permissions, one with use-vnc, use-web-terminal and
// use-ssh, one with use-vnc and use-web-terminal; the first two have a running space each.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "api_test_support.hpp"
#include "server/backup.hpp"
#include "space_access_fakes.hpp"

namespace bowline::api::testing {

inline std::string with_switches(bool display, bool console) {
  return bridged_template() + "display: " + (display ? "true" : "false") +
         "\nconsole: " + (console ? "true" : "false") +
         "\nports: [8000, {port: 3000, name: web}]\n";
}

struct Person {
  std::string username;
  std::string token;
};

class AccessTest : public ::testing::Test {
 protected:
  AccessTest() {
    ApiOptions options;
    options.access = &access_;
    options.sessions.first_lockout = 60s;
    // The backup route, like the others, for admins only (server/backup.hpp).
    options.backup = [this](const std::function<void(std::string_view)>& sink) {
      server::write_backup({stack_.dir(), "", std::nullopt, 0}, sink);
    };
    options.log = [this](const std::string& line) {
      std::lock_guard lock(log_mutex_);
      logged_ += line + "\n";
    };
    api_ = std::make_unique<Api>(stack_.store(), stack_.engine(), stack_.events(), options);
    server_ = std::make_unique<HttpServer>(ApiStack::test_http_options(),
                                           [this](Request& r) { return api_->handle(r); });
    server_->start();
    HttpClient client(port());
    const auto on = client.post("/api/v1/templates", stack_.admin_token(),
                                {{"name", tmpl_}, {"yaml", with_switches(true, true)}});
    EXPECT_EQ(on.status, 201) << on.body;
    const auto off = client.post("/api/v1/templates", stack_.admin_token(),
                                 {{"name", tmpl_off_}, {"yaml", with_switches(false, false)}});
    EXPECT_EQ(off.status, 201) << off.body;
    plain_ = person("plain", {});
    granted_ = person("granted", {store::Permission::UseVnc, store::Permission::UseWebTerminal,
                                  store::Permission::UseSsh});
    other_ = person("other", {store::Permission::UseVnc, store::Permission::UseWebTerminal});
    plain_space_ = space(plain_, tmpl_, &plain_op_);
    granted_space_ = space(granted_, tmpl_, &granted_op_);
    switched_off_space_ = space(granted_, tmpl_off_);
  }
  ~AccessTest() override { server_->stop(); }

  unsigned short port() const { return server_->port(); }

  Person person(const std::string& prefix, std::set<store::Permission> permissions) {
    store::NewUser u;
    u.username = unique(prefix);
    u.permissions = std::move(permissions);
    u.password_hash = hash_password("pw-" + u.username);
    const auto user = stack_.store().users().create(u);
    return {u.username, issue_token(stack_.store(), user.id, "test")};
  }

  std::string space(const Person& owner, const std::string& tmpl, std::int64_t* op = nullptr) {
    HttpClient client(port());
    const auto r = client.post("/api/v1/spaces", owner.token,
                               {{"template", tmpl}, {"name", unique("s")}, {"start", true}});
    EXPECT_EQ(r.status, 202) << r.body;
    const auto id = r.parsed()["space"]["id"].get<std::string>();
    if (op) *op = r.parsed()["operation"]["id"].get<std::int64_t>();
    stack_.wait_operation(r.parsed()["operation"]["id"].get<std::int64_t>(), owner.token);
    return id;
  }

  ApiStack stack_;
  DisplayHost host_;
  HostAccess access_{host_};
  std::unique_ptr<Api> api_;
  std::unique_ptr<HttpServer> server_;
  std::string tmpl_ = unique("both"), tmpl_off_ = unique("none"), pool_ = unique("pool");
  Person plain_, granted_, other_;
  std::string plain_space_, granted_space_, switched_off_space_;
  std::int64_t plain_op_ = 0, granted_op_ = 0;
  std::mutex log_mutex_;
  std::string logged_;  // the API's log lines
};

}  // namespace bowline::api::testing
