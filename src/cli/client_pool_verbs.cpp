// bowline pool create|list|info|claim|delete: members of a NAT template kept ready to hand out.
#include <unistd.h>

#include <iostream>
#include <sstream>

#include "cli/app.hpp"
#include "cli/client_format.hpp"
#include "cli/client_verbs.hpp"
#include "cli/verbs.hpp"

namespace bowline::cli {
namespace {

std::string pool_path(const std::string& name) {
  return "/api/v1/pools/" + escape_segment(name);
}

std::string format_pools(const ojson& pools) {
  std::ostringstream out;
  out << "NAME\tTEMPLATE\tSIZE\tREADY\tMEMBERS\n";
  for (const auto& p : pools) {
    std::string members;
    for (const auto& m : p.value("members", ojson::array()))
      members +=
          (members.empty() ? "" : ",") + text_of(m, "name") + "(" + text_of(m, "state") + ")";
    out << text_of(p, "name") << "\t" << text_of(p, "template") << "\t" << p.value("size", 0)
        << "\t" << p.value("ready", 0) << "\t" << (members.empty() ? "-" : members) << "\n";
  }
  return out.str();
}

struct CreateArgs {
  ClientOptions client;
  std::string name, template_name;
  int size = 1;
};

int create(const CreateArgs& a) {
  Client client(resolve_endpoint(a.client.server));
  const auto pool = client.post(
      "/api/v1/pools", {{"name", a.name}, {"template", a.template_name}, {"size", a.size}});
  if (a.client.json())
    print_json(pool);
  else
    std::cout << "pool " << a.name << " keeps " << a.size << " space(s) of " << a.template_name
              << " ready (members are being made)\n";
  return kExitOk;
}

struct ListArgs {
  ClientOptions client;
};

int list(const ListArgs& a) {
  Client client(resolve_endpoint(a.client.server));
  const auto pools = client.get("/api/v1/pools");
  if (a.client.json())
    print_json(pools);
  else
    std::cout << format_pools(pools);
  return kExitOk;
}

struct NameArgs {
  ClientOptions client;
  std::string name;
};

int info(const NameArgs& a) {
  Client client(resolve_endpoint(a.client.server));
  const auto pool = client.get(pool_path(a.name));
  if (a.client.json())
    print_json(pool);
  else
    std::cout << format_pools(ojson::array({pool}));
  return kExitOk;
}

int remove(const NameArgs& a) {
  Client client(resolve_endpoint(a.client.server));
  const auto answer = client.del(pool_path(a.name));
  if (a.client.json())
    print_json(answer);
  else
    std::cout << "pool " << a.name << " deleted (its unclaimed members are being deleted)\n";
  return kExitOk;
}

struct ClaimArgs {
  ClientOptions client;
  std::string pool, name;
  bool wait = false;
  WaitOptions options;
};

// A member personalised by the guest agent is ready at once (200); one that reboots or boots
// into its owner's seed comes with an operation (202) that --wait follows to readiness.
int claim(const ClaimArgs& a) {
  Client client(resolve_endpoint(a.client.server));
  const auto claimed = client.post(pool_path(a.pool) + "/claim", {{"name", a.name}});
  const auto space = claimed.value("space", ojson::object());
  const auto id = text_of(space, "id");
  const auto method = text_of(claimed, "method");
  int code = kExitOk;
  const auto operation = claimed.value("operation", ojson());
  if (a.wait && operation.is_object()) {
    std::optional<Clock::time_point> deadline;
    if (a.options.timeout) deadline = Clock::now() + *a.options.timeout;
    ProgressLine progress(std::cerr, ::isatty(STDERR_FILENO) == 1);
    code = wait_for_operation(client, id, operation, method == "boot" ? "start" : "restart",
                              deadline, progress);
    if (code == kExitOk && a.options.ready) code = wait_for_ready(client, id, deadline, progress);
    progress.done();
  }
  if (a.client.json()) {
    print_json(a.wait ? client.get("/api/v1/spaces/" + escape_segment(id)) : claimed);
    return code;
  }
  std::cout << "space " << text_of(space, "name", a.name) << " (" << id << ") claimed from pool "
            << a.pool;
  if (method == "agent")
    std::cout << ": running and already yours (set up through the guest agent)\n";
  else if (method == "reboot")
    std::cout << ": restarting with your seed (" << text_of(claimed, "agentProblem", "no agent")
              << ")\n";
  else
    std::cout << ": booting with your seed\n";
  return code;
}

}  // namespace

void add_pool_verbs(CLI::App& app, int& exit_code) {
  auto* group = app.add_subcommand(
      "pool", "Pools: spaces of a NAT template kept booted, handed out by claims");
  group->require_subcommand(1);
  {
    auto a = std::make_shared<CreateArgs>();
    auto* cmd = group->add_subcommand("create", "Create a pool (admins)");
    cmd->add_option("NAME", a->name, "The pool's name")->required();
    cmd->add_option("--template", a->template_name, "A NAT template's name")->required();
    cmd->add_option("--size", a->size, "How many members to keep ready")->check(CLI::Range(0, 100));
    add_client_options(*cmd, a->client);
    cmd->callback([a, &exit_code] { run_client_verb(exit_code, [&] { return create(*a); }); });
  }
  {
    auto a = std::make_shared<ListArgs>();
    auto* cmd = group->add_subcommand("list", "List pools and their members");
    add_client_options(*cmd, a->client);
    cmd->callback([a, &exit_code] { run_client_verb(exit_code, [&] { return list(*a); }); });
  }
  {
    auto a = std::make_shared<NameArgs>();
    auto* cmd = group->add_subcommand("info", "Show one pool");
    cmd->add_option("NAME", a->name, "The pool's name")->required();
    add_client_options(*cmd, a->client);
    cmd->callback([a, &exit_code] { run_client_verb(exit_code, [&] { return info(*a); }); });
  }
  {
    auto a = std::make_shared<ClaimArgs>();
    auto* cmd = group->add_subcommand("claim", "Take a ready space from a pool as your own");
    cmd->add_option("POOL", a->pool, "The pool's name")->required();
    cmd->add_option("--name", a->name, "Your name for the space")->required();
    add_wait_options(*cmd, a->wait, a->options, true);
    add_client_options(*cmd, a->client);
    cmd->callback([a, &exit_code] { run_client_verb(exit_code, [&] { return claim(*a); }); });
  }
  {
    auto a = std::make_shared<NameArgs>();
    auto* cmd = group->add_subcommand("delete", "Delete a pool and its unclaimed members (admins)");
    cmd->add_option("NAME", a->name, "The pool's name")->required();
    add_client_options(*cmd, a->client);
    cmd->callback([a, &exit_code] { run_client_verb(exit_code, [&] { return remove(*a); }); });
  }
}

}  // namespace bowline::cli
