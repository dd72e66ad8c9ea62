// The daemon's end of /dev/fuse, given to libfuse as its custom I/O: plain read(2), writev(2)
// and splice(2), with what libfuse 3.14 (Debian 12) cannot do itself (docs/decisions/008):
//  - the INIT reply takes FUSE_HANDLE_KILLPRIV_V2 when the kernel offers it. The kernel then
//    marks the mount SB_NOSEC and stops sending a GETXATTR of security.capability before every
//    write(2); in exchange it leaves clearing set-user-ID and set-group-ID to the daemon;
//  - the kernel's request to clear them (FUSE_WRITE_KILL_SUIDGID, FATTR_KILL_SUIDGID,
//    FUSE_OPEN_KILL_SUIDGID: the caller lacks CAP_FSETID), which libfuse drops, is kept for the
//    handler of the request: request_kills_setid().
// Requests are read into memory with read(2), as libfuse did here anyway: its splice receive
// wants a pipe as large as its whole buffer (1 MiB + 4 KiB), more than pipe-max-size allows.
#pragma once

#include "fusefs/data_op.hpp"

#include <fuse_lowlevel.h>

#include <cstddef>
#include <cstdint>
#include <span>

namespace guardfs::fusefs {

// Installs the channel on a mounted session, before its loop starts. Returns 0 or a negative
// errno (then the session goes on with libfuse's own I/O).
int install_channel(fuse_session* se) noexcept;

// FUSE passthrough (Linux 6.9 and later, docs/decisions/011): the kernel reads and writes an
// open file's data on the underlying file itself, without a request per read(2) or write(2).
// Asked for in the INIT reply when want_passthrough(true) was called before the session
// started, the kernel offers it and the writeback cache is off (the kernel takes one or the
// other). With `say`, stderr tells whether the kernel took it; a refused backing file is told
// either way.
void want_passthrough(bool on, bool say) noexcept;

// The kernel took passthrough, and no backing registration has failed for lack of privilege.
bool passthrough_on() noexcept;

// Registers the open file `fd` with the kernel as a backing file: its id (> 0), or a negative
// errno. EPERM (the daemon lacks CAP_SYS_ADMIN) turns passthrough off for the session.
int open_backing(int fd) noexcept;

// Drops a registration; files the kernel opened with it keep their own reference.
void close_backing(int id) noexcept;

// The next successful OPEN or CREATE reply this thread sends carries FOPEN_PASSTHROUGH and the
// backing `id`; any reply clears it.
void reply_with_backing(int id) noexcept;

// FUSE over io_uring (Linux 6.14 and later, with the kernel's fuse.enable_uring on;
// docs/decisions/012): the kernel hands requests to ring entries of a queue per CPU
// (fusefs/ring_loop.hpp) instead of queueing them on /dev/fuse, and each is served on the CPU
// of the program that made it. Offered in the INIT reply when the kernel offers it, offer_ring()
// was called before the session started, and the largest request fits `payload_capacity`.
// `start(arg)` runs right after that INIT reply is written: the kernel takes ring entries only
// from then on, and holds every other request until each queue has one. With `say_why`, the
// reason it is not offered goes to stderr.
void offer_ring(void (*start)(void*), void* arg, std::size_t payload_capacity,
                bool say_why) noexcept;

// A request taken from a ring entry is answered in the entry's buffers, not on /dev/fuse.
struct RingReply {
    char* header = nullptr;         // the entry's in_out area: fuse_out_header
    char* payload = nullptr;        // the entry's payload buffer: the reply's arguments
    std::size_t capacity = 0;       // of payload
    std::uint32_t payload_size = 0; // bytes of the reply in payload
    std::uint64_t unique = 0;       // the request being served
    bool sent = false;              // a reply to it was written
};

// Serves `msg` (fuse_in_header and its arguments, `len` bytes, contiguous), a request this thread
// took from a ring entry, with the data server (a READ or WRITE) or libfuse's handlers; the
// reply lands in `reply`. A request that no handler answered is answered EIO there, so the
// caller that waits on it is never stranded.
void serve_ring_request(fuse_session* se, RingReply& reply, char* msg, std::size_t len) noexcept;

// The payload buffer of the ring entry whose request this thread is serving (a READ's data can
// be read straight into it and answered from there without a copy), or an empty span.
std::span<char> ring_reply_buffer() noexcept;

// Installs the server of READ and WRITE (data_op.hpp), before the session's loop starts; `arg`
// is handed to it. serve_data_ops(nullptr, nullptr) leaves them to libfuse again.
void serve_data_ops(DataServer server, void* arg) noexcept;

// The largest READ answered on /dev/fuse from the worker's own buffer: libfuse 3.14 splices the
// data of a READ of two pages or more, and copies smaller ones through a buffer it allocates.
inline constexpr std::size_t kSmallRead = 8191;

// A request read from /dev/fuse into `mem` (`len` bytes), served and answered on /dev/fuse when
// it is a WRITE, or a READ that fits `read_buffer` (where its data is read) and whose data
// libfuse would not splice (below 8 KiB). Returns false, having done nothing, for any other
// request.
bool serve_dev_data_request(char* mem, std::size_t len, std::span<char> read_buffer) noexcept;

// The kernel took FUSE_HANDLE_KILLPRIV_V2: clearing set-ID bits is the daemon's business.
bool setid_left_to_daemon() noexcept;

// The request this thread is serving asks that set-user-ID and set-group-ID be cleared: a
// WRITE, a SETATTR of the size, or an OPEN or CREATE with O_TRUNC, by a caller without
// CAP_FSETID. libfuse serves a request in the thread that read it.
bool request_kills_setid() noexcept;

} // namespace guardfs::fusefs
