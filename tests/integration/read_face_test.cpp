// The read face against real processes (issue #7, design §8): `read: {deny: [...]}` rows hide
// paths. A hidden entry is left out of every listing as if absent, naming it is EACCES whether or
// not it exists, a hidden ancestor hides its whole subtree, and matching is segment-wise and wide
// (case-folded, NFC, backslash as a separator). ls, find, grep -r, tar and cp -r of the workspace
// show no hidden name and no hidden content (every hidden file carries a marker string that no
// output may contain); the write face is unchanged for visible files, a hidden path cannot be
// created, and after unmounting every hidden file is byte-for-byte what it was.
#include "support/mount_fixture.hpp"
#include "support/process.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace guardfs::test;

namespace {

namespace fs = std::filesystem;

// In every hidden file, and nowhere else.
const std::string kMarker = "HIDDEN-MARKER-7c41e9";

// `credentials` is a one-segment row, `vault/secret` a two-segment run, `café` (NFC) is matched by
// an NFD spelling on disk.
const char* const kPolicy = "read:\n"
                            "  deny: [\"credentials\", \"vault/secret\", \"caf\xc3\xa9\"]\n";

// "cafe" + U+0301 COMBINING ACUTE ACCENT: the NFD spelling of `café`.
const std::string kCafeNfd = "cafe\xcc\x81";

// Hidden files (relative to the workspace): each holds kMarker.
const std::vector<std::string> kHiddenFiles = {
    "credentials",                         // the row itself
    "docs/credentials",                    // the row one level down
    "x/credentials/token",                 // below a hidden directory
    "x/credentials/nested/deeper/key.txt", // deep below it
    "sub/CREDENTIALS",                     // another case
    "sub/Credentials/deep/file.txt",       // another case, as a directory
    "vault/secret/top.txt",                // a two-segment run
    "vault/secret/a/b/c.txt",              // deep below it
    "Vault/SECRET/f.txt",                  // the run in another case
    "notes\\credentials",                  // one name on disk; `\` read as a separator
    kCafeNfd + "/recipe.txt",              // NFD spelling of a hidden segment
};

// Visible files: each holds "visible <path>\n".
const std::vector<std::string> kVisibleFiles = {
    "credentials-backup",     // segment-wise: not `credentials`
    "my-credentials",         // nor this
    "notes.txt",              //
    "docs/a.md",              //
    "docs/b.md",              //
    "x/readme.txt",           //
    "sub/readme.txt",         //
    "vault/other.txt",        // beside the hidden run
    "vault/secret-notes.txt", // `secret-notes` is not `secret`
    "secret/plain.txt",       // `secret` without `vault` before it
};

// Every visible path, as `find .` prints them, in C-locale order.
const std::vector<std::string> kVisibleFind = {
    ".",
    "./Vault",
    "./credentials-backup",
    "./docs",
    "./docs/a.md",
    "./docs/b.md",
    "./my-credentials",
    "./notes.txt",
    "./secret",
    "./secret/plain.txt",
    "./sub",
    "./sub/readme.txt",
    "./vault",
    "./vault/other.txt",
    "./vault/secret-notes.txt",
    "./x",
    "./x/readme.txt",
};

std::string visible_content(const std::string& rel) {
    return "visible " + rel + "\n";
}

std::string hidden_content(const std::string& rel) {
    return kMarker + " " + rel + "\n";
}

bool has_marker(const std::string& text) {
    return text.find(kMarker) != std::string::npos;
}

std::string joined(const std::vector<std::string>& lines) {
    std::string s;
    for (const auto& l : lines) {
        s += l;
        s += '\n';
    }
    return s;
}

using States = std::map<std::string, FileState>;

void put(const std::string& ws, const std::string& rel, const std::string& bytes) {
    fs::create_directories(fs::path(ws + "/" + rel).parent_path());
    write_file(ws + "/" + rel, bytes);
}

// The workspace above; the states of the hidden files as they were before the mount go to
// *before (when given).
MountSpec layout(const std::shared_ptr<States>& before = nullptr,
                 const std::function<void(const std::string&)>& more = nullptr) {
    MountSpec spec;
    spec.policy_yaml = kPolicy;
    spec.setup = [before, more](const std::string& ws) {
        for (const auto& rel : kHiddenFiles) {
            put(ws, rel, hidden_content(rel));
        }
        for (const auto& rel : kVisibleFiles) {
            put(ws, rel, visible_content(rel));
        }
        if (more) {
            more(ws);
        }
        if (before) {
            for (const auto& rel : kHiddenFiles) {
                (*before)[rel] = file_state(ws + "/" + rel);
            }
        }
    };
    return spec;
}

// After unmounting: every hidden file is what it was before the mount.
void check_hidden_unchanged(const MountedGuard& g, const States& before) {
    REQUIRE(before.size() == kHiddenFiles.size());
    for (const auto& [rel, state] : before) {
        CAPTURE(rel);
        CHECK(state.exists);
        CHECK(file_state(g.ws(rel)) == state);
        CHECK(read_file(g.ws(rel)) == hidden_content(rel));
    }
}

RunOptions in_workspace(const MountedGuard& g) {
    RunOptions o;
    o.cwd = g.ws();
    o.env["LC_ALL"] = "C";
    return o;
}

int stat_errno(const std::string& path) {
    struct stat st {};

    errno = 0;
    return ::stat(path.c_str(), &st) == 0 ? 0 : errno;
}

int lstat_errno(const std::string& path) {
    struct stat st {};

    errno = 0;
    return ::lstat(path.c_str(), &st) == 0 ? 0 : errno;
}

// Relative paths of everything below dir, sorted.
std::vector<std::string> tree_of(const std::string& dir) {
    std::vector<std::string> out;
    for (const auto& e : fs::recursive_directory_iterator(dir)) {
        out.push_back(fs::relative(e.path(), dir).string());
    }
    std::sort(out.begin(), out.end());
    return out;
}

// kVisibleFind as relative paths without ".", sorted.
std::vector<std::string> visible_tree() {
    std::vector<std::string> out;
    for (const auto& p : kVisibleFind) {
        if (p != ".") {
            out.push_back(p.substr(2));
        }
    }
    std::sort(out.begin(), out.end());
    return out;
}

} // namespace

