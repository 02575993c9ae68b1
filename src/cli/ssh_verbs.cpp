#include "cli/ssh_verbs.hpp"

#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>

#include "cli/app.hpp"
#include "cli/client_format.hpp"
#include "cli/client_verbs.hpp"
#include "cli/port_forward.hpp"
#include "cli/tunnel_pipe.hpp"
#include "cli/ws_client.hpp"
#include "engine/host_keys.hpp"

extern char** environ;

namespace bowline::cli {

namespace fs = std::filesystem;

namespace {

constexpr const char* kBegin =
    "# >>> bowline: written by `bowline ssh-config --write`; edit outside these lines >>>";
constexpr const char* kEnd = "# <<< bowline <<<";

std::string self_path() {
  std::error_code ec;
  const auto path = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("bowline") : path.string();
}

std::string home() {
  const char* h = std::getenv("HOME");
  if (!h || !*h) throw CliError(kExitUsage, "HOME is not set");
  return h;
}

fs::path known_hosts_file() {
  const char* config = std::getenv("XDG_CONFIG_HOME");
  const fs::path dir =
      config && *config ? fs::path(config) / "bowline" : fs::path(home()) / ".config/bowline";
  return dir / "known_hosts";
}

// The space's record (GET /spaces/{id}) for a name as ssh gives it. SPACE.OWNER is looked up
// among the caller's own spaces first: `bowline ssh` pins keys under that full name, so ssh's
// KnownHostsCommand asks for it for everyone, not only admins (who may list all spaces).
ojson find_space(Client& client, const SshHost& host) {
  if (!host.owner)
    return client.get("/api/v1/spaces/" + escape_segment(resolve_space(client, host.space)));
  const auto match = [&](const ojson& s) {
    return text_of(s, "name") == host.space && text_of(s, "owner") == *host.owner;
  };
  for (const auto& s : client.get("/api/v1/spaces"))
    if (match(s)) return s;
  try {
    for (const auto& s : client.get("/api/v1/spaces?all=1"))
      if (match(s)) return s;
  } catch (const ApiError& e) {
    if (e.status() != 403) throw;  // not an admin: someone else's space is simply not found
  }
  throw CliError(kExitNotFound, "no space " + host.space + " of " + *host.owner);
}

std::string alias_of(const ojson& space) {
  return text_of(space, "name") + "." + text_of(space, "owner") + ".bowline";
}

// "TYPE BASE64" of a public key line, without its comment; empty when the line is not a key.
// What goes into a known_hosts file must be one key: a line break or a marker in it would add
// lines of the server's (or an imported archive's) choosing, such as "* ssh-ed25519 ...".
std::string known_hosts_key(const std::string& line) {
  const auto space = line.find(' ');
  if (space == std::string::npos || space == 0) return {};
  const auto type = line.substr(0, space);
  if (type != "ssh-ed25519" && type != "ssh-rsa" && !type.starts_with("ecdsa-sha2-nistp"))
    return {};
  auto end = line.find(' ', space + 1);
  if (end == std::string::npos) end = line.size();
  const auto blob = line.substr(space + 1, end - space - 1);
  if (blob.empty() || blob.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                             "0123456789+/=") != std::string::npos)
    return {};
  for (char c : line)
    if (static_cast<unsigned char>(c) < 0x20) return {};
  return type + " " + blob;
}

std::vector<std::string> host_keys(Client& client, const ojson& space) {
  std::vector<std::string> out;
  const auto answer =
      client.get("/api/v1/spaces/" + escape_segment(text_of(space, "id")) + "/host-keys");
  for (const auto& k : answer["keys"]) {
    const auto key = known_hosts_key(k.value("publicKey", ""));
    if (key.empty())
      throw CliError(kExitInvalid, "space " + text_of(space, "name") +
                                       ": the server sent a host key that is not one: not pinned");
    out.push_back(key);
  }
  if (out.empty())
    throw CliError(kExitInvalid, "space " + text_of(space, "name") + ": " +
                                     text_of(answer, "note", "the server knows no host key"));
  return out;
}

// Replaces `file` with `text` in one rename, 0600, in a directory made 0700 (both hold what
// ssh trusts: its config and known hosts).
void write_private_file(const fs::path& file, const std::string& text) {
  fs::create_directories(file.parent_path());
  ::chmod(file.parent_path().c_str(), 0700);
  const auto tmp = file.string() + ".bowline-tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << text;
    if (!out) throw CliError(kExitUsage, "cannot write " + tmp);
  }
  ::chmod(tmp.c_str(), 0600);
  fs::rename(tmp, file);
}

