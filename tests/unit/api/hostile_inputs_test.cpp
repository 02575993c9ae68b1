// The catalog of hostile inputs (docs/security.md): each row says what it is and what answer
// it must get, and every one is run against the real stack (hostile_inputs_support.hpp).
// Requests that must be refused get a 4xx (never a 5xx, never a 2xx) whose body tells nothing
// of the server's insides; values that are accepted must come out escaped, which a real parser
// (yaml-cpp for the cloud-init seed, pugixml for the domain XML) checks by reading them back
// verbatim. The tables are data: security_hostile_inputs.TheCatalogHasAtLeast150Rows counts
// them.
#include <yaml-cpp/yaml.h>

#include <iostream>
#include <pugixml.hpp>

#include "hostile_inputs_support.hpp"
#include "libvirt/domain_xml.hpp"
#include "plan/plan.hpp"
#include "spec/loader.hpp"
#include "ws_test_client.hpp"

namespace bowline::api::testing {
namespace {

using security_hostile_inputs = HostileInputs;

// ---- bodies: what no route with a body may take ---------------------------------------------

struct BodyRoute {
  Who who;
  const char* method;
  const char* target;
};

// Every route that reads a body (grep -rhn 'router_.add' src/api/), as a caller it admits.
const std::vector<BodyRoute>& body_routes() {
  static const std::vector<BodyRoute> routes = {
      {Who::Anonymous, "POST", "/api/v1/session"},
      {Who::User, "POST", "/api/v1/spaces"},
      {Who::User, "POST", "/api/v1/spaces/{id}/start"},
      {Who::User, "POST", "/api/v1/spaces/{id}/stop"},
      {Who::User, "POST", "/api/v1/spaces/{id}/restart"},
      {Who::User, "PUT", "/api/v1/spaces/{id}/ip"},
      {Who::Admin, "POST", "/api/v1/templates"},
      {Who::User, "POST", "/api/v1/templates/validate"},
      {Who::Admin, "PUT", "/api/v1/templates/{name}"},
      {Who::Admin, "POST", "/api/v1/pools"},
      {Who::User, "POST", "/api/v1/pools/any/claim"},
      {Who::Admin, "POST", "/api/v1/users"},
      {Who::User, "PATCH", "/api/v1/users/{username}"},
      {Who::Admin, "PATCH", "/api/v1/users/{username}/quota"},
      {Who::User, "POST", "/api/v1/users/{username}/keys"},
      {Who::User, "DELETE", "/api/v1/users/{username}/keys"},
      {Who::User, "POST", "/api/v1/users/{username}/tokens"},
  };
  return routes;
}

// Bodies that are not one JSON object: every route above answers 400.
const std::vector<std::pair<std::string, std::string>>& bad_bodies() {
  static const std::vector<std::pair<std::string, std::string>> bodies = {
      {"truncated JSON", R"({"name": )"},
      {"a JSON array", R"(["name", "yaml"])"},
      {"a JSON string", R"("name")"},
      {"a JSON number", "5"},
      {"two JSON values", "{} {}"},
      {"a number beyond a double (1e400)", R"({"name": 1e400, "yaml": 1})"},
      {"a raw NUL byte in a string", std::string("{\"name\": \"a\0b\"}", 15)},
      {"invalid UTF-8 in a string", "{\"name\": \"\xff\xfe\"}"},
      {"a lone surrogate escape", R"({"name": "\ud800"})"},
      {"arrays nested 100000 deep", std::string(100000, '[') + std::string(100000, ']')},
  };
  return bodies;
}

std::vector<Row> body_rows() {
  std::vector<Row> rows;
  for (const auto& route : body_routes())
    for (const auto& [what, body] : bad_bodies())
      rows.push_back({std::string(route.method) + " " + route.target + ": " + what,
                      route.who,
                      route.method,
                      route.target,
                      body,
                      {},
                      {400}});
  return rows;
}

std::string str(const nlohmann::json& j) {
  return j.dump();
}

// Fields of the wrong type or with hostile values, route by route.
std::vector<Row> field_rows() {
  const auto big = std::string(900 * 1024, 'a');
  std::string nested = "1";
  for (int i = 0; i < 10000; ++i) nested = "{\"a\":" + nested + "}";
  return {
      // spaces
      {"space: template is a number",
       Who::User,
       "POST",
       "/api/v1/spaces",
       str({{"template", 5}, {"name", "x"}}),
       {},
       {400}},
      {"space: name is a list",
       Who::User,
       "POST",
       "/api/v1/spaces",
       str({{"template", "t"}, {"name", {1, 2}}}),
       {},
       {400}},
      {"space: name nested 10000 objects deep",
       Who::User,
       "POST",
       "/api/v1/spaces",
       R"({"template": "t", "name": )" + nested + "}",
       {},
       {400}},
      {"space: start is a string",
       Who::User,
       "POST",
       "/api/v1/spaces",
       str({{"template", "{name}"}, {"name", "ok"}, {"start", "yes"}}),
       {},
       {400}},
      {"space: ip is an object",
       Who::User,
       "POST",
       "/api/v1/spaces",
       str({{"template", "{name}"}, {"name", "ok"}, {"ip", {{"a", 1}}}}),
       {},
       {400}},
      {"space: owner is a number",
       Who::User,
       "POST",
       "/api/v1/spaces",
       str({{"template", "{name}"}, {"name", "ok"}, {"owner", 1}}),
       {},
       {400}},
      {"space: another owner, by a user",
       Who::User,
       "POST",
       "/api/v1/spaces",
       str({{"template", "{name}"}, {"name", "ok"}, {"owner", "admin"}}),
       {},
       {403}},
      {"space: node is true",
       Who::User,
       "POST",
       "/api/v1/spaces",
       str({{"template", "{name}"}, {"name", "ok"}, {"node", true}}),
       {},
       {400}},
      {"space: a template name of 900 KiB",
       Who::User,
       "POST",
       "/api/v1/spaces",
       str({{"template", big}, {"name", "ok"}}),
       {},
       {404}},
      {"space: an unknown node",
       Who::User,
       "POST",
       "/api/v1/spaces",
       str({{"template", "{name}"}, {"name", "ok"}, {"node", "../../etc"}}),
       {},
       {404, 422}},
      {"space: ip is not an address",
       Who::User,
       "POST",
       "/api/v1/spaces",
       str({{"template", "{name}"}, {"name", "ok"}, {"ip", "999.1.1.1"}}),
       {},
       {422}},
      {"space: ip with a line break",
       Who::User,
       "POST",
       "/api/v1/spaces",
       str({{"template", "{name}"}, {"name", "ok"}, {"ip", "198.51.100.50\n"}}),
       {},
       {422}},
      {"set-ip: ip is a number",
       Who::User,
       "PUT",
       "/api/v1/spaces/{id}/ip",
       str({{"ip", 5}}),
       {},
       {400}},
      {"set-ip: ip is missing", Who::User, "PUT", "/api/v1/spaces/{id}/ip", "{}", {}, {400}},
      {"set-ip: ip outside the network",
       Who::User,
       "PUT",
       "/api/v1/spaces/{id}/ip",
       str({{"ip", "8.8.8.8"}}),
       {},
       {409, 422}},
      {"set-ip: ip with a NUL",
       Who::User,
       "PUT",
       "/api/v1/spaces/{id}/ip",
       str({{"ip", std::string("198.51.100.50\0x", 15)}}),
       {},
       {409, 422}},
      // templates
      {"template: name with ..",
       Who::Admin,
       "POST",
       "/api/v1/templates",
       str({{"name", "../x"}, {"yaml", bridged_template()}}),
       {},
       {422}},
      {"template: name with a slash",
       Who::Admin,
       "POST",
       "/api/v1/templates",
       str({{"name", "a/b"}, {"yaml", bridged_template()}}),
       {},
       {422}},
      {"template: name of 64 characters",
       Who::Admin,
       "POST",
       "/api/v1/templates",
       str({{"name", std::string(64, 't')}, {"yaml", bridged_template()}}),
       {},
       {422}},
      {"template: name with XML metacharacters",
       Who::Admin,
       "POST",
       "/api/v1/templates",
       str({{"name", "a<b>&\"'"}, {"yaml", bridged_template()}}),
       {},
       {422}},
      {"template: name with a line break",
       Who::Admin,
       "POST",
       "/api/v1/templates",
       str({{"name", "a\r\nb"}, {"yaml", bridged_template()}}),
       {},
       {422}},
      {"template: yaml is a number",
       Who::Admin,
       "POST",
       "/api/v1/templates",
       str({{"name", "n"}, {"yaml", 5}}),
       {},
       {400}},
      {"template: yaml is missing",
       Who::Admin,
       "POST",
       "/api/v1/templates",
       str({{"name", "n"}}),
       {},
       {400}},
      {"template: yaml over 512 KiB",
       Who::Admin,
       "POST",
       "/api/v1/templates",
       str({{"name", "n"}, {"yaml", bridged_template() + "description: " + big + "\n"}}),
       {},
       {422}},
      {"template: a user may not create one",
       Who::User,
       "POST",
       "/api/v1/templates",
       str({{"name", "n"}, {"yaml", bridged_template()}}),
       {},
       {403}},
      {"template: validate, yaml is a list",
       Who::User,
       "POST",
       "/api/v1/templates/validate",
       str({{"yaml", {"a"}}}),
       {},
       {400}},
      {"template: update, yaml is null",
       Who::Admin,
       "PUT",
       "/api/v1/templates/{name}",
       str({{"yaml", nullptr}}),
       {},
       {400}},
      {"template: update of ../../etc",
       Who::Admin,
       "PUT",
       "/api/v1/templates/..%2F..%2Fetc",
       str({{"yaml", bridged_template()}}),
       {},
       {404}},
      // pools
      {"pool: size is a string",
       Who::Admin,
       "POST",
       "/api/v1/pools",
       str({{"name", "p"}, {"template", "{name}"}, {"size", "3"}}),
       {},
       {400}},
      {"pool: size is a fraction",
       Who::Admin,
       "POST",
       "/api/v1/pools",
       str({{"name", "p"}, {"template", "{name}"}, {"size", 1.5}}),
       {},
       {400}},
      {"pool: size is negative",
       Who::Admin,
       "POST",
       "/api/v1/pools",
       str({{"name", "p"}, {"template", "{name}"}, {"size", -1}}),
       {},
       {422}},
      {"pool: size is 2^63",
       Who::Admin,
       "POST",
       "/api/v1/pools",
       R"({"name": "p", "template": "{name}", "size": 9223372036854775808})",
       {},
       {400, 422}},
      {"pool: size is 2^64-1",
       Who::Admin,
       "POST",
       "/api/v1/pools",
       R"({"name": "p", "template": "{name}", "size": 18446744073709551615})",
       {},
       {400, 422}},
      {"pool: name with ..",
       Who::Admin,
       "POST",
       "/api/v1/pools",
       str({{"name", "../p"}, {"template", "{name}"}, {"size", 1}}),
       {},
       {422}},
      {"pool: another node",
       Who::Admin,
       "POST",
       "/api/v1/pools",
       str({{"name", "p"}, {"template", "{name}"}, {"size", 1}, {"node", "x"}}),
       {},
       {422}},
      {"pool: claim, name is a number",
       Who::User,
       "POST",
       "/api/v1/pools/any/claim",
       str({{"name", 7}}),
       {},
       {400}},
      // users (admin)
      {"user: username is a number",
       Who::Admin,
       "POST",
       "/api/v1/users",
       str({{"username", 5}}),
       {},
       {400}},
      {"user: email is a list",
       Who::Admin,
       "POST",
       "/api/v1/users",
       str({{"username", "okname"}, {"email", {"a@b"}}}),
       {},
       {400}},
      {"user: sshKeys is a string",
       Who::Admin,
       "POST",
       "/api/v1/users",
       str({{"username", "okname"}, {"sshKeys", "ssh-ed25519 AAAA"}}),
       {},
       {400}},
      {"user: permissions is a string",
       Who::Admin,
       "POST",
       "/api/v1/users",
       str({{"username", "okname"}, {"permissions", "admin"}}),
       {},
       {400}},
      {"user: an unknown permission",
       Who::Admin,
       "POST",
       "/api/v1/users",
       str({{"username", "okname"}, {"permissions", {"root"}}}),
       {},
       {422}},
      {"user: password is a number",
       Who::Admin,
       "POST",
       "/api/v1/users",
       str({{"username", "okname"}, {"password", 12345678}}),
       {},
       {400}},
      {"user: password of 7 characters",
       Who::Admin,
       "POST",
       "/api/v1/users",
       str({{"username", "okname"}, {"password", "1234567"}}),
       {},
       {422}},
      {"user: password of 2000 characters",
       Who::Admin,
       "POST",
       "/api/v1/users",
       str({{"username", "okname"}, {"password", std::string(2000, 'p')}}),
       {},
       {422}},
      {"user: service password with a line break",
       Who::Admin,
       "POST",
       "/api/v1/users",
       str({{"username", "okname"}, {"servicePassword", "a\nroot::0:0::/:/bin/sh"}}),
       {},
       {422}},
      {"user: timezone ../../etc/passwd",
       Who::Admin,
       "POST",
       "/api/v1/users",
       str({{"username", "okname"}, {"timezone", "../../etc/passwd"}}),
       {},
       {422}},
      {"user: timezone of 900 KiB",
       Who::Admin,
       "POST",
       "/api/v1/users",
       str({{"username", "okname"}, {"timezone", big}}),
       {},
       {422}},
      {"user: an SSH key that is two lines",
       Who::Admin,
       "POST",
       "/api/v1/users",
       str({{"username", "okname"},
            {"sshKeys",
             {"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAA x\nssh-rsa AAAAB3NzaC1yc2EAAAA y"}}}),
       {},
       {422}},
      // one's own account (a user)
      {"self: permissions, as a user",
       Who::User,
       "PATCH",
       "/api/v1/users/{username}",
       str({{"permissions", {"admin"}}}),
       {},
       {403}},
      {"self: disabled, as a user",
       Who::User,
       "PATCH",
       "/api/v1/users/{username}",
       str({{"disabled", "false"}}),
       {},
       {403}},
      {"self: email is an object",
       Who::User,
       "PATCH",
       "/api/v1/users/{username}",
       str({{"email", {{"a", "b"}}}}),
       {},
       {400}},
      {"self: new password without the current one",
       Who::User,
       "PATCH",
       "/api/v1/users/{username}",
       str({{"password", "a long new password"}}),
       {},
       {422}},
      {"self: another user's account",
       Who::User,
       "PATCH",
       "/api/v1/users/admin",
       str({{"email", "x@y"}}),
       {},
       {403}},
      {"admin: disabled is a string",
       Who::Admin,
       "PATCH",
       "/api/v1/users/{username}",
       str({{"disabled", "yes"}}),
       {},
       {422}},
      {"quota: spaces is negative",
       Who::Admin,
       "PATCH",
       "/api/v1/users/{username}/quota",
       str({{"spaces", -1}}),
       {},
       {422}},
      {"quota: cpus is a fraction",
       Who::Admin,
       "PATCH",
       "/api/v1/users/{username}/quota",
       str({{"cpus", 1.5}}),
       {},
       {422}},
      {"quota: memory has an unknown unit",
       Who::Admin,
       "PATCH",
       "/api/v1/users/{username}/quota",
       str({{"memory", "8Q"}}),
       {},
       {422}},
      {"quota: memory beyond 2^64 bytes",
       Who::Admin,
       "PATCH",
       "/api/v1/users/{username}/quota",
       str({{"memory", "99999999999999999999G"}}),
       {},
       {422}},
      {"quota: disk is 2^64 (a double)",
       Who::Admin,
       "PATCH",
       "/api/v1/users/{username}/quota",
       R"({"disk": 18446744073709551616})",
       {},
       {422}},
      {"quota: an unknown field",
       Who::Admin,
       "PATCH",
       "/api/v1/users/{username}/quota",
       str({{"admin", true}}),
       {},
       {422}},
      {"quota: a user raising their own",
       Who::User,
       "PATCH",
       "/api/v1/users/{username}/quota",
       str({{"spaces", "unlimited"}}),
       {},
       {403}},
      {"key: a number",
       Who::User,
       "POST",
       "/api/v1/users/{username}/keys",
       str({{"key", 1}}),
       {},
       {400}},
      {"key: <script>",
       Who::User,
       "POST",
       "/api/v1/users/{username}/keys",
       str({{"key", "<script>alert(1)</script>"}}),
       {},
       {422}},
      {"key: an unknown type",
       Who::User,
       "POST",
       "/api/v1/users/{username}/keys",
       str({{"key", "ssh-evil AAAAC3NzaC1lZDI1NTE5AAAA x"}}),
       {},
       {422}},
      {"key: removing one that is not there",
       Who::User,
       "DELETE",
       "/api/v1/users/{username}/keys",
       str({{"key", "ssh-ed25519 AAAA'; DROP TABLE users; --"}}),
       {},
       {404}},
      {"token: name of 101 characters",
       Who::User,
       "POST",
       "/api/v1/users/{username}/tokens",
       str({{"name", std::string(101, 'n')}}),
       {},
       {422}},
      {"token: name with CRLF",
       Who::User,
       "POST",
       "/api/v1/users/{username}/tokens",
       str({{"name", "a\r\nSet-Cookie: x=y"}}),
       {},
       {422}},
      {"token: name is null",
       Who::User,
       "POST",
       "/api/v1/users/{username}/tokens",
       str({{"name", nullptr}}),
       {},
       {400}},
      {"token: expires in a million days",
       Who::User,
       "POST",
       "/api/v1/users/{username}/tokens",
       str({{"name", "t"}, {"expires", "999999999d"}}),
       {},
       {422}},
      {"token: expires is a number",
       Who::User,
       "POST",
       "/api/v1/users/{username}/tokens",
       str({{"name", "t"}, {"expires", 30}}),
       {},
       {400}},
      {"token: for another user",
       Who::User,
       "POST",
       "/api/v1/users/admin/tokens",
       str({{"name", "t"}}),
       {},
       {403}},
      // logging in
      {"login: username of 33 characters",
       Who::Anonymous,
       "POST",
       "/api/v1/session",
       str({{"username", std::string(33, 'u')}, {"password", "x"}}),
       {},
       {401}},
      {"login: username is a number",
       Who::Anonymous,
       "POST",
       "/api/v1/session",
       str({{"username", 1}, {"password", "x"}}),
       {},
       {400}},
      {"login: password is a list",
       Who::Anonymous,
       "POST",
       "/api/v1/session",
       str({{"username", "admin"}, {"password", {"x"}}}),
       {},
       {400}},
      {"login: SQL in the username",
       Who::Anonymous,
       "POST",
       "/api/v1/session",
       str({{"username", "' OR 1=1 --"}, {"password", "x"}}),
       {},
       {401}},
      {"login: a form, not JSON",
       Who::Anonymous,
       "",
       "",
       "",
       {},
       {415},
       "POST /api/v1/session HTTP/1.1\r\nHost: h\r\nContent-Type: "
       "application/x-www-form-urlencoded\r\nContent-Length: 21\r\n\r\nusername=a&password=b"},
  };
}

// Usernames and e-mail addresses (POST /api/v1/users as an admin).
std::vector<Row> account_rows() {
  const auto user = [](const char* what, const std::string& username, std::vector<int> refused) {
    return Row{what, Who::Admin,        "POST", "/api/v1/users", str({{"username", username}}),
               {},   std::move(refused)};
  };
  const auto email = [](const char* what, const std::string& address) {
    return Row{what,
               Who::Admin,
               "POST",
               "/api/v1/users",
               str({{"username", unique("em")}, {"email", address}}),
               {},
               {422}};
  };
  const auto patch_email = [](const char* what, const std::string& address) {
    return Row{what, Who::User, "PATCH", "/api/v1/users/{username}", str({{"email", address}}),
               {},   {422}};
  };
  return {
      user("username: a Cyrillic a (homoglyph of admin)",
           "\xd0\xb0"
           "dmin",
           {422}),
      user("username: a fullwidth letter",
           "\xef\xbd\x81"
           "lice",
           {422}),
      user("username: a zero-width space", "ad\xe2\x80\x8bmin", {422}),
      user("username: a right-to-left override",
           "\xe2\x80\xae"
           "nimda",
           {422}),
      user("username: CRLF", "a\r\nb", {422}),
      user("username: a quote", "a\"b", {422}),
      user("username: an apostrophe", "o'brien", {422}),
      user("username: <script>", "<script>alert(1)</script>", {422}),
      user("username: 33 characters", std::string(33, 'a'), {422}),
      user("username: capitals", "Admin", {422}),
      user("username: a leading digit", "1abc", {422}),
      user("username: a trailing '-'", "abc-", {422}),
      user("username: a dot (root of domain names)", "a.b", {422}),
      user("username: ../", "../etc", {422}),
      user("username: a NUL", std::string("ab\0c", 4), {422}),
      user("username: empty", "", {400}),
      user("username: taken (admin)", "admin", {409}),
      email("email: CRLF", "a@b.example\r\nBcc: x@y"),
      email("email: a line feed", "a@b\nruncmd: [reboot]"),
      email("email: <script>", "<script>@x.example"),
      email("email: a space", "a b@x.example"),
      email("email: no @", "nobody"),
      email("email: a zero-width space", "a\xe2\x80\x8b@x.example"),
      email("email: a right-to-left override",
            "a@\xe2\x80\xae"
            "elpmaxe.x"),
      email("email: a byte-order mark",
            "\xef\xbb\xbf"
            "a@x.example"),
      email("email: a NEL (U+0085)", "a@x\xc2\x85.example"),
      email("email: 255 characters", std::string(243, 'a') + "@x.example.co"),
      email("email: quotes, braces and ${{ }}", "o'b\"r{i}e&n${{.user.id}}@example.com"),
      email("email: Cyrillic letters (homoglyphs)", "\xd0\xb0lice@ex\xd0\xb0mple.com"),
      email("email: YAML metacharacters", "a:b#c[d]*e!f|g@example.com"),
      email("email: shell metacharacters", "a;reboot@x.example"),
      email("email: a command substitution", "$(id)@x.example"),
      email("email: backquotes", "`id`@x.example"),
      email("email: two @", "a@b@x.example"),
      email("email: a domain label ending in -", "a@x-.example"),
      patch_email("email (own): a line separator (U+2028)", "a@x\xe2\x80\xa8.example"),
      patch_email("email (own): a tab", "a@x\t.example"),
      patch_email("email (own): a soft hyphen",
                  "a@ex\xc2\xad"
                  "ample.com"),
  };
}

// Space names (POST /api/v1/spaces as the user).
std::vector<Row> space_name_rows() {
  const auto name = [](const char* what, const std::string& n, std::vector<int> refused) {
    return Row{what,
               Who::User,
               "POST",
               "/api/v1/spaces",
               str({{"template", "{name}"}, {"name", n}}),
               {},
               std::move(refused)};
  };
  return {
      name("space name: ../x", "../x", {422}),
      name("space name: a/b", "a/b", {422}),
      name("space name: capitals", "Dev", {422}),
      name("space name: a leading '-'", "-dev", {422}),
      name("space name: a trailing '-'", "dev-", {422}),
      name("space name: 64 characters", std::string(64, 'd'), {422}),
      name("space name: a dot", "a.b", {422}),
      name("space name: a space", "a b", {422}),
      name("space name: <script>", "<script>", {422}),
      name("space name: a NUL", std::string("de\0v", 4), {422}),
      name("space name: a fullwidth letter",
           "\xef\xbd\x84"
           "ev",
           {422}),
      name("space name: a line feed", "dev\n", {422}),
      name("space name: empty", "", {400}),
      name("space name: an XML entity", "&amp;", {422}),
      name("space name: YAML metacharacters", "a: [b]", {422}),
  };
}

// ---- the request line and headers -----------------------------------------------------------

std::vector<Row> header_rows() {
  const auto raw = [](const char* what, const std::string& text, std::vector<int> refused) {
    return Row{what, Who::Anonymous, "", "", "", {}, std::move(refused), text};
  };
  std::string many;
  for (int i = 0; i < 1000; ++i)
    many += "X-H" + std::to_string(i) + ": " + std::string(16, 'v') + "\r\n";
  return {
      raw("a header of 17 KiB",
          "GET /api/v1/whoami HTTP/1.1\r\nHost: h\r\nX-Long: " + std::string(17 * 1024, 'a') +
              "\r\n\r\n",
          {431}),
      raw("1000 headers, 20 KiB in all",
          "GET /api/v1/whoami HTTP/1.1\r\nHost: h\r\n" + many + "\r\n", {431}),
      raw("Content-Length: -1", "POST /api/v1/session HTTP/1.1\r\nContent-Length: -1\r\n\r\n",
          {400}),
      raw("Content-Length: abc", "POST /api/v1/session HTTP/1.1\r\nContent-Length: abc\r\n\r\n",
          {400}),
      raw("two Content-Lengths that differ",
          "POST /api/v1/session HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab",
          {400}),
      raw("Content-Length beyond 2^64",
          "POST /api/v1/session HTTP/1.1\r\nContent-Length: 99999999999999999999\r\n\r\n",
          {400, 413}),
      raw("Content-Length over the body limit",
          "POST /api/v1/session HTTP/1.1\r\nContent-Length: 1048577\r\n\r\n", {413}),
      raw("a bad chunk size",
          "POST /api/v1/session HTTP/1.1\r\nTransfer-Encoding: "
          "chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n",
          {400}),
      raw("a CR alone in the request line", "GET /api/v1/whoami\r HTTP/1.1\r\n\r\n", {400}),
      raw("a NUL in a header value", std::string("GET / HTTP/1.1\r\nX: a\0b\r\n\r\n", 25), {400}),
      raw("a header without a colon", "GET /api/v1/whoami HTTP/1.1\r\nNoColon\r\n\r\n", {400}),
      raw("HTTP/0.9", "GET /api/v1/whoami\r\n\r\n", {400}),
      raw("an unknown HTTP version", "GET /api/v1/whoami HTTP/7.3\r\n\r\n", {400}),
      raw("a space in the target", "GET /api/v1/who ami HTTP/1.1\r\n\r\n", {400}),
      raw("a bad percent escape in the path", "GET /api/v1/%zz HTTP/1.1\r\n\r\n", {400}),
      raw("a cut percent escape in the query", "GET /api/v1/spaces?all=%4 HTTP/1.1\r\n\r\n", {400}),
      {"CRLF in the query (percent-encoded): no header is made of it",
       Who::User,
       "GET",
       "/api/v1/events?since=%0d%0aSet-Cookie:%20evil=1",
       "",
       {},
       {400}},
      {"CRLF in a path parameter: no header is made of it",
       Who::User,
       "GET",
       "/api/v1/templates/x%0d%0aSet-Cookie:%20evil=1",
       "",
       {},
       {404}},
      {"CRLF in a space id",
       Who::User,
       "POST",
       "/api/v1/spaces/x%0D%0ALocation:%20evil/start",
       "{}",
       {},
       {404}},
      {"an operation id beyond int64",
       Who::User,
       "GET",
       "/api/v1/operations/99999999999999999999999",
       "",
       {},
       {404}},
      {"a token of 10 KiB",
       Who::Anonymous,
       "GET",
       "/api/v1/whoami",
       "",
       {"Authorization: Bearer " + std::string(10 * 1024, 't')},
       {401}},
      {"Basic instead of Bearer",
       Who::Anonymous,
       "GET",
       "/api/v1/whoami",
       "",
       {"Authorization: Basic YWRtaW46YWRtaW4="},
       {401}},
      {"a session cookie of SQL",
       Who::Anonymous,
       "GET",
       "/api/v1/whoami",
       "",
       {"Cookie: bowline_session=' OR 1=1 --"},
       {401}},
      {"a session cookie of 64 hex digits, unknown",
       Who::Anonymous,
       "GET",
       "/api/v1/whoami",
       "",
       {"Cookie: bowline_session=" + std::string(64, 'f')},
       {401}},
      {"an unknown method", Who::User, "BREW", "/api/v1/spaces", "", {}, {400, 405}},
      {"a method other than GET on the UI",
       Who::Anonymous,
       "POST",
       "/ui/index.html",
       "{}",
       {},
       {405}},
      {"the event stream, since is negative",
       Who::User,
       "GET",
       "/api/v1/events?since=-1",
       "",
       {},
       {400}},
      {"the event stream, since beyond int64",
       Who::User,
       "GET",
       "/api/v1/events?since=99999999999999999999",
       "",
       {},
       {400}},
      {"a tunnel to port 0", Who::User, "GET", "/api/v1/spaces/{id}/tunnel/0", "", {}, {400}},
      {"a tunnel to port 65536",
       Who::User,
       "GET",
       "/api/v1/spaces/{id}/tunnel/65536",
       "",
       {},
       {400}},
      {"a tunnel to port -22", Who::User, "GET", "/api/v1/spaces/{id}/tunnel/-22", "", {}, {400}},
  };
}

// Paths into the web UI that try to leave it: 404 (or 400 for a bad escape), never a file.
std::vector<Row> static_rows() {
  const auto get = [](const std::string& path, std::vector<int> refused = {404}) {
    return Row{"static path " + path,
               Who::Anonymous,
               "",
               "",
               "",
               {},
               std::move(refused),
               "GET " + path + " HTTP/1.1\r\nHost: h\r\n\r\n"};
  };
  return {
      get("/ui/../../etc/passwd"),
      get("/ui/../secret.txt"),
      get("/ui/%2e%2e/%2e%2e/etc/passwd"),
      get("/ui/%2E%2E/%2E%2E/etc/passwd"),
      get("/ui/..%2f..%2fetc%2fpasswd"),
      get("/ui/%2e%2e%2f%2e%2e%2fetc%2fpasswd"),
      get("/ui/%252e%252e/%252e%252e/etc/passwd"),
      get("/ui/..%5c..%5cetc%5cpasswd"),
      get("/ui/..\\..\\etc\\passwd"),
      get("/ui/vendor/novnc/../../../etc/passwd"),
      get("/ui/vendor/novnc/%2e%2e/%2e%2e/%2e%2e/%2e%2e/etc/passwd"),
      get("/ui/vendor/other/index.js"),
      get("/ui/vendor/../../etc/passwd"),
      get("/ui/.hidden.js"),
      get("/ui/%2ehidden.js"),
      get("/ui/index.html%00.js"),
      get("/ui//etc/passwd"),
      get("/ui/./../secret.txt"),
      get("/%2e%2e/etc/passwd"),
      get("//etc/passwd"),
      get("/ui/%zz", {400}),
  };
}

// ---- the browser terminal's frames ----------------------------------------------------------

struct FrameRow {
  std::string what;
  std::string payload;
  int opcode = 2;  // binary; 1: text
};

// Frames the terminal must ignore: the shell sees neither input nor a resize, the socket
// stays open (a probe typed afterwards comes back).
std::vector<FrameRow> frame_rows() {
  const auto resize = [](const std::string& json) { return std::string(1, '\1') + json; };
  return {
      {"an empty frame", ""},
      {"an unknown type byte (2)", "\x02hello"},
      {"an unknown type byte (0xff)", "\xffhello"},
      {"a printable first byte", "ls -l\r"},
      {"a resize that is not JSON", resize("{cols: 80")},
      {"a resize that is empty", resize("")},
      {"a resize of strings", resize(R"({"cols": "80", "rows": "24"})")},
      {"a resize of 1e300", resize(R"({"cols": 1e300, "rows": 24})")},
      {"a resize of 2^32+1 (wrapped to 1 before)", resize(R"({"cols": 4294967297, "rows": 24})")},
      {"a resize of 2^64-1", resize(R"({"cols": 18446744073709551615, "rows": 24})")},
      {"a resize of 0", resize(R"({"cols": 0, "rows": 0})")},
      {"a resize that is negative", resize(R"({"cols": -5, "rows": 24})")},
      {"a resize of 10000 cells", resize(R"({"cols": 10000, "rows": 24})")},
      {"a resize of fractions", resize(R"({"cols": 80.5, "rows": 24.5})")},
      {"a resize that is an array", resize("[80, 24]")},
      {"a resize that is null", resize("null")},
      {"a resize without rows", resize(R"({"cols": 80})")},
      {"a resize nested 100000 deep", resize(std::string(100000, '['))},
      {"a resize in a text frame, of strings", resize(R"({"cols": "1", "rows": "1"})"), 1},
  };
}

// The terminal's window in its query: refused before the upgrade.
std::vector<std::string> terminal_query_rows() {
  return {"?cols=0",
          "?rows=0",
          "?cols=10000",
          "?cols=-1",
          "?cols=abc",
          "?rows=1e3",
          "?cols=99999999999999999999",
          "?cols=%00"};
}

// ---- templates ------------------------------------------------------------------------------

std::string alias_bomb() {
  std::string out = "a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n";
  for (int i = 1; i < 10; ++i) {
    const auto prev = "*a" + std::to_string(i - 1);
    out += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [" + prev;
    for (int j = 0; j < 8; ++j) out += ", " + prev;
    out += "]\n";
  }
  return out + "environment: *a9\ndisks: *a9\n";
}

std::string deep_block(int levels) {
  std::string out = "environment:\n";
  for (int i = 0; i < levels; ++i) out += std::string(2 * (i + 1), ' ') + "k:\n";
  return out;
}

// Templates that POST /api/v1/templates must refuse (422 with diagnostics).
std::vector<std::pair<std::string, std::string>> template_rows() {
  const auto with = [](const std::string& extra) { return bridged_template() + extra; };
  const auto image = [](const std::string& ref) {
    auto t = bridged_template();
    t.replace(t.find("image: base"), 11, "image: \"" + ref + "\"");
    return t;
  };
  return {
      {"an alias bomb (a billion laughs)", with(alias_bomb())},
      {"flow sequences nested 100000 deep",
       with("environment: " + std::string(100000, '[') + std::string(100000, ']') + "\n")},
      {"flow mappings nested 50000 deep",
       with("environment: " + std::string(50000, '{') + std::string(50000, '}') + "\n")},
      {"block mappings nested 600 deep", with(deep_block(600))},
      {"a control character in the host name", with("hostname: \"a\\x01b\"\n")},
      {"a NUL in an environment value", with("environment:\n  - \"X=a\\0b\"\n")},
      {"a line feed in an environment name", with("environment:\n  - \"A\\nB=x\"\n")},
      {"an environment name with a shell substitution", with("environment:\n  - \"$(id)=x\"\n")},
      {"an escape sequence in the host name", with("hostname: \"\\e[31mred\"\n")},
      {"a scalar of 400 KiB as the host name",
       with("hostname: " + std::string(400 * 1024, 'h') + "\n")},
      {"an unterminated ${{", with("hostname: ${{ .user.username\n")},
      {"an unknown variable", with("hostname: ${{ .user.password }}\n")},
      {"a variable that names the server's environment", with("hostname: ${{ .env.HOME }}\n")},
      {"${{ }} nested in ${{ }}", with("hostname: ${{ ${{ .user.id }} }}\n")},
      {"an empty ${{ }}", with("hostname: ${{ }}\n")},
      {"a pipe into a function", with("hostname: ${{ .space.name | exec }}\n")},
      {"a template expression (Go/Jinja)", with("hostname: ${{ {{ .Env }} }}\n")},
      {"${{ }} in a key", with("${{ .user.username }}: x\n")},
      {"image ../etc/passwd", image("../etc/passwd")},
      {"image a/b", image("a/b")},
      {"image ..", image("..")},
      {"image /var/lib/../../etc/shadow", image("/var/lib/../../etc/shadow")},
      {"image /images/ (a directory)", image("/images/")},
      {"image file:///etc/passwd", image("file:///etc/passwd")},
      {"image gopher://127.0.0.1:25/_HELO", image("gopher://127.0.0.1:25/_HELO")},
      {"image ftp://example.com/x.qcow2", image("ftp://example.com/x.qcow2")},
      {"image dict://127.0.0.1:11211/stats", image("dict://127.0.0.1:11211/stats")},
      {"image https:// without a host", image("https:///x.qcow2")},
      {"image https://host without a file", image("https://example.com")},
      {"image https://host/.. as the file", image("https://example.com/a/..")},
      {"image with a space", image("base image")},
      {"image with a shell substitution", image("base$(id)")},
      {"image javascript:alert(1)", image("javascript:alert(1)")},
      {"image with a NUL", image("base\\0.qcow2")},
      {"host name with XML metacharacters", with("hostname: \"a<b>&c\"\n")},
      {"a bridge name with XML metacharacters",
       std::string(bridged_template()).replace(bridged_template().find("br-test"), 7, "\"br<&>\"")},
      {"a GPU name that would close an XML comment", with("gpus:\n  - name: \"a-->b\"\n")},
      {"a cpuModel with a quote", with("cpuModel: \"host'model\"\n")},
  };
}

// Templates valid without values (validate cannot know them) whose values, once known at
// POST /spaces, make them invalid: the create is refused (422), nothing is made.
std::vector<std::pair<std::string, std::string>> create_time_rows() {
  const auto with = [](const std::string& field, const std::string& value) {
    auto t = bridged_template();
    const auto at = t.find(field + ": ");
    t.replace(at, t.find('\n', at) - at, field + ": \"" + value + "\"");
    return t;
  };
  return {
      {"an image that becomes a relative path", with("image", "${{ .user.username }}/x")},
      {"an image that becomes an e-mail address", with("image", "${{ .user.email }}")},
      {"a host name that becomes an e-mail address", with("hostname", "${{ .user.email }}")},
      {"a host name that becomes 70 characters",
       with("hostname", "${{ .space.name }}" + std::string(70, 'x'))},
  };
}

// ---- values that are accepted, and must come out escaped -------------------------------------

// Environment values with YAML, XML and shell metacharacters: the seed's YAML must parse and
// the profile script hold each, single-quoted, exactly.
std::vector<std::pair<std::string, std::string>> escaped_values() {
  return {
      {"a YAML mapping", "a: b"},
      {"a YAML sequence item", "- x"},
      {"a YAML comment", "# not a comment"},
      {"a flow mapping", "{x: y, z: [1]}"},
      {"an anchor", "&anchor x"},
      {"an alias", "*alias"},
      {"a Python tag", "!!python/object/apply:os.system [id]"},
      {"a block scalar", "|\n  block"},
      {"a document end", "...\n---\nruncmd: [reboot]"},
      {"single quotes", "it's 'quoted'"},
      {"double quotes and backslashes", "\"a\\\"b\\\\\""},
      {"an XML element", "<tag attr=\"v\">&amp;</tag>"},
      {"a CDATA end", "]]>"},
      {"shell substitutions", "$(id) `id` ${HOME} $((1+1))"},
      {"a line break", "line1\nline2"},
      {"a right-to-left override",
       "\xe2\x80\xae"
       "txt.exe"},
      {"non-ASCII",
       "\xc3\xbcnic\xc3\xb6"
       "de \xe2\x9c\x93"},
      {"a percent and braces", "%{x} {{y}} $z {w}"},
      {"a YAML 1.1 boolean", "yes"},
      {"an octal-looking number", "0755"},
  };
}

// A user's e-mail address, accepted (it is one), pasted by a template into the environment.
std::vector<std::pair<std::string, std::string>> escaped_emails() {
  return {
      {"an address with every character an address may have", "Ab.c_d%e+f-9@sub-1.Example.com"},
  };
}

// Names the domain XML holds: each renders, parses back with pugixml, and holds the value.
std::vector<std::pair<std::string, std::string>> xml_values() {
  return {
      {"an XML element", "<domain type='kvm'>"},
      {"an entity", "&amp;&lt;&#x41;&unknown;"},
      {"quotes of both kinds", "a\"b'c"},
      {"a CDATA section", "<![CDATA[x]]>"},
      {"a comment", "<!-- c -->"},
      {"a processing instruction", "<?xml version='1.0'?>"},
      {"a DOCTYPE with an entity", "<!DOCTYPE d [<!ENTITY x SYSTEM 'file:///etc/passwd'>]>"},
      {"non-ASCII", "\xc3\xbc\xe2\x9c\x93"},
  };
}

// ---- image files ----------------------------------------------------------------------------

struct ImageRow {
  std::string what;
  std::string file;    // in the image library (cloud-images/)
  std::string reason;  // the operation's error says this
};

std::vector<ImageRow> image_rows() {
  return {
      {"a qcow2 whose backing file is /etc/hostname", "backed", "has a backing file"},
      {"a qcow2 whose backing file is a json: URL", "jsonbacked", "has a backing file"},
      {"a qcow2 with an external data file", "datafile", "external file"},
      {"a qcow2 cut after 100 bytes", "truncated", "damaged qcow2 header"},
      {"a qcow2 whose backing name's offset wraps 2^64", "wrapping", "damaged qcow2 header"},
      {"a text file named .qcow2", "text", "not qcow2"},
  };
}

}  // namespace

// ---- the tests ------------------------------------------------------------------------------

TEST(security_hostile_inputs_count, TheCatalogHasAtLeast150Rows) {
  const std::vector<std::pair<const char*, std::size_t>> groups = {
      {"bodies to every route with one", body_rows().size()},
      {"fields of the wrong type or value", field_rows().size()},
      {"usernames and e-mail addresses", account_rows().size()},
      {"space names", space_name_rows().size()},
      {"request lines and headers", header_rows().size()},
      {"static paths", static_rows().size()},
      {"terminal frames", frame_rows().size()},
      {"terminal window sizes", terminal_query_rows().size()},
      {"templates", template_rows().size()},
      {"templates that values make invalid", create_time_rows().size()},
      {"values escaped in the seed", escaped_values().size() + escaped_emails().size()},
      {"values escaped in the domain XML", xml_values().size()},
      {"image files", image_rows().size()},
  };
  std::size_t rows = 0;
  for (const auto& [what, n] : groups) {
    std::cout << "[ catalog  ] " << n << " " << what << "\n";
    rows += n;
  }
  std::cout << "[ figure   ] hostile inputs: " << rows << " rows, each refused or escaped"
            << std::endl;
  RecordProperty("rows", static_cast<int>(rows));
  EXPECT_GE(rows, 150u);
}

TEST_F(security_hostile_inputs, BodiesThatAreNotOneJsonObjectAre400OnEveryRoute) {
  for (const auto& row : body_rows()) expect_refused(row, send(row));
  // Nothing moved: the space the lifecycle rows named is running still.
  EXPECT_EQ(stack_.store().spaces().get(space_)->state, store::SpaceState::Running);
}

TEST_F(security_hostile_inputs, FieldsOfTheWrongTypeOrValueAreRefused) {
  for (const auto& row : field_rows()) expect_refused(row, send(row));
}

TEST_F(security_hostile_inputs, UsernamesEmailsAndSpaceNamesAreRefused) {
  for (const auto& row : account_rows()) expect_refused(row, send(row));
  for (const auto& row : space_name_rows()) expect_refused(row, send(row));
}

TEST_F(security_hostile_inputs, RequestLinesAndHeadersAreRefusedAndNeverMakeAHeader) {
  for (const auto& row : header_rows()) {
    const auto r = send(row);
    expect_refused(row, r);
    EXPECT_EQ(r.header("set-cookie"), "") << row.what;
    EXPECT_EQ(r.header("location"), "") << row.what;
  }
}

TEST_F(security_hostile_inputs, StaticPathsNeverLeaveTheWebRoot) {
  for (const auto& row : static_rows()) {
    const auto r = send(row);
    expect_refused(row, r);
    EXPECT_EQ(r.body.find("SECRET"), std::string::npos) << row.what << ": " << r.body;
  }
  HttpClient client(port());
  EXPECT_EQ(client.get("/ui/app.js", "").status, 200);  // what is there is served
}

TEST_F(security_hostile_inputs, TerminalFramesThatSayNothingAreIgnoredAndTheSocketStays) {
  const auto path = "/api/v1/spaces/" + space_ + "/terminal";
  int probe = 0;
  for (const auto& row : frame_rows()) {
    SCOPED_TRACE(row.what);
    WsClient ws(port(), path, {"Authorization: Bearer " + token_});
    ASSERT_EQ(ws.status(), 101) << ws.body();
    ASSERT_EQ(ws.receive_until("size:80x24"), "size:80x24");
    ws.send(row.payload, row.opcode);
    const auto mark = "probe-" + std::to_string(++probe);
    ws.send(std::string(1, '\0') + mark);
    const auto seen = ws.receive_until("echo:" + mark);
    EXPECT_EQ(seen, "echo:" + mark) << "the shell got something else first";
    EXPECT_FALSE(ws.closed());
  }
  // A frame over the message limit (1 MiB) is not taken: the socket closes.
  WsClient ws(port(), path, {"Authorization: Bearer " + token_});
  ASSERT_EQ(ws.status(), 101) << ws.body();
  // The server may close while the frame is still being written (it knows the length from
  // the header): a failed send is the same refusal.
  bool refused_while_sending = false;
  try {
    ws.send(std::string(1, '\0') + std::string(1024 * 1024 + 1, 'x'));
  } catch (const std::exception&) {
    refused_while_sending = true;
  }
  if (refused_while_sending) return;
  const auto started = std::chrono::steady_clock::now();
  while (!ws.closed() && std::chrono::steady_clock::now() - started < 5s) ws.receive(200ms);
  EXPECT_TRUE(ws.closed());
}

TEST_F(security_hostile_inputs, TerminalWindowSizesOutOfRangeAreRefusedBeforeTheUpgrade) {
  const int opened = access_.terminals;
  for (const auto& query : terminal_query_rows()) {
    WsClient ws(port(), "/api/v1/spaces/" + space_ + "/terminal" + query,
                {"Authorization: Bearer " + token_});
    EXPECT_EQ(ws.status(), 400) << query << ": " << ws.body();
    EXPECT_EQ(leak_in(ws.body(), stack_.dir()), "") << query;
  }
  EXPECT_EQ(access_.terminals, opened) << "no shell was opened";
}

TEST_F(security_hostile_inputs, HostileTemplatesAreRefusedQuickly) {
  for (const auto& [what, yaml] : template_rows()) {
    const Row row{"template: " + what,
                  Who::Admin,
                  "POST",
                  "/api/v1/templates",
                  str({{"name", unique("bad")}, {"yaml", yaml}}),
                  {},
                  {422}};
    const auto started = std::chrono::steady_clock::now();
    const auto r = send(row);
    expect_refused(row, r);
    EXPECT_LT(std::chrono::steady_clock::now() - started, 5s) << what;
    // validate says the same to anyone, with where.
    HttpClient client(port());
    const auto v = client.post("/api/v1/templates/validate", token_, {{"yaml", yaml}});
    EXPECT_EQ(v.status, 200) << what << ": " << v.body.substr(0, 300);
    if (v.status == 200) {
      EXPECT_EQ(v.parsed()["valid"], false) << what;
    }
  }
}

TEST_F(security_hostile_inputs, TemplatesThatValuesMakeInvalidAreRefusedAtCreate) {
  HttpClient client(port());
  ASSERT_EQ(client
                .request("PATCH", "/api/v1/users/" + username_, token_,
                         R"({"email": "someone@example.com"})")
                .status,
            200);
  for (const auto& [what, yaml] : create_time_rows()) {
    SCOPED_TRACE(what);
    const auto tmpl = unique("late");
    const auto made =
        client.post("/api/v1/templates", stack_.admin_token(), {{"name", tmpl}, {"yaml", yaml}});
    ASSERT_EQ(made.status, 201) << made.body;
    const auto before = stack_.store().spaces().list().size();
    const Row row{"create from a template that " + what,       Who::User, "POST", "/api/v1/spaces",
                  str({{"template", tmpl}, {"name", "late"}}), {},        {422}};
    expect_refused(row, send(row));
    EXPECT_EQ(stack_.store().spaces().list().size(), before);
  }
}

// The seed's user-data of a space whose template pastes each value into its environment:
// yaml-cpp reads it, and the profile script holds each value single-quoted, byte for byte.
TEST_F(security_hostile_inputs, ValuesWithMetacharactersComeOutEscapedInTheSeed) {
  const auto values = escaped_values();
  const auto emails = escaped_emails();
  const auto quoted = [](const std::string& v) {
    std::string out = "'";
    for (char c : v) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
  };
  std::string yaml = bridged_template() + "environment:\n";
  for (std::size_t i = 0; i < values.size(); ++i)
    yaml += "  - " + nlohmann::json("V" + std::to_string(i) + "=" + values[i].second).dump() + "\n";
  yaml += "  - EMAIL=${{ .user.email }}\n";
  const auto tmpl = unique("esc");
  HttpClient client(port());
  const auto made =
      client.post("/api/v1/templates", stack_.admin_token(), {{"name", tmpl}, {"yaml", yaml}});
  ASSERT_EQ(made.status, 201) << made.body;
  for (std::size_t i = 0; i <= emails.size(); ++i) {
    // Round 0: the hostile values; then one user per hostile (valid) e-mail address.
    std::string token = token_;
    if (i > 0) {
      const auto user =
          client.post("/api/v1/users", stack_.admin_token(),
                      {{"username", unique("mail")}, {"email", emails[i - 1].second}});
      ASSERT_EQ(user.status, 201) << emails[i - 1].first << ": " << user.body;
      token = user.parsed()["token"].get<std::string>();
    }
    const auto id = make_space(tmpl, token);
    ASSERT_FALSE(id.empty());
    const auto user_data = user_data_of(id);
    ASSERT_EQ(user_data.rfind("#cloud-config\n", 0), 0u) << user_data.substr(0, 200);
    YAML::Node doc;
    ASSERT_NO_THROW(doc = YAML::Load(user_data));
    const auto script = doc["bootcmd"][0][7].as<std::string>();
    if (i == 0) {
      for (std::size_t v = 0; v < values.size(); ++v)
        EXPECT_NE(
            script.find("export V" + std::to_string(v) + "=" + quoted(values[v].second) + "\n"),
            std::string::npos)
            << values[v].first << "\n"
            << script;
    } else {
      EXPECT_NE(script.find("export EMAIL=" + quoted(emails[i - 1].second) + "\n"),
                std::string::npos)
          << emails[i - 1].first << "\n"
          << script;
    }
    for (unsigned char c : user_data) EXPECT_LT(c, 0x80) << "the seed is ASCII (escapes)";
  }
}

// The domain XML, rendered as the engine renders it, with hostile names in every field it
// takes as text: pugixml reads it back, and each holds its value exactly. And the space the
// stack made: libvirt's own copy of its XML parses and names its owner and template.
TEST_F(security_hostile_inputs, NamesWithXmlMetacharactersComeOutEscapedInTheDomainXml) {
  auto yaml = bridged_template() + "gpus:\n  - name: \"x--y\"\n";
  yaml.replace(0, yaml.find('\n', yaml.find("hostname:")), "name: alice-dev\nhostname: dev");
  auto loaded = spec::load_spec(yaml, nullptr);
  ASSERT_TRUE(loaded.spec) << "template";
  plan::SpaceFacts facts;
  facts.id = "0b7f2a4e-1111-4a2b-9c3d-000000000001";
  facts.uuid = "0b7f2a4e-1111-4a2b-9c3d-000000000002";
  facts.name = "dev";
  facts.ip = spec::Ipv4Address::parse("198.51.100.20");
  facts.vnc_password = "secret12";
  plan::NodeSettings node;
  node.domain_type = plan::DomainType::Qemu;
  node.images_path = "/var/lib/bowline";
  for (const auto& [what, value] : xml_values()) {
    SCOPED_TRACE(what);
    plan::Owner owner;
    owner.username = "alice";
    const auto p = plan::make_plan(*loaded.spec, owner, facts, node);
    libvirt::DomainMetadata meta{value, value, value, value, value, value};
    const auto xml = libvirt::render_domain_xml(p, meta);
    pugi::xml_document doc;
    ASSERT_TRUE(doc.load_string(xml.c_str())) << xml;
    const auto space = doc.child("domain").child("metadata").child("bowline:space");
    EXPECT_EQ(space.child_value("bowline:name"), value);
    EXPECT_EQ(space.child_value("bowline:owner"), value);
    EXPECT_EQ(std::string(space.child("bowline:owner").attribute("id").value()), value);
    EXPECT_EQ(space.child_value("bowline:template"), value);
    EXPECT_EQ(libvirt::read_domain_metadata(xml), meta);
  }
  libvirt::LibvirtOptions lo;
  lo.uri = "test:///default";
  libvirt::LibvirtHypervisor hv(lo);
  const auto space = stack_.store().spaces().get(space_);
  ASSERT_TRUE(space);
  pugi::xml_document doc;
  const auto xml = hv.domain_xml(space->domain_name);
  ASSERT_TRUE(doc.load_string(xml.c_str())) << xml;
  const auto meta = libvirt::read_domain_metadata(xml);
  ASSERT_TRUE(meta);
  EXPECT_EQ(meta->owner, username_);
  EXPECT_EQ(meta->template_name, template_);
}

// Base images that point elsewhere or are damaged: the space's operation fails saying why,
// and no disk is made over them.
TEST_F(security_hostile_inputs, HostileImageFilesAreRefusedBeforeAnyDiskIsMade) {
  namespace fs = std::filesystem;
  const auto lib = stack_.images() / "cloud-images";
  util::SystemProcessRunner runner;
  const auto qemu_img = [&](std::vector<std::string> argv) {
    argv.insert(argv.begin(), "qemu-img");
    const auto r = runner.run(argv, 30s);
    ASSERT_EQ(r.exit_code, 0) << r.err;
  };
  std::ofstream(stack_.dir() / "data.raw") << std::string(1024, '\0');
  qemu_img({"create", "-q", "-f", "qcow2", "-b", "/etc/hostname", "-F", "raw",
            (lib / "backed.qcow2").string(), "16M"});
  qemu_img({"create", "-q", "-f", "qcow2", "-u", "-b",
            R"(json:{"file.driver":"http","file.url":"http://169.254.169.254/"})", "-F", "raw",
            (lib / "jsonbacked.qcow2").string(), "16M"});
  qemu_img({"create", "-q", "-f", "qcow2", "-o",
            "data_file=" + (stack_.dir() / "data.raw").string() + ",data_file_raw=on",
            (lib / "datafile.qcow2").string(), "16M"});
  {
    std::ifstream in(lib / "base.qcow2", std::ios::binary);
    std::string head(100, '\0');
    in.read(head.data(), 100);
    std::ofstream(lib / "truncated.qcow2", std::ios::binary) << head;
    // Version 2, backing file name at 2^64 - 16, 32 bytes long.
    std::string wrap("QFI\xfb\0\0\0\2\xff\xff\xff\xff\xff\xff\xff\xf0\0\0\0\x20\0\0\0\x10", 24);
    wrap += std::string("\0\0\0\0\x01\0\0\0", 8);
    wrap.resize(72, '\0');
    std::ofstream(lib / "wrapping.qcow2", std::ios::binary) << wrap;
    std::ofstream(lib / "text.qcow2") << "#!/bin/sh\nrm -rf /\n";
  }
  HttpClient client(port());
  for (const auto& row : image_rows()) {
    SCOPED_TRACE(row.what);
    auto yaml = bridged_template();
    yaml.replace(yaml.find("image: base"), 11, "image: " + row.file);
    const auto tmpl = unique("img");
    const auto made =
        client.post("/api/v1/templates", stack_.admin_token(), {{"name", tmpl}, {"yaml", yaml}});
    ASSERT_EQ(made.status, 201) << made.body;
    const auto created =
        client.post("/api/v1/spaces", token_, {{"template", tmpl}, {"name", unique("i")}});
    ASSERT_EQ(created.status, 202) << created.body;
    const auto op =
        stack_.wait_operation(created.parsed()["operation"]["id"].get<std::int64_t>(), token_);
    const auto error = op.value("error", std::string());
    EXPECT_NE(error.find(row.reason), std::string::npos) << op.dump();
    const auto space =
        stack_.store().spaces().get(created.parsed()["space"]["id"].get<std::string>());
    ASSERT_TRUE(space);
    EXPECT_FALSE(fs::exists(stack_.images() / space->domain_name / "disk.qcow2"));
  }
}

}  // namespace bowline::api::testing
