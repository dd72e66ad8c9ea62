#include "fusefs/channel.hpp"

#include <algorithm>
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
// FUSE over io_uring (7.42, Linux 6.14).
constexpr std::uint32_t kInitOverIoUring2 = 1U << 9; // FUSE_OVER_IO_URING (bit 41), in flags2
constexpr std::uint32_t kDefaultMaxPages = 32;       // the kernel's, without FUSE_MAX_PAGES
constexpr std::uint32_t kMinReadBuffer = 8192;       // FUSE_MIN_READ_BUFFER
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
std::atomic<bool> g_passthrough_say{false};
std::atomic<bool> g_passthrough{false};
std::atomic<int> g_dev_fd{-1};
void (*g_ring_start)(void*) = nullptr; // offer_ring(), before the session starts
void* g_ring_arg = nullptr;
std::size_t g_ring_capacity = 0;
bool g_ring_say_why = false;

// Per worker thread: what the request it read last asked for.
thread_local bool t_kill_setid = false;
thread_local std::uint64_t t_init_unique = 0; // the INIT request whose reply is amended
thread_local bool t_init_killpriv = false;    // ... to take FUSE_HANDLE_KILLPRIV_V2
thread_local bool t_init_passthrough = false; // ... to take FUSE_PASSTHROUGH
thread_local bool t_init_ring = false;        // ... to take FUSE_OVER_IO_URING
thread_local std::uint64_t t_unique = 0;      // the request read last
thread_local int t_reply_backing = 0;         // reply_with_backing()
thread_local RingReply* t_ring = nullptr;     // the ring entry whose request this thread serves

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
        const std::uint32_t flags2 = (flags & FUSE_INIT_EXT) != 0
                                         ? field_at(body, body_len, offsetof(fuse_init_in, flags2))
                                         : 0;
        t_init_passthrough = current && g_want_passthrough.load(std::memory_order_relaxed) &&
                             (flags2 & kInitPassthrough2) != 0;
        t_init_ring = current && g_ring_start != nullptr && (flags2 & kInitOverIoUring2) != 0;
        t_init_unique = t_init_killpriv || t_init_passthrough || t_init_ring ? h.unique : 0;
        if (g_ring_say_why && g_ring_start != nullptr && !t_init_ring) {
            std::fprintf(stderr, "guardfs: FUSE over io_uring off: the kernel does not offer it "
                                 "(Linux 6.14 or later, with its fuse.enable_uring on)\n");
        }
        if (g_want_passthrough.load(std::memory_order_relaxed) &&
            g_passthrough_say.load(std::memory_order_relaxed) && !t_init_passthrough) {
            std::fprintf(stderr, "guardfs: FUSE passthrough off: the kernel does not offer it "
                                 "(Linux 6.9 or later)\n");
        }
        break;
    }
    default:
        break;
    }
}

DataServer g_data_server = nullptr; // serve_data_ops()
void* g_data_arg = nullptr;