TEST_CASE("ls -a lists no hidden name in any directory", "[integration][read-face]") {
    auto before = std::make_shared<States>();
    MountedGuard g(layout(before));
    const RunOptions o = in_workspace(g);
    const std::map<std::string, std::vector<std::string>> expected = {
        {".",
         {".", "..", "Vault", "credentials-backup", "docs", "my-credentials", "notes.txt", "secret",
          "sub", "vault", "x"}},
        {"docs", {".", "..", "a.md", "b.md"}},
        {"x", {".", "..", "readme.txt"}},
        {"sub", {".", "..", "readme.txt"}},
        {"vault", {".", "..", "other.txt", "secret-notes.txt"}},
        {"Vault",
         {
             ".",
             "..",
         }},
        {"secret", {".", "..", "plain.txt"}},
    };
    for (const auto& [dir, names] : expected) {
        const auto r = run({"ls", "-a", dir}, o);
        CAPTURE(dir, r.err);
        CHECK(r.exit_code == 0);
        CHECK(r.out == joined(names));
    }
    // A long recursive listing stats every entry it shows: no error, no hidden content.
    const auto r = run({"ls", "-laR", "."}, o);
    CAPTURE(r.out, r.err);
    CHECK(r.exit_code == 0);
    CHECK(r.err.empty());
    CHECK_FALSE(has_marker(r.out));
    CHECK(g.unmount() == 0);
    check_hidden_unchanged(g, *before);
}

TEST_CASE("find lists every visible path and no hidden one", "[integration][read-face]") {
    auto before = std::make_shared<States>();
    MountedGuard g(layout(before));
    const RunOptions o = in_workspace(g);
    const auto r = sh("find . | sort", o);
    CAPTURE(r.err);
    CHECK(r.exit_code == 0);
    CHECK(r.err.empty());
    CHECK(r.out == joined(kVisibleFind));
    // Every file find reaches, read: only visible content.
    const auto cat = sh("find . -type f -exec cat {} + | sort", o);
    CAPTURE(cat.err);
    CHECK(cat.exit_code == 0);
    CHECK_FALSE(has_marker(cat.out));
    std::vector<std::string> contents;
    for (const auto& rel : kVisibleFiles) {
        contents.push_back("visible " + rel);
    }
    std::sort(contents.begin(), contents.end());
    CHECK(cat.out == joined(contents));
    // Searching by name finds nothing hidden.
    const auto named = sh("find . -iname credentials -o -iname secret -print", o);
    CHECK(named.exit_code == 0);
    CHECK(named.out == "./secret\n");
    CHECK(g.unmount() == 0);
    check_hidden_unchanged(g, *before);
}

