// FUSE over io_uring (docs/decisions/012): where the kernel offers it (Linux 6.14 and later with
// fuse.enable_uring on, which the fixture turns on when run as root), every request but FORGET
// and INTERRUPT reaches the daemon on a ring entry of its caller's CPU instead of /dev/fuse.
// What must hold either way: the daemon says which it uses; data of every size crosses intact in
// both directions (a request or reply as large as the ring's payload, a READ answered from the
// entry's own buffer); the guard refuses as before; many callers at once on both CPUs are all
// served, while the rings grow; a signal ends the daemon cleanly while requests are in flight;
// and O_DIRECT data crosses whatever its alignment through the daemon, and as natively through
// FUSE passthrough. The data tests mount with -o no_passthrough, so that reads and writes
// reach the daemon (passthrough, the default, keeps them in the kernel).
#include "support/mount_fixture.hpp"
#include "support/process.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstddef>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

using namespace guardfs::test;
using namespace std::chrono_literals;

namespace {

const char* const kPolicy = "deny: [\".env\"]\nagent_config: false\ngit: false\n";
const char* const kOn = "FUSE over io_uring on";

MountSpec spec_for(Transport transport) {
    MountSpec spec;
    spec.policy_yaml = kPolicy;
    spec.transport = transport;
    spec.extra_args = {"-o", "no_passthrough"};
    return spec;
}

// `n` bytes that differ from page to page, so a page read from the wrong place shows.
std::string pattern_of(std::size_t n) {
    std::string s(n, '\0');
    for (std::size_t i = 0; i < n; ++i) {
        s[i] = static_cast<char>('a' + (i * 7 + i / 4096) % 26);
    }
    return s;
}

// One write(2) of the whole of `bytes`, then one read(2) of it back: 0, or the errno.
int write_then_read(const std::string& path, const std::string& bytes, std::string& back) {
    const int fd = ::open(path.c_str(), O_CREAT | O_TRUNC | O_RDWR | O_CLOEXEC, 0644);
    if (fd < 0) {
        return errno;
    }
    int err = 0;
    if (::write(fd, bytes.data(), bytes.size()) != static_cast<ssize_t>(bytes.size())) {
        err = errno != 0 ? errno : EIO;
    }
    back.assign(bytes.size() + 1, '\0');
    const ssize_t got = ::pread(fd, back.data(), back.size(), 0);
    back.resize(got > 0 ? static_cast<std::size_t>(got) : 0);
    ::close(fd);
    return err;
}

bool ring_expected(Transport transport) {
    return transport == Transport::Ring && enable_fuse_ring();
}

} // namespace

