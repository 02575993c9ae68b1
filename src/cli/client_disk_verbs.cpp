// bowline disk create|list|info|delete: disks as objects, a user's by name, attached
// by the templates' `disks:` of that user's spaces.
#include <iostream>
#include <sstream>

#include "cli/app.hpp"
#include "cli/client_disk_verbs.hpp"
#include "cli/client_format.hpp"
#include "cli/client_verbs.hpp"

namespace bowline::cli {
namespace {

std::string disk_path(const std::string& name, const std::string& owner) {
  return "/api/v1/disks/" + escape_segment(name) +
         (owner.empty() ? "" : "?owner=" + escape_segment(owner));
}

std::string format_disks(const ojson& disks) {
  std::ostringstream out;
  out << "NAME\tOWNER\tSIZE\tSOURCE\tSPACES\n";
  for (const auto& d : disks) {
    std::string spaces;
    for (const auto& s : d.value("spaces", ojson::array()))
      spaces += (spaces.empty() ? "" : ",") + text_of(s, "name") + "(" + text_of(s, "state") + ")";
    out << text_of(d, "name") << "\t" << text_of(d, "owner") << "\t" << text_of(d, "size") << "\t"
        << text_of(d, "source") << "\t" << (spaces.empty() ? "-" : spaces) << "\n";
  }
  return out.str();
}

struct CreateArgs {
  ClientOptions client;
  std::string name, image, image_checksum, size, from_space, snapshot, from_disk, owner;
};

int create(const CreateArgs& a) {
  Client client(resolve_endpoint(a.client.server));
  ojson body{{"name", a.name}};
  if (!a.image.empty()) body["image"] = a.image;
  if (!a.size.empty()) body["size"] = a.size;
  if (!a.image_checksum.empty()) body["imageChecksum"] = a.image_checksum;
  if (!a.from_space.empty()) body["fromSpace"] = a.from_space;
  if (!a.snapshot.empty()) body["snapshot"] = a.snapshot;
  if (!a.from_disk.empty()) body["fromDisk"] = a.from_disk;
  if (!a.owner.empty()) body["owner"] = a.owner;
  const auto disk = client.post("/api/v1/disks", body);
  if (a.client.json())
    print_json(disk);
  else
    std::cout << "disk " << text_of(disk, "name") << " (" << text_of(disk, "size") << ", "
              << text_of(disk, "source") << ") made for " << text_of(disk, "owner") << "\n";
  return kExitOk;
}

struct ListArgs {
  ClientOptions client;
  bool all = false;
  std::string owner;
};

int list(const ListArgs& a) {
  Client client(resolve_endpoint(a.client.server));
  const auto disks =
      client.get(a.all             ? "/api/v1/disks?all=1"
                 : a.owner.empty() ? "/api/v1/disks"
                                   : "/api/v1/disks?owner=" + escape_segment(a.owner));
  if (a.client.json())
    print_json(disks);
  else
    std::cout << format_disks(disks);
  return kExitOk;
}

struct NameArgs {
  ClientOptions client;
  std::string name, owner;
};

int info(const NameArgs& a) {
  Client client(resolve_endpoint(a.client.server));
  const auto disk = client.get(disk_path(a.name, a.owner));
  if (a.client.json())
    print_json(disk);
  else
    std::cout << format_disks(ojson::array({disk}));
  return kExitOk;
}

int remove(const NameArgs& a) {
  Client client(resolve_endpoint(a.client.server));
  client.del(disk_path(a.name, a.owner));
  if (a.client.json())
    print_json(ojson{{"deleted", a.name}});
  else
    std::cout << "disk " << a.name << " deleted\n";
  return kExitOk;
}

}  // namespace

void add_disk_verbs(CLI::App& app, int& exit_code) {
  auto* group = app.add_subcommand(
      "disk", "Disks of your own: made once, attached by name by your templates' disks:");
  group->require_subcommand(1);
  {
    auto a = std::make_shared<CreateArgs>();
    auto* cmd = group->add_subcommand("create", "Create a disk");
    cmd->add_option("NAME", a->name, "The disk's name (lowercase letters, digits, '-')")
        ->required();
    auto* image = cmd->add_option("--image", a->image,
                                  "From an image: a library name or an https:// URL (admins: "
                                  "also a path under server.kvm.import_paths)");
    cmd->add_option("--image-checksum", a->image_checksum,
                    "sha256:HEX the image must have (needed for a plain http:// URL)")
        ->needs(image);
    auto* size = cmd->add_option("--size", a->size,
                                 "Blank of this size (10Gi); with --image: "
                                 "grown to it");
    auto* from = cmd->add_option("--from-space", a->from_space,
                                 "A copy of a stopped space's boot disk (its name or id)");
    from->excludes(image)->excludes(size);
    cmd->add_option("--snapshot", a->snapshot,
                    "With --from-space: a copy of the disk as this snapshot has it (the space "
                    "may run)")
        ->needs(from);
    auto* from_disk =
        cmd->add_option("--from-disk", a->from_disk, "A copy of another of your disks");
    from_disk->excludes(image)->excludes(size)->excludes(from);
    cmd->add_option("--owner", a->owner, "Whose disk (admins; default: yours)");
    add_client_options(*cmd, a->client);
    cmd->callback([a, &exit_code] { run_client_verb(exit_code, [&] { return create(*a); }); });
  }
  {
    auto a = std::make_shared<ListArgs>();
    auto* cmd = group->add_subcommand("list", "List your disks and the spaces that name them");
    cmd->add_flag("--all", a->all, "Every user's (admins)");
    cmd->add_option("--owner", a->owner, "This user's (admins)");
    add_client_options(*cmd, a->client);
    cmd->callback([a, &exit_code] { run_client_verb(exit_code, [&] { return list(*a); }); });
  }
  {
    auto a = std::make_shared<NameArgs>();
    auto* cmd = group->add_subcommand("info", "Show one disk");
    cmd->add_option("NAME", a->name, "The disk's name")->required();
    cmd->add_option("--owner", a->owner, "Whose disk (admins; default: yours)");
    add_client_options(*cmd, a->client);
    cmd->callback([a, &exit_code] { run_client_verb(exit_code, [&] { return info(*a); }); });
  }
  {
    auto a = std::make_shared<NameArgs>();
    auto* cmd = group->add_subcommand("delete",
                                      "Delete a disk (refused while a space's template names it)");
    cmd->add_option("NAME", a->name, "The disk's name")->required();
    cmd->add_option("--owner", a->owner, "Whose disk (admins; default: yours)");
    add_client_options(*cmd, a->client);
    cmd->callback([a, &exit_code] { run_client_verb(exit_code, [&] { return remove(*a); }); });
  }
}

}  // namespace bowline::cli