TEST_CASE("grep -r finds no hidden content", "[integration][read-face]") {
    auto before = std::make_shared<States>();
    MountedGuard g(layout(before));
    const RunOptions o = in_workspace(g);
    const auto r = run({"grep", "-r", kMarker, "."}, o);
    CAPTURE(r.out, r.err);
    CHECK(r.exit_code == 1); // no match, and no error
    CHECK(r.out.empty());
    CHECK(r.err.empty());
    // The same search sees every visible file.
    const auto all = sh("grep -rl visible . | sort", o);
    CAPTURE(all.err);
    CHECK(all.exit_code == 0);
    std::vector<std::string> files;
    for (const auto& rel : kVisibleFiles) {
        files.push_back("./" + rel);
    }
    std::sort(files.begin(), files.end());
    CHECK(all.out == joined(files));
    CHECK(g.unmount() == 0);
    check_hidden_unchanged(g, *before);
}

TEST_CASE("tar of the workspace carries no hidden name or content", "[integration][read-face]") {
    auto before = std::make_shared<States>();
    MountedGuard g(layout(before));
    const RunOptions o = in_workspace(g);
    const std::string archive = g.root() + "/ws.tar";
    const auto r = run({"tar", "cf", archive, "."}, o);
    CAPTURE(r.err);
    CHECK(r.exit_code == 0);
    CHECK(r.err.empty());
    CHECK_FALSE(has_marker(read_file(archive)));
    // To stdout as well.
    const auto piped = run({"tar", "cf", "-", "."}, o);
    CHECK(piped.exit_code == 0);
    CHECK_FALSE(piped.out.empty());
    CHECK_FALSE(has_marker(piped.out));
    // Its listing is exactly the visible tree.
    const auto listing = sh("tar tf '" + archive + "' | sort", o);
    CHECK(listing.exit_code == 0);
    std::vector<std::string> names;
    for (const auto& p : kVisibleFind) {
        const bool is_file = p.size() > 2 && std::find(kVisibleFiles.begin(), kVisibleFiles.end(),
                                                       p.substr(2)) != kVisibleFiles.end();
        names.push_back(is_file ? p : p + "/");
    }
    std::sort(names.begin(), names.end());
    CHECK(listing.out == joined(names));
    CHECK(g.unmount() == 0);
    check_hidden_unchanged(g, *before);
}

TEST_CASE("cp -r of the workspace copies no hidden name or content", "[integration][read-face]") {
    auto before = std::make_shared<States>();
    MountedGuard g(layout(before));
    const RunOptions o = in_workspace(g);
    const std::string copy = g.root() + "/copy";
    const auto r = run({"cp", "-r", ".", copy}, o);
    CAPTURE(r.err);
    CHECK(r.exit_code == 0);
    CHECK(r.err.empty());
    CHECK(tree_of(copy) == visible_tree());
    for (const auto& rel : tree_of(copy)) {
        CAPTURE(rel);
        if (fs::is_regular_file(copy + "/" + rel)) {
            CHECK(read_file(copy + "/" + rel) == visible_content(rel));
        }
    }
    const auto grep = run({"grep", "-r", kMarker, copy}, o);
    CHECK(grep.exit_code == 1);
    CHECK(grep.out.empty());
    CHECK(g.unmount() == 0);
    check_hidden_unchanged(g, *before);
}

TEST_CASE("cat with a glob prints no hidden content", "[integration][read-face]") {
    auto before = std::make_shared<States>();
    MountedGuard g(layout(before));
    const RunOptions o = in_workspace(g);
    const auto r = sh("cat docs/*", o);
    CAPTURE(r.err);
    CHECK(r.exit_code == 0);
    CHECK(r.out == visible_content("docs/a.md") + visible_content("docs/b.md"));
    // Every glob names only visible files.
    const auto wide = sh("cat docs/* sub/* x/* vault/* */*", o);
    CAPTURE(wide.err);
    CHECK(wide.exit_code == 0);
    CHECK(wide.err.empty());
    CHECK_FALSE(has_marker(wide.out));
    // A glob that only a hidden name would match matches nothing.
    const auto none = sh("echo docs/cred* sub/CRED* vault/secret/*", o);
    CHECK(none.out == "docs/cred* sub/CRED* vault/secret/*\n");
    CHECK(g.unmount() == 0);
    check_hidden_unchanged(g, *before);
}

