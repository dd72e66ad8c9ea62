// The data root (design §5; seed 004 HRD-PRM-10): spellings, canonical keys computed per call,
// byte-exact containment on a segment boundary. Every uncertainty exempts nothing.
#include "dataroot/canonicalize.hpp"
#include "dataroot/data_root.hpp"
#include "support/temp_dir.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <optional>
#include <string>

#include <unistd.h>

using namespace guardfs::dataroot;
using guardfs::test::TempDir;

TEST_CASE("containment is byte-exact and on a segment boundary", "[dataroot][inside]") {
    auto [target, root, expected] =
        GENERATE(table<std::string, std::string, std::optional<std::size_t>>({
            {"/h/.sema/data", "/h/.sema/data", 3},
            {"/h/.sema/data/mem.md", "/h/.sema/data", 3},
            {"/h/.sema/data-x/mem.md", "/h/.sema/data", std::nullopt}, // <root>-x
            {"/h/.sema/datax", "/h/.sema/data", std::nullopt},         // <root>x
            {"/h/.sema/dat", "/h/.sema/data", std::nullopt},
            {"/h/.sema", "/h/.sema/data", std::nullopt},
            {"/h/.SEMA/data/mem.md", "/h/.sema/data", std::nullopt}, // no case folding
            {"/h/.sema/data\\evil", "/h/.sema/data", std::nullopt},  // '\' is a name byte
            {"/anything", "/", std::nullopt},                        // '/' exempts nothing
            {"/anything", "", std::nullopt},
            {"/h/.sema/data/x", "/h/.sema/data/", std::nullopt},               // not in key form
            {"/h/.sema/caf\xC3\xA9/x", "/h/.sema/cafe\xCC\x81", std::nullopt}, // no NFC
        }));
    CAPTURE(target, root);
    CHECK(inside_root(target, root) == expected);
}

TEST_CASE("a value's spellings: as written, with ~ expanded, relative resolved",
          "[dataroot][spellings]") {
    using V = std::vector<std::string>;
    CHECK(spellings("/abs/dir", "/home/u", "/start") == V{"/abs/dir"});
    CHECK(spellings("/abs/./dir/", "/home/u", "/start") == V{"/abs/dir"});
    CHECK(spellings("~/.sema/engine-data", "/home/u", "/start") ==
          V{"/home/u/.sema/engine-data", "/start/~/.sema/engine-data"});
    CHECK(spellings("~", "/home/u", "/start") == V{"/home/u", "/start/~"});
    CHECK(spellings("rel/data", "/home/u", "/start") == V{"/start/rel/data"});
    CHECK(spellings("~/x", "", "/start") == V{"/start/~/x"}); // no home: no expansion
    CHECK(spellings("/", "/home/u", "/start").empty());       // reduces to nothing
    CHECK(spellings("", "/home/u", "/start").empty());
    // With a ".." segment the text is kept as written: only the kernel's resolution knows where
    // a ".." after a symlink leads (the keys below resolve it).
    CHECK(spellings("/a/lnk/../data", "/home/u", "/start") == V{"/a/lnk/../data"});
    CHECK(spellings("lnk/../data", "/home/u", "/start") == V{"/start/lnk/../data"});
    CHECK(spellings("~/lnk/../d", "/home/u", "/start") ==
          V{"/home/u/lnk/../d", "/start/~/lnk/../d"});
    CHECK(spellings("..", "/home/u", "/") == V{"/.."});
}

TEST_CASE("a '..' after a symlink leads where the kernel goes, and only there",
          "[dataroot][keys]") {
    // A review (2026-12-07): a root spelled ws/.sema/jump/../engine-data, with jump a symlink
    // to ws/.codex/sub, exempted ws/.sema/engine-data (the text collapsed) and not the real root
    // ws/.codex/engine-data.
    TempDir t;
    RealFs fs;
    t.mkdir("ws/.codex/sub");
    t.mkdir("ws/.codex/engine-data");
    t.mkdir("ws/.sema/engine-data");
    std::filesystem::create_directory_symlink(t / "ws/.codex/sub", t / "ws/.sema/jump");
    for (const auto& value :
         {t / "ws/.sema/jump/../engine-data", std::string("jump/../engine-data")}) {
        CAPTURE(value);
        DataRoots roots(spellings(value, "/home/u", t / "ws/.sema"));
        const auto keys = roots.keys(fs);
        CHECK(keys == std::vector<std::string>{t / "ws/.codex/engine-data"});
    }
    // "/.." is "/": nothing
    CHECK(DataRoots(spellings("..", "/home/u", "/")).keys(fs).empty());
    // without a symlink the text and the kernel agree
    DataRoots plain(spellings(t / "ws/.codex/sub/../engine-data", "", "/"));
    CHECK(plain.keys(fs) == std::vector<std::string>{t / "ws/.codex/engine-data"});
}

