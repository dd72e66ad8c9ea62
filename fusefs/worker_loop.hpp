// The request loop (issue #6): worker threads that read requests from /dev/fuse and serve each
// in the thread that read it, as libfuse's multi-threaded loop does, with one difference.
//
// libfuse keeps every idle worker blocked in read(2) on /dev/fuse and starts a new one whenever
// a request leaves none reading; the kernel wakes the reader that has waited longest. So one
// program's stream of system calls, whose asynchronous RELEASEs and FORGETs overlap the next
// request, grows the pool and then goes round every thread in it, each with a cold stack and a
// cold buffer. Here one worker per CPU (at least kReaders) waits in read(2); a worker that
// finishes a request while that many are reading parks in a stack of its own, and the one that
// parked last is woken first. A request that leaves no one reading starts nothing: most take
// microseconds, and the next request waits in the kernel meanwhile; only one likely to wait on
// the disk (a READ or WRITE of 64 KiB or more, FSYNC, FALLOCATE, COPY_FILE_RANGE) has another
// reader woken at once, so readahead and large writes keep the disk busy. A watchdog looks every
// 10 ms while requests flow: when every worker is busy and none has finished a request since
// its last look (one waits for an approver, for a lock file's release, for a slow disk), it
// wakes or starts another, up to max_threads. So a waiting question never holds up other
// requests for more than about 10 ms, and a quiet daemon has no timer running.
#pragma once

#include <functional>

struct fuse_session;

namespace guardfs::fusefs {

// The fewest idle workers kept reading /dev/fuse: with two, a stream of requests alternates
// between them without any other wake-up.
inline constexpr unsigned kReaders = 2;

// Serves the session until it is unmounted or fuse_session_exit() is called (a signal handler,
// stop_session). Returns 0 when it ended so, -1 when reading /dev/fuse failed otherwise or no
// worker could be started. max_threads below kReaders is raised to it. `on_exit` runs once the
// session has ended, before the workers are waited for: it ends what a request may be waiting
// on (a question to the approver), so that SIGTERM unmounts at once.
int run_workers(fuse_session* se, unsigned max_threads, const std::function<void()>& on_exit = {});

} // namespace guardfs::fusefs
