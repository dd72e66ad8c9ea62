// FUSE over io_uring (docs/decisions/012): where the kernel offers it (Linux 6.14 and later with
// fuse.enable_uring on, which the fixture turns on when run as root), every request but FORGET
// and INTERRUPT reaches the daemon on a ring entry of its caller's CPU instead of /dev/fuse.
// What must hold either way: the daemon says which it uses; data of every size crosses intact in
// both directions (a request or reply as large as the ring's payload, a READ answered from the
// entry's own buffer); the guard refuses as before; many callers at once on both CPUs are all
// served, while the rings grow; a signal ends the daemon cleanly while requests are in flight;
// and O_DIRECT data crosses whatever its alignment.
#include "support/mount_fixture.hpp"
#include "support/process.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstddef>
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

TEST_CASE("O_DIRECT data from unaligned buffers, at unaligned offsets, larger than a request, "
          "crosses whole on both transports",
          "[integration][ring]") {
    require_fuse();
    const Transport transport = GENERATE(Transport::Ring, Transport::DevFuse);
    CAPTURE(transport == Transport::Ring);
    MountedGuard g(spec_for(transport));
    // The daemon opens the underlying file without O_DIRECT (docs/decisions/013): a descriptor
    // opened O_DIRECT took no data read from /dev/fuse, nor the pieces the kernel cuts an
    // unaligned buffer into. Natively every call below fails EINVAL; through FUSE the kernel
    // copies the caller's data into requests, so it succeeds.
    const std::size_t n = (std::size_t{3} << 20) + 100;
    const std::string bytes = pattern_of(n);
    std::string out(n + 16, '\0');
    std::copy(bytes.begin(), bytes.end(), out.begin() + 16);
    const int fd = ::open(g.ws("direct").c_str(), O_CREAT | O_RDWR | O_DIRECT | O_CLOEXEC, 0644);
    REQUIRE(fd >= 0);
    CHECK(::pwrite(fd, out.data() + 16, n, 100) == static_cast<ssize_t>(n));
    std::string back(n + 16, '\0');
    CHECK(::pread(fd, back.data() + 1, n, 100) == static_cast<ssize_t>(n));
    CHECK(back.compare(1, n, bytes) == 0);
    ::close(fd);
    REQUIRE(g.unmount() == 0);
    CHECK(read_file(g.ws("direct")) == std::string(100, '\0') + bytes);
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