TEST_CASE("requests reach the daemon over io_uring where the kernel offers it, and data and "
          "refusals are as on /dev/fuse",
          "[integration][ring]") {
    require_fuse();
    const Transport transport = GENERATE(Transport::Ring, Transport::DevFuse);
    CAPTURE(transport == Transport::Ring);
    MountedGuard g(spec_for(transport));

    // Every size around a page, the ring's payload (1 MiB) and beyond it: requests and replies
    // that fill the payload, and larger ones the kernel splits.
    std::vector<std::string> names;
    for (const std::size_t n :
         {std::size_t{0}, std::size_t{1}, std::size_t{4095}, std::size_t{4096}, std::size_t{131072},
          std::size_t{1} << 20, (std::size_t{1} << 20) + 1, std::size_t{3} << 20}) {
        CAPTURE(n);
        const std::string bytes = pattern_of(n);
        const std::string name = "f" + std::to_string(n);
        std::string back;
        CHECK(write_then_read(g.ws(name), bytes, back) == 0);
        CHECK(back == bytes);
        names.push_back(name);
    }
    if (ring_expected(transport)) {
        CHECK(g.log_shows(kOn));
    } else {
        if (transport == Transport::Ring) {
            WARN("this kernel offers no FUSE over io_uring; /dev/fuse is checked instead");
        }
        CHECK(g.daemon_log().find(kOn) == std::string::npos);
    }

    // A listing larger than one READDIR reply, with long names.
    const std::string dir = g.ws("many");
    REQUIRE(::mkdir(dir.c_str(), 0755) == 0);
    for (int i = 0; i < 600; ++i) {
        write_file(dir + "/" + std::string(200, 'n') + std::to_string(i), "x");
    }
    std::size_t listed = 0;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
        (void)entry;
        ++listed;
    }
    CHECK(listed == 600);

    // An attribute value (as large as ext4 keeps in a block), a link and its target, a rename.
    const std::string value = pattern_of(3000);
    CHECK(::setxattr(g.ws("f1").c_str(), "user.big", value.data(), value.size(), 0) == 0);
    std::string got(value.size(), '\0');
    CHECK(::getxattr(g.ws("f1").c_str(), "user.big", got.data(), got.size()) ==
          static_cast<ssize_t>(value.size()));
    CHECK(got == value);
    CHECK(::symlink("f4096", g.ws("link").c_str()) == 0);
    CHECK(read_file(g.ws("link")) == pattern_of(4096));
    CHECK(::rename(g.ws("f1").c_str(), g.ws("f1-renamed").c_str()) == 0);

    // The guard refuses as before.
    CHECK(write_text(g.ws(".env"), "SECRET=1\n") == EACCES);
    CHECK(::rename(g.ws("f4096").c_str(), g.ws(".env").c_str()) == -1);
    CHECK(errno == EACCES);
    CHECK_FALSE(std::filesystem::exists(g.ws(".env")));

    // And everything reached the disk.
    REQUIRE(g.unmount() == 0);
    for (const auto& name : names) {
        const std::size_t n = std::stoul(name.substr(1));
        CHECK(read_file(g.ws(name == "f1" ? "f1-renamed" : name)) == pattern_of(n));
    }
}

namespace {

// What a file opened O_DIRECT at `path` answers to an unaligned write and read of `bytes`, and
// to aligned ones: each call's result and errno, and what the aligned read brought back.
struct DirectIo {
    ssize_t unaligned_write = 0;
    int unaligned_write_errno = 0;
    ssize_t unaligned_read = 0;
    int unaligned_read_errno = 0;
    bool unaligned_data_back = false;
    ssize_t aligned_write = 0;
    ssize_t aligned_read = 0;
    bool aligned_data_back = false;
};

DirectIo direct_io(const std::string& path, const std::string& bytes) {
    DirectIo r;
    const std::size_t n = bytes.size();
    const int fd = ::open(path.c_str(), O_CREAT | O_RDWR | O_DIRECT | O_CLOEXEC, 0644);
    REQUIRE(fd >= 0);
    // From 16 bytes into a buffer, at file offset 100.
    std::string out(n + 16, '\0');
    std::copy(bytes.begin(), bytes.end(), out.begin() + 16);
    errno = 0;
    r.unaligned_write = ::pwrite(fd, out.data() + 16, n, 100);
    r.unaligned_write_errno = r.unaligned_write < 0 ? errno : 0;
    std::string back(n + 16, '\0');
    errno = 0;
    r.unaligned_read = ::pread(fd, back.data() + 1, n, 100);
    r.unaligned_read_errno = r.unaligned_read < 0 ? errno : 0;
    r.unaligned_data_back = back.compare(1, n, bytes) == 0;
    // Page-aligned buffers, offset and length.
    const std::size_t len = n & ~std::size_t{4095};
    void* mem = nullptr;
    REQUIRE(::posix_memalign(&mem, 4096, len) == 0);
    std::unique_ptr<char, decltype(&std::free)> buf(static_cast<char*>(mem), &std::free);
    std::copy(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(len), buf.get());
    r.aligned_write = ::pwrite(fd, buf.get(), len, 8192);
    std::fill(buf.get(), buf.get() + len, '\0');
    r.aligned_read = ::pread(fd, buf.get(), len, 8192);
    r.aligned_data_back =
        std::equal(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(len), buf.get());
    ::close(fd);
    return r;
}

} // namespace