TEST_CASE("a data root is a directory: a file exempts nothing", "[dataroot][keys]") {
    TempDir t;
    RealFs fs;
    t.write("h/.claude.json", "{}");
    CHECK(DataRoots({t / "h/.claude.json"}).keys(fs).empty());
    std::filesystem::create_symlink(t / "h/.claude.json", t / "h/link");
    CHECK(DataRoots({t / "h/link"}).keys(fs).empty());
}

TEST_CASE("canonicalization resolves symlinks one component at a time", "[dataroot][canonical]") {
    TempDir t;
    RealFs fs;
    t.mkdir("real/data");
    std::filesystem::create_directory_symlink(t / "real", t / "link");
    std::filesystem::create_symlink("../real/data", t / "real/rel");
    CHECK(canonicalize_existing(t / "link/data", fs).value() == t / "real/data");
    CHECK(canonicalize_existing(t / "real/rel", fs).value() == t / "real/data");
    CHECK(canonicalize_existing(t / "link/../real", fs).value() == t / "real");
    auto missing = canonicalize_existing(t / "link/nope", fs);
    REQUIRE_FALSE(missing.has_value());
    CHECK(missing.error().sys_errno == ENOENT);
    // A target that does not exist yet: existing prefix resolved, tail appended.
    CHECK(canonicalize_target(t / "link/data/new/file", fs, true).value() ==
          t / "real/data/new/file");
    // A final symlink is followed only on request.
    CHECK(canonicalize_target(t / "real/rel", fs, false).value() == t / "real/rel");
    CHECK(canonicalize_target(t / "real/rel", fs, true).value() == t / "real/data");
}

TEST_CASE("a symlink loop and a file in the middle fail to canonicalize", "[dataroot][canonical]") {
    TempDir t;
    RealFs fs;
    std::filesystem::create_symlink(t / "b", t / "a");
    std::filesystem::create_symlink(t / "a", t / "b");
    auto loop = canonicalize_target(t / "a/x", fs, true);
    REQUIRE_FALSE(loop.has_value());
    CHECK(loop.error().sys_errno == ELOOP);
    t.write("file", "x");
    auto notdir = canonicalize_target(t / "file/x", fs, true);
    REQUIRE_FALSE(notdir.has_value());
    CHECK(notdir.error().sys_errno == ENOTDIR);
}

TEST_CASE("data-root keys are computed per call: a retargeted symlink is followed",
          "[dataroot][keys]") {
    TempDir t;
    RealFs fs;
    t.mkdir("one");
    t.mkdir("two");
    std::filesystem::create_directory_symlink(t / "one", t / "root");
    DataRoots roots({t / "root"});
    auto keys = roots.keys(fs);
    CHECK(std::find(keys.begin(), keys.end(), t / "one") != keys.end());
    std::filesystem::remove(t / "root");
    std::filesystem::create_directory_symlink(t / "two", t / "root");
    keys = roots.keys(fs);
    CHECK(std::find(keys.begin(), keys.end(), t / "two") != keys.end());
    CHECK(std::find(keys.begin(), keys.end(), t / "one") == keys.end());
}

TEST_CASE("a missing root exempts nothing", "[dataroot][keys]") {
    TempDir t;
    RealFs fs;
    DataRoots roots({t / "not-there"});
    CHECK(roots.keys(fs).empty());
    DataRoots slash({"/"});
    for (const auto& k : slash.keys(fs)) {
        CHECK(k != "/");
    }
}

namespace {

// The real filesystem, with every path below `from` also spelled below `to` (as a FUSE mount
// point and its workspace are).
class AliasingFs final : public FsOps {
public:
    AliasingFs(std::string from, std::string to) : from_(std::move(from)), to_(std::move(to)) {}

    int lstat_kind(const std::string& p, FileKind& k) override { return real_.lstat_kind(p, k); }

    int read_link(const std::string& p, std::string& t) override { return real_.read_link(p, t); }

    int identity(const std::string& p, dev_t& d, ino_t& i) override {
        return real_.identity(p, d, i);
    }

    [[nodiscard]] std::vector<std::string> aliases(const std::string& p) const override {
        if (p.rfind(from_ + "/", 0) == 0) {
            return {to_ + p.substr(from_.size())};
        }
        return {};
    }

private:
    RealFs real_;
    std::string from_;
    std::string to_;
};

} // namespace

TEST_CASE("a root's aliases are keys too, and only for a root that resolves", "[dataroot][keys]") {
    TempDir t;
    t.mkdir("ws/data");
    AliasingFs fs(t / "ws", "/mnt/elsewhere");
    const auto keys = DataRoots({t / "ws/data"}).keys(fs);
    CHECK(std::find(keys.begin(), keys.end(), t / "ws/data") != keys.end());
    CHECK(std::find(keys.begin(), keys.end(), "/mnt/elsewhere/data") != keys.end());
    CHECK(keys.size() == 2);
    CHECK(DataRoots({t / "ws/missing"}).keys(fs).empty());
}