// The reply to a READ or WRITE served by the data server: `header` and, after it, `payload`
// (where a READ's data already is), laid out as the kernel expects from `result`.
std::uint32_t data_reply(char* header, char* payload, std::uint64_t unique, bool write,
                         std::int64_t result) noexcept {
    fuse_out_header h{};
    h.unique = unique;
    std::uint32_t size = 0;
    if (result < 0) {
        h.error = static_cast<std::int32_t>(result);
    } else if (write) {
        fuse_write_out w{};
        w.size = static_cast<std::uint32_t>(result);
        std::memcpy(payload, &w, sizeof w);
        size = sizeof w;
    } else {
        size = static_cast<std::uint32_t>(result);
    }
    h.len = static_cast<std::uint32_t>(sizeof h + size);
    std::memcpy(header, &h, sizeof h);
    return size;
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

// The largest request the kernel may hand to a ring entry, by the INIT reply `out`: the kernel
// sizes a ring's payload as max(FUSE_MIN_READ_BUFFER, max_write, max_pages pages).
std::size_t ring_payload_needed(const char* out, std::uint32_t flags) noexcept {
    const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    const std::uint32_t max_pages =
        (flags & FUSE_MAX_PAGES) != 0
            ? load_at<std::uint16_t>(out, offsetof(fuse_init_out, max_pages))
            : kDefaultMaxPages;
    return std::max({std::size_t{kMinReadBuffer},
                     std::size_t{load_at<std::uint32_t>(out, offsetof(fuse_init_out, max_write))},
                     std::size_t{max_pages} * page});
}

// The successful reply to the INIT request noted above, amended: FUSE_HANDLE_KILLPRIV_V2 added
// to its flags, FUSE_PASSTHROUGH to its flags2 with the stacking depth of backing files,
// FUSE_OVER_IO_URING to its flags2 (and the ring started once the reply is written).
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
    const bool ring = t_init_ring && (flags & FUSE_INIT_EXT) != 0 &&
                      ring_payload_needed(out.data(), flags) <= g_ring_capacity;
    if (t_init_ring && !ring && g_ring_say_why) {
        std::fprintf(stderr, "guardfs: FUSE over io_uring off: libfuse's INIT reply allows "
                             "requests larger than a ring entry\n");
    }
    if (ring) {
        const auto flags2 = load_at<std::uint32_t>(out.data(), offsetof(fuse_init_out, flags2));
        store_at(out.data(), offsetof(fuse_init_out, flags2), flags2 | kInitOverIoUring2);
    }
    std::array<iovec, 2> patched{header, iovec{out.data(), out.size()}};
    const ssize_t n = ::writev(fd, patched.data(), 2);
    if (n >= 0) {
        g_killpriv_v2.store(killpriv, std::memory_order_release);
        g_passthrough.store(passthrough, std::memory_order_release);
        if (ring) {
            // The kernel now holds every request until each queue has an entry.
            g_ring_start(g_ring_arg);
        }
    }
    if (t_init_passthrough && g_passthrough_say.load(std::memory_order_relaxed)) {
        std::fprintf(stderr, "guardfs: FUSE passthrough %s\n",
                     passthrough && n >= 0 ? "on" : "off: libfuse's INIT reply cannot carry it");
    }
    return n;
}

// A reply to the request this thread took from a ring entry, laid into the entry's buffers: the
// header into its in_out area, the arguments one after another into its payload (a READ's data
// already there stays where it is).
ssize_t to_ring(RingReply& r, const iovec* iov, int count) noexcept {
    std::size_t total = 0;
    for (int i = 1; i < count; ++i) {
        total += iov[i].iov_len;
    }
    fuse_out_header h{};
    std::memcpy(&h, iov[0].iov_base, sizeof h);
    if (total > r.capacity) {
        h.error = -EIO; // cannot happen: the kernel sized the payload for the largest reply
        total = 0;
    }
    char* at = r.payload;
    for (int i = 1; i < count && total > 0; ++i) {
        if (iov[i].iov_base != at) {
            std::memmove(at, iov[i].iov_base, iov[i].iov_len);
        }
        at += iov[i].iov_len;
    }
    h.len = static_cast<std::uint32_t>(sizeof h + total);
    std::memcpy(r.header, &h, sizeof h);
    r.payload_size = static_cast<std::uint32_t>(total);
    r.sent = true;
    return static_cast<ssize_t>(h.len);
}

// Where a reply goes: the ring entry whose request this thread serves, else /dev/fuse.
ssize_t emit(int fd, const iovec* iov, int count) {
    if (t_ring != nullptr && count >= 1 && iov[0].iov_len == sizeof(fuse_out_header)) {
        fuse_out_header h{};
        std::memcpy(&h, iov[0].iov_base, sizeof h);
        if (h.unique == t_ring->unique) {
            return to_ring(*t_ring, iov, count);
        }
    }
    return ::writev(fd, iov, count);
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
    return emit(fd, patched.data(), 2);
}