TEST_CASE("naming a hidden path is EACCES whether or not it exists", "[integration][read-face]") {
    auto before = std::make_shared<States>();
    MountedGuard g(layout(before));
    // Hidden names that exist on disk, and hidden names that do not.
    const std::vector<std::string> existing = {
        "credentials",
        "docs/credentials",
        "x/credentials",
        "x/credentials/token",
        "vault/secret",
        "vault/secret/top.txt",
        "sub/CREDENTIALS",
        "Vault/SECRET/f.txt",
        "notes\\credentials",
        kCafeNfd,
        kCafeNfd + "/recipe.txt",
    };
    const std::vector<std::string> missing = {
        "sub/credentials",          // not on disk (only CREDENTIALS is)
        "CREDENTIALS",              // not on disk (only credentials is)
        "vault/credentials",        //
        "vault/secret/missing.txt", //
        "x/credentials/none",       //
        "secret/credentials",       //
        "docs/credentials/inner",   // below a hidden file
        "Vault/secret",             //
        "caf\xc3\xa9",              // the NFC spelling: not on disk
        "docs\\credentials",        //
    };
    for (const auto* list : {&existing, &missing}) {
        for (const auto& rel : *list) {
            CAPTURE(rel, list == &existing);
            const std::string p = g.ws(rel);
            CHECK(stat_errno(p) == EACCES);
            CHECK(lstat_errno(p) == EACCES);
            CHECK(open_errno(p, O_RDONLY) == EACCES);
            CHECK(open_errno(p, O_RDONLY | O_DIRECTORY) == EACCES);
            CHECK(open_errno(p, O_PATH) == EACCES);
            errno = 0;
            CHECK(::access(p.c_str(), F_OK) == -1);
            CHECK(errno == EACCES);
            errno = 0;
            char buf[64];
            CHECK(::readlink(p.c_str(), buf, sizeof buf) == -1);
            CHECK(errno == EACCES);
        }
    }
    // cat says the same for both.
    const RunOptions o = in_workspace(g);
    const auto there = run({"cat", "credentials"}, o);
    const auto absent = run({"cat", "CREDENTIALS"}, o);
    CHECK(there.exit_code == 1);
    CHECK(absent.exit_code == 1);
    CHECK(there.out.empty());
    CHECK(absent.out.empty());
    CHECK(there.err == "cat: credentials: Permission denied\n");
    CHECK(absent.err == "cat: CREDENTIALS: Permission denied\n");
    const auto deep = run({"cat", "vault/secret/a/b/c.txt", "vault/secret/a/b/none.txt"}, o);
    CHECK(deep.exit_code == 1);
    CHECK(deep.out.empty());
    CHECK(deep.err == "cat: vault/secret/a/b/c.txt: Permission denied\n"
                      "cat: vault/secret/a/b/none.txt: Permission denied\n");
    // A visible name that does not exist is still ENOENT.
    CHECK(stat_errno(g.ws("credentials-none")) == ENOENT);
    CHECK(stat_errno(g.ws("vault/secrets")) == ENOENT);
    CHECK(g.unmount() == 0);
    check_hidden_unchanged(g, *before);
}

TEST_CASE("a hidden ancestor hides its whole subtree", "[integration][read-face]") {
    auto before = std::make_shared<States>();
    MountedGuard g(layout(before));
    for (const std::string rel :
         {"x/credentials", "x/credentials/nested", "x/credentials/nested/deeper",
          "x/credentials/nested/deeper/key.txt", "vault/secret", "vault/secret/a",
          "vault/secret/a/b", "vault/secret/a/b/c.txt", "sub/Credentials/deep",
          "sub/Credentials/deep/file.txt", "Vault/SECRET", "Vault/SECRET/f.txt"}) {
        CAPTURE(rel);
        CHECK(stat_errno(g.ws(rel)) == EACCES);
        CHECK(open_errno(g.ws(rel), O_RDONLY) == EACCES);
    }
    const RunOptions o = in_workspace(g);
    for (const std::string dir : {"x/credentials", "x/credentials/nested", "vault/secret/a"}) {
        const auto r = run({"ls", "-a", dir}, o);
        CAPTURE(dir, r.err);
        CHECK(r.exit_code != 0);
        CHECK(r.out.empty());
        CHECK(r.err.find("Permission denied") != std::string::npos);
    }
    const auto f = run({"find", "vault/secret", "x/credentials/nested"}, o);
    CHECK(f.exit_code != 0);
    CHECK(f.out.empty());
    const auto grep = run({"grep", "-r", kMarker, "vault/secret", "x/credentials"}, o);
    CHECK(grep.exit_code == 2);
    CHECK(grep.out.empty());
    // A process already inside a visible neighbour cannot climb into it either.
    const auto climb = run({"cat", "../vault/secret/top.txt"}, [&] {
        RunOptions sub = o;
        sub.cwd = g.ws("vault");
        return sub;
    }());
    CHECK(climb.exit_code == 1);
    CHECK_FALSE(has_marker(climb.out));
    CHECK(g.unmount() == 0);
    check_hidden_unchanged(g, *before);
}

