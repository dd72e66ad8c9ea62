// FUSE passthrough (on by default for a daemon with CAP_SYS_ADMIN, docs/decisions/011): the kernel
// reads and writes an open file's data on the underlying file itself. What must still hold:
// the guard decides at open as before; data written through one kind of handle is what every other
// kind reads; every handle of a file open at once uses the same backing file (the kernel answers
// EIO otherwise); and set-ID bits are never left on a file another user has written through a
// backing file, which the kernel writes with the daemon's credentials.
//
// On a kernel that offers passthrough (Linux 6.9 and later) to a daemon run as root, the daemon
// must report it on, by default; elsewhere the same checks run against the page cache.
#include "support/mount_fixture.hpp"
#include "support/process.hpp"

#include <catch2/catch.hpp>

#include <array>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>
#include <thread>

#include <fcntl.h>
#include <grp.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace guardfs::test;

namespace {

const char* const kPolicy = "deny: [\".env\"]\nagent_config: false\ngit: false\n";
constexpr uid_t kNobody = 65534;
constexpr gid_t kNogroup = 65534;

// Linux 6.9 or later, and root: where the daemon must get passthrough.
bool passthrough_expected() {
    utsname u{};
    if (::uname(&u) != 0 || ::geteuid() != 0) {
        return false;
    }
    int major = 0;
    int minor = 0;
    if (std::sscanf(u.release, "%d.%d", &major, &minor) != 2) {
        return false;
    }
    return major > 6 || (major == 6 && minor >= 9);
}

MountSpec passthrough_spec() {
    MountSpec spec;
    spec.policy_yaml = kPolicy;
    spec.setup = [](const std::string& ws) {
        // Another user must reach the workspace (the fixture's directory is 0700).
        REQUIRE(::chmod((ws + "/..").c_str(), 0755) == 0);
        REQUIRE(::chmod(ws.c_str(), 0777) == 0);
    };
    return spec;
}

void check_reported(const MountedGuard& g) {
    if (passthrough_expected()) {
        // The daemon says so after the kernel's INIT, which may come after the mount is seen.
        const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
        while (g.daemon_log().find("FUSE passthrough on") == std::string::npos &&
               std::chrono::steady_clock::now() < until) {
            std::this_thread::yield();
        }
        CHECK(g.daemon_log().find("FUSE passthrough on") != std::string::npos);
    } else {
        WARN("this kernel or user gets no FUSE passthrough; the page cache is checked instead");
    }
}

std::string pread_all(int fd, std::size_t n, off_t at = 0) {
    std::string s(n, '\0');
    const ssize_t got = ::pread(fd, s.data(), n, at);
    s.resize(got > 0 ? static_cast<std::size_t>(got) : 0);
    return s;
}

void pwrite_all(int fd, const std::string& s, off_t at) {
    REQUIRE(::pwrite(fd, s.data(), s.size(), at) == static_cast<ssize_t>(s.size()));
}

// The kernel sends RELEASE after close(2) returns, and the daemon chooses a new handle's I/O by
// the handles it still counts. It keeps a descriptor per handle (the inode's own is O_PATH), so
// a closed handle is released once no such descriptor of the daemon names the file. Polls for
// that, at most 5 s.
bool released(pid_t daemon, const std::string& path) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    const std::string proc = "/proc/" + std::to_string(daemon);
    for (;;) {
        bool open = false;
        for (const auto& e : std::filesystem::directory_iterator(proc + "/fd")) {
            std::error_code ec;
            if (std::filesystem::read_symlink(e.path(), ec) != path || ec) {
                continue;
            }
            std::ifstream info(proc + "/fdinfo/" + e.path().filename().string());
            std::string key;
            std::string flags;
            bool got_flags = false;
            while (!got_flags && info >> key >> flags) {
                got_flags = key == "flags:";
            }
            if (!got_flags) {
                continue; // closed after it was listed, so not open
            }
            open = open || (std::stoul(flags, nullptr, 8) & O_PATH) == 0;
        }
        if (!open) {
            return true;
        }
        if (std::chrono::steady_clock::now() > until) {
            return false;
        }
        std::this_thread::yield();
    }
}

mode_t mode_of(const std::string& path) {
    struct stat st {};

    REQUIRE(::stat(path.c_str(), &st) == 0);
    return st.st_mode & 07777;
}

