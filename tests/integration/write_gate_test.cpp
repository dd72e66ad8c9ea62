// The write gate against real processes (issue #3): every way to change a guarded `.env` fails
// with EACCES and leaves the underlying file byte-for-byte and mode-for-mode unchanged, checked
// after unmounting.
#include "support/mount_fixture.hpp"
#include "support/process.hpp"

#include <catch2/catch.hpp>

#include <cerrno>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

using namespace guardfs::test;

namespace {

const char* const kPolicy = "deny: [\".env\", \"*.pem\"]\nagent_config: true\n";

MountSpec with_env_file() {
    MountSpec spec;
    spec.policy_yaml = kPolicy;
    spec.setup = [](const std::string& ws) {
        write_file(ws + "/.env", "SECRET=1\n", 0640);
        write_file(ws + "/notes.txt", "notes\n");
        std::filesystem::create_directory(ws + "/sub");
    };
    return spec;
}

// The built-in policy (with its git tier) over a workspace holding these directories.
MountSpec builtin_with_dirs(std::vector<std::string> dirs) {
    MountSpec spec;
    spec.use_policy_file = false;
    spec.setup = [dirs = std::move(dirs)](const std::string& ws) {
        for (const std::string& d : dirs) {
            std::filesystem::create_directories(ws + "/" + d);
        }
    };
    return spec;
}

// Writes a new policy where the mount reads it (MountSpec::policy_yaml's file) and has the
// daemon reload it. Returns `guardfs reload`'s exit code.
int reload_with(const MountedGuard& g, const std::string& yaml) {
    write_file(g.root() + "/policy.yaml", yaml);
    return run({GUARDFS_BIN, "reload", g.ws()}).exit_code;
}

// The workspace itself, below the mount, opened (O_PATH) by the spec's setup after `fill`: a
// test changes the tree through it where the guard does not see it. Closed when the last copy
// goes, also when the test fails.
std::shared_ptr<int> hold_underneath(MountSpec& spec,
                                     std::function<void(const std::string&)> fill = {}) {
    std::shared_ptr<int> under(new int(-1), [](const int* fd) {
        if (*fd >= 0) {
            ::close(*fd);
        }
        delete fd;
    });
    spec.setup = [under, fill = std::move(fill)](const std::string& ws) {
        if (fill) {
            fill(ws);
        }
        *under = ::open(ws.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    };
    return under;
}

} // namespace

TEST_CASE("shell and coreutils cannot change a guarded .env", "[integration][gate]") {
    const char* attack = GENERATE("echo x > .env",      // overwrite
                                  "echo x >> .env",     // append
                                  ": > .env",           // truncate by redirection
                                  "truncate -s 0 .env", // truncate(2)
                                  "rm -f .env",         // unlink
                                  "mv .env moved",      // rename away
                                  "mv notes.txt .env",  // rename onto
                                  "cp notes.txt .env",  // copy onto
                                  "sed -i s/1/2/ .env", // sed -i: a temporary file renamed onto it
                                  "ln .env sub/hard",   // a hard link to it
                                  "ln -s ../.env sub/soft",       // a symlink aimed at it
                                  "chmod 777 .env",               // mode
                                  "touch .env",                   // times
                                  "setfattr -n user.x -v 1 .env", // xattr
                                  "fallocate -l 1M .env", // fallocate through an open for write
                                  "python3 -c \"open('.env','w').write('x')\"",
                                  "python3 -c \"import os; os.rename('notes.txt', '.env')\"");
    MountedGuard g(with_env_file());
    const FileState before = file_state(g.ws(".env"));
    RunOptions o;
    o.cwd = g.ws();
    const auto r = sh(attack, o);
    CAPTURE(attack, r.err);
    CHECK(r.exit_code != 0);
    CHECK(g.unmount() == 0);
    CHECK(file_state(g.ws(".env")) == before);
}

TEST_CASE("system calls on a guarded name fail with EACCES", "[integration][gate][errno]") {
    MountedGuard g(with_env_file());
    errno = 0;
    CHECK(::open(g.ws(".env").c_str(), O_WRONLY) == -1);
    CHECK(errno == EACCES);
    errno = 0;
    CHECK(::open(g.ws(".env").c_str(), O_RDONLY | O_TRUNC) == -1);
    CHECK(errno == EACCES);
    errno = 0;
    CHECK(::unlink(g.ws(".env").c_str()) == -1);
    CHECK(errno == EACCES);
    errno = 0;
    CHECK(::open(g.ws("sub/.ENV").c_str(), O_WRONLY | O_CREAT, 0644) == -1); // another case
    CHECK(errno == EACCES);
    errno = 0;
    CHECK(::mkdir(g.ws("sub/key.pem").c_str(), 0755) == -1);
    CHECK(errno == EACCES);
    // and reading it still works: this is the write face
    CHECK(read_file(g.ws(".env")) == "SECRET=1\n");
    CHECK(g.unmount() == 0);
    CHECK_FALSE(std::filesystem::exists(g.ws("sub/.ENV")));
    CHECK_FALSE(std::filesystem::exists(g.ws("sub/key.pem")));
}

// tar sets the owner and times of each file it creates, and the judge does not walk the path
// again for those when the create settled it (Decision::settled, kept in the inode). These
// tests hold that memory to the judge's answers: whatever makes the path or the policy another
// than the create's must send the next operation to the judge's walk.

TEST_CASE("a file made through the mount is judged again once its path changes underneath",
          "[integration][gate][settled]") {
    MountSpec spec;
    spec.policy_yaml = "deny: [\"b/x\"]\n";
    const auto under = hold_underneath(
        spec, [](const std::string& ws) { std::filesystem::create_directory(ws + "/a"); });
    MountedGuard g(spec);
    REQUIRE(*under >= 0);
    CHECK(write_text(g.ws("a/x"), "1") == 0);
    CHECK(errno_of(::chmod(g.ws("a/x").c_str(), 0600)) == 0);
    CHECK(errno_of(::utimensat(AT_FDCWD, g.ws("a/x").c_str(), nullptr, 0)) == 0);
    // Renamed where the guard does not see it (through the mount, renaming `a` to `b` is
    // itself refused: `b/x` runs through the new name): the inode's path is now guarded.
    REQUIRE(errno_of(::renameat(*under, "a", *under, "b")) == 0);
    CHECK(errno_of(::chmod(g.ws("b/x").c_str(), 0644)) == EACCES);
    CHECK(errno_of(::utimensat(AT_FDCWD, g.ws("b/x").c_str(), nullptr, 0)) == EACCES);
    CHECK(errno_of(::truncate(g.ws("b/x").c_str(), 0)) == EACCES);
    CHECK(open_errno(g.ws("b/x"), O_WRONLY) == EACCES);
    CHECK(errno_of(::setxattr(g.ws("b/x").c_str(), "user.k", "v", 1, 0)) == EACCES);
    CHECK(g.unmount() == 0);
    CHECK((file_state(g.ws("b/x")).mode & 07777) == 0600);
    CHECK(read_file(g.ws("b/x")) == "1");
}

TEST_CASE("a reload sends every later operation on a file made before it to the judge",
          "[integration][gate][settled][reload]") {
    MountSpec spec;
    spec.policy_yaml = "deny: [\"first\"]\n";
    MountedGuard g(spec);
    CHECK(write_text(g.ws("y"), "1") == 0);
    CHECK(errno_of(::mkdir(g.ws("d").c_str(), 0755)) == 0);
    CHECK(errno_of(::chmod(g.ws("y").c_str(), 0600)) == 0);
    CHECK(errno_of(::chmod(g.ws("d").c_str(), 0700)) == 0);
    REQUIRE(reload_with(g, "deny: [\"y\", \"d\"]\n") == 0);
    CHECK(errno_of(::chmod(g.ws("y").c_str(), 0644)) == EACCES);
    CHECK(errno_of(::chmod(g.ws("d").c_str(), 0755)) == EACCES);
    CHECK(errno_of(::utimensat(AT_FDCWD, g.ws("y").c_str(), nullptr, 0)) == EACCES);
    CHECK(open_errno(g.ws("y"), O_WRONLY) == EACCES);
    CHECK(errno_of(::setxattr(g.ws("y").c_str(), "user.k", "v", 1, 0)) == EACCES);
    CHECK(g.unmount() == 0);
    CHECK((file_state(g.ws("y")).mode & 07777) == 0600);
}

TEST_CASE("a renamed file's new path is judged again after a reload, and guarded ends stay so",
          "[integration][gate][settled][reload]") {
    // A settled rename is remembered for the new path (fusefs remember_renamed), and a rename's
    // ends take the tokens remembered for their paths: neither may let a guarded name through.
    MountSpec spec;
    spec.policy_yaml = "deny: [.env]\nread: {deny: [credentials]}\n";
    MountedGuard g(spec);
    CHECK(write_text(g.ws("a"), "1") == 0);
    CHECK(errno_of(::rename(g.ws("a").c_str(), g.ws("b").c_str())) == 0);
    CHECK(errno_of(::rename(g.ws("b").c_str(), g.ws("c").c_str())) == 0);
    CHECK(errno_of(::rename(g.ws("c").c_str(), g.ws(".env").c_str())) == EACCES);
    CHECK(errno_of(::rename(g.ws("c").c_str(), g.ws("credentials").c_str())) == EACCES);
    CHECK(write_text(g.ws("d"), "2") == 0);
    CHECK(errno_of(::rename(g.ws("d").c_str(), g.ws("b").c_str())) == 0);
    REQUIRE(reload_with(g, "deny: [b, c]\n") == 0);
    CHECK(errno_of(::unlink(g.ws("b").c_str())) == EACCES);
    CHECK(errno_of(::unlink(g.ws("c").c_str())) == EACCES);
    CHECK(errno_of(::rename(g.ws("b").c_str(), g.ws("e").c_str())) == EACCES);
    CHECK(errno_of(::rename(g.ws("c").c_str(), g.ws("e").c_str())) == EACCES);
    CHECK(g.unmount() == 0);
    CHECK(read_file(g.ws("b")) == "2");
    CHECK(read_file(g.ws("c")) == "1");
    CHECK_FALSE(std::filesystem::exists(g.ws(".env")));
    CHECK_FALSE(std::filesystem::exists(g.ws("credentials")));
    CHECK_FALSE(std::filesystem::exists(g.ws("e")));
}

TEST_CASE("a new gitdir pointer or commondir is not settled by its create",
          "[integration][gate][settled][git]") {
    MountedGuard g(builtin_with_dirs({".git/worktrees/t", "sub"}));
    // Both may be created once (git worktree add, submodule clones) and never changed after.
    CHECK(write_text(g.ws("sub/.git"), "gitdir: ../.git/worktrees/t\n", O_CREAT | O_EXCL) == 0);
    CHECK(write_text(g.ws(".git/worktrees/t/commondir"), "../..\n", O_CREAT | O_EXCL) == 0);
    CHECK(errno_of(::chmod(g.ws("sub/.git").c_str(), 0600)) == EACCES);
    CHECK(errno_of(::utimensat(AT_FDCWD, g.ws("sub/.git").c_str(), nullptr, 0)) == EACCES);
    CHECK(open_errno(g.ws("sub/.git"), O_WRONLY) == EACCES);
    CHECK(open_errno(g.ws(".git/worktrees/t/commondir"), O_WRONLY) == EACCES);
    CHECK(errno_of(::truncate(g.ws(".git/worktrees/t/commondir").c_str(), 0)) == EACCES);
    CHECK(g.unmount() == 0);
    CHECK(read_file(g.ws("sub/.git")) == "gitdir: ../.git/worktrees/t\n");
    CHECK(read_file(g.ws(".git/worktrees/t/commondir")) == "../..\n");
}

TEST_CASE("with every allow audited, a settled file's later operations are logged too",
          "[integration][gate][settled][audit]") {
    MountSpec spec;
    spec.policy_yaml = "deny: [\"first\"]\naudit: {all: true}\n";
    spec.extra_args = {"--audit-log", "{root}/audit.jsonl"};
    MountedGuard g(spec);
    CHECK(write_text(g.ws("f"), "1") == 0);
    CHECK(errno_of(::chmod(g.ws("f").c_str(), 0600)) == 0);
    CHECK(errno_of(::utimensat(AT_FDCWD, g.ws("f").c_str(), nullptr, 0)) == 0);
    CHECK(g.unmount() == 0);
    const std::string log = read_file(g.root() + "/audit.jsonl");
    CAPTURE(log);
    for (const char* op : {"\"op\":\"create\"", "\"op\":\"chmod\"", "\"op\":\"utimes\""}) {
        CAPTURE(op);
        CHECK(log.find(op) != std::string::npos);
    }
}

TEST_CASE("a file given another name through the mount is judged by every name again",
          "[integration][gate][settled][git]") {
    // A new `.git` may be created (a gitdir pointer), also as a hard link; once it exists the
    // file is a pointer, and a change to it by its first name must be refused too.
    MountedGuard g(builtin_with_dirs({"sub"}));
    CHECK(write_text(g.ws("x"), "gitdir: elsewhere\n") == 0);
    CHECK(errno_of(::chmod(g.ws("x").c_str(), 0600)) == 0);
    REQUIRE(errno_of(::link(g.ws("x").c_str(), g.ws("sub/.git").c_str())) == 0);
    CHECK(errno_of(::chmod(g.ws("x").c_str(), 0644)) == EACCES);
    CHECK(errno_of(::utimensat(AT_FDCWD, g.ws("x").c_str(), nullptr, 0)) == EACCES);
    CHECK(open_errno(g.ws("x"), O_WRONLY) == EACCES);
    CHECK(g.unmount() == 0);
    CHECK((file_state(g.ws("x")).mode & 07777) == 0600);
}

// A request that names an entry (unlink, rmdir, a new file) reaches no inode; the gate keeps the
// paths it settled lately (Fs::settled_paths) so that a temporary file removed soon after it was
// made is not walked again. What makes the path or the policy another must be judged.

TEST_CASE("a name made lately is judged again when removed or made again after a reload",
          "[integration][gate][settled][reload]") {
    MountSpec spec;
    spec.policy_yaml = "deny: [\"first\"]\n";
    MountedGuard g(spec);
    CHECK(write_text(g.ws("y"), "1") == 0);
    CHECK(errno_of(::mkdir(g.ws("d").c_str(), 0755)) == 0);
    CHECK(write_text(g.ws("z"), "1") == 0);
    CHECK(errno_of(::unlink(g.ws("z").c_str())) == 0);
    CHECK(write_text(g.ws("z"), "2") == 0); // made again at a settled path
    CHECK(errno_of(::unlink(g.ws("z").c_str())) == 0);
    REQUIRE(reload_with(g, "deny: [\"y\", \"d\", \"z\"]\n") == 0);
    CHECK(errno_of(::unlink(g.ws("y").c_str())) == EACCES);
    CHECK(errno_of(::rmdir(g.ws("d").c_str())) == EACCES);
    CHECK(write_text(g.ws("z"), "3", O_CREAT | O_EXCL) == EACCES);
    CHECK(errno_of(::mkdir(g.ws("z").c_str(), 0755)) == EACCES);
    CHECK(g.unmount() == 0);
    CHECK(read_file(g.ws("y")) == "1");
    CHECK(std::filesystem::is_directory(g.ws("d")));
    CHECK_FALSE(std::filesystem::exists(g.ws("z")));
}

TEST_CASE("a removal is judged by its whole path, not by a name made lately elsewhere",
          "[integration][gate][settled]") {
    MountSpec spec;
    spec.policy_yaml = "deny: [\"b/x\", \"c/x\"]\n";
    const auto under = hold_underneath(spec, [](const std::string& ws) {
        std::filesystem::create_directory(ws + "/a");
        std::filesystem::create_directory(ws + "/b");
    });
    MountedGuard g(spec);
    REQUIRE(*under >= 0);
    CHECK(write_text(g.ws("a/x"), "1") == 0);
    // b/x made where the guard does not see it: the same name in another directory.
    const int fd = ::openat(*under, "b/x", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    REQUIRE(fd >= 0);
    ::close(fd);
    CHECK(errno_of(::unlink(g.ws("b/x").c_str())) == EACCES);
    // a renamed to c underneath: the file made as a/x is at a guarded path now.
    REQUIRE(errno_of(::renameat(*under, "a", *under, "c")) == 0);
    CHECK(errno_of(::unlink(g.ws("c/x").c_str())) == EACCES);
    CHECK(g.unmount() == 0);
    CHECK(read_file(g.ws("c/x")) == "1");
    CHECK(std::filesystem::exists(g.ws("b/x")));
}

TEST_CASE("a name made lately is refused removal once guardfs's audit log lies there",
          "[integration][gate][settled][self-protection]") {
    MountSpec spec;
    spec.policy_yaml = "deny: [\".env\"]\n";
    spec.extra_args = {"--audit-log", "{ws}/audit.log"};
    const auto under = hold_underneath(spec);
    MountedGuard g(spec);
    REQUIRE(*under >= 0);
    CHECK(write_text(g.ws("f"), "1") == 0);
    CHECK(write_text(g.ws(".env"), "x") == EACCES); // the log holds a line now
    // The audit log moved onto f underneath: f is guardfs's own file by identity.
    REQUIRE(errno_of(::renameat(*under, "audit.log", *under, "f")) == 0);
    CHECK(errno_of(::unlink(g.ws("f").c_str())) == EACCES);
    CHECK(g.unmount() == 0);
    CHECK(read_file(g.ws("f")).find("\".env\"") != std::string::npos);
}

TEST_CASE("a hard link to guardfs's policy made underneath is refused removal through the mount",
          "[integration][gate][self-protection]") {
    // The policy file lies outside the workspace, so removals skip the stat that finds a file's
    // identity until a lookup under the mount meets one of guardfs's files.
    MountSpec spec;
    spec.policy_yaml = "deny: [\".env\"]\n";
    const auto under = hold_underneath(spec);
    MountedGuard g(spec);
    REQUIRE(*under >= 0);
    const std::string policy = g.root() + "/policy.yaml";
    REQUIRE(std::filesystem::exists(policy));
    CHECK(write_text(g.ws("plain"), "1") == 0);
    CHECK(errno_of(::unlink(g.ws("plain").c_str())) == 0);
    REQUIRE(errno_of(::linkat(AT_FDCWD, policy.c_str(), *under, "p", 0)) == 0);
    RunOptions o;
    o.cwd = g.ws();
    CHECK(sh("rm -f p", o).exit_code != 0);
    CHECK(errno_of(::unlink(g.ws("p").c_str())) == EACCES);
    CHECK(errno_of(::rename(g.ws("p").c_str(), g.ws("q").c_str())) == EACCES);
    CHECK(g.unmount() == 0);
    CHECK(std::filesystem::hard_link_count(policy) == 2);
}

// A name a lookup found missing is often made next. Whatever the gate remembers of such a name
// (docs/decisions/014 tells of judging it right after the lookup), the create must be judged by
// the policy of its own time and the path where it lands.

TEST_CASE("a name looked up before a reload is judged by the new policy when it is made",
          "[integration][gate][settled][reload]") {
    MountSpec spec;
    spec.policy_yaml = "deny: [\"first\"]\n";
    MountedGuard g(spec);

    struct stat st {};

    for (const char* name : {"n1", "n2", "n3"}) {
        CHECK(errno_of(::stat(g.ws(name).c_str(), &st)) == ENOENT); // a negative lookup
    }
    REQUIRE(reload_with(g, "deny: [\"n1\", \"n2\", \"n3\"]\n") == 0);
    CHECK(write_text(g.ws("n1"), "x", O_CREAT | O_EXCL) == EACCES);
    CHECK(errno_of(::mkdir(g.ws("n2").c_str(), 0755)) == EACCES);
    CHECK(errno_of(::symlink("target", g.ws("n3").c_str())) == EACCES);
    CHECK(g.unmount() == 0);
    for (const char* name : {"n1", "n2", "n3"}) {
        CHECK_FALSE(std::filesystem::exists(std::filesystem::symlink_status(g.ws(name))));
    }
}

TEST_CASE("a name looked up in a directory renamed underneath is judged where it lands",
          "[integration][gate][settled]") {
    MountSpec spec;
    spec.policy_yaml = "deny: [\"c/x\"]\n";
    const auto under = hold_underneath(
        spec, [](const std::string& ws) { std::filesystem::create_directory(ws + "/a"); });
    MountedGuard g(spec);
    REQUIRE(*under >= 0);

    struct stat st {};

    CHECK(errno_of(::stat(g.ws("a/x").c_str(), &st)) == ENOENT);
    REQUIRE(errno_of(::renameat(*under, "a", *under, "c")) == 0);
    CHECK(write_text(g.ws("c/x"), "1", O_CREAT | O_EXCL) == EACCES);
    CHECK(write_text(g.ws("c/y"), "1", O_CREAT | O_EXCL) == 0);
    CHECK(g.unmount() == 0);
    CHECK_FALSE(std::filesystem::exists(g.ws("c/x")));
}

TEST_CASE("creates racing the judgement of their own lookups get the policy's answers",
          "[integration][gate][settled]") {
    MountSpec spec;
    spec.policy_yaml = "deny: [\"*.pem\", \"secret*\"]\n";
    spec.setup = [](const std::string& ws) {
        std::filesystem::create_directory(ws + "/d");
    };
    MountedGuard g(spec);
    constexpr int kThreads = 4;
    constexpr int kNames = 400;
    std::vector<int> wrong(kThreads, 0);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&, t] {
            for (int i = 0; i < kNames; ++i) {
                const std::string base = "d/t" + std::to_string(t) + "-" + std::to_string(i);
                const bool guarded = i % 3 == 0;
                const std::string name = i % 2 == 0
                                             ? base + (guarded ? ".pem" : ".txt")
                                             : (guarded ? "d/secret" : "d/public") +
                                                   std::to_string(t) + "-" + std::to_string(i);
                const int err = i % 4 == 3 ? errno_of(::mkdir(g.ws(name).c_str(), 0755))
                                           : write_text(g.ws(name), "1", O_CREAT | O_EXCL);
                wrong[static_cast<std::size_t>(t)] += (err == EACCES) != guarded ? 1 : 0;
            }
        });
    }
    for (std::thread& th : threads) {
        th.join();
    }
    CHECK(wrong == std::vector<int>(kThreads, 0));
    CHECK(g.unmount() == 0);
    std::size_t guarded_on_disk = 0;
    for (const auto& e : std::filesystem::directory_iterator(g.ws("d"))) {
        const std::string n = e.path().filename().string();
        guarded_on_disk += n.ends_with(".pem") || n.starts_with("secret") ? 1U : 0U;
    }
    CHECK(guarded_on_disk == 0);
}