TEST_CASE("a directory's link count does not tell how many hidden subdirectories it holds",
          "[integration][read-face]") {
    // A review (2026-12-07): `ls -la` of a directory showed no hidden entry, while `stat -c %h`
    // said 3, so one hidden subdirectory existed (design §8: the refusal says nothing about
    // whether it exists). With the read face on, a directory's link count is 1, as on
    // filesystems that do not count subdirectories.
    auto before = std::make_shared<States>();
    MountedGuard g(layout(before));
    for (const std::string rel : {"x", "vault", "docs", ""}) {
        struct stat st {};

        CAPTURE(rel);
        REQUIRE(::stat(g.ws(rel).c_str(), &st) == 0);
        CHECK(st.st_nlink == 1);
    }
    // ... through a listing with attributes too, and find still walks every visible directory
    const RunOptions o = in_workspace(g);
    const auto ls = run({"stat", "-c", "%h %n", "x/readme.txt", "vault/other.txt"}, o);
    CHECK(ls.exit_code == 0);
    const auto f = run({"find", ".", "-type", "d"}, o);
    CHECK(f.exit_code == 0);
    CHECK(f.out.find("./x\n") != std::string::npos);
    CHECK(f.out.find("./vault\n") != std::string::npos);
    CHECK(g.unmount() == 0);

    struct stat native {};

    REQUIRE(::stat(g.ws("x").c_str(), &native) == 0);
    CHECK(native.st_nlink == 3); // x/credentials is a directory
    check_hidden_unchanged(g, *before);
}

TEST_CASE("names that only contain a hidden segment stay visible", "[integration][read-face]") {
    MountedGuard g(layout());
    for (const std::string rel : {"credentials-backup", "my-credentials", "vault/secret-notes.txt",
                                  "secret/plain.txt", "vault/other.txt"}) {
        CAPTURE(rel);
        CHECK(stat_errno(g.ws(rel)) == 0);
        CHECK(read_file(g.ws(rel)) == visible_content(rel));
    }
    CHECK(stat_errno(g.ws("secret")) == 0);
    CHECK(stat_errno(g.ws("Vault")) == 0);
    const auto r = run({"cat", "credentials-backup", "my-credentials"}, in_workspace(g));
    CHECK(r.exit_code == 0);
    CHECK(r.out == visible_content("credentials-backup") + visible_content("my-credentials"));
    CHECK(g.unmount() == 0);
}

TEST_CASE("case variants of a hidden name are hidden too", "[integration][read-face]") {
    auto before = std::make_shared<States>();
    MountedGuard g(layout(before));
    for (const std::string rel : {"sub/CREDENTIALS", "sub/Credentials", "sub/Credentials/deep",
                                  "sub/cReDeNtIaLs", "CREDENTIALS", "Credentials/x", "Vault/SECRET",
                                  "Vault/SECRET/f.txt", "vault/SECRET", "vault/Secret/top.txt"}) {
        CAPTURE(rel);
        CHECK(stat_errno(g.ws(rel)) == EACCES);
        CHECK(open_errno(g.ws(rel), O_RDONLY) == EACCES);
    }
    const RunOptions o = in_workspace(g);
    const auto ls = run({"ls", "-a", "sub"}, o);
    CHECK(ls.out == ".\n..\nreadme.txt\n");
    const auto cat = run({"cat", "sub/CREDENTIALS"}, o);
    CHECK(cat.exit_code == 1);
    CHECK(cat.out.empty());
    CHECK(cat.err == "cat: sub/CREDENTIALS: Permission denied\n");
    CHECK(g.unmount() == 0);
    check_hidden_unchanged(g, *before);
}

