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

#include <fuse_lowlevel.h>

namespace guardfs::fusefs {

// Installs the channel on a mounted session, before its loop starts. Returns 0 or a negative
// errno (then the session goes on with libfuse's own I/O).
int install_channel(fuse_session* se) noexcept;

// FUSE passthrough (Linux 6.9 and later, docs/decisions/011): the kernel reads and writes an
// open file's data on the underlying file itself, without a request per read(2) or write(2).
// Asked for in the INIT reply when want_passthrough(true) was called before the session
// started, the kernel offers it and the writeback cache is off (the kernel takes one or the
// other).
void want_passthrough(bool on) noexcept;

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

// The kernel took FUSE_HANDLE_KILLPRIV_V2: clearing set-ID bits is the daemon's business.
bool setid_left_to_daemon() noexcept;

// The request this thread is serving asks that set-user-ID and set-group-ID be cleared: a
// WRITE, a SETATTR of the size, or an OPEN or CREATE with O_TRUNC, by a caller without
// CAP_FSETID. libfuse serves a request in the thread that read it.
bool request_kills_setid() noexcept;

} // namespace guardfs::fusefs