// A child that becomes nobody, opens `path` with `flags` and reports the errno of the open on
// a pipe; then holds the descriptor until told to write `text` through it and close it.
class NobodyWriter {
public:
    NobodyWriter(const std::string& path, int flags) {
        REQUIRE(::pipe2(report_.data(), O_CLOEXEC) == 0);
        REQUIRE(::pipe2(go_.data(), O_CLOEXEC) == 0);
        pid_ = ::fork();
        REQUIRE(pid_ >= 0);
        if (pid_ == 0) {
            int err = 0;
            int fd = -1;
            if (::setgroups(0, nullptr) != 0 || ::setgid(kNogroup) != 0 || ::setuid(kNobody) != 0) {
                err = -1;
            } else {
                fd = ::open(path.c_str(), flags | O_CLOEXEC);
                err = fd < 0 ? errno : 0;
            }
            (void)!::write(report_[1], &err, sizeof err);
            char c = 0;
            (void)!::read(go_[0], &c, 1);
            int rc = 0;
            if (fd >= 0) {
                rc = ::write(fd, "n", 1) == 1 && ::close(fd) == 0 ? 0 : 1;
            }
            ::_exit(rc);
        }
        ::close(report_[1]);
        ::close(go_[0]);
        REQUIRE(::read(report_[0], &open_errno_, sizeof open_errno_) ==
                static_cast<ssize_t>(sizeof open_errno_));
    }

    NobodyWriter(const NobodyWriter&) = delete;
    NobodyWriter& operator=(const NobodyWriter&) = delete;

    ~NobodyWriter() { finish(); }

    [[nodiscard]] int open_errno() const { return open_errno_; }

    // Writes one byte through the descriptor and closes it; true when both worked.
    bool finish() {
        if (pid_ <= 0) {
            return done_ok_;
        }
        (void)!::write(go_[1], "g", 1);
        int status = 0;
        ::waitpid(pid_, &status, 0);
        pid_ = -1;
        ::close(go_[1]);
        ::close(report_[0]);
        done_ok_ = WIFEXITED(status) && WEXITSTATUS(status) == 0;
        return done_ok_;
    }

private:
    std::array<int, 2> report_{-1, -1};
    std::array<int, 2> go_{-1, -1};
    pid_t pid_ = -1;
    int open_errno_ = -1;
    bool done_ok_ = false;
};

} // namespace