TEST_CASE("a symlink made before the mount cannot reach a hidden file",
          "[integration][read-face]") {
    auto before = std::make_shared<States>();
    MountedGuard g(layout(before, [](const std::string& ws) {
        // Outside the workspace, absolute.
        fs::create_symlink(ws + "/credentials", ws + "/../outside-link");
        fs::create_symlink(ws + "/vault/secret", ws + "/../outside-dir-link");
        // Inside it: relative, absolute, and from a subdirectory.
        fs::create_symlink("credentials", ws + "/link-rel");
        fs::create_symlink(ws + "/vault/secret/top.txt", ws + "/link-abs");
        fs::create_symlink("../x/credentials/token", ws + "/docs/link-up");
        fs::create_symlink("../vault/secret", ws + "/sub/link-dir");
        fs::create_symlink("../sub/CREDENTIALS", ws + "/secret/link-case");
    }));
    const std::vector<std::string> links = {
        g.root() + "/outside-link",
        g.root() + "/outside-dir-link/top.txt",
        g.ws("link-rel"),
        g.ws("link-abs"),
        g.ws("docs/link-up"),
        g.ws("sub/link-dir/top.txt"),
        g.ws("sub/link-dir/a/b/c.txt"),
        g.ws("secret/link-case"),
    };
    const RunOptions o = in_workspace(g);
    for (const auto& link : links) {
        CAPTURE(link);
        CHECK(open_errno(link, O_RDONLY) == EACCES);
        CHECK(stat_errno(link) == EACCES);
        const auto r = run({"cat", link}, o);
        CHECK(r.exit_code == 1);
        CHECK(r.out.empty());
        CHECK(r.err.find("Permission denied") != std::string::npos);
    }
    CHECK(open_errno(g.root() + "/outside-dir-link", O_RDONLY | O_DIRECTORY) == EACCES);
    CHECK(open_errno(g.ws("sub/link-dir"), O_RDONLY | O_DIRECTORY) == EACCES);
    // Following links while searching finds nothing hidden either.
    const auto grep = run({"grep", "-R", kMarker, "."}, o);
    CHECK(grep.out.empty());
    const auto cp = run({"cp", "-rL", ".", g.root() + "/copy"}, o);
    CHECK(cp.exit_code != 0); // the links it must follow cannot be read
    const auto in_copy = run({"grep", "-r", kMarker, g.root() + "/copy"}, o);
    CHECK(in_copy.exit_code == 1);
    CHECK(in_copy.out.empty());
    CHECK(g.unmount() == 0);
    check_hidden_unchanged(g, *before);
}

TEST_CASE("renaming the parent of a multi-segment hidden run is refused",
          "[integration][read-face]") {
    auto before = std::make_shared<States>();
    MountedGuard g(layout(before));
    errno = 0;
    CHECK(::rename(g.ws("vault").c_str(), g.ws("vault2").c_str()) == -1);
    CHECK(errno == EACCES);
    errno = 0;
    CHECK(::rename(g.ws("Vault").c_str(), g.ws("elsewhere").c_str()) == -1); // another case
    CHECK(errno == EACCES);
    // Exchanging it with a visible directory would move `secret/` out of its run too.
    errno = 0;
    CHECK(::renameat2(AT_FDCWD, g.ws("vault").c_str(), AT_FDCWD, g.ws("secret").c_str(),
                      RENAME_EXCHANGE) == -1);
    CHECK(errno == EACCES);
    // Moving the hidden directory itself, or a file out of it: it cannot even be named.
    errno = 0;
    CHECK(::rename(g.ws("vault/secret").c_str(), g.ws("vault/open").c_str()) == -1);
    CHECK(errno == EACCES);
    errno = 0;
    CHECK(::rename(g.ws("vault/secret/top.txt").c_str(), g.ws("top.txt").c_str()) == -1);
    CHECK(errno == EACCES);
    const RunOptions o = in_workspace(g);
    const auto mv = run({"mv", "vault", "opened"}, o);
    CHECK(mv.exit_code != 0);
    CHECK(mv.err.find("Permission denied") != std::string::npos);
    // Nothing moved: the content stays hidden, and no unhidden copy of it appeared.
    for (const std::string rel : {"vault2", "elsewhere", "opened", "vault/open", "top.txt",
                                  "secret/secret", "secret/top.txt"}) {
        CAPTURE(rel);
        CHECK(stat_errno(g.ws(rel)) == ENOENT);
    }
    CHECK(stat_errno(g.ws("vault/secret/top.txt")) == EACCES);
    CHECK(read_file(g.ws("secret/plain.txt")) == visible_content("secret/plain.txt"));
    const auto grep = run({"grep", "-r", kMarker, "."}, o);
    CHECK(grep.exit_code == 1);
    CHECK(grep.out.empty());
    CHECK(g.unmount() == 0);
    check_hidden_unchanged(g, *before);
    for (const std::string rel : {"vault2", "elsewhere", "opened", "top.txt", "secret/secret"}) {
        CHECK_FALSE(fs::exists(g.ws(rel)));
    }
}

