// `bowline image adopt` on a node whose cache a knot operator seeded by hand, against the real
// server on libvirt's test driver: the template's URL answers nothing (an offline node), so the
// space can only start from the adopted file.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "server_process.hpp"

namespace {

using bowline::clitest::ServerProcess;
using ::testing::HasSubstr;

constexpr const char* kUrl = "https://127.0.0.1:1/images/debian-12-genericcloud-amd64.qcow2";

class image_adopt_cli : public ::testing::Test {
 protected:
  void SetUp() override { server_.start(); }
  void TearDown() override { server_.stop(); }
  ServerProcess server_;
};

TEST_F(image_adopt_cli, AKnotSeededImageStartsASpaceOfflineOnceAdopted) {
  const auto base = server_.dir() / "images" / "base";
  std::filesystem::create_directories(base);
  const auto seeded = (base / "debian-12-genericcloud-amd64.qcow2").string();
  ASSERT_EQ(std::system(("qemu-img create -q -f qcow2 '" + seeded + "' 64M").c_str()), 0);
  std::ofstream(server_.dir() / "knot.yaml")
      << "image: " << kUrl << "\nmemory: 64Mi\ncpus: 1\nnetwork:\n  mode: nat\n";
  auto r =
      server_.run("template create " + (server_.dir() / "knot.yaml").string() + " --name knot");
  ASSERT_EQ(r.code, 0) << r.err;

  // Without adoption the unkeyed file is not trusted and the URL answers nothing.
  r = server_.run("space create knot before --wait --no-ready");
  EXPECT_NE(r.code, 0) << r.out;
  EXPECT_THAT(r.out + r.err, HasSubstr(kUrl));
  server_.run("space delete before --wait");

  const auto images = " --images-path '" + (server_.dir() / "images").string() + "'";
  r = server_.run("image adopt '" + seeded + "' --url " + kUrl + images);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("adopted " + seeded + " as the cached copy of " + kUrl));
  EXPECT_THAT(r.out, HasSubstr("(hard link)"));

  r = server_.run("space create knot offline --wait --no-ready");
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  r = server_.run("space info offline -o json");
  EXPECT_THAT(r.out, HasSubstr("\"running\"")) << r.err;

  // Again: nothing changes; and other bytes for the same URL are refused.
  r = server_.run("image adopt '" + seeded + "' --url " + kUrl + images);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("already adopted"));
  const auto other = (server_.dir() / "other.qcow2").string();
  ASSERT_EQ(std::system(("qemu-img create -q -f qcow2 '" + other + "' 32M").c_str()), 0);
  r = server_.run("image adopt '" + other + "' --url " + kUrl + images);
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("already holds other bytes"));
}

}  // namespace