TEST_CASE("the data root exempts writes through a mount point apart from the workspace, however "
          "it is spelled",
          "[integration][gate][dataroot]") {
    // design §5 and §11 (guardfs mount WORKSPACE MOUNTPOINT): the agent writes under the mount
    // point, the daemon also judges the workspace's own path; a root spelled either way names
    // the same directory in both views.
    const std::string spelled = GENERATE(as<std::string>{}, "{ws}", "{mnt}");
    const bool separate = GENERATE(true, false);
    CAPTURE(spelled, separate);
    MountSpec spec = builtin_with_dirs({".sema/engine-data/x/.ssh"});
    spec.separate_mountpoint = separate;
    spec.extra_args = {"--data-root", spelled + "/.sema/engine-data"};
    MountedGuard g(spec);
    CHECK(write_text(g.mnt(".sema/engine-data/memory.md"), "today\n") == 0);
    CHECK(read_file(g.mnt(".sema/engine-data/memory.md")) == "today\n");
    CHECK(write_text(g.mnt(".sema/engine-data/x/.ssh/id_rsa"), "key\n") == EACCES);
    CHECK(write_text(g.mnt(".sema/notes.md"), "mine\n") == EACCES); // ask, and no approver
    REQUIRE(g.unmount() == 0);
    CHECK(read_file(g.ws(".sema/engine-data/memory.md")) == "today\n");
    CHECK_FALSE(file_state(g.ws(".sema/engine-data/x/.ssh/id_rsa")).exists);
    CHECK_FALSE(file_state(g.ws(".sema/notes.md")).exists);
}

