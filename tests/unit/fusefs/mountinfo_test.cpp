// Parsing /proc/self/mountinfo (fusefs/mountinfo.hpp): the reclaimer decides from it whether a
// mount sits inside the guard, and `guardfs mount` whether a mount point is stale.
#include "fusefs/mountinfo.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

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

TEST_CASE("FLUSH is skipped only when every filesystem below the workspace has no flush",
          "[fusefs][mountinfo]") {
    const auto entry = [](const char* id, const char* parent, const char* mnt, const char* type) {
        return MountEntry{id, parent, mnt, type};
    };
    const std::vector<MountEntry> base = {
        entry("1", "0", "/", "ext4"), entry("2", "1", "/home", "xfs"),
        entry("3", "1", "/mnt/nfs", "nfs4"), entry("4", "1", "/tmp", "tmpfs")};
    CHECK(close_is_noop_below(base, "/home/me/ws"));
    CHECK(close_is_noop_below(base, "/srv/ws"));
    CHECK(close_is_noop_below(base, "/tmp/ws"));
    CHECK_FALSE(close_is_noop_below(base, "/mnt/nfs/ws"));
    CHECK_FALSE(close_is_noop_below(base, "/mnt/nfs"));
    // "/mnt/nfsx" is not below "/mnt/nfs": served by the root filesystem
    CHECK(close_is_noop_below(base, "/mnt/nfsx/ws"));
    // something else mounted anywhere below the workspace keeps FLUSH
    auto nested = base;
    nested.push_back(entry("5", "2", "/home/me/ws/share", "cifs"));
    CHECK_FALSE(close_is_noop_below(nested, "/home/me/ws"));
    CHECK(close_is_noop_below(nested, "/home/me/other"));
    CHECK(close_is_noop_below(nested, "/home/me/ws2"));
    // a FUSE filesystem on the workspace itself, listed after (on top of) the local one
    auto covered = base;
    covered.push_back(entry("6", "2", "/home/me/ws", "fuse.sshfs"));
    CHECK_FALSE(close_is_noop_below(covered, "/home/me/ws"));
    // the whole machine guarded, with a network filesystem somewhere
    CHECK_FALSE(close_is_noop_below(base, "/"));
    CHECK_FALSE(close_is_noop_below({}, "/home/me/ws"));
}
