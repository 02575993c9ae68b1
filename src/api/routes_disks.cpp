// /api/v1/disks: disks as objects. A disk is its owner's: a user sees and changes their own, an
// admin everyone's (?owner=USER names whose; ?all=1 lists all). Another user's disk is
// answered as if it did not exist (404). No answer names a host file: a disk is a name.
#include "api/api.hpp"
#include "api/body.hpp"
#include "spec/quantity.hpp"
#include "spec/validators.hpp"

namespace bowline::api {

namespace {

std::optional<std::string> query_value(const Request& request, const char* name) {
  const auto it = request.query.find(name);
  if (it == request.query.end()) return std::nullopt;
  return it->second;
}

nlohmann::json disk_json(const engine::DiskView& view) {
  auto spaces = nlohmann::json::array();
  for (const auto& s : view.spaces)
    spaces.push_back({{"id", s.id}, {"name", s.name}, {"state", store::to_string(s.state)}});
  return {{"name", view.disk.name},
          {"owner", view.owner},
          {"sizeBytes", view.disk.size_bytes},
          {"size", spec::format_binary_size(static_cast<std::uint64_t>(view.disk.size_bytes))},
          {"source", view.disk.source},
          {"createdAt", view.disk.created_at},
          {"spaces", spaces}};
}

// The image a disk is made from, checked as a template's would be: plain http:// needs the
// checksum that vouches for what arrives.
spec::Image wanted_image(const std::string& reference, const nlohmann::json& body) {
  spec::Image wanted;
  wanted.reference = reference;
  if (auto problem = spec::check_image(reference, wanted.kind); !problem.empty())
    throw HttpError(422, "image: " + problem);
  if (auto checksum = string_field(body, "imageChecksum")) {
    std::string hex;
    if (auto problem = spec::check_image_checksum(*checksum, hex); !problem.empty())
      throw HttpError(422, "imageChecksum: " + problem);
    wanted.sha256 = hex;
  }
  if (spec::is_plain_http_url(reference) && !wanted.sha256)
    throw HttpError(422,
                    "image: a plain http:// URL needs imageChecksum (sha256:...), since anyone "
                    "on the way can alter it; or use https://");
  return wanted;
}

}  // namespace

// The user whose disks a request is about: the caller, or ?owner= / the body's owner for an
// admin (403 for anyone else naming another user).
store::User Api::disk_owner(const Caller& caller, const std::optional<std::string>& owner) {
  if (!owner || *owner == caller.user.username) return caller.user;
  require_admin(caller);
  auto user = store_.users().find_by_username(*owner);
  if (!user) throw HttpError(422, "no user named " + *owner);
  return *user;
}

void Api::add_disk_routes() {
  router_.add("GET", "/api/v1/disks", Access::Any, [this](const Caller& caller, const Request& r) {
    std::optional<std::int64_t> owner = caller.user.id;
    if (const auto all = r.query.find("all"); all != r.query.end() && all->second != "0") {
      require_admin(caller);
      owner.reset();
    } else if (const auto named = r.query.find("owner"); named != r.query.end()) {
      owner = disk_owner(caller, named->second).id;
    }
    auto out = nlohmann::json::array();
    for (const auto& view : engine_.list_disks(owner)) out.push_back(disk_json(view));
    return Response::json(200, out);
  });

  router_.add(
      "POST", "/api/v1/disks", Access::Any, [this](const Caller& caller, const Request& request) {
        const auto body = object_body(request);
        engine::CreateDiskRequest create;
        create.owner_id = disk_owner(caller, string_field(body, "owner")).id;
        create.name = required_string(body, "name");
        create.may_name_paths = caller.admin();
        if (auto image = string_field(body, "image")) create.image = wanted_image(*image, body);
        if (auto size = string_field(body, "size")) {
          const auto parsed = spec::parse_size(*size);
          if (!parsed.ok()) throw HttpError(422, "size: " + parsed.error());
          create.size_bytes = parsed.value();
        }
        if (auto from = string_field(body, "fromSpace")) {
          // By name among the owner's spaces, or by id; someone else's is not found.
          auto space = store_.spaces().find_by_name(create.owner_id, *from);
          if (!space) space = visible_space(caller, *from, store::ShareRole::Admin);
          create.from_space = space->id;
        }
        create.snapshot = string_field(body, "snapshot");
        create.from_disk = string_field(body, "fromDisk");
        // A download or a copy of a big disk takes minutes: off the HTTP workers, under
        // the caller's limit of slow answers.
        return Response::deferred([this, create] {
          const auto disk = engine_.create_disk(create);
          return Response::json(201, disk_json(engine_.disk_info(disk.owner_id, disk.name)));
        });
      });

  router_.add("GET", "/api/v1/disks/{name}", Access::Any,
              [this](const Caller& caller, const Request& request) {
                const auto owner = disk_owner(caller, query_value(request, "owner"));
                return Response::json(
                    200, disk_json(engine_.disk_info(owner.id, request.param("name"))));
              });

  router_.add("DELETE", "/api/v1/disks/{name}", Access::Any,
              [this](const Caller& caller, const Request& request) {
                const auto owner = disk_owner(caller, query_value(request, "owner"));
                engine_.delete_disk(owner.id, request.param("name"));
                return Response::no_content();
              });
}

}  // namespace bowline::api
