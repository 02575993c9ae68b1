// bowline space snapshot|snapshots|restore|snapshot-delete|clone. The changes are operations:
// these verbs follow them to the end by default (a snapshot takes seconds) and exit non-zero
// with the server's words when one fails; --no-wait only starts them.
#include <unistd.h>

#include <iostream>

#include "cli/app.hpp"
#include "cli/client_format.hpp"
#include "cli/client_snapshot_verbs.hpp"
#include "cli/client_verbs.hpp"
#include "cli/output.hpp"
#include "cli/verbs.hpp"

namespace bowline::cli {
namespace {

std::string space_path(const std::string& id) {
  return "/api/v1/spaces/" + escape_segment(id);
}

struct Args {
  ClientOptions client;
  std::string space, name, owner, snapshot;
  bool memory = false, stop = false, full = false, no_wait = false;
  std::optional<long> timeout;
};

void add_common(CLI::App& cmd, Args& a) {
  cmd.add_option("SPACE", a.space, "The space's name or id")->required();
  add_client_options(cmd, a.client);
}

void add_waiting(CLI::App& cmd, Args& a) {
  cmd.add_flag("--no-wait", a.no_wait, "Start the operation and return");
  cmd.add_option("--timeout", a.timeout, "Give up waiting after SECONDS");
}

// Follows the 202's operation unless --no-wait; `then` says what is done.
int follow(Client& client, const Args& a, const ojson& accepted, const std::string& kind,
           const std::string& then) {
  const auto space = accepted.value("space", ojson::object());
  const auto operation = accepted.value("operation", ojson::object());
  if (a.no_wait) {
    if (a.client.json())
      print_json(accepted);
    else
      std::cout << kind << " accepted (operation " << text_of(operation, "id", "?") << ")\n";
    return kExitOk;
  }
  std::optional<Clock::time_point> deadline;
  if (a.timeout) deadline = Clock::now() + std::chrono::seconds(*a.timeout);
  ProgressLine progress(std::cerr, ::isatty(STDERR_FILENO) == 1);
  const int code =
      wait_for_operation(client, text_of(space, "id"), operation, kind, deadline, progress);
  progress.done();
  if (code != kExitOk) return code;
  if (then.empty()) return kExitOk;  // the caller says what came of it
  if (a.client.json())
    print_json(client.get(space_path(text_of(space, "id"))));
  else
    std::cout << then << "\n";
  return kExitOk;
}

int take(const Args& a) {
  Client client(resolve_endpoint(a.client.server));
  const auto id = resolve_space(client, a.space);
  const auto accepted =
      client.post(space_path(id) + "/snapshots", {{"name", a.name}, {"memory", a.memory}});
  return follow(
      client, a, accepted, "snapshot",
      "snapshot " + a.name + " of " + a.space + " taken" + (a.memory ? " (disks and memory)" : ""));
}

int list(const Args& a) {
  Client client(resolve_endpoint(a.client.server));
  const auto snapshots = client.get(space_path(resolve_space(client, a.space)) + "/snapshots");
  if (a.client.json()) {
    print_json(snapshots);
    return kExitOk;
  }
  std::vector<std::vector<std::string>> rows{{"NAME", "TAKEN", "WHILE", "MEMORY", "SIZE", "NOTE"}};
  for (const auto& s : snapshots)
    rows.push_back({text_of(s, "name"), format_time(s.value("createdAt", ojson())),
                    s.value("running", false) ? "running" : "stopped",
                    s.value("memory", false) ? "yes" : "no",
                    format_bytes(s.value("sizeBytes", std::uint64_t{0})),
                    s.value("bestEffort", false)
                        ? "best effort: the guest agent did not freeze its filesystems"
                        : ""});
  std::cout << format_table(rows);
  return kExitOk;
}

int restore(const Args& a) {
  Client client(resolve_endpoint(a.client.server));
  const auto id = resolve_space(client, a.space);
  const auto accepted = client.post(
      space_path(id) + "/snapshots/" + escape_segment(a.name) + "/restore", {{"stop", a.stop}});
  return follow(client, a, accepted, "restore", "space " + a.space + " restored to " + a.name);
}

int drop(const Args& a) {
  Client client(resolve_endpoint(a.client.server));
  const auto id = resolve_space(client, a.space);
  const auto accepted = client.del(space_path(id) + "/snapshots/" + escape_segment(a.name));
  return follow(client, a, accepted, "snapshot-delete",
                "snapshot " + a.name + " of " + a.space + " deleted");
}

int clone(const Args& a) {
  Client client(resolve_endpoint(a.client.server));
  const auto id = resolve_space(client, a.space);
  ojson body = {{"name", a.name}, {"full", a.full}};
  if (!a.snapshot.empty()) body["snapshot"] = a.snapshot;
  if (!a.owner.empty()) body["owner"] = a.owner;
  const auto accepted = client.post(space_path(id) + "/clone", body);
  int code = follow(client, a, accepted, "clone", "");
  if (code != kExitOk || a.no_wait) return code;
  const auto clone_id = text_of(accepted.value("space", ojson::object()), "id");
  {
    // As create --wait does: until the clone's cloud-init has finished with its own seed.
    std::optional<Clock::time_point> deadline;
    if (a.timeout) deadline = Clock::now() + std::chrono::seconds(*a.timeout);
    ProgressLine progress(std::cerr, ::isatty(STDERR_FILENO) == 1);
    code = wait_for_ready(client, clone_id, deadline, progress);
    progress.done();
    if (code != kExitOk) return code;
  }
  const auto now = client.get(space_path(clone_id));
  if (a.client.json()) {
    print_json(now);
    return kExitOk;
  }
  std::string ip = text_of(now.value("info", ojson::object()), "address");
  if (ip.empty()) ip = text_of(now, "ip");
  std::cout << "space " << a.name << " (a clone of " << a.space << ") is "
            << text_of(now, "state", "?") << (ip.empty() ? "" : " at " + ip) << "\n";
  return kExitOk;
}

}  // namespace

void add_space_snapshot_verbs(CLI::App& group, int& exit_code) {
  auto verb = [&](const std::string& name, const std::string& help, auto body, auto setup) {
    auto a = std::make_shared<Args>();
    auto* cmd = group.add_subcommand(name, help);
    add_common(*cmd, *a);
    setup(*cmd, *a);
    cmd->callback([a, body, &exit_code] { run_client_verb(exit_code, [&] { return body(*a); }); });
  };
  verb("snapshot",
       "Take a snapshot of a space's disks (running: with its filesystems frozen through the "
       "guest agent; --memory: its running state too)",
       take, [](CLI::App& cmd, Args& a) {
         cmd.add_option("NAME", a.name, "The snapshot's name")->required();
         cmd.add_flag("--memory", a.memory,
                      "Keep the running guest's memory: a restore resumes it");
         add_waiting(cmd, a);
       });
  verb("snapshots", "List a space's snapshots", list, [](CLI::App&, Args&) {});
  verb("restore", "Put a space back as a snapshot has it (needs it stopped, or --stop)", restore,
       [](CLI::App& cmd, Args& a) {
         cmd.add_option("NAME", a.name, "The snapshot's name")->required();
         cmd.add_flag("--stop", a.stop,
                      "Power a running space off first (the restore discards what it runs now); it "
                      "starts again from restored disks");
         add_waiting(cmd, a);
       });
  verb("snapshot-delete", "Delete a space's snapshot and the data it keeps", drop,
       [](CLI::App& cmd, Args& a) {
         cmd.add_option("NAME", a.name, "The snapshot's name")->required();
         add_waiting(cmd, a);
       });
  verb("clone",
       "Make a new space from a space's disk (now, or at --snapshot) with its own identity, and "
       "wait until it is ready",
       clone, [](CLI::App& cmd, Args& a) {
         cmd.add_option("NEW", a.name, "The new space's name")->required();
         cmd.add_option("--snapshot", a.snapshot, "Clone the disk as this snapshot has it");
         cmd.add_option("--owner", a.owner, "Whose the clone is (admins: another user's)");
         cmd.add_flag("--full", a.full,
                      "A standalone copy (default: an overlay on the same base image)");
         add_waiting(cmd, a);
       });
}

}  // namespace bowline::cli
