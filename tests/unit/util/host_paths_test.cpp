#include "util/host_paths.hpp"

#include <gtest/gtest.h>

namespace bowline::util {
namespace {

TEST(security_host_paths, APathInAnErrorKeepsOnlyItsLastComponent) {
  EXPECT_EQ(redact_host_paths("qemu-img: Could not open '/var/lib/libvirt/images/bowline/x/"
                              "disk.qcow2': Permission denied"),
            "qemu-img: Could not open 'disk.qcow2': Permission denied");
  EXPECT_EQ(redact_host_paths("cannot remove /srv/images/volumes/7/root.qcow2: Busy"),
            "cannot remove root.qcow2: Busy");
  EXPECT_EQ(redact_host_paths("the directory /a/b/c/ exists."), "the directory c exists.");
  EXPECT_EQ(redact_host_paths("file=/etc/shadow,format=raw"), "file=shadow,format=raw");
  EXPECT_EQ(redact_host_paths("(/tmp/x) [/tmp/y] \"/tmp/z\""), "(x) [y] \"z\"");
  EXPECT_EQ(redact_host_paths("/root/secret at the start"), "secret at the start");
}

TEST(security_host_paths, URLsRatesCIDRsAndAPIPathsStay) {
  for (const char* kept :
       {"https://example.com/images/debian.qcow2 failed", "10 MiB/s", "198.51.100.0/24",
        "no such path: /api/v1/spaces/x", "a / b", "and/or", "ratio 1/2", "", "/"})
    EXPECT_EQ(redact_host_paths(kept), kept) << kept;
  EXPECT_FALSE(names_host_path("https://example.com/a/b"));
  EXPECT_TRUE(names_host_path("at /var/lib/bowline/bowline.db"));
}

}  // namespace
}  // namespace bowline::util
