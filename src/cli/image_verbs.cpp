// bowline image adopt: run on a node, like `node check`. A knot node keeps each base image it
// fetched by hand under the URL's last segment; bowline's cache is keyed by URL (and trusts an
// unkeyed file only with an imageChecksum). Adopting records the file as that URL's cached copy,
// so such a node starts its spaces offline and the cache stays keyed and checked.
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/app.hpp"
#include "cli/verbs.hpp"
#include "image/cache.hpp"

namespace bowline::cli {
namespace {

struct AdoptArgs {
  std::string file;
  std::string url;
  std::string images_path = "/var/lib/libvirt/images/bowline";
  std::string base_image_path;  // default <images path>/base
  bool json = false;
};

int adopt(const AdoptArgs& a) {
  image::CacheOptions options;
  options.base_image_path = a.base_image_path.empty() ? a.images_path + "/base" : a.base_image_path;
  image::ImageCache cache(options);
  const auto adopted = cache.adopt(a.file, a.url);
  if (a.json) {
    std::cout << nlohmann::json{{"file", adopted.cache_file.string()},
                                {"url", a.url},
                                {"sha256", adopted.sha256},
                                {"linked", adopted.linked},
                                {"already", adopted.already}}
                     .dump(2)
              << "\n";
    return kExitOk;
  }
  if (adopted.already)
    std::cout << "already adopted: " << adopted.cache_file.string() << " is " << a.url
              << " (sha256:" << adopted.sha256 << ")\n";
  else
    std::cout << "adopted " << a.file << " as the cached copy of " << a.url << "\n  "
              << adopted.cache_file.string() << (adopted.linked ? " (hard link)" : " (copy)")
              << "\n  sha256:" << adopted.sha256
              << "\n  templates naming this URL now start without downloading it; add "
                 "imageChecksum: sha256:"
              << adopted.sha256 << " to pin it\n";
  return kExitOk;
}

}  // namespace

void add_image_verbs(CLI::App& app, int& exit_code) {
  auto* group = app.add_subcommand("image", "This node's image cache");
  group->require_subcommand(1);
  auto a = std::make_shared<AdoptArgs>();
  auto* cmd = group->add_subcommand(
      "adopt",
      "Record a file (a knot node's pre-seeded base image, a copy fetched by hand) as the "
      "cached download of URL, so templates naming URL start offline. Run it on the node, as "
      "the user bowline runs as");
  cmd->add_option("file", a->file, "A standalone qcow2 image")->required()->type_name("FILE");
  cmd->add_option("--url", a->url, "The URL the templates name (https://... or http://...)")
      ->required();
  cmd->add_option("--images-path", a->images_path,
                  "Where bowline keeps images and disks (server.kvm.images_path)")
      ->type_name("PATH")
      ->capture_default_str();
  cmd->add_option("--base-image-path", a->base_image_path,
                  "The cache of downloaded images (server.kvm.base_image_path; default "
                  "IMAGES_PATH/base)")
      ->type_name("PATH");
  cmd->add_flag("--json", a->json, "Print the result as JSON");
  cmd->callback([a, &exit_code] {
    try {
      exit_code = adopt(*a);
    } catch (const std::exception& e) {
      std::cerr << "bowline: " << e.what() << "\n";
      exit_code = kExitInvalid;
    }
  });
}

}  // namespace bowline::cli
