// Ordinary work under a guard (issue #3): with `.env`, `*.pem` and the agent-configuration tier
// guarded (and the git tier on, as by default in a file), everything else an agent does in a
// workspace behaves as on a plain directory. Results are compared with expectations, and where
// natural with the same operations on a native temporary directory; what was written is checked
// again on the underlying disk after unmounting.
#include "support/mount_fixture.hpp"
#include "support/process.hpp"
#include "support/temp_dir.hpp"

#include <catch2/catch.hpp>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace guardfs::test;

namespace {

namespace fs = std::filesystem;

const char* const kPolicy = "deny: [\".env\", \"*.pem\"]\n";

RunOptions in_dir(const std::string& dir, std::chrono::seconds timeout = std::chrono::seconds(60)) {
    RunOptions o;
    o.cwd = dir;
    o.timeout = timeout;
    return o;
}

// Every entry below dir (relative path, type, mode, link count, symlink target) and the
// sha256 of every regular file: two directories with the same listing hold the same tree.
std::string listing(const std::string& dir) {
    const auto entries = sh("find . -mindepth 1 -printf '%y %m %n %p -> %l\\n' | LC_ALL=C "
                            "sort && find . -type f -exec sha256sum {} + | LC_ALL=C sort",
                            in_dir(dir));
    REQUIRE(entries.ok());
    return entries.out;
}

struct stat stat_of(const std::string& path) {
    struct stat st {};

    REQUIRE(::lstat(path.c_str(), &st) == 0);
    return st;
}

void write_all(int fd, const std::string& bytes) {
    REQUIRE(::write(fd, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size()));
}

} // namespace

TEST_CASE("creating editing renaming and deleting files and directories works as natively",
          "[integration][ordinary][files]") {
    // The same script on a native directory and in the mount; the trees must match.
    const std::string script = R"(set -e
mkdir -p a/b/c empty/x/y
printf 'one\n' > a/f1
printf 'two\n' > a/b/f2
echo more >> a/f1
mv a/b/f2 a/b/c/f2moved
mv a/b a/bb
cp a/f1 a/f1copy
sed -i s/one/uno/ a/f1
printf 'saved\n' > a/.f1.swp && mv a/.f1.swp a/f1copy
rm a/f1copy
rmdir empty/x/y empty/x
rm -r empty
chmod 600 a/f1
chmod 750 a/bb
printf 'envrc\n' > .envrc
printf 'env\n' > env
mkdir -p .env.d credentials-backup
printf 'x\n' > .env.d/local
printf 'p\n' > cert.pem.txt
printf 'p\n' > pem
printf 'm\n' > claude-notes.md
printf 'sparse' | dd of=a/dd.bin bs=1 seek=5000 status=none
truncate -s 100 a/bb/c/f2moved
ln -s bb/c/f2moved a/link
mkfifo a/fifo
touch -d @1000000000 a/f1
mkdir tree && cp -r a tree/copy && rm -rf tree/copy/bb && mv tree tree2
)";
    const TempDir native;
    const auto n = sh(script, in_dir(native.path()));
    REQUIRE(n.ok());
    const std::string expected = listing(native.path());

    MountedGuard g(kPolicy);
    const auto r = sh(script, in_dir(g.ws()));
    CAPTURE(r.err);
    REQUIRE(r.ok());
    CHECK(listing(g.ws()) == expected);
    CHECK(stat_of(g.ws("a/f1")).st_mtim.tv_sec == 1000000000);
    CHECK(g.unmount() == 0);
    CHECK(listing(g.ws()) == expected);
    CHECK(stat_of(g.ws("a/f1")).st_mtim.tv_sec == 1000000000);
    CHECK(read_file(g.ws("a/f1")) == "uno\nmore\n");
}

