// What the daemon's request-serving threads (worker_loop.hpp, ring_loop.hpp) share: they are
// started with the signals that end the daemon blocked, so those reach the thread that waits for
// the end of the session, and at shutdown a thread blocked waiting for a request is interrupted
// by wake_signal(), whose handler does nothing: the wait ends with EINTR and the thread sees
// that the session is ending. (libfuse cancels its workers instead; a cancellation unwinds
// through instrumented frames, which AddressSanitizer's stack bookkeeping does not survive.)
#pragma once

#include <cstddef>
#include <initializer_list>

#include <signal.h>

namespace guardfs::fusefs {

// Runs `start` with SIGTERM, SIGINT, SIGHUP and SIGQUIT blocked, so that the thread it starts
// inherits a mask that leaves them to others.
template <typename F>
auto with_signals_blocked(F start) {
    sigset_t block;
    sigset_t old;
    ::sigemptyset(&block);
    for (const int sig : {SIGTERM, SIGINT, SIGHUP, SIGQUIT}) {
        ::sigaddset(&block, sig);
    }
    ::pthread_sigmask(SIG_BLOCK, &block, &old);
    auto result = start();
    ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
    return result;
}

// The signal that interrupts a serving thread's wait at shutdown.
inline int wake_signal() noexcept {
    return SIGRTMIN;
}

// Requests that may keep their thread waiting on the disk: data moved in bulk (a READ or WRITE
// of 64 KiB or more: readahead, large writes), FSYNC, FSYNCDIR, FALLOCATE, COPY_FILE_RANGE.
// Several run at once as the disk can serve them, so a loop makes sure one does not leave
// the next waiting for its thread. `msg` is the request as the kernel sent it (fuse_in_header
// first), `len` its length; false for anything shorter than a header.
bool may_wait_on_disk(const void* msg, std::size_t len) noexcept;

// The CPUs online now (at least 1).
unsigned online_cpus() noexcept;

// Installs the do-nothing handler for wake_signal(), without SA_RESTART (the wait must end).
// Returns the previous disposition in `old` when given.
void install_wake_handler(struct sigaction* old = nullptr) noexcept;

} // namespace guardfs::fusefs
