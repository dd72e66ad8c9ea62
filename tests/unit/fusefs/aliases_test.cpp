// The other spellings of a path under the mount point or the workspace (UnderlyingFs::aliases,
// docs/decisions/016): the mount point as given, its real path, and the workspace name the same
// tree, so a configured path spelled one way matches a view spelled another.
#include "fusefs/fs.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

using namespace guardfs::fusefs;

namespace {

bool has(const std::vector<std::string>& v, const std::string& s) {
    return std::find(v.begin(), v.end(), s) != v.end();
}

} // namespace

TEST_CASE("a path under the mount point, its real path or the workspace has the other two "
          "spellings",
          "[fusefs][aliases]") {
    FsConfig cfg;
    cfg.mount_spelled = "/home/u/mnt"; // /home is a symlink to /var/home
    cfg.mount_real = "/var/home/u/mnt";
    cfg.ws_real = "/srv/ws";
    const UnderlyingFs fs(cfg, -1);
    const auto a = fs.aliases("/home/u/mnt/.claude/settings.json");
    CHECK(a.size() == 2);
    CHECK(has(a, "/var/home/u/mnt/.claude/settings.json"));
    CHECK(has(a, "/srv/ws/.claude/settings.json"));
    const auto b = fs.aliases("/srv/ws");
    CHECK(has(b, "/home/u/mnt"));
    CHECK(has(b, "/var/home/u/mnt"));
    CHECK(fs.aliases("/srv/wsx/a").empty()); // on a segment boundary only
    CHECK(fs.aliases("/etc/passwd").empty());
}

TEST_CASE("mounted in place, a path has no other spelling; a root of / maps every path",
          "[fusefs][aliases]") {
    FsConfig in_place;
    in_place.mount_spelled = in_place.mount_real = in_place.ws_real = "/srv/ws";
    CHECK(UnderlyingFs(in_place, -1).aliases("/srv/ws/a").empty());
    FsConfig root;
    root.mount_spelled = root.mount_real = "/";
    root.ws_real = "/srv/ws";
    const auto a = UnderlyingFs(root, -1).aliases("/a/b");
    CHECK(a == std::vector<std::string>{"/srv/ws/a/b"});
    const auto b = UnderlyingFs(root, -1).aliases("/srv/ws/a"); // under both roots
    CHECK(b.size() == 2);
    CHECK(has(b, "/a"));
    CHECK(has(b, "/srv/ws/srv/ws/a"));
}
