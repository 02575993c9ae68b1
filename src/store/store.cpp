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
}

}  // namespace bowline::store
