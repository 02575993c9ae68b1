#include "store/store.hpp"

namespace bowline::store {

namespace {

Db::Options db_options(const Store::Options& options) {
  Db::Options out;
  out.busy_timeout = options.busy_timeout;
  return out;
}

}  // namespace

Store::Store(const std::filesystem::path& file, const util::Clock& clock, Options options)
    : clock_(clock), db_(file, db_options(options)) {
  migrate(db_);
  auto reader_options = db_options(options);
  reader_options.query_only = true;
  reader_ = std::make_unique<Db>(file, reader_options);
  read_users_ = std::make_unique<UserRepository>(*reader_, clock_);
  read_tokens_ = std::make_unique<TokenRepository>(*reader_, clock_);
  read_spaces_ = std::make_unique<SpaceRepository>(*reader_, clock_);
  read_templates_ = std::make_unique<TemplateRepository>(*reader_, clock_);
  read_disks_ = std::make_unique<DiskRepository>(*reader_, clock_);
  read_snapshots_ = std::make_unique<SnapshotRepository>(*reader_, clock_);
  read_downloads_ = std::make_unique<DownloadRepository>(*reader_, clock_);
  read_space_list_ = std::make_unique<SpaceListRows>(*reader_, clock_);
}

}  // namespace bowline::store