// libfuse lays a reply out as the header, then the argument.
ssize_t channel_writev(int fd, struct iovec* iov, int count, void* /*userdata*/) {
    const int backing = std::exchange(t_reply_backing, 0);
    if ((t_init_unique == 0 && backing == 0) || count != 2 ||
        iov[0].iov_len != sizeof(fuse_out_header)) {
        return emit(fd, iov, count);
    }
    fuse_out_header h{};
    std::memcpy(&h, iov[0].iov_base, sizeof h);
    if (h.error != 0) {
        return emit(fd, iov, count);
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
    return emit(fd, iov, count);
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

void offer_ring(void (*start)(void*), void* arg, std::size_t payload_capacity,
                bool say_why) noexcept {
    g_ring_start = start;
    g_ring_arg = arg;
    g_ring_capacity = payload_capacity;
    g_ring_say_why = say_why;
}

void serve_data_ops(DataServer server, void* arg) noexcept {
    g_data_server = server;
    g_data_arg = arg;
}

bool decode_data_op(const char* msg, std::size_t len, DataOp& op) noexcept {
    fuse_in_header h{};
    if (len < sizeof h) {
        return false;
    }
    std::memcpy(&h, msg, sizeof h);
    const char* body = msg + sizeof h;
    const std::size_t body_len = len - sizeof h;
    if (h.len != len) {
        return false;
    }
    if (h.opcode == FUSE_READ && body_len >= sizeof(fuse_read_in)) {
        fuse_read_in in{};
        std::memcpy(&in, body, sizeof in);
        op = DataOp{h.unique, false, in.fh, in.offset, in.size, nullptr};
        return true;
    }
    if (h.opcode == FUSE_WRITE && body_len >= sizeof(fuse_write_in)) {
        fuse_write_in in{};
        std::memcpy(&in, body, sizeof in);
        if (body_len - sizeof in != in.size) {
            return false;
        }
        op = DataOp{h.unique, true, in.fh, in.offset, in.size, body + sizeof in};
        return true;
    }
    return false;
}

bool serve_dev_data_request(char* mem, std::size_t len, std::span<char> read_buffer) noexcept {
    DataOp op;
    // libfuse splices the data of a READ of two pages or more straight from the file into
    // /dev/fuse; that stays with it.
    if (g_data_server == nullptr || !decode_data_op(mem, len, op) ||
        (!op.write && op.size > std::min(read_buffer.size(), kSmallRead))) {
        return false;
    }
    const std::span<char> buffer = op.write ? std::span<char>() : read_buffer;
    const std::int64_t result = g_data_server(g_data_arg, op, buffer);
    if (result == kNotServed) {
        return false;
    }
    // The header goes where the request was, a WRITE's reply after it; a READ's data is sent
    // from where it was read.
    const std::uint32_t size =
        data_reply(mem, mem + sizeof(fuse_out_header), op.unique, op.write, result);
    const std::array<iovec, 2> reply{iovec{mem, sizeof(fuse_out_header) + (op.write ? size : 0)},
                                     iovec{buffer.data(), op.write ? 0 : size}};
    // ENOENT: the request was interrupted meanwhile, and the kernel no longer waits for it.
    if (::writev(g_dev_fd.load(std::memory_order_relaxed), reply.data(), 2) < 0 &&
        errno != ENOENT) {
        std::fprintf(stderr, "guardfs: writing a reply to /dev/fuse: %s\n", std::strerror(errno));
    }
    return true;
}

void serve_ring_request(fuse_session* se, RingReply& reply, char* msg, std::size_t len) noexcept {
    note_request(msg, len);
    reply.unique = t_unique;
    reply.sent = false;
    reply.payload_size = 0;
    if (DataOp op; g_data_server != nullptr && decode_data_op(msg, len, op)) {
        const std::int64_t result = g_data_server(
            g_data_arg, op,
            op.write ? std::span<char>() : std::span<char>(reply.payload, reply.capacity));
        if (result != kNotServed) {
            reply.payload_size =
                data_reply(reply.header, reply.payload, op.unique, op.write, result);
            reply.sent = true;
            return;
        }
    }
    t_ring = &reply;
    fuse_buf buf{};
    buf.mem = msg;
    buf.size = len;
    fuse_session_process_buf(se, &buf);
    t_ring = nullptr;
    if (!reply.sent) {
        fuse_out_header h{};
        h.len = sizeof h;
        h.error = -EIO;
        h.unique = reply.unique;
        std::memcpy(reply.header, &h, sizeof h);
        reply.sent = true;
    }
}

std::span<char> ring_reply_buffer() noexcept {
    return t_ring != nullptr ? std::span<char>(t_ring->payload, t_ring->capacity)
                             : std::span<char>();
}

void want_passthrough(bool on, bool say) noexcept {
    g_want_passthrough.store(on, std::memory_order_relaxed);
    g_passthrough_say.store(say, std::memory_order_relaxed);
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