TEST_CASE("O_DIRECT data from unaligned buffers, at unaligned offsets, larger than a request, "
          "crosses whole through the daemon on both transports",
          "[integration][ring]") {
    require_fuse();
    const Transport transport = GENERATE(Transport::Ring, Transport::DevFuse);
    CAPTURE(transport == Transport::Ring);
    MountedGuard g(spec_for(transport));
    // The daemon opens the underlying file without O_DIRECT (docs/decisions/013): a descriptor
    // opened O_DIRECT took no data read from /dev/fuse, nor the pieces the kernel cuts an
    // unaligned buffer into. Natively the unaligned calls fail EINVAL on most filesystems;
    // through the daemon the kernel copies the caller's data into requests, so they succeed.
    const std::size_t n = (std::size_t{3} << 20) + 100;
    const std::string bytes = pattern_of(n);
    const DirectIo r = direct_io(g.ws("direct"), bytes);
    CHECK(r.unaligned_write == static_cast<ssize_t>(n));
    CHECK(r.unaligned_read == static_cast<ssize_t>(n));
    CHECK(r.unaligned_data_back);
    CHECK(r.aligned_write == static_cast<ssize_t>(n & ~std::size_t{4095}));
    CHECK(r.aligned_read == r.aligned_write);
    CHECK(r.aligned_data_back);
    REQUIRE(g.unmount() == 0);
    const std::size_t len = n & ~std::size_t{4095};
    std::string expect = std::string(100, '\0') + bytes;
    expect.resize(std::max(expect.size(), 8192 + len), '\0');
    std::copy(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(len),
              expect.begin() + 8192);
    CHECK(read_file(g.ws("direct")) == expect);
}

TEST_CASE("O_DIRECT through FUSE passthrough answers as the filesystem below does natively",
          "[integration][ring][passthrough]") {
    require_fuse();
    const Transport transport = GENERATE(Transport::Ring, Transport::DevFuse);
    CAPTURE(transport == Transport::Ring);
    MountSpec spec = spec_for(transport);
    spec.extra_args = {"-o", "passthrough"};
    MountedGuard g(spec);
    // The kernel opens the backing file with the caller's O_DIRECT (docs/decisions/011), so the
    // filesystem below judges the alignment, as it does for a program that never saw guardfs.
    // Compared with a file of the same filesystem beside the workspace, outside the mount.
    const std::size_t n = (std::size_t{3} << 20) + 100;
    const std::string bytes = pattern_of(n);
    const std::string native_path = g.root() + "/direct-native";
    const DirectIo native = direct_io(native_path, bytes);
    const DirectIo mounted = direct_io(g.ws("direct"), bytes);
    if (!g.log_shows("FUSE passthrough on")) {
        WARN("this kernel or user gets no FUSE passthrough; O_DIRECT went through the daemon");
        CHECK(mounted.unaligned_write == static_cast<ssize_t>(n));
        CHECK(mounted.aligned_data_back);
        return;
    }
    CHECK(mounted.unaligned_write == native.unaligned_write);
    CHECK(mounted.unaligned_write_errno == native.unaligned_write_errno);
    CHECK(mounted.unaligned_read == native.unaligned_read);
    CHECK(mounted.unaligned_read_errno == native.unaligned_read_errno);
    CHECK(mounted.unaligned_data_back == native.unaligned_data_back);
    CHECK(mounted.aligned_write == native.aligned_write);
    CHECK(mounted.aligned_read == native.aligned_read);
    CHECK(mounted.aligned_data_back == native.aligned_data_back);
    CHECK(mounted.aligned_data_back);
    REQUIRE(g.unmount() == 0);
    CHECK(read_file(g.ws("direct")) == read_file(native_path));
}