TEST_CASE("a directory holding a hidden name moves and the name stays hidden",
          "[integration][read-face]") {
    auto before = std::make_shared<States>();
    MountedGuard g(layout(before));
    // `x/credentials` lands as `y/credentials`: still in its hiding run (design §3 analogue).
    errno = 0;
    CHECK(::rename(g.ws("x").c_str(), g.ws("y").c_str()) == 0);
    CHECK(errno == 0);
    CHECK(stat_errno(g.ws("y/credentials")) == EACCES);
    CHECK(stat_errno(g.ws("y/credentials/token")) == EACCES);
    CHECK(read_file(g.ws("y/readme.txt")) == visible_content("x/readme.txt"));
    const auto ls = run({"ls", "-a", "y"}, in_workspace(g));
    CHECK(ls.out == ".\n..\nreadme.txt\n");
    CHECK(g.unmount() == 0);
    CHECK(file_state(g.ws("y/credentials/token")) == before->at("x/credentials/token"));
    CHECK(read_file(g.ws("y/credentials/nested/deeper/key.txt")) ==
          hidden_content("x/credentials/nested/deeper/key.txt"));
}

TEST_CASE("read agent_config hides the agent configuration files but not their directories",
          "[integration][read-face]") {
    const std::vector<std::string> hidden = {".claude/settings.json", ".claude/settings.local.json",
                                             ".claude/hooks/pre.sh", ".mcp.json",
                                             ".codex/config.toml"};
    MountSpec spec;
    spec.policy_yaml = "read:\n  agent_config: true\n";
    auto before = std::make_shared<States>();
    spec.setup = [&hidden, before](const std::string& ws) {
        for (const auto& rel : hidden) {
            put(ws, rel, hidden_content(rel));
            (*before)[rel] = file_state(ws + "/" + rel);
        }
        put(ws, ".claude/notes.md", visible_content(".claude/notes.md"));
        put(ws, ".codex/notes.md", visible_content(".codex/notes.md"));
        put(ws, "readme.md", visible_content("readme.md"));
    };
    MountedGuard g(spec);
    for (const auto& rel : hidden) {
        CAPTURE(rel);
        CHECK(stat_errno(g.ws(rel)) == EACCES);
        CHECK(open_errno(g.ws(rel), O_RDONLY) == EACCES);
    }
    CHECK(stat_errno(g.ws(".claude/hooks")) == EACCES);
    CHECK(stat_errno(g.ws(".MCP.json")) == EACCES); // another case, absent on disk
    CHECK(read_file(g.ws(".claude/notes.md")) == visible_content(".claude/notes.md"));
    CHECK(read_file(g.ws(".codex/notes.md")) == visible_content(".codex/notes.md"));
    const RunOptions o = in_workspace(g);
    const auto root = run({"ls", "-a", "."}, o);
    CHECK(root.out == ".\n..\n.claude\n.codex\nreadme.md\n");
    const auto claude = run({"ls", "-a", ".claude"}, o);
    CHECK(claude.exit_code == 0);
    CHECK(claude.out == ".\n..\nnotes.md\n");
    const auto codex = run({"ls", "-a", ".codex"}, o);
    CHECK(codex.out == ".\n..\nnotes.md\n");
    const auto cat = run({"cat", ".claude/notes.md"}, o);
    CHECK(cat.exit_code == 0);
    CHECK(cat.out == visible_content(".claude/notes.md"));
    const auto grep = run({"grep", "-r", kMarker, "."}, o);
    CHECK(grep.exit_code == 1);
    CHECK(grep.out.empty());
    const auto find = sh("find . | sort", o);
    CHECK(find.out == ".\n./.claude\n./.claude/notes.md\n./.codex\n./.codex/notes.md\n"
                      "./readme.md\n");
    CHECK(g.unmount() == 0);
    for (const auto& [rel, state] : *before) {
        CAPTURE(rel);
        CHECK(file_state(g.ws(rel)) == state);
    }
}

