// Round trips to a FUSE daemon, one system call at a time (issue #6, docs/decisions/012): the
// time per call of four loops in DIR, and how often the calling thread found itself on another
// CPU between two calls. A call that leaves the calling CPU and wakes the other costs much more
// than one served where it was made, so the second figure explains the first.
//
//   bench_roundtrip DIR [N]     (N calls per loop, default 20000)
//
// Loops: access(R_OK); open(O_RDONLY) + close; open(O_WRONLY|O_APPEND) + write of 5 bytes +
// close; rename back and forth. DIR must be writable; the files "rt-a", "rt-b" are made there.
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>

#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

namespace {

struct Loop {
    const char* name;
    std::function<bool(long)> call; // false: the call failed
};

void run(const Loop& loop, long n) {
    int cpu = ::sched_getcpu();
    long moves = 0;
    long failed = 0;
    const auto start = std::chrono::steady_clock::now();
    for (long i = 0; i < n; ++i) {
        if (!loop.call(i)) {
            ++failed;
        }
        const int now = ::sched_getcpu();
        moves += now != cpu ? 1 : 0;
        cpu = now;
    }
    const std::chrono::duration<double, std::micro> took = std::chrono::steady_clock::now() - start;
    std::printf("%-18s %8.1f us/call  %6ld CPU moves in %ld calls%s\n", loop.name,
                took.count() / static_cast<double>(n), moves, n, failed > 0 ? "  (failures)" : "");
}

} // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: bench_roundtrip DIR [N]\n");
        return 2;
    }
    const std::string dir = argv[1];
    const long n = argc > 2 ? std::strtol(argv[2], nullptr, 10) : 20000;
    const std::string a = dir + "/rt-a";
    const std::string b = dir + "/rt-b";
    const int fd = ::open(a.c_str(), O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0 || ::close(fd) != 0) {
        std::perror(a.c_str());
        return 1;
    }
    const std::array<Loop, 4> loops{
        Loop{"access",
             [&](long) {
                 return ::access(a.c_str(), R_OK) == 0;
             }},
        Loop{"open/close",
             [&](long) {
                 const int f = ::open(a.c_str(), O_RDONLY | O_CLOEXEC);
                 return f >= 0 && ::close(f) == 0;
             }},
        Loop{"open/append/close",
             [&](long) {
                 const int f = ::open(a.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
                 const bool ok = f >= 0 && ::write(f, "line\n", 5) == 5;
                 return f >= 0 && ::close(f) == 0 && ok;
             }},
        Loop{"rename",
             [&](long i) {
                 return (i % 2 == 0 ? ::rename(a.c_str(), b.c_str())
                                    : ::rename(b.c_str(), a.c_str())) == 0;
             }},
    };
    for (const Loop& loop : loops) {
        run(loop, n);
    }
    ::unlink(n % 2 == 0 ? a.c_str() : b.c_str());
    return 0;
}