TEST_CASE("with passthrough, data goes to the disk and the guard still refuses at open",
          "[integration][passthrough]") {
    require_fuse();
    MountedGuard g(passthrough_spec());
    check_reported(g);

    // A 4 MiB file written in pieces out of order, read back through the mount and on disk.
    std::string whole(4 << 20, '\0');
    for (std::size_t i = 0; i < whole.size(); ++i) {
        whole[i] = static_cast<char>('a' + (i * 7 + i / 4096) % 26);
    }
    {
        const int fd = ::open(g.ws("big").c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
        REQUIRE(fd >= 0);
        for (std::size_t k = 0; k < 64; ++k) {
            const std::size_t piece = (k * 37) % 64 * (whole.size() / 64);
            pwrite_all(fd, whole.substr(piece, whole.size() / 64), static_cast<off_t>(piece));
        }
        REQUIRE(::close(fd) == 0);
    }

    struct stat st {};

    REQUIRE(::stat(g.ws("big").c_str(), &st) == 0);
    CHECK(st.st_size == static_cast<off_t>(whole.size()));
    CHECK(read_file(g.ws("big")) == whole);

    // O_APPEND from two handles at once lands at the end each time.
    {
        const int a = ::open(g.ws("log").c_str(), O_CREAT | O_WRONLY | O_APPEND | O_CLOEXEC, 0644);
        const int b = ::open(g.ws("log").c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
        REQUIRE(a >= 0);
        REQUIRE(b >= 0);
        for (int i = 0; i < 100; ++i) {
            REQUIRE(::write(i % 2 == 0 ? a : b, i % 2 == 0 ? "a" : "b", 1) == 1);
        }
        ::close(a);
        ::close(b);
    }
    std::string ab;
    for (int i = 0; i < 50; ++i) {
        ab += "ab";
    }
    CHECK(read_file(g.ws("log")) == ab);

    // The verdicts are the open's, as without passthrough.
    CHECK(write_text(g.ws(".env"), "K=v\n") == EACCES);
    write_file(g.ws("notes.txt"), "kept\n");
    CHECK(read_file(g.ws("notes.txt")) == "kept\n");

    CHECK(g.unmount() == 0);
    CHECK(read_file(g.ws("big")) == whole);
    CHECK(read_file(g.ws("log")) == ab);
    CHECK(read_file(g.ws("notes.txt")) == "kept\n");
    CHECK(::access(g.ws(".env").c_str(), F_OK) != 0);
}

TEST_CASE("every handle of a file open at once reads what any of them wrote",
          "[integration][passthrough]") {
    require_fuse();
    MountedGuard g(passthrough_spec());
    check_reported(g);
    write_file(g.ws("shared"), "0123456789");

    const int rd = ::open(g.ws("shared").c_str(), O_RDONLY | O_CLOEXEC);
    const int rw = ::open(g.ws("shared").c_str(), O_RDWR | O_CLOEXEC);
    const int wr = ::open(g.ws("shared").c_str(), O_WRONLY | O_CLOEXEC);
    REQUIRE(rd >= 0);
    REQUIRE(rw >= 0); // a second handle on the same backing file: EIO if the kernel refused it
    REQUIRE(wr >= 0);
    pwrite_all(wr, "AB", 0);
    pwrite_all(rw, "CD", 2);
    CHECK(pread_all(rd, 10) == "ABCD456789");
    CHECK(pread_all(rw, 10) == "ABCD456789");

    // A mapping of the file sees the writes too, and writes through a shared one land.
    void* map = ::mmap(nullptr, 10, PROT_READ | PROT_WRITE, MAP_SHARED, rw, 0);
    REQUIRE(map != MAP_FAILED);
    CHECK(std::string(static_cast<const char*>(map), 10) == "ABCD456789");
    static_cast<char*>(map)[9] = 'Z';
    REQUIRE(::msync(map, 10, MS_SYNC) == 0);
    REQUIRE(::munmap(map, 10) == 0);
    CHECK(pread_all(rd, 10) == "ABCD45678Z");
    ::close(rd);
    ::close(rw);
    ::close(wr);
    CHECK(read_file(g.ws("shared")) == "ABCD45678Z");

    // Closed and opened again (a new backing registration) it is all still there.
    const int again = ::open(g.ws("shared").c_str(), O_RDWR | O_CLOEXEC);
    REQUIRE(again >= 0);
    pwrite_all(again, "!", 0);
    ::close(again);
    CHECK(g.unmount() == 0);
    CHECK(read_file(g.ws("shared")) == "!BCD45678Z");
}

TEST_CASE("a program written through passthrough runs, and is rewritten by cp and mv",
          "[integration][passthrough]") {
    require_fuse();
    MountedGuard g(passthrough_spec());
    check_reported(g);
    write_file(g.ws("tool.sh"), "#!/bin/sh\necho one\n", 0755);
    auto r = run({g.ws("tool.sh")});
    CHECK(r.ok());
    CHECK(r.out == "one\n");
    r = sh("cd '" + g.ws() +
           "' && printf '#!/bin/sh\\necho two\\n' > new.sh && chmod +x new.sh && "
           "cp new.sh copy.sh && mv copy.sh tool.sh && ./tool.sh && cat tool.sh new.sh | wc -l");
    CHECK(r.ok());
    CHECK(r.out == "two\n4\n");
    r = run({"python3", "-c",
             "import sys\n"
             "p = sys.argv[1]\n"
             "open(p, 'w').write('x' * 100000)\n"
             "with open(p, 'r+') as f:\n"
             "    f.seek(50000); f.write('y')\n"
             "d = open(p).read()\n"
             "print(len(d), d.count('y'), d[50000])\n",
             g.ws("py.dat")});
    CHECK(r.ok());
    CHECK(r.out == "100000 1 y\n");
}

TEST_CASE("data written through passthrough is not hidden by pages cached before",
          "[integration][passthrough]") {
    require_fuse();
    MountSpec spec = passthrough_spec();
    spec.setup = [inner = spec.setup](const std::string& ws) {
        inner(ws);
        write_file(ws + "/f", "AAAAAAAA", 04755);
    };
    MountedGuard g(spec);
    check_reported(g);
    // A set-user-ID file is served through the page cache; without the bit it passes through.
    // (Linux 6.18 drops the cached pages itself when passthrough writes; the daemon does too,
    // by not keeping them at the next open, for a kernel that would not.)
    CHECK(read_file(g.ws("f")) == "AAAAAAAA"); // now in the page cache, which is kept
    REQUIRE(released(g.daemon_pid(), g.ws("f")));
    REQUIRE(::chmod(g.ws("f").c_str(), 0755) == 0);
    {
        const int fd = ::open(g.ws("f").c_str(), O_WRONLY | O_CLOEXEC);
        REQUIRE(fd >= 0);
        pwrite_all(fd, "BBBB", 0);
        ::close(fd);
    }
    REQUIRE(released(g.daemon_pid(), g.ws("f")));
    REQUIRE(::chmod(g.ws("f").c_str(), 04755) == 0);
    CHECK(read_file(g.ws("f")) == "BBBBAAAA"); // read through the page cache again
    CHECK(g.unmount() == 0);
    CHECK(read_file(g.ws("f")) == "BBBBAAAA");
}

TEST_CASE("another user's write clears set-ID bits, and none are added under their writes",
          "[integration][passthrough]") {
    require_fuse();
    if (::geteuid() != 0) {
        WARN("needs root (another user writes)");
        return;
    }
    MountSpec spec = passthrough_spec();
    spec.extra_args.insert(spec.extra_args.end(), {"-o", "allow_other"}); // others reach it
    MountedGuard g(spec);
    check_reported(g);

    SECTION("a set-user-ID file written by another user loses the bit, as natively") {
        write_file(g.ws("suid"), "s", 04777);
        REQUIRE(released(g.daemon_pid(), g.ws("suid")));
        NobodyWriter w(g.ws("suid"), O_WRONLY);
        REQUIRE(w.open_errno() == 0);
        CHECK(w.finish());
        CHECK(mode_of(g.ws("suid")) == 0777);
    }
    SECTION("set-ID bits are refused while another user may write through a backing file") {
        write_file(g.ws("plain"), "p", 0666);
        REQUIRE(released(g.daemon_pid(), g.ws("plain")));
        NobodyWriter w(g.ws("plain"), O_WRONLY);
        REQUIRE(w.open_errno() == 0);
        CHECK(errno_of(::chmod(g.ws("plain").c_str(), 04777)) == ETXTBSY);
        CHECK(errno_of(::chmod(g.ws("plain").c_str(), 0644)) == 0); // other changes go through
        CHECK(w.finish());
        REQUIRE(released(g.daemon_pid(), g.ws("plain")));
        CHECK(errno_of(::chmod(g.ws("plain").c_str(), 04755)) == 0);
        CHECK(mode_of(g.ws("plain")) == 04755);
    }
    SECTION("the writer itself may set them on its open file, as cp -p does") {
        const int fd = ::open(g.ws("copy").c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
        REQUIRE(fd >= 0);
        REQUIRE(::write(fd, "c", 1) == 1);
        CHECK(errno_of(::fchmod(fd, 04755)) == 0);
        ::close(fd);
        CHECK(mode_of(g.ws("copy")) == 04755);
        auto r = sh("cd '" + g.ws() + "' && cp -p copy copy2 && stat -c %a copy2");
        CHECK(r.ok());
        CHECK(r.out == "4755\n");
    }
    SECTION("a file that gained set-ID bits while open is not opened for writing by another") {
        write_file(g.ws("gained"), "g", 0666);
        REQUIRE(released(g.daemon_pid(), g.ws("gained")));
        const int fd = ::open(g.ws("gained").c_str(), O_WRONLY | O_CLOEXEC);
        REQUIRE(fd >= 0);
        REQUIRE(::fchmod(fd, 04777) == 0);
        {
            NobodyWriter w(g.ws("gained"), O_WRONLY);
            CHECK(w.open_errno() == ETXTBSY);
        }
        {
            NobodyWriter r(g.ws("gained"), O_RDONLY);
            CHECK(r.open_errno() == 0);
        }
        ::close(fd);
        REQUIRE(released(g.daemon_pid(), g.ws("gained")));
        NobodyWriter w(g.ws("gained"), O_WRONLY); // closed: the page cache, and the bit goes
        REQUIRE(w.open_errno() == 0);
        CHECK(w.finish());
        CHECK(mode_of(g.ws("gained")) == 0777);
    }
}

TEST_CASE("passthrough is on by default and with -o passthrough, off with -o no_passthrough "
          "and with the writeback cache",
          "[integration][passthrough]") {
    require_fuse();
    for (const char* on : {"", "passthrough"}) {
        CAPTURE(on);
        MountSpec spec;
        spec.policy_yaml = kPolicy;
        if (*on != '\0') {
            spec.extra_args = {"-o", on};
        }
        MountedGuard g(spec);
        check_reported(g);
        write_file(g.ws("a"), "a");
        CHECK(read_file(g.ws("a")) == "a");
    }
    for (const char* off : {"no_passthrough", "writeback_cache"}) {
        CAPTURE(off);
        MountSpec spec;
        spec.policy_yaml = kPolicy;
        spec.extra_args = {"-o", off};
        MountedGuard g(spec);
        write_file(g.ws("b"), "b");
        CHECK(read_file(g.ws("b")) == "b");
        REQUIRE(g.unmount() == 0);
        CHECK(g.daemon_log().find("FUSE passthrough") == std::string::npos);
    }
}