TEST_CASE("hard links and symlinks among ordinary files work with the right link counts",
          "[integration][ordinary][links]") {
    // Returns a transcript of what was observed; the same steps run natively and in the mount.
    auto work = [](const std::string& d) {
        std::string t;
        write_file(d + "/f", "first\n");
        REQUIRE(::link((d + "/f").c_str(), (d + "/g").c_str()) == 0);
        t += "f:" + std::to_string(stat_of(d + "/f").st_nlink) + " ";
        t += "g:" + std::to_string(stat_of(d + "/g").st_nlink) + " ";
        REQUIRE(::mkdir((d + "/sub").c_str(), 0755) == 0);
        REQUIRE(::link((d + "/g").c_str(), (d + "/sub/h").c_str()) == 0);
        t += "h:" + std::to_string(stat_of(d + "/sub/h").st_nlink) + " ";
        t += "same:" +
             std::to_string(
                 static_cast<int>(stat_of(d + "/f").st_ino == stat_of(d + "/sub/h").st_ino)) +
             " ";
        {
            const int fd = ::open((d + "/sub/h").c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
            REQUIRE(fd >= 0);
            write_all(fd, "via h\n");
            ::close(fd);
        }
        t += "f=" + read_file(d + "/f");
        REQUIRE(::symlink("f", (d + "/s").c_str()) == 0);
        REQUIRE(::symlink("../g", (d + "/sub/s2").c_str()) == 0);
        REQUIRE(::symlink("sub", (d + "/sdir").c_str()) == 0);
        t += "readlink=" + fs::read_symlink(d + "/sub/s2").string() + " ";
        {
            const int fd = ::open((d + "/s").c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
            REQUIRE(fd >= 0);
            write_all(fd, "via s\n");
            ::close(fd);
        }
        write_file(d + "/sdir/through-dir-link", "t\n");
        t += "s2=" + read_file(d + "/sub/s2");
        REQUIRE(::unlink((d + "/f").c_str()) == 0);
        t += "g:" + std::to_string(stat_of(d + "/g").st_nlink) + " ";
        t += "dangling:" + std::to_string(static_cast<int>(fs::exists(d + "/s"))) + " ";
        REQUIRE(::rename((d + "/g").c_str(), (d + "/f").c_str()) == 0);
        t += "revived=" + read_file(d + "/s");
        REQUIRE(::unlink((d + "/sub/h").c_str()) == 0);
        t += "f:" + std::to_string(stat_of(d + "/f").st_nlink) + " ";
        REQUIRE(::unlink((d + "/s").c_str()) == 0);
        t += "f-after-unlinking-symlink:" + std::to_string(stat_of(d + "/f").st_nlink);
        return t;
    };
    const std::string expected =
        "f:2 g:2 h:3 same:1 f=first\nvia h\nreadlink=../g s2=first\nvia h\nvia s\n"
        "g:2 dangling:0 revived=first\nvia h\nvia s\nf:1 f-after-unlinking-symlink:1";
    const TempDir native;
    const std::string native_transcript = work(native.path());
    CHECK(native_transcript == expected);

    MountedGuard g(kPolicy);
    CHECK(work(g.ws()) == native_transcript);
    const std::string in_mount = listing(g.ws());
    CHECK(in_mount == listing(native.path()));
    CHECK(g.unmount() == 0);
    CHECK(listing(g.ws()) == in_mount);
    CHECK(read_file(g.ws("sub/through-dir-link")) == "t\n");
}

TEST_CASE("writes through a shared mapping reach the file", "[integration][ordinary][mmap]") {
    MountedGuard g(kPolicy);
    const std::string path = g.ws("mapped.bin");
    const std::size_t size = 3 * 4096 + 100;
    std::string expected(size, '\0');
    for (std::size_t i = 0; i < size; ++i) {
        expected[i] = static_cast<char>('a' + (i * 7) % 26);
    }
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    REQUIRE(fd >= 0);
    REQUIRE(::ftruncate(fd, static_cast<off_t>(size)) == 0);
    void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    REQUIRE(p != MAP_FAILED);
    std::memcpy(p, expected.data(), size);
    CHECK(::msync(p, size, MS_SYNC) == 0);
    CHECK(::munmap(p, size) == 0);
    CHECK(::close(fd) == 0);
    CHECK(read_file(path) == expected);
    CHECK(g.unmount() == 0);
    CHECK(read_file(path) == expected);
}

TEST_CASE("two descriptors opened with O_APPEND interleave as natively",
          "[integration][ordinary][append]") {
    auto work = [](const std::string& path) {
        write_file(path, "start\n");
        const int a = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
        const int b = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
        REQUIRE(a >= 0);
        REQUIRE(b >= 0);
        for (int i = 0; i < 50; ++i) {
            write_all(a, "a" + std::to_string(i) + "\n");
            write_all(b, "bb" + std::to_string(i) + "\n");
        }
        ::close(a);
        ::close(b);
        return read_file(path);
    };
    std::string expected = "start\n";
    for (int i = 0; i < 50; ++i) {
        expected += "a" + std::to_string(i) + "\nbb" + std::to_string(i) + "\n";
    }
    const TempDir native;
    CHECK(work(native / "log") == expected);
    MountedGuard g(kPolicy);
    CHECK(work(g.ws("log")) == expected);
    CHECK(g.unmount() == 0);
    CHECK(read_file(g.ws("log")) == expected);
}

TEST_CASE("a sparse file keeps its size and its holes", "[integration][ordinary][sparse]") {
    MountedGuard g(kPolicy);
    const std::string path = g.ws("sparse.bin");
    const off_t far = off_t{1} << 30; // 1 GiB in
    const std::string tail = "the end\n";
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    REQUIRE(fd >= 0);
    REQUIRE(::lseek(fd, far, SEEK_SET) == far);
    write_all(fd, tail);
    ::close(fd);
    const off_t size = far + static_cast<off_t>(tail.size());
    auto check = [&]() {
        const struct stat st = stat_of(path);
        CHECK(st.st_size == size);
        CHECK(st.st_blocks * 512 <= 1024 * 1024); // far less than the size: the hole stays
        const int r = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        REQUIRE(r >= 0);
        std::string head(4096, 'x');
        CHECK(::pread(r, head.data(), head.size(), 0) == 4096);
        CHECK(head == std::string(4096, '\0'));
        std::string end(tail.size(), 'x');
        CHECK(::pread(r, end.data(), end.size(), far) == static_cast<ssize_t>(tail.size()));
        CHECK(end == tail);
        ::close(r);
    };
    check();
    CHECK(g.unmount() == 0);
    check();
}

TEST_CASE("a 1 GiB file written with dd reads back with the same sha256",
          "[integration][ordinary][large]") {
    MountedGuard g(kPolicy);
    const std::string src = g.root() + "/source.bin"; // outside the workspace
    const auto timeout = std::chrono::seconds(300);
    REQUIRE(
        sh("dd if=/dev/urandom of='" + src + "' bs=1M count=1024 status=none", in_dir("/", timeout))
            .ok());
    auto sha = [&](const std::string& path) {
        const auto r = run({"sha256sum", path}, in_dir("/", timeout));
        REQUIRE(r.ok());
        return r.out.substr(0, 64);
    };
    const std::string expected = sha(src);
    const auto dd = run({"dd", "if=" + src, "of=" + g.ws("big.bin"), "bs=1M", "status=none"},
                        in_dir("/", timeout));
    CAPTURE(dd.err);
    REQUIRE(dd.ok());
    CHECK(stat_of(g.ws("big.bin")).st_size == off_t{1} << 30);
    CHECK(sha(g.ws("big.bin")) == expected);
    CHECK(g.unmount() == 0);
    CHECK(sha(g.ws("big.bin")) == expected);
    fs::remove(src);
}

TEST_CASE("a real source tree untars diffs clean and is removed",
          "[integration][ordinary][untar]") {
    const std::string source = "/usr/include";
    REQUIRE(fs::is_directory(source));
    MountedGuard g(kPolicy);
    const auto timeout = std::chrono::seconds(240);
    REQUIRE(::mkdir(g.ws("inc").c_str(), 0755) == 0);
    const auto untar =
        sh("tar c -C " + source + " . | tar x -C '" + g.ws("inc") + "'", in_dir("/", timeout));
    CAPTURE(untar.err);
    REQUIRE(untar.ok());
    const auto diff =
        run({"diff", "-r", "--no-dereference", source, g.ws("inc")}, in_dir("/", timeout));
    CAPTURE(diff.out.substr(0, 2000), diff.err.substr(0, 2000));
    CHECK(diff.exit_code == 0);
    CHECK(listing(g.ws("inc")) == listing(source));
    const auto rm = run({"rm", "-rf", g.ws("inc")}, in_dir("/", timeout));
    CAPTURE(rm.err.substr(0, 2000));
    CHECK(rm.ok());
    CHECK_FALSE(fs::exists(g.ws("inc")));
    CHECK(g.unmount() == 0);
    CHECK_FALSE(fs::exists(g.ws("inc")));
}

TEST_CASE("moving a directory that holds a .env works and keeps it guarded",
          "[integration][ordinary][rename]") {
    MountSpec spec;
    spec.policy_yaml = kPolicy;
    spec.setup = [](const std::string& ws) {
        write_file(ws + "/service/.env", "TOKEN=1\n", 0600);
        write_file(ws + "/service/main.py", "print('hi')\n");
    };
    MountedGuard g(spec);
    const FileState env = file_state(g.ws("service/.env"));
    const auto r = sh("mv service renamed && mkdir -p apps && mv renamed apps/", in_dir(g.ws()));
    CAPTURE(r.err);
    REQUIRE(r.ok());
    CHECK(read_file(g.ws("apps/renamed/main.py")) == "print('hi')\n");
    CHECK(read_file(g.ws("apps/renamed/.env")) == "TOKEN=1\n");
    CHECK(sh("echo x >> apps/renamed/.env", in_dir(g.ws())).exit_code != 0);
    CHECK(g.unmount() == 0);
    CHECK_FALSE(fs::exists(g.ws("service")));
    CHECK(file_state(g.ws("apps/renamed/.env")) == env);
}

TEST_CASE("python3 -m venv works inside the mount and its python runs",
          "[integration][ordinary][venv]") {
    const auto timeout = std::chrono::seconds(180);
    SECTION("without pip under the .env and .pem policy") {
        MountedGuard g(kPolicy);
        const auto venv =
            run({"python3", "-m", "venv", "--without-pip", "venv"}, in_dir(g.ws(), timeout));
        CAPTURE(venv.out, venv.err);
        REQUIRE(venv.ok());
        const auto py = run({g.ws("venv/bin/python"), "-c", "print(1)"}, in_dir(g.ws()));
        CAPTURE(py.err);
        CHECK(py.ok());
        CHECK(py.out == "1\n");
        // bin/python leads out of the tree (default links_out: allow)
        CHECK(fs::is_symlink(g.ws("venv/bin/python3")));
        CHECK(g.unmount() == 0);
        CHECK(fs::exists(g.ws("venv/pyvenv.cfg")));
        CHECK(fs::is_symlink(g.ws("venv/bin/python3")));
    }
    SECTION("with pip under a policy that guards .env") {
        // pip vendors certifi's cacert.pem, which a `*.pem` row rightly refuses; with `.env`
        // alone guarded the whole venv, pip included, is made.
        MountedGuard g("deny: [\".env\"]\n");
        const auto venv = run({"python3", "-m", "venv", "venv"}, in_dir(g.ws(), timeout));
        CAPTURE(venv.out, venv.err);
        REQUIRE(venv.ok());
        const auto py = run({g.ws("venv/bin/python"), "-c", "print(1)"}, in_dir(g.ws()));
        CAPTURE(py.err);
        CHECK(py.out == "1\n");
        const auto pip =
            run({g.ws("venv/bin/python"), "-m", "pip", "--version"}, in_dir(g.ws(), timeout));
        CAPTURE(pip.err);
        CHECK(pip.ok());
        CHECK(g.unmount() == 0);
        CHECK(fs::exists(g.ws("venv/pyvenv.cfg")));
    }
}

namespace {

// git with a fixed identity and no user or system configuration.
RunOptions git_env(const std::string& cwd, const std::string& home) {
    RunOptions o = in_dir(cwd, std::chrono::seconds(60));
    o.env = {{"HOME", home},
             {"GIT_CONFIG_NOSYSTEM", "1"},
             {"GIT_AUTHOR_NAME", "Test"},
             {"GIT_AUTHOR_EMAIL", "test@example.com"},
             {"GIT_COMMITTER_NAME", "Test"},
             {"GIT_COMMITTER_EMAIL", "test@example.com"}};
    return o;
}

void git_ok(const std::vector<std::string>& args, const RunOptions& o) {
    std::vector<std::string> argv{"git"};
    argv.insert(argv.end(), args.begin(), args.end());
    const auto r = run(argv, o);
    INFO("git " << args.front() << " exited " << r.exit_code << ": " << r.err);
    REQUIRE(r.ok());
}

// add, commit, checkout -b, commit, status: the everyday loop.
void everyday_git(const RunOptions& o, const std::string& ws) {
    write_file(ws + "/a.txt", "first\n");
    write_file(ws + "/src/b.c", "int main(void) { return 0; }\n");
    git_ok({"add", "a.txt", "src"}, o);
    git_ok({"commit", "-q", "-m", "first"}, o);
    git_ok({"checkout", "-q", "-b", "feature"}, o);
    write_file(ws + "/a.txt", "first\nsecond\n");
    git_ok({"commit", "-q", "-a", "-m", "second"}, o);
    const auto status = run({"git", "status", "--porcelain"}, o);
    CHECK(status.ok());
    CHECK(status.out.empty());
    const auto branch = run({"git", "branch", "--show-current"}, o);
    CHECK(branch.out == "feature\n");
    const auto log = run({"git", "log", "--format=%s"}, o);
    CHECK(log.out == "second\nfirst\n");
    git_ok({"checkout", "-q", "main"}, o);
    CHECK(read_file(ws + "/a.txt") == "first\n");
}

} // namespace

TEST_CASE("everyday git works inside the mount under the default git tier",
          "[integration][ordinary][git]") {
    SECTION("git init inside the mount") {
        MountedGuard g(kPolicy);
        const RunOptions o = git_env(g.ws(), g.root());
        git_ok({"init", "-q", "-b", "main"}, o);
        everyday_git(o, g.ws());
        // what git runs from stays guarded
        CHECK(sh("echo 'exit 0' > .git/hooks/pre-commit", o).exit_code != 0);
        CHECK(g.unmount() == 0);
        CHECK_FALSE(fs::exists(g.ws(".git/hooks/pre-commit")));
        const auto log = run({"git", "log", "--format=%s", "feature"}, git_env(g.ws(), g.root()));
        CHECK(log.out == "second\nfirst\n");
    }
    SECTION("a repository initialised before the mount") {
        MountSpec spec;
        spec.policy_yaml = kPolicy;
        spec.setup = [](const std::string& ws) {
            const auto home = fs::path(ws).parent_path().string();
            git_ok({"init", "-q", "-b", "main"}, git_env(ws, home));
        };
        MountedGuard g(spec);
        const RunOptions o = git_env(g.ws(), g.root());
        everyday_git(o, g.ws());
        CHECK(g.unmount() == 0);
        const auto fsck = run({"git", "fsck", "--strict"}, git_env(g.ws(), g.root()));
        CAPTURE(fsck.err);
        CHECK(fsck.ok());
    }
}

TEST_CASE("a build with make inside the mount works", "[integration][ordinary][build]") {
    MountedGuard g(kPolicy);
    write_file(g.ws("hello.c"),
               "#include <stdio.h>\nint main(void) { puts(\"hello from make\"); return 0; }\n");
    write_file(g.ws("Makefile"), "hello: hello.o\n\tcc -o $@ hello.o\n"
                                 "hello.o: hello.c\n\tcc -c -o $@ hello.c\n"
                                 "clean:\n\trm -f hello hello.o\n");
    const auto make = run({"make"}, in_dir(g.ws(), std::chrono::seconds(120)));
    CAPTURE(make.out, make.err);
    REQUIRE(make.ok());
    const auto hello = run({g.ws("hello")});
    CHECK(hello.out == "hello from make\n");
    // An edit rebuilds; `make clean` removes.
    write_file(g.ws("hello.c"),
               "#include <stdio.h>\nint main(void) { puts(\"rebuilt\"); return 0; }\n");
    REQUIRE(run({"make"}, in_dir(g.ws(), std::chrono::seconds(120))).ok());
    CHECK(run({g.ws("hello")}).out == "rebuilt\n");
    REQUIRE(run({"make", "clean"}, in_dir(g.ws())).ok());
    CHECK_FALSE(fs::exists(g.ws("hello.o")));
    REQUIRE(run({"make"}, in_dir(g.ws(), std::chrono::seconds(120))).ok());
    CHECK(g.unmount() == 0);
    CHECK(run({g.ws("hello")}).out == "rebuilt\n");
}

TEST_CASE("a build with cmake inside the mount works", "[integration][ordinary][build]") {
    MountedGuard g(kPolicy);
    write_file(g.ws("hello.c"),
               "#include <stdio.h>\nint main(void) { puts(\"hello from cmake\"); return 0; }\n");
    write_file(g.ws("CMakeLists.txt"), "cmake_minimum_required(VERSION 3.13)\n"
                                       "project(hello C)\n"
                                       "add_executable(hello hello.c)\n");
    const auto timeout = std::chrono::seconds(180);
    const auto configure = run({"cmake", "-S", ".", "-B", "build"}, in_dir(g.ws(), timeout));
    CAPTURE(configure.out, configure.err);
    REQUIRE(configure.ok());
    const auto build = run({"cmake", "--build", "build"}, in_dir(g.ws(), timeout));
    CAPTURE(build.out, build.err);
    REQUIRE(build.ok());
    CHECK(run({g.ws("build/hello")}).out == "hello from cmake\n");
    CHECK(g.unmount() == 0);
    CHECK(run({g.ws("build/hello")}).out == "hello from cmake\n");
}
