// Helpers for the cloud-init tests: plans built by hand or from a template, temporary files,
// and the oracles: PyYAML (what cloud-init parses YAML with), Python's email parser (what it
// reads MIME user-data with), and sh/bash (what reads the environment file).
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <yaml-cpp/yaml.h>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "../common/scratch_files.hpp"
#include "plan/plan.hpp"
#include "spec/loader.hpp"

namespace bowline::guest::test {

namespace fs = std::filesystem;
using Json = nlohmann::json;

using test_support::TempDir;

inline void write_file(const fs::path& path, std::string_view content) {
  std::ofstream out(path, std::ios::binary);
  out.write(content.data(), static_cast<std::streamsize>(content.size()));
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

inline std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Quotes a word for sh.
inline std::string sh_quote(std::string_view s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

struct RunResult {
  int status = -1;
  std::string out;  // stdout, bytes as they are
};

// Runs a command line with sh; stderr goes to the test's stderr.
inline RunResult run(const std::string& command) {
  RunResult r;
  FILE* p = popen(command.c_str(), "r");
  if (!p) return r;
  char buf[65536];
  std::size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  const int status = pclose(p);
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// The Python oracles, in one python3 process per test binary (started on first use): a
// request is "yaml N\n" or "mime N\n" then N bytes; the answer is one line of JSON.
//
// yaml: PyYAML's view of the document as cloud-init loads it (yaml.safe_load), in a JSON form
// that keeps Python's types: a dict becomes {"map": [[key, value], ...]} (keys may be booleans
// or numbers), floats {"float": repr}, dates {"date": iso}, bytes {"bytes": hex}, other values
// {"other": repr}. The answer is {"ok": value} or {"error": message}.
//
// mime: the non-multipart parts of a MIME user-data as cloud-init reads them (email's parser,
// then util.fully_decoded_payload): {"top": type, "parts": [{"type": ..., "body": ...}, ...]}.
inline const char* kOracleScript = R"(
import datetime, email, json, sys
try:
    import yaml
except ImportError:
    yaml = None
def conv(v):
    if isinstance(v, dict):
        return {"map": [[conv(k), conv(x)] for k, x in v.items()]}
    if isinstance(v, list):
        return [conv(x) for x in v]
    if isinstance(v, float):
        return {"float": repr(v)}
    if v is None or isinstance(v, (bool, int, str)):
        return v
    if isinstance(v, (datetime.date, datetime.datetime)):
        return {"date": v.isoformat()}
    if isinstance(v, bytes):
        return {"bytes": v.hex()}
    return {"other": repr(v)}
def load_yaml(text):
    if yaml is None:
        return {"error": "PyYAML is missing: apt-get install python3-yaml"}
    try:
        return {"ok": conv(yaml.safe_load(text))}
    except Exception as e:
        return {"error": str(e)}
def load_mime(data):
    if "mime-version:" not in data[0:4096].lower():
        return {"error": "cloud-init would not see MIME"}
    msg = email.message_from_string(data)
    parts = []
    for part in msg.walk():
        if part.get_content_maintype() == "multipart":
            continue
        payload = part.get_payload(decode=True)
        if part.get_content_maintype() == "text" and isinstance(payload, bytes):
            charset = part.get_charset()
            encoding = charset.input_codec if charset and charset.input_codec else "utf-8"
            payload = payload.decode(encoding, "strict")
        parts.append({"type": part.get_content_type(), "body": payload})
    return {"top": msg.get_content_type(), "parts": parts}
inp, out = sys.stdin.buffer, sys.stdout
while True:
    header = inp.readline()
    if not header:
        break
    kind, size = header.split()
    text = inp.read(int(size)).decode("utf-8")
    answer = load_yaml(text) if kind == b"yaml" else load_mime(text)
    out.write(json.dumps(answer) + "\n")
    out.flush()
)";

class Oracle {
 public:
  static Oracle& get() {
    static Oracle instance;
    return instance;
  }
  Json ask(std::string_view kind, std::string_view text) {
    if (!to_ || !from_) throw std::runtime_error("python3 could not be started");
    const std::string header = std::string(kind) + " " + std::to_string(text.size()) + "\n";
    fwrite(header.data(), 1, header.size(), to_);
    fwrite(text.data(), 1, text.size(), to_);
    fflush(to_);
    std::string line;
    int c;
    while ((c = fgetc(from_)) != EOF && c != '\n') line += static_cast<char>(c);
    if (c == EOF) throw std::runtime_error("python3 ended unexpectedly");
    return Json::parse(line);
  }
  Oracle(const Oracle&) = delete;
  Oracle& operator=(const Oracle&) = delete;

 private:
  Oracle() {
    int in[2], out[2];
    if (pipe(in) != 0 || pipe(out) != 0) return;
    pid_ = fork();
    if (pid_ == 0) {
      dup2(in[0], 0);
      dup2(out[1], 1);
      close(in[0]), close(in[1]), close(out[0]), close(out[1]);
      // Debian's python3 with python3-yaml: the PyYAML that cloud-init uses on Debian.
      execl("/usr/bin/python3", "python3", "-c", kOracleScript, static_cast<char*>(nullptr));
      execlp("python3", "python3", "-c", kOracleScript, static_cast<char*>(nullptr));
      _exit(127);
    }
    close(in[0]);
    close(out[1]);
    to_ = fdopen(in[1], "w");
    from_ = fdopen(out[0], "r");
  }
  ~Oracle() {
    if (to_) fclose(to_);
    if (from_) fclose(from_);
    if (pid_ > 0) waitpid(pid_, nullptr, 0);
  }
  pid_t pid_ = -1;
  FILE* to_ = nullptr;
  FILE* from_ = nullptr;
};

// PyYAML's view of one document; fails the test (by throwing) when PyYAML rejects it.
inline Json pyyaml_load(const std::string& doc) {
  auto answer = Oracle::get().ask("yaml", doc);
  if (!answer.contains("ok")) throw std::runtime_error("PyYAML: " + answer.dump());
  return answer["ok"];
}

inline Json mime_parts(const std::string& message) {
  auto answer = Oracle::get().ask("mime", message);
  if (answer.contains("error")) throw std::runtime_error("MIME: " + answer.dump());
  return answer;
}

// The value of string key `key` in a converted dict; throws when absent.
inline const Json& at(const Json& map, std::string_view key) {
  for (const auto& entry : map.at("map"))
    if (entry.at(0).is_string() && entry.at(0).get<std::string>() == key) return entry.at(1);
  throw std::out_of_range("no key " + std::string(key) + " in " + map.dump());
}

inline bool has(const Json& map, std::string_view key) {
  for (const auto& entry : map.at("map"))
    if (entry.at(0).is_string() && entry.at(0).get<std::string>() == key) return true;
  return false;
}

// The arguments of bowline's every-boot program (user-data bootcmd[0]: sh -c SCRIPT NAME USER
// KEYS HASH ENVIRONMENT TIMEZONE RESOLV IDENTITY NAMES PAM SYSTEMD), by name.
enum class BootArg {
  User = 4,
  Keys = 5,
  Hash = 6,
  Environment = 7,
  Timezone = 8,
  Resolv = 9,
  Identity = 10,
  EnvironmentNames = 11,
  PamEnvironment = 12,
  SystemdEnvironment = 13
};

inline std::string boot_arg(const YAML::Node& user_data, BootArg arg) {
  return user_data["bootcmd"][0][static_cast<int>(arg)].as<std::string>();
}
inline const Json& boot_arg(const Json& user_data, BootArg arg) {
  return at(user_data, "bootcmd")[0].at(static_cast<std::size_t>(arg));
}

// A plan with every guest field set, built by hand: bridged, static address.
inline plan::Plan hand_plan() {
  plan::Plan p;
  p.domain_name = "alice-dev";
  p.guest.hostname = "dev";
  p.uuid = "0f0e0d0c-0b0a-4908-9706-050403020100";
  p.guest.instance_id = "iid-0123456789abcdef";
  p.guest.identity = "iid-0123456789abcdef";
  p.nics = {{plan::NicType::Bridge, "br0", "52:54:00:12:34:56", "virtio"}};
  auto& g = p.guest;
  g.username = "alice";
  g.password_hash = "$6$saltsaltsaltsalt$hash";
  g.ssh_keys = {
      "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl a@b"};
  g.timezone = "Europe/Berlin";
  g.environment = {{"EDITOR", "vim"}};
  g.network = spec::Ipv4Network::parse("198.51.100.0/24");
  g.address = spec::Ipv4Address::parse("198.51.100.10");
  g.gateway = spec::Ipv4Address::parse("198.51.100.1");
  g.resolvers = {"1.1.1.1", "1.0.0.1"};
  g.primary_mac = "52:54:00:12:34:56";
  return p;
}

// A plan through the real path: template text -> spec -> make_plan.
inline plan::Plan template_plan(const std::string& yaml, bool bridged,
                                std::vector<std::string> owner_keys = {}) {
  spec::Variables vars{{"user.username", "alice"}, {"space.name", "dev"}};
  if (bridged) vars["space.ip_address"] = "198.51.100.10";
  auto result = spec::load_spec(yaml, &vars);
  for (const auto& d : result.diagnostics.items())
    if (d.severity == spec::Severity::Error) ADD_FAILURE() << spec::format(d, "template");
  if (!result.spec) throw std::runtime_error("the template does not load");
  plan::Owner user{"alice",
                   "alice@example.org",
                   "Europe/Berlin",
                   "u-1",
                   plan::password_hash("s3cret", "space-1"),
                   std::move(owner_keys)};
  plan::SpaceFacts facts;
  facts.id = "space-1";
  facts.name = "dev";
  if (bridged) facts.ip = spec::Ipv4Address::parse("198.51.100.10");
  facts.uuid = "0f0e0d0c-0b0a-4908-9706-050403020100";
  facts.vnc_password = "abcdefgh";
  return plan::make_plan(*result.spec, user, facts, plan::NodeSettings{});
}

}  // namespace bowline::guest::test