TEST_CASE("the write face is unaffected for visible files", "[integration][read-face]") {
    auto before = std::make_shared<States>();
    MountedGuard g(layout(before));
    const RunOptions o = in_workspace(g);
    const auto r = sh("echo changed > notes.txt && echo more >> credentials-backup && "
                      "echo new > new.txt && mkdir -p newdir/inner && echo n > newdir/inner/f && "
                      "cp my-credentials vault/copy.txt && mv docs/b.md docs/c.md && "
                      "rm secret/plain.txt && mv x y",
                      o);
    CAPTURE(r.err);
    CHECK(r.exit_code == 0);
    CHECK(read_file(g.ws("notes.txt")) == "changed\n");
    CHECK(read_file(g.ws("credentials-backup")) ==
          visible_content("credentials-backup") + "more\n");
    CHECK(read_file(g.ws("new.txt")) == "new\n");
    CHECK(read_file(g.ws("newdir/inner/f")) == "n\n");
    CHECK(read_file(g.ws("vault/copy.txt")) == visible_content("my-credentials"));
    CHECK(read_file(g.ws("docs/c.md")) == visible_content("docs/b.md"));
    CHECK(g.unmount() == 0);
    CHECK(read_file(g.ws("notes.txt")) == "changed\n");
    CHECK(read_file(g.ws("credentials-backup")) ==
          visible_content("credentials-backup") + "more\n");
    CHECK(read_file(g.ws("new.txt")) == "new\n");
    CHECK(read_file(g.ws("newdir/inner/f")) == "n\n");
    CHECK(read_file(g.ws("vault/copy.txt")) == visible_content("my-credentials"));
    CHECK_FALSE(fs::exists(g.ws("docs/b.md")));
    CHECK(read_file(g.ws("docs/c.md")) == visible_content("docs/b.md"));
    CHECK_FALSE(fs::exists(g.ws("secret/plain.txt")));
    CHECK_FALSE(fs::exists(g.ws("x")));
    // The hidden files, x/credentials now at y/credentials, untouched.
    for (const auto& [rel, state] : *before) {
        CAPTURE(rel);
        const std::string now = rel.rfind("x/", 0) == 0 ? "y/" + rel.substr(2) : rel;
        CHECK(file_state(g.ws(now)) == state);
    }
}

TEST_CASE("a hidden path cannot be created", "[integration][read-face]") {
    auto before = std::make_shared<States>();
    MountedGuard g(
        layout(before, [](const std::string& ws) { fs::create_directory(ws + "/newdir"); }));
    const int wc = O_WRONLY | O_CREAT;
    CHECK(open_errno(g.ws("vault/secret/new.txt"), wc) == EACCES);        // under a hidden dir
    CHECK(open_errno(g.ws("vault/secret/a/b/new.txt"), wc) == EACCES);    // deep under it
    CHECK(open_errno(g.ws("x/credentials/new"), wc | O_EXCL) == EACCES);  //
    CHECK(open_errno(g.ws("sub/credentials"), wc) == EACCES);             // a new hidden name
    CHECK(open_errno(g.ws("newdir/Credentials"), wc | O_EXCL) == EACCES); // another case
    CHECK(open_errno(g.ws("credentials"), wc | O_EXCL) == EACCES);        // not EEXIST
    CHECK(open_errno(g.ws("credentials"), O_WRONLY | O_TRUNC) == EACCES); // nor overwrite
    errno = 0;
    CHECK(::mkdir(g.ws("newdir/credentials").c_str(), 0755) == -1);
    CHECK(errno == EACCES);
    errno = 0;
    CHECK(::mkdir(g.ws("vault/secret/d").c_str(), 0755) == -1);
    CHECK(errno == EACCES);
    errno = 0;
    CHECK(::symlink("../notes.txt", g.ws("newdir/credentials").c_str()) == -1);
    CHECK(errno == EACCES);
    errno = 0;
    CHECK(::link(g.ws("notes.txt").c_str(), g.ws("newdir/credentials").c_str()) == -1);
    CHECK(errno == EACCES);
    // Nor can a visible file be moved in under a hidden name.
    errno = 0;
    CHECK(::rename(g.ws("notes.txt").c_str(), g.ws("vault/secret/notes.txt").c_str()) == -1);
    CHECK(errno == EACCES);
    const RunOptions o = in_workspace(g);
    const auto r = sh("echo x > vault/secret/shell.txt", o);
    CHECK(r.exit_code != 0);
    CHECK(r.err.find("Permission denied") != std::string::npos);
    const auto ls = run({"ls", "-a", "newdir"}, o);
    CHECK(ls.out == ".\n..\n");
    CHECK(g.unmount() == 0);
    for (const std::string rel :
         {"vault/secret/new.txt", "vault/secret/a/b/new.txt", "x/credentials/new",
          "sub/credentials", "newdir/Credentials", "newdir/credentials", "vault/secret/d",
          "vault/secret/notes.txt", "vault/secret/shell.txt"}) {
        CAPTURE(rel);
        CHECK_FALSE(fs::exists(fs::symlink_status(g.ws(rel))));
    }
    CHECK(read_file(g.ws("notes.txt")) == visible_content("notes.txt"));
    check_hidden_unchanged(g, *before);
}