TEST_CASE("many callers at once on every CPU are all served while the rings grow",
          "[integration][ring]") {
    require_fuse();
    const Transport transport = GENERATE(Transport::Ring, Transport::DevFuse);
    CAPTURE(transport == Transport::Ring);
    MountedGuard g(spec_for(transport));
    constexpr int kThreads = 16;
    constexpr int kFiles = 150;
    std::atomic<int> failures{0};
    {
        std::vector<std::jthread> threads;
        for (int t = 0; t < kThreads; ++t) {
            threads.emplace_back([&, t] {
                const std::string dir = g.ws("t" + std::to_string(t));
                if (::mkdir(dir.c_str(), 0755) != 0) {
                    ++failures;
                    return;
                }
                for (int i = 0; i < kFiles; ++i) {
                    const std::string p = dir + "/" + std::to_string(i);
                    const std::string text = pattern_of(static_cast<std::size_t>(i * 97 + t));
                    std::string back;
                    if (write_then_read(p, text, back) != 0 || back != text ||
                        (i % 3 == 0 && ::unlink(p.c_str()) != 0)) {
                        ++failures;
                    }
                }
            });
        }
    }
    CHECK(failures == 0);
    if (ring_expected(transport)) {
        CHECK(g.log_shows(kOn));
    }
    CHECK(g.unmount() == 0);
}

TEST_CASE("SIGTERM while callers keep the daemon busy ends it with status 0 and no mount",
          "[integration][ring][reliability]") {
    require_fuse();
    const Transport transport = GENERATE(Transport::Ring, Transport::DevFuse);
    CAPTURE(transport == Transport::Ring);
    MountedGuard g(spec_for(transport));
    std::atomic<bool> stop{false};
    std::atomic<int> served{0};
    {
        std::vector<std::jthread> callers;
        for (int t = 0; t < 4; ++t) {
            callers.emplace_back([&, t] {
                const std::string p = g.ws("busy" + std::to_string(t));
                while (!stop.load()) {
                    if (write_text(p, "x") == 0) {
                        ++served;
                    } else {
                        std::this_thread::sleep_for(1ms); // unmounted: the calls fail now
                    }
                }
            });
        }
        while (served.load() < 200) {
            std::this_thread::sleep_for(1ms);
        }
        CHECK(g.terminate(SIGTERM) == 0);
        stop = true;
    } // every caller returned: none was left waiting on a request nobody answers
    CHECK_FALSE(is_mount_point(g.ws()));
}

TEST_CASE("a read through the mount beside a busy loop on every CPU is not starved",
          "[integration][ring][reliability]") {
    // Ring threads wait for requests under SCHED_IDLE only while some CPU is mostly idle
    // (decision 012): a SCHED_IDLE thread on a busy CPU runs after every other program, and a
    // cold 512 MiB read through the mount took over 30 s beside four busy loops (1.9 s on
    // /dev/fuse) before the daemon looked at the load.
    require_fuse();
    const Transport transport = GENERATE(Transport::Ring, Transport::DevFuse);
    CAPTURE(transport == Transport::Ring);
    MountSpec spec = spec_for(transport);
    spec.setup = [](const std::string& ws) {
        write_file(ws + "/big", pattern_of(128 << 20));
    };
    MountedGuard g(spec);
    std::vector<std::unique_ptr<Child>> loops;
    for (unsigned i = 0; i < 2 * std::max(1U, std::thread::hardware_concurrency()); ++i) {
        loops.push_back(std::make_unique<Child>(spawn({"/bin/sh", "-c", "while :; do :; done"})));
    }
    std::this_thread::sleep_for(300ms); // the daemon's next look at the CPUs sees them busy
    REQUIRE(sh("echo 3 > /proc/sys/vm/drop_caches").ok());
    const auto start = std::chrono::steady_clock::now();
    RunOptions slow;
    slow.timeout = std::chrono::seconds(60);
    const ProcessResult r = run({"dd", "if=" + g.ws("big"), "of=/dev/null", "bs=1M"}, slow);
    const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - start);
    loops.clear();
    CAPTURE(took.count(), r.err);
    CHECK(r.ok());
    // 128 MiB, cold: under a second when served, minutes when starved. 20 s is generous.
    CHECK(took < 20s);
}
