// /api/v1/session: a browser logs in with its username and password and gets the session
// cookie and the CSRF token; the same answer again for a live session; logging out ends it.
#include "api/api.hpp"
#include "api/body.hpp"
#include "api/json.hpp"
#include "api/origin.hpp"
#include "util/strings.hpp"

namespace bowline::api {

namespace {

nlohmann::json session_body(nlohmann::json user, const std::string& csrf) {
  return {{"user", std::move(user)}, {"csrf", csrf}};
}

}  // namespace

void Api::add_session_routes() {
  router_.add(
      "POST", "/api/v1/session", Access::Public, [this](const Caller&, const Request& request) {
        // A cross-site form cannot send JSON without a CORS preflight, which we never
        // grant: this keeps other sites from logging a browser in as someone else.
        if (util::to_lower(request.header("content-type")).rfind("application/json", 0) != 0)
          throw HttpError(415, "log in with a JSON body (Content-Type: application/json)");
        check_origin_if_sent(request);
        const auto body = object_body(request);
        const auto username = required_string(body, "username");
        const auto password = required_string(body, "password");
        auto pending = sessions_.begin_login(username, request);
        // The password's check waits its turn at the gate: off the HTTP workers.
        return Response::deferred([this, pending, password, request] {
          auto login = sessions_.finish_login(*pending, password);
          auto response =
              Response::json(200, session_body(user_with_quota(login.user), login.csrf));
          response.headers.emplace_back("Set-Cookie", sessions_.set_cookie(login.cookie, request));
          response.headers.emplace_back("Cache-Control", "no-store");
          response.authenticated = true;
          return response;
        });
      });

  router_.add(
      "GET", "/api/v1/session", Access::Public, [this](const Caller&, const Request& request) {
        auto found = sessions_.find(request);
        if (!found) throw HttpError(401, "not logged in");
        auto response =
            Response::json(200, session_body(user_with_quota(found->user), found->session.csrf));
        response.headers.emplace_back("Cache-Control", "no-store");
        response.authenticated = true;
        return response;
      });

  router_.add("DELETE", "/api/v1/session", Access::Public,
              [this](const Caller&, const Request& request) {
                if (auto found = sessions_.find(request)) {
                  Caller browser;
                  browser.by_session = true;
                  check_origin(browser, request);
                  if (!same_secret(request.header("x-csrf-token"), found->session.csrf))
                    throw HttpError(403, "this needs the session's X-CSRF-Token header");
                  sessions_.logout(request);
                }
                auto response = Response::no_content();
                response.headers.emplace_back("Set-Cookie", sessions_.clear_cookie(request));
                return response;
              });
}

}  // namespace bowline::api
