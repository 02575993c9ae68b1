// Shared by the store tests: a temporary directory per test and a Store on a real file in it,
// with a manual clock.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <memory>
#include <string>

#include "../common/scratch_files.hpp"
#include "store/store.hpp"
#include "util/clock.hpp"

namespace bowline::store::testing {

using test_support::TempDir;

class StoreTest : public ::testing::Test {
 protected:
  std::filesystem::path file() const { return dir_.path() / "bowline.db"; }

  Store& store() {
    if (!store_) store_ = std::make_unique<Store>(file(), clock_);
    return *store_;
  }
  void close() { store_.reset(); }

  User make_user(const std::string& username) {
    NewUser user;
    user.username = username;
    return store().users().create(user);
  }
  Template make_template(const std::string& name = "dev") {
    return store().templates().create(name, "name: " + name + "\n");
  }
  Space make_space(const std::string& name, std::optional<std::int64_t> owner_id,
                   std::int64_t template_id, std::optional<std::int64_t> pool_id = std::nullopt) {
    NewSpace space;
    space.id = "id-" + name;
    space.name = name;
    space.owner_id = owner_id;
    space.template_id = template_id;
    space.uuid = "uuid-" + name;
    space.domain_name = "bowline-" + name;
    space.pool_id = pool_id;
    return store().spaces().create(space);
  }

  TempDir dir_;
  util::ManualClock clock_;
  std::unique_ptr<Store> store_;
};

}  // namespace bowline::store::testing