TEST_CASE("a symlinked data root retargeted while mounted is followed at the next write",
          "[integration][gate][dataroot]") {
    // design §5: each spelling is canonicalized when a decision needs it. A path the exemption
    // had let through was remembered as settled (matching nothing), so after the root's link
    // was aimed elsewhere the old directory stayed writable without a decision.
    MountSpec spec;
    spec.policy_yaml = "ask: [\".sema\"]\n";
    spec.setup = [](const std::string& ws) {
        std::filesystem::create_directories(ws + "/.sema/one");
        std::filesystem::create_directories(ws + "/.sema/two");
        std::filesystem::create_directory_symlink(ws + "/.sema/one",
                                                  std::filesystem::path(ws).parent_path() / "data");
    };
    spec.extra_args = {"--data-root", "{root}/data"};
    MountedGuard g(spec);
    CHECK(write_text(g.ws(".sema/one/a.md"), "1\n") == 0);
    CHECK(write_text(g.ws(".sema/one/a.md"), "2\n") == 0);
    CHECK(write_text(g.ws(".sema/one/a.md"), "3\n", O_APPEND) == 0);
    CHECK(write_text(g.ws(".sema/two/b.md"), "x\n") == EACCES); // ask, and no approver
    const std::string link = g.root() + "/data";
    std::filesystem::remove(link);
    std::filesystem::create_directory_symlink(g.ws(".sema/two"), link);
    CHECK(write_text(g.ws(".sema/one/a.md"), "4\n") == EACCES);
    CHECK(write_text(g.ws(".sema/one/a.md"), "5\n", O_APPEND) == EACCES);
    CHECK(write_text(g.ws(".sema/two/b.md"), "y\n") == 0);
    REQUIRE(g.unmount() == 0);
    CHECK(read_file(g.ws(".sema/one/a.md")) == "2\n3\n");
}

