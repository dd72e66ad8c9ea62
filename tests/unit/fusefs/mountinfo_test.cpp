// Parsing /proc/self/mountinfo (fusefs/mountinfo.hpp): the reclaimer decides from it whether a
// mount sits inside the guard, and `guardfs mount` whether a mount point is stale.
#include "fusefs/mountinfo.hpp"

#include <catch2/catch.hpp>

#include <string>

#include <fcntl.h>
#include <unistd.h>

using namespace guardfs::fusefs;

TEST_CASE("mountinfo lines give id, parent, unescaped mount point and type",
          "[fusefs][mountinfo]") {
    const std::string text =
        "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
        "41 22 0:38 / /tmp/a\\040b\\011c\\012d\\134e rw,nosuid - fuse.guardfs guardfs rw\n"
        "42 41 0:39 / /tmp/a\\040b\\011c\\012d\\134e/inner rw master:3 shared:7 - tmpfs tmpfs rw\n"
        "garbage without the separator\n"
        "\n"
        "43 41 0:40 / /x\\04 rw - tmpfs none rw";
    const auto m = parse_mountinfo(text);
    REQUIRE(m.size() == 4);
    CHECK(m[0].id == "22");
    CHECK(m[0].parent == "1");
    CHECK(m[0].mount_point == "/");
    CHECK(m[0].fstype == "ext4");
    CHECK(m[1].mount_point == "/tmp/a b\tc\nd\\e");
    CHECK(m[1].fstype == "fuse.guardfs");
    CHECK(m[2].parent == "41");
    CHECK(m[2].mount_point == "/tmp/a b\tc\nd\\e/inner");
    CHECK(m[2].fstype == "tmpfs");
    // a truncated escape at the end of the field is kept as written
    CHECK(m[3].mount_point == "/x\\04");
}

TEST_CASE("the mount table of this process is read from an open descriptor, again and again",
          "[fusefs][mountinfo]") {
    const int fd = ::open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
    REQUIRE(fd >= 0);
    std::string first;
    std::string second;
    REQUIRE(read_all_at_start(fd, first));
    REQUIRE(read_all_at_start(fd, second));
    ::close(fd);
    CHECK(first == second);
    bool root_found = false;
    for (const auto& e : parse_mountinfo(first)) {
        root_found = root_found || e.mount_point == "/";
    }
    CHECK(root_found);
    std::string none;
    CHECK_FALSE(read_all_at_start(-1, none));
}
