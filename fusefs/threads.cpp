// What the request-serving threads share; see threads.hpp.
#include "fusefs/threads.hpp"

#include <cstdint>
#include <cstring>

#include <linux/fuse.h>
#include <unistd.h>

namespace guardfs::fusefs {

namespace {

void on_wake_signal(int /*sig*/) {}

} // namespace

bool may_wait_on_disk(const void* msg, std::size_t len) noexcept {
    constexpr std::uint32_t kBulk = 64 * 1024;
    fuse_in_header h{};
    if (msg == nullptr || len < sizeof h) {
        return false;
    }
    std::memcpy(&h, msg, sizeof h);
    const char* body = static_cast<const char*>(msg) + sizeof h;
    const std::size_t body_len = len - sizeof h;
    std::uint32_t size = 0;
    switch (h.opcode) {
    case FUSE_READ:
    case FUSE_WRITE:
        static_assert(offsetof(fuse_read_in, size) == offsetof(fuse_write_in, size));
        if (body_len >= offsetof(fuse_read_in, size) + sizeof size) {
            std::memcpy(&size, body + offsetof(fuse_read_in, size), sizeof size);
        }
        return size >= kBulk;
    case FUSE_FSYNC:
    case FUSE_FSYNCDIR:
    case FUSE_FALLOCATE:
    case FUSE_COPY_FILE_RANGE:
        return true;
    default:
        return false;
    }
}

unsigned online_cpus() noexcept {
    const long n = ::sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? static_cast<unsigned>(n) : 1U;
}

void install_wake_handler(struct sigaction* old) noexcept {
    struct sigaction wake {};

    wake.sa_handler = &on_wake_signal;
    ::sigemptyset(&wake.sa_mask);
    wake.sa_flags = 0; // no SA_RESTART: the wait must end
    ::sigaction(wake_signal(), &wake, old);
}

} // namespace guardfs::fusefs