TEST_CASE("a file keeps a guarded name's verdict, and gets a new name's, when names change "
          "underneath",
          "[integration][gate][hardlink]") {
    // design §3: once any name of an inode was guarded, the inode carries that verdict, and every
    // name the guard has seen for it counts. The daemon holds a file by the name it first met;
    // when that name is removed underneath while another keeps the file, it was judged by the
    // kernel's "<path> (deleted)" until 2026-12-07.
    MountSpec spec;
    spec.policy_yaml = "deny: [\".netrc\", \".env\"]\n";
    const auto under = hold_underneath(spec, [](const std::string& ws) {
        std::filesystem::create_directory(ws + "/q");
        write_file(ws + "/q/.netrc", "machine m password p\n");
        write_file(ws + "/notes", "n\n");
        write_file(ws + "/a", "a\n");
    });
    MountedGuard g(spec);
    REQUIRE(*under >= 0);

    struct stat st {};

    // .netrc met by the guard, then given another name and removed, underneath
    REQUIRE(::stat(g.ws("q/.netrc").c_str(), &st) == 0);
    REQUIRE(errno_of(::linkat(*under, "q/.netrc", *under, "p", 0)) == 0);
    REQUIRE(errno_of(::unlinkat(*under, "q/.netrc", 0)) == 0);
    CHECK(write_text(g.ws("p"), "x\n", O_APPEND) == EACCES);
    // renamed through the mount onto the kernel's mark of its former name, which then exists
    CHECK(errno_of(::rename(g.ws("p").c_str(), g.ws("q/.netrc (deleted)").c_str())) == 0);
    CHECK(write_text(g.ws("q/.netrc (deleted)"), "x\n", O_APPEND) == EACCES);
    // notes met by the guard, then named .env and its old name removed, underneath
    REQUIRE(::stat(g.ws("notes").c_str(), &st) == 0);
    REQUIRE(errno_of(::linkat(*under, "notes", *under, ".env", 0)) == 0);
    REQUIRE(errno_of(::unlinkat(*under, "notes", 0)) == 0);
    CHECK(write_text(g.ws(".env"), "x\n", O_APPEND) == EACCES);
    // the same through the mount, unguarded names: writing goes on
    CHECK(errno_of(::link(g.ws("a").c_str(), g.ws("b").c_str())) == 0);
    CHECK(errno_of(::unlink(g.ws("a").c_str())) == 0);
    CHECK(write_text(g.ws("b"), "b\n", O_APPEND) == 0);
    CHECK(g.unmount() == 0);
    CHECK(read_file(g.ws("q/.netrc (deleted)")) == "machine m password p\n");
    CHECK(read_file(g.ws(".env")) == "n\n");
    CHECK(read_file(g.ws("b")) == "a\nb\n");
}

