// The rows of the server's settings that a team's server adds: the UI's public address,
// preview URLs and single sign-on (docs/teams.md). Part of setting_table() (settings_table.cpp),
// in a file of its own only for its length.
#include "server/settings_value.hpp"

namespace bowline::server {

// Data written as code: the rows, in the order --print-config and the docs show them.
std::vector<Setting> with_team_settings(std::vector<Setting> table) {
  std::vector<Setting> team{
      {.key = "server.url",
       .type = "url",
       .flag = "--url",
       .env = "BOWLINE_URL",
       .default_value = "",
       .default_doc = "the listen address's",
       .summary = "the web UI's address as browsers reach it (https://HOST[:PORT])",
       .details = "the web UI's address as people's browsers reach it, `https://HOST[:PORT]` "
                  "without a path (behind a TLS front end, the front end's). Preview logins send "
                  "browsers there. Empty: the listen address, with `https://` when bowline "
                  "serves HTTPS",
       .set = [](auto& s, const auto& v) { s.public_url = parse::public_url(v); },
       .show =
           [](const auto& s) {
             return s.public_url.empty() ? "(the listen address)" : s.public_url;
           }},
      {.key = "server.preview.domain",
       .type = "name",
       .flag = "--preview-domain",
       .env = "BOWLINE_PREVIEW_DOMAIN",
       .default_value = "",
       .default_doc = "none (no previews)",
       .summary = "the domain of preview URLs (https://PORT--SPACE--OWNER.DOMAIN/); empty: off",
       .details = "the domain under which each port a template marks for a preview (`http: "
                  "true`, or `preview:` `private` or `team`, in `ports:`) is served, at "
                  "`PORT--SPACE--OWNER.DOMAIN` on the server's port. Point a wildcard DNS name "
                  "(`*.DOMAIN`) at the server and give a wildcard certificate "
                  "(`server.preview.cert`). Use a domain that is not under the UI's host name "
                  "([teams.md](teams.md#preview-urls)). Empty: previews are off",
       .set = [](auto& s, const auto& v) { s.preview_domain = parse::dns_name(v); },
       .show =
           [](const auto& s) { return s.preview_domain.empty() ? "(none)" : s.preview_domain; }},
      {.key = "server.preview.cert",
       .type = "path",
       .flag = "--preview-cert",
       .env = "BOWLINE_PREVIEW_CERT",
       .default_value = "",
       .default_doc = "none",
       .summary = "a PEM certificate for *.DOMAIN of the previews; needs server.preview.key",
       .details = "the PEM certificate (chain) served to browsers that ask for a preview host "
                  "(chosen by SNI), for `*.DOMAIN`. Needs `server.preview.key`. Neither, while "
                  "the server makes its own certificate: a self-signed one for `*.DOMAIN` in "
                  "the data directory (`preview-cert.pem`, `preview-key.pem`)",
       .set = [](auto& s, const auto& v) { s.preview_cert = parse::path(v); },
       .show = [](const auto& s) { return show::path_or(s.preview_cert, "(none)"); }},
      {.key = "server.preview.key",
       .type = "path",
       .flag = "--preview-key",
       .env = "BOWLINE_PREVIEW_KEY",
       .default_value = "",
       .default_doc = "none",
       .summary = "the PEM private key of server.preview.cert",
       .details = "the preview certificate's PEM private key (keep it 0600)",
       .set = [](auto& s, const auto& v) { s.preview_key = parse::path(v); },
       .show = [](const auto& s) { return show::path_or(s.preview_key, "(none)"); }},
      {.key = "server.sso.issuer",
       .type = "url",
       .flag = "--sso-issuer",
       .env = "BOWLINE_SSO_ISSUER",
       .default_value = "",
       .default_doc = "none (no single sign-on)",
       .summary = "the OpenID Connect provider to log in with (its issuer URL); empty: off",
       .details = "the OpenID Connect provider people log in with, by its issuer URL exactly as "
                  "its discovery document says it (`https://`; `http://` only on loopback). "
                  "Needs `server.sso.client_id` and `server.sso.client_secret_file`; register "
                  "`SERVER_URL/api/v1/sso/callback` as the client's redirect URI "
                  "([teams.md](teams.md#single-sign-on)). Local accounts keep working",
       .set = [](auto& s, const auto& v) { s.sso_issuer = parse::issuer_url(v); },
       .show = [](const auto& s) { return s.sso_issuer.empty() ? "(none)" : s.sso_issuer; }},
      {.key = "server.sso.client_id",
       .type = "word",
       .flag = "--sso-client-id",
       .env = "BOWLINE_SSO_CLIENT_ID",
       .default_value = "",
       .default_doc = "none",
       .summary = "this server's client id at the provider",
       .details = "this server's client id at the provider (a confidential client: the "
                  "authorization code and device authorization grants)",
       .set = [](auto& s, const auto& v) { s.sso_client_id = parse::word(v); },
       .show = [](const auto& s) { return s.sso_client_id.empty() ? "(none)" : s.sso_client_id; }},
      {.key = "server.sso.client_secret_file",
       .type = "path",
       .flag = "--sso-client-secret-file",
       .env = "BOWLINE_SSO_CLIENT_SECRET_FILE",
       .default_value = "",
       .default_doc = "none",
       .summary = "a file holding the client's secret (read at start)",
       .details = "a file whose first line is the client's secret, read at start (keep it 0600; "
                  "the secret itself is never a flag or in the environment)",
       .set = [](auto& s, const auto& v) { s.sso_client_secret_file = parse::path(v); },
       .show = [](const auto& s) { return show::path_or(s.sso_client_secret_file, "(none)"); }},
      {.key = "server.sso.ca_file",
       .type = "path",
       .flag = "--sso-ca-file",
       .env = "BOWLINE_SSO_CA_FILE",
       .default_value = "",
       .default_doc = "the system's trust store",
       .summary = "the PEM CA certificates the provider's TLS is checked against",
       .details = "PEM CA certificates that the provider's TLS certificate is checked against "
                  "(a company CA); empty: the system's trust store",
       .set = [](auto& s, const auto& v) { s.sso_ca_file = parse::path(v); },
       .show = [](const auto& s) { return show::path_or(s.sso_ca_file, "(system)"); }},
      {.key = "server.sso.username_claim",
       .type = "word",
       .flag = "--sso-username-claim",
       .env = "BOWLINE_SSO_USERNAME_CLAIM",
       .default_value = "preferred_username",
       .summary = "the claim that names a new user (lower-cased)",
       .details = "the claim whose value, lower-cased, names the bowline user made at a "
                  "person's first login. It must be a username bowline accepts; an existing "
                  "local account of that name is never taken over (that login is refused)",
       .set = [](auto& s, const auto& v) { s.sso_username_claim = parse::word(v); },
       .show = [](const auto& s) { return s.sso_username_claim; }},
      {.key = "server.sso.groups_claim",
       .type = "word",
       .flag = "--sso-groups-claim",
       .env = "BOWLINE_SSO_GROUPS_CLAIM",
       .default_value = "groups",
       .summary = "the claim that lists a person's groups",
       .details = "the claim (a list of names) that holds a person's groups, which "
                  "`server.sso.admin_groups` and `server.sso.group_permissions` map",
       .set = [](auto& s, const auto& v) { s.sso_groups_claim = parse::word(v); },
       .show = [](const auto& s) { return s.sso_groups_claim; }},
      {.key = "server.sso.admin_groups",
       .type = "names",
       .flag = "--sso-admin-groups",
       .env = "BOWLINE_SSO_ADMIN_GROUPS",
       .default_value = "",
       .default_doc = "none",
       .summary = "groups whose members are admins (comma-separated)",
       .details = "groups whose members are bowline admins, comma-separated. Set at every "
                  "login: leaving the group at the provider ends it at the next login",
       .set = [](auto& s, const auto& v) { s.sso_admin_groups = parse::words(v); },
       .show =
           [](const auto& s) {
             return show::list(
                 s.sso_admin_groups, [](const auto& g) { return g; }, "(none)");
           }},
      {.key = "server.sso.group_permissions",
       .type = "map",
       .flag = "--sso-group-permissions",
       .env = "BOWLINE_SSO_GROUP_PERMISSIONS",
       .default_value = "",
       .default_doc = "none",
       .summary = "what groups give: GROUP=PERMISSION+PERMISSION, comma-separated",
       .details = "what each group gives its members, e.g. `developers=use-ssh+use-ports,"
                  "support=use-vnc`. A single sign-on user's permissions are their groups', set "
                  "at every login",
       .set = [](auto& s, const auto& v) { s.sso_group_permissions = parse::group_permissions(v); },
       .show = [](const auto& s) { return show::group_permissions(s.sso_group_permissions); }},
  };
  table.insert(table.end(), team.begin(), team.end());
  return table;
}

}  // namespace bowline::server
