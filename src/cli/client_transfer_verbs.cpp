// bowline space export|import: a stopped space to one archive file and back, on this server or
// another (routes_transfer.cpp has the frames). The archive holds the space's disk and its SSH
// host key: it is written 0600.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <optional>
#include <system_error>
#include <thread>

#include "cli/app.hpp"
#include "cli/client_format.hpp"
#include "cli/client_transfer_verbs.hpp"
#include "cli/client_verbs.hpp"
#include "cli/ws_client.hpp"
#include "util/direct_file_writer.hpp"

namespace bowline::cli {
namespace {

constexpr std::size_t kFrame = 256 * 1024;

std::string mib(std::uint64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
  return text;
}

// "E" frames carry {"error", "status"}: the server's refusal, as the CLI reports API errors.
[[noreturn]] void fail_with(const std::string& body) {
  const auto error = ojson::parse(body, nullptr, false);
  const auto status = error.is_object() ? error.value("status", 500) : 500;
  const auto message = error.is_object() ? error.value("error", body) : body;
  throw ApiError(status == 404 ? kExitNotFound : kExitInvalid, message, status, error);
}

struct ExportArgs {
  ClientOptions client;
  std::string space, file;
  bool sync = false;
};

int export_space(const ExportArgs& a) {
  Client client(resolve_endpoint(a.client.server));
  const auto id = resolve_space(client, a.space);
  WsConnection ws(client.endpoint(), "/api/v1/spaces/" + escape_segment(id) + "/export");
  // Written beside the target and renamed at the end: a failed export leaves no file.
  const auto part = a.file + ".part";
  std::optional<util::DirectFileWriter> out;
  try {
    out.emplace(part, 0600);
  } catch (const std::system_error& e) {
    throw CliError(kExitUsage, e.what());
  }
  std::uint64_t size = 0, done = 0;
  bool finished = false;
  ProgressLine progress(std::cerr, ::isatty(STDERR_FILENO) == 1);
  try {
    while (auto message = ws.read()) {
      if (message->empty()) continue;
      const char kind = (*message)[0];
      const std::string_view body = std::string_view(*message).substr(1);
      if (kind == 'M') {
        size = ojson::parse(body, nullptr, false).value("size", std::uint64_t{0});
      } else if (kind == 'D') {
        out->write(body);
        done += body.size();
        ws.recycle(std::move(*message));
        const int percent = size ? static_cast<int>(done * 100 / size) : 0;
        progress.show("exporting " + a.space + ": " + mib(done) + " of " + mib(size) + " (" +
                          std::to_string(percent) + "%)",
                      std::to_string(percent / 10));  // a line per 10% when not a terminal
      } else if (kind == 'E') {
        fail_with(std::string(body));
      } else if (kind == 'Z') {
        finished = true;
        break;
      }
    }
    if (!finished || done != size)
      throw CliError(kExitInvalid, "the server ended the export after " + mib(done) + " of " +
                                       mib(size) + " (the server log may say why)");
    out->finish(a.sync);
  } catch (const std::system_error& e) {
    progress.done();
    out.reset();
    ::unlink(part.c_str());
    throw CliError(kExitUsage, e.what());
  } catch (...) {
    progress.done();
    out.reset();
    ::unlink(part.c_str());
    throw;
  }
  progress.done();
  if (std::rename(part.c_str(), a.file.c_str()) != 0)
    throw CliError(kExitUsage, "cannot rename " + part + " to " + a.file);
  if (a.client.json())
    print_json(ojson{{"file", a.file}, {"bytes", done}});
  else
    std::cout << "space " << a.space << " exported to " << a.file << " (" << mib(done) << ")\n";
  return kExitOk;
}

struct ImportArgs {
  ClientOptions client;
  std::string file, name, owner, template_name;
  bool keep_identity = false, create_template = false, wait = false;
  WaitOptions options;
};

int import_space(const ImportArgs& a) {
  std::ifstream in(a.file, std::ios::binary);
  if (!in) throw CliError(kExitUsage, "cannot read " + a.file);
  in.seekg(0, std::ios::end);
  const auto size = static_cast<std::uint64_t>(in.tellg());
  in.seekg(0);
  Client client(resolve_endpoint(a.client.server));
  std::string path = "/api/v1/spaces/import?name=" + escape_segment(a.name);
  if (!a.owner.empty()) path += "&owner=" + escape_segment(a.owner);
  if (!a.template_name.empty()) path += "&template=" + escape_segment(a.template_name);
  if (a.keep_identity) path += "&keepIdentity=1";
  if (a.create_template) path += "&createTemplate=1";
  WsConnection ws(client.endpoint(), path);
  ProgressLine progress(std::cerr, ::isatty(STDERR_FILENO) == 1);
  std::string buffer(kFrame + 1, '\0');
  std::uint64_t sent = 0;
  buffer[0] = 'D';
  while (in) {
    in.read(buffer.data() + 1, static_cast<std::streamsize>(kFrame));
    const auto n = static_cast<std::size_t>(in.gcount());
    if (n == 0) break;
    while (ws.pending() > 4 * kFrame) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    if (!ws.write(buffer.substr(0, n + 1))) break;  // the server's answer says why
    sent += n;
    const int percent = size ? static_cast<int>(sent * 100 / size) : 0;
    progress.show("importing " + a.file + ": " + mib(sent) + " of " + mib(size) + " (" +
                      std::to_string(percent) + "%)",
                  std::to_string(percent / 10));  // a line per 10% when not a terminal
  }
  ws.write("Z");
  progress.show("checking the archive against its manifest", "check");
  ojson accepted;
  while (auto message = ws.read()) {
    if (message->empty()) continue;
    if ((*message)[0] == 'E') {
      progress.done();
      fail_with(message->substr(1));
    }
    if ((*message)[0] == 'Z') {
      accepted = ojson::parse(message->substr(1), nullptr, false);
      break;
    }
  }
  progress.done();
  if (!accepted.is_object())
    throw CliError(kExitInvalid, "the server closed the import without an answer");
  const auto space = accepted.value("space", ojson::object());
  const auto id = text_of(space, "id");
  int code = kExitOk;
  if (a.wait) {
    std::optional<Clock::time_point> deadline;
    if (a.options.timeout) deadline = Clock::now() + *a.options.timeout;
    ProgressLine waiting(std::cerr, ::isatty(STDERR_FILENO) == 1);
    code = wait_for_operation(client, id, accepted.value("operation", ojson::object()), "start",
                              deadline, waiting);
    if (code == kExitOk && a.options.ready) code = wait_for_ready(client, id, deadline, waiting);
    waiting.done();
  }
  if (a.client.json())
    print_json(a.wait ? client.get("/api/v1/spaces/" + escape_segment(id)) : accepted);
  else
    std::cout << "space " << text_of(space, "name", a.name) << " (" << id << ") imported from "
              << a.file << " with template " << text_of(accepted, "template") << "; "
              << (a.wait ? "started" : "starting") << "\n";
  return code;
}

}  // namespace

void add_space_transfer_verbs(CLI::App& space_group, int& exit_code) {
  {
    auto a = std::make_shared<ExportArgs>();
    auto* cmd = space_group.add_subcommand(
        "export",
        "Export a stopped space to one archive: its disk (flattened), template and "
        "identity, with a SHA-256 manifest");
    cmd->add_option("SPACE", a->space, "The space's name or id")->required();
    // -o is the archive here (as the issue spells it), not the output format: export prints
    // one line either way.
    cmd->add_option("-o,--file", a->file, "The archive to write (a tar file)")->required();
    cmd->add_flag("--sync", a->sync,
                  "Return only once the archive is on the disk (fsync, with the device's write "
                  "cache)");
    cmd->add_option("--server", a->client.server, "The server's URL (as for every verb)")
        ->type_name("URL");
    cmd->footer(
        "The archive holds the space's disk and SSH host key: it is written 0600. It is written "
        "past the page cache; as with cp, the file system's own metadata and the device's write "
        "cache are flushed later by the kernel unless --sync waits for them.");
    cmd->callback(
        [a, &exit_code] { run_client_verb(exit_code, [&] { return export_space(*a); }); });
  }
  {
    auto a = std::make_shared<ImportArgs>();
    auto* cmd = space_group.add_subcommand(
        "import", "Make a space from an archive of space export (checked before anything is made)");
    cmd->add_option("FILE", a->file, "The archive")->required();
    cmd->add_option("--name", a->name, "The new space's name")->required();
    cmd->add_option("--owner", a->owner, "Admins: import it for this user")->type_name("USERNAME");
    cmd->add_option("--template", a->template_name,
                    "Use this template of the server (default: the archive's, by name)");
    cmd->add_flag("--create-template", a->create_template,
                  "Admins: add the archive's template when the server has none of its name");
    cmd->add_flag("--keep-identity", a->keep_identity,
                  "Keep the archived instance id, MAC, UUID and SSH host key (refused when a "
                  "space here has them)");
    add_wait_options(*cmd, a->wait, a->options, true);
    add_client_options(*cmd, a->client);
    cmd->callback(
        [a, &exit_code] { run_client_verb(exit_code, [&] { return import_space(*a); }); });
  }
}

}  // namespace bowline::cli
