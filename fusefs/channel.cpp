#include "fusefs/channel.hpp"

#include <array>
#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <utility>

#include <fcntl.h>
#include <linux/fuse.h>
#include <sys/ioctl.h>
#include <sys/uio.h>
#include <unistd.h>

namespace guardfs::fusefs {

namespace {

// Passthrough's part of the protocol (7.40, Linux 6.9), newer than Debian 12's <linux/fuse.h>.
constexpr std::uint32_t kInitPassthrough2 = 1U << 5; // FUSE_PASSTHROUGH (bit 37), in flags2
constexpr std::uint32_t kOpenPassthrough = 1U << 7;  // FOPEN_PASSTHROUGH
constexpr std::size_t kInitOutMaxStackDepth = offsetof(fuse_init_out, flags2) + 4;
constexpr std::uint32_t kMaxStackDepth = 1; // backing files on a filesystem that stacks on none

struct BackingMap {
    std::int32_t fd;
    std::uint32_t flags;
    std::uint64_t padding;
};

constexpr unsigned long kIocBackingOpen = _IOW(229, 1, BackingMap);     // NOLINT: kernel macro
constexpr unsigned long kIocBackingClose = _IOW(229, 2, std::uint32_t); // NOLINT: kernel macro

std::atomic<bool> g_killpriv_v2{false};
std::atomic<bool> g_want_passthrough{false};
std::atomic<bool> g_passthrough{false};
std::atomic<int> g_dev_fd{-1};

// Per worker thread: what the request it read last asked for.
thread_local bool t_kill_setid = false;
thread_local std::uint64_t t_init_unique = 0; // the INIT request whose reply is amended
thread_local bool t_init_killpriv = false;    // ... to take FUSE_HANDLE_KILLPRIV_V2
thread_local bool t_init_passthrough = false; // ... to take FUSE_PASSTHROUGH
thread_local std::uint64_t t_unique = 0;      // the request read last
thread_local int t_reply_backing = 0;         // reply_with_backing()

template <typename T>
T load_at(const char* p, std::size_t offset) noexcept {
    T v{};
    std::memcpy(&v, p + offset, sizeof v);
    return v;
}

std::uint32_t field_at(const char* body, std::size_t body_len, std::size_t offset) noexcept {
    return offset + sizeof(std::uint32_t) <= body_len ? load_at<std::uint32_t>(body, offset) : 0;
}

void note_request(const char* buf, std::size_t len) noexcept {
    t_kill_setid = false;
    fuse_in_header h{};
    if (len < sizeof h) {
        return;
    }
    std::memcpy(&h, buf, sizeof h);
    t_unique = h.unique;
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
    case FUSE_INIT: {
        const std::uint32_t flags = field_at(body, body_len, offsetof(fuse_init_in, flags));
        const bool current =
            field_at(body, body_len, offsetof(fuse_init_in, major)) == FUSE_KERNEL_VERSION &&
            field_at(body, body_len, offsetof(fuse_init_in, minor)) >= 33;
        t_init_killpriv = current && (flags & FUSE_HANDLE_KILLPRIV_V2) != 0;
        t_init_passthrough =
            current && g_want_passthrough.load(std::memory_order_relaxed) &&
            (flags & FUSE_INIT_EXT) != 0 &&
            (field_at(body, body_len, offsetof(fuse_init_in, flags2)) & kInitPassthrough2) != 0;
        t_init_unique = t_init_killpriv || t_init_passthrough ? h.unique : 0;
        if (g_want_passthrough.load(std::memory_order_relaxed) && !t_init_passthrough) {
            std::fprintf(stderr, "guardfs: FUSE passthrough off: the kernel does not offer it "
                                 "(Linux 6.9 or later)\n");
        }
        break;
    }
    default:
        break;
    }
}

ssize_t channel_read(int fd, void* buf, size_t len, void* /*userdata*/) {
    const ssize_t n = ::read(fd, buf, len);
    note_request(static_cast<const char*>(buf), n > 0 ? static_cast<std::size_t>(n) : 0);
    return n;
}

template <typename T>
void store_at(char* p, std::size_t offset, T v) noexcept {
    std::memcpy(p + offset, &v, sizeof v);
}

// The successful reply to the INIT request noted above, amended: FUSE_HANDLE_KILLPRIV_V2 added
// to its flags, FUSE_PASSTHROUGH to its flags2 with the stacking depth of backing files.
ssize_t send_init(int fd, const iovec& header, const iovec& arg) {
    std::array<char, sizeof(fuse_init_out)> out{};
    static_assert(sizeof(fuse_init_out) >= kInitOutMaxStackDepth + sizeof(std::uint32_t));
    std::memcpy(out.data(), arg.iov_base, out.size());
    const bool killpriv = t_init_killpriv;
    auto flags = load_at<std::uint32_t>(out.data(), offsetof(fuse_init_out, flags));
    // The kernel takes passthrough only without the writeback cache, in an extended reply.
    const bool passthrough =
        t_init_passthrough && (flags & FUSE_INIT_EXT) != 0 && (flags & FUSE_WRITEBACK_CACHE) == 0;
    if (killpriv) {
        flags |= FUSE_HANDLE_KILLPRIV_V2;
        store_at(out.data(), offsetof(fuse_init_out, flags), flags);
    }
    if (passthrough) {
        const auto flags2 = load_at<std::uint32_t>(out.data(), offsetof(fuse_init_out, flags2));
        store_at(out.data(), offsetof(fuse_init_out, flags2), flags2 | kInitPassthrough2);
        store_at(out.data(), kInitOutMaxStackDepth, kMaxStackDepth);
    }
    std::array<iovec, 2> patched{header, iovec{out.data(), out.size()}};
    const ssize_t n = ::writev(fd, patched.data(), 2);
    if (n >= 0) {
        g_killpriv_v2.store(killpriv, std::memory_order_release);
        g_passthrough.store(passthrough, std::memory_order_release);
    }
    if (t_init_passthrough) {
        std::fprintf(stderr, "guardfs: FUSE passthrough %s\n",
                     passthrough && n >= 0 ? "on" : "off: libfuse's INIT reply cannot carry it");
    }
    return n;
}

// A successful OPEN or CREATE reply with FOPEN_PASSTHROUGH and the backing id: the argument
// ends with fuse_open_out (after fuse_entry_out for CREATE).
ssize_t send_open(int fd, const iovec& header, const iovec& arg, int backing) {
    std::array<char, sizeof(fuse_entry_out) + sizeof(fuse_open_out)> out{};
    std::memcpy(out.data(), arg.iov_base, arg.iov_len);
    const std::size_t at = arg.iov_len - sizeof(fuse_open_out);
    const auto flags = load_at<std::uint32_t>(out.data(), at + offsetof(fuse_open_out, open_flags));
    store_at(out.data(), at + offsetof(fuse_open_out, open_flags), flags | kOpenPassthrough);
    store_at(out.data(), at + offsetof(fuse_open_out, padding), static_cast<std::int32_t>(backing));
    std::array<iovec, 2> patched{header, iovec{out.data(), arg.iov_len}};
    return ::writev(fd, patched.data(), 2);
}

// libfuse lays a reply out as the header, then the argument.
ssize_t channel_writev(int fd, struct iovec* iov, int count, void* /*userdata*/) {
    const int backing = std::exchange(t_reply_backing, 0);
    if ((t_init_unique == 0 && backing == 0) || count != 2 ||
        iov[0].iov_len != sizeof(fuse_out_header)) {
        return ::writev(fd, iov, count);
    }
    fuse_out_header h{};
    std::memcpy(&h, iov[0].iov_base, sizeof h);
    if (h.error != 0) {
        return ::writev(fd, iov, count);
    }
    if (t_init_unique != 0 && h.unique == t_init_unique &&
        iov[1].iov_len == sizeof(fuse_init_out)) {
        t_init_unique = 0;
        return send_init(fd, iov[0], iov[1]);
    }
    if (backing > 0 && h.unique == t_unique &&
        (iov[1].iov_len == sizeof(fuse_open_out) ||
         iov[1].iov_len == sizeof(fuse_entry_out) + sizeof(fuse_open_out))) {
        return send_open(fd, iov[0], iov[1], backing);
    }
    return ::writev(fd, iov, count);
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
    g_dev_fd.store(fuse_session_fd(se), std::memory_order_relaxed);
    return fuse_session_custom_io(se, &io, fuse_session_fd(se));
}

void want_passthrough(bool on) noexcept {
    g_want_passthrough.store(on, std::memory_order_relaxed);
}

bool passthrough_on() noexcept {
    return g_passthrough.load(std::memory_order_acquire);
}

int open_backing(int fd) noexcept {
    BackingMap map{fd, 0, 0};
    const int id = ::ioctl(g_dev_fd.load(std::memory_order_relaxed), kIocBackingOpen, &map);
    if (id > 0) {
        return id;
    }
    const int err = id == 0 ? EIO : errno;
    // Not for this daemon (EPERM: no CAP_SYS_ADMIN), nor for files on a stacked filesystem
    // (ELOOP), nor on one that cannot back (EOPNOTSUPP): the page cache from now on, said once.
    if ((err == EPERM || err == ELOOP || err == EOPNOTSUPP || err == EINVAL) &&
        g_passthrough.exchange(false, std::memory_order_acq_rel)) {
        std::fprintf(stderr,
                     "guardfs: FUSE passthrough off: the kernel refused a backing file (%s)\n",
                     std::strerror(err));
    }
    return -err;
}

void close_backing(int id) noexcept {
    auto arg = static_cast<std::uint32_t>(id);
    (void)::ioctl(g_dev_fd.load(std::memory_order_relaxed), kIocBackingClose, &arg);
}

void reply_with_backing(int id) noexcept {
    t_reply_backing = id;
}

bool setid_left_to_daemon() noexcept {
    return g_killpriv_v2.load(std::memory_order_acquire);
}

bool request_kills_setid() noexcept {
    return t_kill_setid;
}

} // namespace guardfs::fusefs
