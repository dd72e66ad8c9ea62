#include "fusefs/channel.hpp"

#include <array>
#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include <fcntl.h>
#include <linux/fuse.h>
#include <sys/uio.h>
#include <unistd.h>

namespace guardfs::fusefs {

namespace {

std::atomic<bool> g_killpriv_v2{false};

// Per worker thread: what the request it read last asked for.
thread_local bool t_kill_setid = false;
thread_local std::uint64_t t_init_unique = 0; // the INIT request whose reply takes the flag

std::uint32_t field_at(const char* body, std::size_t body_len, std::size_t offset) noexcept {
    std::uint32_t v = 0;
    if (offset + sizeof v <= body_len) {
        std::memcpy(&v, body + offset, sizeof v);
    }
    return v;
}

void note_request(const char* buf, std::size_t len) noexcept {
    t_kill_setid = false;
    fuse_in_header h{};
    if (len < sizeof h) {
        return;
    }
    std::memcpy(&h, buf, sizeof h);
    const char* body = buf + sizeof h;
    const std::size_t body_len = len - sizeof h;
    switch (h.opcode) {
    case FUSE_WRITE:
        t_kill_setid = (field_at(body, body_len, offsetof(fuse_write_in, write_flags)) &
                        FUSE_WRITE_KILL_SUIDGID) != 0;
        break;
    case FUSE_SETATTR:
        t_kill_setid =
            (field_at(body, body_len, offsetof(fuse_setattr_in, valid)) & FATTR_KILL_SUIDGID) != 0;
        break;
    case FUSE_OPEN:
        t_kill_setid = (field_at(body, body_len, offsetof(fuse_open_in, open_flags)) &
                        FUSE_OPEN_KILL_SUIDGID) != 0;
        break;
    case FUSE_CREATE:
        t_kill_setid = (field_at(body, body_len, offsetof(fuse_create_in, open_flags)) &
                        FUSE_OPEN_KILL_SUIDGID) != 0;
        break;
    case FUSE_INIT:
        if (field_at(body, body_len, offsetof(fuse_init_in, major)) == FUSE_KERNEL_VERSION &&
            field_at(body, body_len, offsetof(fuse_init_in, minor)) >= 33 &&
            (field_at(body, body_len, offsetof(fuse_init_in, flags)) & FUSE_HANDLE_KILLPRIV_V2) !=
                0) {
            t_init_unique = h.unique;
        }
        break;
    default:
        break;
    }
}

ssize_t channel_read(int fd, void* buf, size_t len, void* /*userdata*/) {
    const ssize_t n = ::read(fd, buf, len);
    note_request(static_cast<const char*>(buf), n > 0 ? static_cast<std::size_t>(n) : 0);
    return n;
}

// The successful reply to the INIT request noted above, with FUSE_HANDLE_KILLPRIV_V2 added to
// its flags; libfuse lays a reply out as the header, then the argument.
ssize_t channel_writev(int fd, struct iovec* iov, int count, void* /*userdata*/) {
    if (t_init_unique == 0 || count != 2 || iov[0].iov_len != sizeof(fuse_out_header)) {
        return ::writev(fd, iov, count);
    }
    fuse_out_header h{};
    std::memcpy(&h, iov[0].iov_base, sizeof h);
    std::array<char, sizeof(fuse_init_out)> out{};
    if (h.unique != t_init_unique || h.error != 0 || iov[1].iov_len != out.size()) {
        return ::writev(fd, iov, count);
    }
    t_init_unique = 0;
    std::memcpy(out.data(), iov[1].iov_base, out.size());
    std::uint32_t flags = 0;
    std::memcpy(&flags, out.data() + offsetof(fuse_init_out, flags), sizeof flags);
    flags |= FUSE_HANDLE_KILLPRIV_V2;
    std::memcpy(out.data() + offsetof(fuse_init_out, flags), &flags, sizeof flags);
    std::array<iovec, 2> patched{iov[0], iovec{out.data(), out.size()}};
    const ssize_t n = ::writev(fd, patched.data(), 2);
    if (n >= 0) {
        g_killpriv_v2.store(true, std::memory_order_release);
    }
    return n;
}

ssize_t channel_splice_send(int fdin, off_t* offin, int fdout, off_t* offout, size_t len,
                            unsigned int flags, void* /*userdata*/) {
    static_assert(sizeof(off_t) == sizeof(loff_t));
    return ::splice(fdin, reinterpret_cast<loff_t*>(offin), fdout, // NOLINT: same type on LP64
                    reinterpret_cast<loff_t*>(offout), len, flags);
}

} // namespace

int install_channel(fuse_session* se) noexcept {
    fuse_custom_io io{};
    io.writev = &channel_writev;
    io.read = &channel_read;
    io.splice_send = &channel_splice_send; // replies with file data: splice as before
    return fuse_session_custom_io(se, &io, fuse_session_fd(se));
}

bool setid_left_to_daemon() noexcept {
    return g_killpriv_v2.load(std::memory_order_acquire);
}

bool request_kills_setid() noexcept {
    return t_kill_setid;
}

} // namespace guardfs::fusefs