TEST_CASE("a new symlink is judged where the caller's kernel would resolve it, with a mount point "
          "apart from the workspace too",
          "[integration][gate][symlink]") {
    // design §3 (links_out, a link aimed at a guarded path) and §7 (guardfs's own files by
    // name). Apart from the mount point, the workspace's own path is the tree below the guard:
    // a link there leaves the mounted tree, and a link spelled under the mount point reaches
    // files the daemon knows by their workspace spelling.
    const bool separate = GENERATE(false, true);
    CAPTURE(separate);
    MountSpec spec;
    spec.policy_yaml = "links_out: deny\ndeny: [\".env\"]\n";
    spec.separate_mountpoint = separate;
    spec.extra_args = {"--audit-log", "{ws}/audit.jsonl"};
    spec.setup = [](const std::string& ws) {
        write_file(ws + "/ok.txt", "ok\n");
        std::filesystem::create_directory(ws + "/sub");
    };
    MountedGuard g(spec);
    auto symlink = [](const std::string& target, const std::string& at) {
        return errno_of(::symlink(target.c_str(), at.c_str()));
    };
    // A symlink given a second name or moved is a new symlink where it lands: its relative
    // target is aimed anew from there (../ok.txt from the top leaves the tree).
    REQUIRE(symlink("../../ok.txt", g.mnt("sub/up2")) == EACCES); // leaves from sub/ already
    REQUIRE(symlink("../ok.txt", g.mnt("sub/up")) == 0);
    CHECK(errno_of(::linkat(AT_FDCWD, g.mnt("sub/up").c_str(), AT_FDCWD, g.mnt("up-linked").c_str(),
                            0)) == EACCES);
    CHECK(errno_of(::rename(g.mnt("sub/up").c_str(), g.mnt("up-moved").c_str())) == EACCES);
    CHECK(errno_of(::rename(g.mnt("sub/up").c_str(), g.mnt("sub/up-renamed").c_str())) == 0);
    CHECK(errno_of(::linkat(AT_FDCWD, g.mnt("sub/up-renamed").c_str(), AT_FDCWD,
                            g.mnt("sub/up-linked").c_str(), 0)) == 0);
    CHECK(symlink(g.mnt("audit.jsonl"), g.mnt("to-audit")) == EACCES);
    CHECK(symlink(g.mnt(".env"), g.mnt("to-env")) == EACCES);
    CHECK(symlink(g.mnt("ok.txt"), g.mnt("in-abs")) == 0);
    CHECK(symlink("ok.txt", g.mnt("in-rel")) == 0);
    CHECK(symlink("/etc/passwd", g.mnt("out")) == EACCES);
    // the workspace's own path: inside when the mount is over it, outside when it is apart
    const int expected = separate ? EACCES : 0;
    CHECK(symlink(g.ws("ok.txt"), g.mnt("ws-abs")) == expected);
    CHECK(symlink("../ws/ok.txt", g.mnt("ws-rel")) == expected);
    CHECK(g.unmount() == 0);
}