// Writes the space's keys under `alias` into bowline's known_hosts (the server's word
// replaces what was there for that alias); returns the file.
fs::path pin(const std::string& alias, const std::vector<std::string>& keys) {
  const auto file = known_hosts_file();
  std::string kept;
  if (std::ifstream in{file}) {
    std::string line;
    while (std::getline(in, line))
      if (line.rfind(alias + " ", 0) != 0) kept += line + "\n";
  }
  for (const auto& k : keys) kept += alias + " " + k + "\n";
  write_private_file(file, kept);
  return file;
}

std::string server_flag(const std::string& server) {
  return server.empty() ? std::string() : " --server '" + server + "'";
}

// The fingerprint ssh names after "sent by the remote host is", when it refused a key.
std::string offered_fingerprint(const std::string& ssh_stderr) {
  const auto at = ssh_stderr.find("sent by the remote host is");
  if (at == std::string::npos) return {};
  const auto start = ssh_stderr.find("SHA256:", at);
  if (start == std::string::npos) return {};
  auto end = ssh_stderr.find_first_of(". \r\n", start);
  return ssh_stderr.substr(start, end == std::string::npos ? end : end - start);
}

// Runs ssh with its stderr passed through and kept; returns its exit status.
int run_ssh(const std::vector<std::string>& args, std::string& err_text) {
  int err_pipe[2];
  if (::pipe(err_pipe) != 0) throw CliError(kExitInvalid, "pipe failed");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, err_pipe[1], STDERR_FILENO);
  posix_spawn_file_actions_addclose(&actions, err_pipe[0]);
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int rc = ::posix_spawnp(&pid, "ssh", &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(err_pipe[1]);
  if (rc != 0) {
    ::close(err_pipe[0]);
    throw CliError(kExitUsage,
                   std::string("cannot run ssh (install openssh-client): ") + std::strerror(rc));
  }
  char buffer[4096];
  for (;;) {
    const auto n = ::read(err_pipe[0], buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    std::cerr.write(buffer, n).flush();
    err_text.append(buffer, static_cast<std::size_t>(n));
    if (err_text.size() > 64 * 1024) err_text.erase(0, err_text.size() - 32 * 1024);
  }
  ::close(err_pipe[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// ---- verbs ----------------------------------------------------------------------------------

struct TunnelArgs {
  ClientOptions client;
  std::string space;
  unsigned port = 22;
};

int tunnel(const TunnelArgs& a) {
  Client client(resolve_endpoint(a.client.server));
  const auto space = find_space(client, parse_ssh_host(a.space));
  splice_tunnel(client.endpoint(), tunnel_path(text_of(space, "id"), a.port), STDIN_FILENO,
                STDOUT_FILENO, false);
  return kExitOk;
}

struct KnownHostsArgs {
  ClientOptions client;
  std::string host;
};

int known_hosts(const KnownHostsArgs& a) {
  Client client(resolve_endpoint(a.client.server));
  const auto space = find_space(client, parse_ssh_host(a.host));
  for (const auto& key : host_keys(client, space)) std::cout << a.host << " " << key << "\n";
  return kExitOk;
}

struct SshArgs {
  ClientOptions client;
  std::string space;
  std::vector<std::string> args;
};

int ssh(const SshArgs& a) {
  Client client(resolve_endpoint(a.client.server));
  const auto space = find_space(client, parse_ssh_host(a.space));
  const auto alias = alias_of(space);
  const auto keys = host_keys(client, space);
  const auto file = pin(alias, keys);
  std::vector<std::string> args{"ssh",
                                "-o",
                                "ProxyCommand=" + self_path() + " tunnel" +
                                    server_flag(a.client.server) + " " + text_of(space, "id") +
                                    " 22",
                                "-o",
                                "HostKeyAlias=" + alias,
                                "-o",
                                "UserKnownHostsFile=" + file.string(),
                                "-o",
                                "GlobalKnownHostsFile=/dev/null",
                                "-o",
                                "StrictHostKeyChecking=yes",
                                "-o",
                                "CheckHostIP=no",
                                "-l",
                                text_of(space, "owner"),
                                alias};
  args.insert(args.end(), a.args.begin(), a.args.end());
  std::string err_text;
  const int status = run_ssh(args, err_text);
  if (status == 255 && err_text.find("Host key verification failed") != std::string::npos) {
    const auto offered = offered_fingerprint(err_text);
    std::cerr << "bowline: the host key of space " << text_of(space, "name") << " (owner "
              << text_of(space, "owner") << ") is not the one bowline made for it: bowline "
              << "pinned " << engine::fingerprint(keys.front()) << ", the guest offered "
              << (offered.empty() ? std::string("another key") : offered)
              << ". Not connecting: the key was replaced inside the guest, or something is "
                 "between you and the space.\n";
  }
  return status;
}

struct SshConfigArgs {
  ClientOptions client;
  bool write = false;
};

int ssh_config(const SshConfigArgs& a) {
  Client client(resolve_endpoint(a.client.server));
  const auto me = client.get("/api/v1/whoami");
  const auto self = self_path();
  const auto flag = server_flag(a.client.server);
  std::string block = std::string(kBegin) + "\n";
  // Admins reach other users' spaces as SPACE.OWNER.bowline, as that owner; ssh takes the
  // first User it finds, so these blocks come before the general one.
  // So do the owners of spaces shared with the caller.
  std::set<std::string> owners;
  try {
    for (const auto& u : client.get("/api/v1/users")) owners.insert(text_of(u, "username"));
  } catch (const ApiError&) {  // not an admin: one's own spaces and those shared with one
    for (const auto& s : client.get("/api/v1/shares")) owners.insert(text_of(s, "owner"));
  }
  for (const auto& name : owners)
    if (!name.empty() && name != text_of(me, "username"))
      block += "Host *." + name + ".bowline\n  User " + name + "\n";
  block += "Host *.bowline\n  User " + text_of(me, "username") + "\n  ProxyCommand " + self +
           " tunnel" + flag + " %n 22\n  KnownHostsCommand " + self + " known-hosts" + flag +
           " %H\n  UserKnownHostsFile /dev/null\n  GlobalKnownHostsFile /dev/null\n"
           "  StrictHostKeyChecking yes\n  CheckHostIP no\n";
  block += std::string(kEnd) + "\n";
  if (!a.write) {
    std::cout << block;
    return kExitOk;
  }
  const auto file = fs::path(home()) / ".ssh" / "config";
  std::string config;
  if (std::ifstream in{file}) config.assign(std::istreambuf_iterator<char>(in), {});
  write_private_file(file, with_bowline_block(config, block));
  std::cout << "wrote the bowline block to " << file.string()
            << ": ssh SPACE.bowline reaches your space SPACE\n";
  return kExitOk;
}

struct ForwardArgs {
  ClientOptions client;
  std::string space;
  std::vector<std::string> ports;
};

int forward(const ForwardArgs& a) {
  Client client(resolve_endpoint(a.client.server));
  ForwardTarget target;
  for (const auto& text : a.ports) {
    const auto ports = parse_forward(text);
    if (!ports)
      throw CliError(kExitUsage,
                     "\"" + text + "\" is not [LOCAL:]REMOTE (e.g. 8000 or 18080:8000)");
    target.ports.push_back(*ports);
  }
  const auto space = find_space(client, parse_ssh_host(a.space));
  target.space_id = text_of(space, "id");
  target.space_name = text_of(space, "name");
  forward_ports(client.endpoint(), target);
}

}  // namespace

SshHost parse_ssh_host(const std::string& host) {
  std::string name = host;
  const std::string suffix = ".bowline";
  if (name.size() > suffix.size() &&
      name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
    name.resize(name.size() - suffix.size());
  // A bare name or an id has no dot (space names are DNS labels); SPACE.OWNER has one.
  const auto dot = name.rfind('.');
  if (dot == std::string::npos) return {name, std::nullopt};
  return {name.substr(0, dot), name.substr(dot + 1)};
}

std::string with_bowline_block(const std::string& config, const std::string& block) {
  const auto begin = config.find(kBegin);
  if (begin != std::string::npos) {
    auto end = config.find(kEnd, begin);
    if (end != std::string::npos) {
      end += std::strlen(kEnd);
      if (end < config.size() && config[end] == '\n') ++end;
      return config.substr(0, begin) + block + config.substr(end);
    }
  }
  if (config.empty()) return block;
  return config + (config.back() == '\n' ? "\n" : "\n\n") + block;
}

std::optional<std::pair<unsigned, unsigned>> parse_forward(const std::string& text) {
  auto number = [](const std::string& s) -> std::optional<unsigned> {
    if (s.empty() || s.size() > 5 || s.find_first_not_of("0123456789") != std::string::npos)
      return std::nullopt;
    const auto n = std::stoul(s);
    if (n > 65535) return std::nullopt;
    return static_cast<unsigned>(n);
  };
  const auto colon = text.find(':');
  const auto remote = number(colon == std::string::npos ? text : text.substr(colon + 1));
  const auto local = colon == std::string::npos ? remote : number(text.substr(0, colon));
  if (!remote || !local || *remote == 0) return std::nullopt;
  return std::pair{*local, *remote};
}

void add_ssh_verbs(CLI::App& app, int& exit_code) {
  {
    auto a = std::make_shared<TunnelArgs>();
    auto* cmd = app.add_subcommand(
        "tunnel",
        "Carry a TCP connection to a space's port over stdin/stdout (ssh's ProxyCommand)");
    cmd->add_option("SPACE", a->space, "The space: its name or id, or NAME[.OWNER].bowline")
        ->required();
    cmd->add_option("PORT", a->port, "The guest's port")->required()->check(CLI::Range(1, 65535));
    add_client_options(*cmd, a->client);
    cmd->footer(
        "Port 22 needs the permission use-ssh; other ports use-ports and a place in the "
        "template's ports:. Nothing is installed in the guest and no port is opened on the "
        "host: the server opens the connection.");
    cmd->callback([a, &exit_code] { run_client_verb(exit_code, [&] { return tunnel(*a); }); });
  }
  {
    auto a = std::make_shared<SshArgs>();
    auto* cmd = app.add_subcommand("ssh", "SSH into a space as its owner, through the server");
    cmd->add_option("SPACE", a->space, "The space: its name or id, or NAME[.OWNER].bowline")
        ->required();
    cmd->add_option("ARGS", a->args, "Passed to ssh (a command, -L, -A, ...)");
    cmd->prefix_command(false);
    add_client_options(*cmd, a->client);
    cmd->footer(
        "Runs OpenSSH's ssh with the space's host key pinned (bowline made it before the "
        "space's first boot; it is kept in ~/.config/bowline/known_hosts) and "
        "StrictHostKeyChecking yes: a guest that offers another key is refused. Put -- before "
        "ssh's own options: bowline ssh dev -- -L 8000:localhost:8000");
    cmd->callback([a, &exit_code] { run_client_verb(exit_code, [&] { return ssh(*a); }); });
  }
  {
    auto a = std::make_shared<SshConfigArgs>();
    auto* cmd = app.add_subcommand(
        "ssh-config",
        "Print (or --write into ~/.ssh/config) a block so that ssh NAME.bowline works");
    cmd->add_flag("--write", a->write,
                  "Write it into ~/.ssh/config between bowline's marker lines, keeping the rest");
    add_client_options(*cmd, a->client);
    cmd->footer(
        "Then ssh, scp, rsync, git and VS Code Remote-SSH reach SPACE.bowline (admins: "
        "SPACE.OWNER.bowline) with the host key the server made for the space.");
    cmd->callback([a, &exit_code] { run_client_verb(exit_code, [&] { return ssh_config(*a); }); });
  }
  {
    auto a = std::make_shared<KnownHostsArgs>();
    auto* cmd = app.add_subcommand(
        "known-hosts", "Print a space's host keys as known_hosts lines (ssh's KnownHostsCommand)");
    cmd->add_option("HOST", a->host, "NAME[.OWNER].bowline, a space name or an id")->required();
    add_client_options(*cmd, a->client);
    cmd->callback([a, &exit_code] { run_client_verb(exit_code, [&] { return known_hosts(*a); }); });
  }
  {
    auto a = std::make_shared<ForwardArgs>();
    auto* cmd = app.add_subcommand(
        "forward", "Forward ports of 127.0.0.1 to a space's ports, through the server");
    cmd->add_option("SPACE", a->space, "The space: its name or id, or NAME[.OWNER].bowline")
        ->required();
    cmd->add_option("PORTS", a->ports, "[LOCAL:]REMOTE, e.g. 8000 or 18080:8000 (0: any free)")
        ->required();
    add_client_options(*cmd, a->client);
    cmd->footer(
        "Like kubectl port-forward: it listens at once and each local connection gets its own "
        "tunnel, so forwarding goes on before the guest's service is up and while the space "
        "restarts (a connection that fails says why on stderr). Only an unknown space, a port "
        "that is not allowed and refused credentials end it (exit 4). Ports other than 22 must "
        "be in the template's ports: and need the permission use-ports.");
    cmd->callback([a, &exit_code] { run_client_verb(exit_code, [&] { return forward(*a); }); });
  }
}

}  // namespace bowline::cli
