#include "kubevirt/kubeconfig.hpp"

#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "kubevirt/base64.hpp"
#include "util/files.hpp"
#include "util/strings.hpp"

namespace bowline::kubevirt {
namespace {

std::string scalar(const YAML::Node& node, const char* key) {
  const auto value = node[key];
  if (!value.IsDefined() || value.IsNull()) return {};
  if (!value.IsScalar()) throw KubeconfigError(std::string(key) + " is not a string");
  return value.Scalar();
}

// The entry called `name` in a list of {name, <kind>: {...}}, e.g. clusters[].cluster.
YAML::Node named(const YAML::Node& root, const char* list, const char* kind,
                 const std::string& name) {
  const auto entries = root[list];
  if (entries.IsDefined() && entries.IsSequence())
    for (const auto& entry : entries)
      if (entry.IsMap() && scalar(entry, "name") == name) {
        const auto body = entry[kind];
        if (!body.IsDefined() || !body.IsMap())
          throw KubeconfigError(std::string(list) + " entry \"" + name + "\" has no " + kind);
        return body;
      }
  throw KubeconfigError(std::string("no ") + kind + " named \"" + name + "\" in " + list);
}

std::string decoded(const YAML::Node& node, const char* key) {
  const auto text = scalar(node, key);
  if (text.empty()) return {};
  auto bytes = base64_decode(text);
  if (!bytes) throw KubeconfigError(std::string(key) + " is not base64");
  return *bytes;
}

std::string resolved(const std::string& file, const std::string& base_dir) {
  if (file.empty() || file.front() == '/' || base_dir.empty()) return file;
  return (std::filesystem::path(base_dir) / file).lexically_normal().string();
}

std::string read_text(const std::string& path, const char* what) {
  auto text = util::read_file(path);
  if (!text) throw KubeconfigError(std::string("cannot read ") + what + " " + path);
  return std::move(*text);
}

}  // namespace

std::string default_kubeconfig_path() {
  if (const char* env = std::getenv("KUBECONFIG"); env && *env) {
    const auto first = util::split(env, ':').front();
    if (!first.empty()) return first;
  }
  const char* home = std::getenv("HOME");
  return std::string(home ? home : "") + "/.kube/config";
}

Connection parse_kubeconfig(const std::string& text, const std::string& base_dir,
                            const std::string& context) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw KubeconfigError(std::string("not YAML: ") + e.what());
  }
  if (!root.IsMap()) throw KubeconfigError("not a kubeconfig (expected a mapping)");

  Connection c;
  c.context = context.empty() ? scalar(root, "current-context") : context;
  if (c.context.empty()) throw KubeconfigError("no current-context (give a context)");
  const auto ctx = named(root, "contexts", "context", c.context);
  const auto cluster = named(root, "clusters", "cluster", scalar(ctx, "cluster"));
  const auto user_name = scalar(ctx, "user");

  c.server = scalar(cluster, "server");
  while (!c.server.empty() && c.server.back() == '/') c.server.pop_back();
  if (c.server.empty())
    throw KubeconfigError("cluster " + scalar(ctx, "cluster") + " has no server");
  c.ca_pem = decoded(cluster, "certificate-authority-data");
  c.ca_file = resolved(scalar(cluster, "certificate-authority"), base_dir);
  c.insecure_skip_tls_verify = scalar(cluster, "insecure-skip-tls-verify") == "true";

  if (user_name.empty()) return c;  // anonymous
  const auto user = named(root, "users", "user", user_name);
  if (user["exec"].IsDefined() || user["auth-provider"].IsDefined())
    throw KubeconfigError("user " + user_name +
                          " authenticates through a credential plugin, which bowline does not "
                          "run: use a token or a client certificate");
  if (user["username"].IsDefined() || user["password"].IsDefined())
    throw KubeconfigError("user " + user_name +
                          " uses a username and password, which bowline does not send: use a "
                          "token or a client certificate");
  c.token = scalar(user, "token");
  c.token_file = resolved(scalar(user, "tokenFile"), base_dir);
  c.client_cert_pem = decoded(user, "client-certificate-data");
  c.client_key_pem = decoded(user, "client-key-data");
  c.client_cert_file = resolved(scalar(user, "client-certificate"), base_dir);
  c.client_key_file = resolved(scalar(user, "client-key"), base_dir);
  const bool has_cert = !c.client_cert_pem.empty() || !c.client_cert_file.empty();
  const bool has_key = !c.client_key_pem.empty() || !c.client_key_file.empty();
  if (has_cert != has_key)
    throw KubeconfigError(
        "user " + user_name + " has a client " +
        (has_cert ? "certificate without its key" : "key without its certificate"));
  return c;
}

Connection load_kubeconfig(const std::string& path, const std::string& context) {
  const auto text = read_text(path, "kubeconfig");
  try {
    auto c = parse_kubeconfig(text, std::filesystem::path(path).parent_path().string(), context);
    if (c.token.empty() && !c.token_file.empty())
      c.token = util::trim(read_text(c.token_file, "tokenFile"));
    return c;
  } catch (const KubeconfigError& e) {
    throw KubeconfigError(path + ": " + e.what());
  }
}

}  // namespace bowline::kubevirt
