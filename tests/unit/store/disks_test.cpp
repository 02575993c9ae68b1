// The disks table: a user's disks by name. Lowercase suite: `ctest -R disk`.
#include "store/disks.hpp"

#include <gtest/gtest.h>

#include "store_test_support.hpp"

namespace bowline::store {
namespace {

class disk_rows : public testing::StoreTest {
 protected:
  DiskRepository& disks() {
    if (!repo_) repo_ = std::make_unique<DiskRepository>(store().db(), clock_);
    return *repo_;
  }
  std::unique_ptr<DiskRepository> repo_;
};

TEST_F(disk_rows, ANameIsUniquePerOwnerAndAPathOverall) {
  const auto alice = make_user("alice").id, bob = make_user("bob").id;
  const auto root = disks().create(alice, "root", "/v/1/root.qcow2", 1 << 20, "size 1 MiB");
  EXPECT_GT(root.id, 0);
  EXPECT_EQ(disks().find(alice, "root")->path, "/v/1/root.qcow2");
  EXPECT_FALSE(disks().find(bob, "root").has_value());
  EXPECT_THROW(disks().create(alice, "root", "/v/1/other.qcow2", 1, ""), ConflictError);
  EXPECT_THROW(disks().create(bob, "root", "/v/1/root.qcow2", 1, ""), ConflictError);
  EXPECT_NO_THROW(disks().create(bob, "root", "/v/2/root.qcow2", 1, ""));
  EXPECT_THROW(disks().create(999, "x", "/v/999/x.qcow2", 1, ""), NotFoundError);
  EXPECT_EQ(disks().list().size(), 2u);
  EXPECT_EQ(disks().list_for_owner(alice).size(), 1u);
  disks().set_size(root.id, 2 << 20);
  EXPECT_EQ(disks().find(alice, "root")->size_bytes, 2 << 20);
  EXPECT_TRUE(disks().remove(root.id));
  EXPECT_FALSE(disks().remove(root.id));
}

// A user who still has disks cannot be removed from under them.
TEST_F(disk_rows, AnOwnerWithDisksIsKept) {
  const auto alice = make_user("alice").id;
  disks().create(alice, "root", "/v/1/root.qcow2", 1, "");
  EXPECT_ANY_THROW(store().users().remove(alice));
}

}  // namespace
}  // namespace bowline::store
