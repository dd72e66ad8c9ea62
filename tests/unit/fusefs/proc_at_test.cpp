// ProcAt (fusefs/fs.hpp): how the daemon reaches its own descriptors through /proc for the
// *at system calls, with and without an open /proc/self/fd.
#include "base/unique_fd.hpp"
#include "fusefs/fs.hpp"

#include <catch2/catch.hpp>

#include <array>
#include <climits>
#include <cstdlib>
#include <string>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using guardfs::base::UniqueFd;
using guardfs::fusefs::ProcAt;

namespace {

std::string link_of(const ProcAt& at) {
    std::array<char, 4097> buf{};
    const ssize_t n = ::readlinkat(at.dir(), at.name(), buf.data(), buf.size());
    return n < 0 ? std::string("error") : std::string(buf.data(), static_cast<std::size_t>(n));
}

// A temporary directory with one subdirectory, "sub", held open (O_PATH) as the descriptor the
// tests reach through /proc, and /proc/self/fd held open as the daemon holds it.
struct TempDir {
    TempDir() {
        std::array<char, 32> tmpl{"/tmp/guardfs-procat-XXXXXX"};
        REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
        path = tmpl.data();
        REQUIRE(::mkdir((path + "/sub").c_str(), 0700) == 0);
        dir = UniqueFd(::open((path + "/sub").c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
        proc_fds = UniqueFd(::open("/proc/self/fd", O_PATH | O_DIRECTORY | O_CLOEXEC));
        REQUIRE(dir.valid());
        REQUIRE(proc_fds.valid());
    }

    ~TempDir() {
        ::rmdir((path + "/sub").c_str());
        ::rmdir((path + "/moved").c_str());
        ::rmdir(path.c_str());
    }

    std::string path;
    UniqueFd dir;
    UniqueFd proc_fds;
};

} // namespace

TEST_CASE("ProcAt names a descriptor inside an open /proc/self/fd", "[fusefs][procat]") {
    TempDir t;

    const ProcAt at(t.proc_fds.get(), t.dir.get());
    CHECK(at.dir() == t.proc_fds.get());
    CHECK(std::string(at.name()) == std::to_string(t.dir.get()));
    CHECK(link_of(at) == t.path + "/sub");

    // Opening through it reaches the same directory, with the flags asked for.
    const UniqueFd opened(::openat(at.dir(), at.name(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    REQUIRE(opened.valid());

    struct stat a {};

    struct stat b {};

    REQUIRE(::fstat(opened.get(), &a) == 0);
    REQUIRE(::fstatat(t.dir.get(), "", &b, AT_EMPTY_PATH) == 0);
    CHECK(a.st_ino == b.st_ino);
    CHECK(a.st_dev == b.st_dev);
}

TEST_CASE("ProcAt without /proc/self/fd open is the absolute path", "[fusefs][procat]") {
    TempDir t;
    const ProcAt at(-1, t.dir.get());
    CHECK(at.dir() == AT_FDCWD);
    CHECK(std::string(at.name()) == "/proc/self/fd/" + std::to_string(t.dir.get()));
    CHECK(link_of(at) == t.path + "/sub");
}

TEST_CASE("ProcAt follows a rename made after the descriptor was opened", "[fusefs][procat]") {
    TempDir t;
    REQUIRE(::rename((t.path + "/sub").c_str(), (t.path + "/moved").c_str()) == 0);
    CHECK(link_of(ProcAt(t.proc_fds.get(), t.dir.get())) == t.path + "/moved");
}

TEST_CASE("ProcAt holds the largest descriptor number", "[fusefs][procat]") {
    CHECK(std::string(ProcAt(3, INT_MAX).name()) == std::to_string(INT_MAX));
    CHECK(std::string(ProcAt(-1, INT_MAX).name()) == "/proc/self/fd/" + std::to_string(INT_MAX));
}
