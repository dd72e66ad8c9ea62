// FUSE over io_uring (issue #6, docs/decisions/012): Linux 6.14 and later can hand requests to
// the daemon through io_uring instead of /dev/fuse, on a queue per CPU: a request goes to the
// queue of the CPU its program runs on. Each entry of a queue here has a thread of its own,
// bound to that CPU, waiting on a ring of its own; so the program and the thread that serves it
// share a CPU, and a round trip is two context switches instead of a wake-up of the other CPU
// and back (on the 2-core VM the benchmarks run on, 4 µs against 35-80 µs for an access(2)).
//
// A ring thread waits for its next request under SCHED_IDLE, and serves under SCHED_OTHER. The
// reply that wakes the program is sent while the thread still runs on that CPU, and the
// scheduler moves a woken task to an idle CPU rather than wait for a busy one: the program went
// to the other CPU after every reply, and each move woke a halted CPU (30-40 µs on the VM). A CPU
// that runs only SCHED_IDLE threads counts as idle, so the program stays. Only where the daemon
// may return to SCHED_OTHER (root, CAP_SYS_NICE or RLIMIT_NICE), and only while some CPU is
// mostly idle (on busy CPUs a SCHED_IDLE thread would wait for every other program); two
// system calls a request.
//
// A thread whose request waits (an approver's answer, a lock, a slow disk) keeps its entry; the
// queue's other entries serve the CPU meanwhile. A watchdog gives a queue whose entries stay all
// busy from one of its looks to the next (10 ms apart) one more entry, up to a total cap, as the
// /dev/fuse loop (worker_loop.hpp) does with its workers. It looks every 10 ms while some
// queue's entries are all busy, and sleeps otherwise (or looks every 50 ms while threads wait
// under SCHED_IDLE): a ring thread wakes it when its request may wait (an ask:
// note_ring_thread_may_wait; the disk: at once, with one more entry), and when it takes a
// request 50 ms or more after the last look. FORGET and INTERRUPT still come on /dev/fuse, as
// does everything before the ring is ready.
#pragma once

#include <memory>
#include <string>

struct fuse_session;

namespace guardfs::fusefs {

class Rings;

struct RingsDeleter {
    void operator()(Rings* rings) const noexcept; // stops the rings first if still running
};

using RingsPtr = std::unique_ptr<Rings, RingsDeleter>;

// On a ring thread: its request may now wait long (an approver's answer). Wakes the watchdog,
// which gives the queue one more entry if it stays busy (a guard::Arbiter wait hook). Does
// nothing on any other thread.
void note_ring_thread_may_wait() noexcept;

// Makes one entry per possible CPU (its ring, its buffers and its thread, which waits) and
// offers the ring in the session's INIT reply (channel.hpp: offer_ring); the threads register
// their entries once that reply is written. Call before the session's loop starts, after any
// fork. Returns nullptr, having offered nothing, when io_uring cannot be set up here (said on
// stderr when `say_why`).
// `mountpoint` is where the session is mounted: the daemon stats it to make a queue's entries take
// requests left waiting in the kernel (ring_loop.cpp, Rings::kick).
RingsPtr prepare_rings(fuse_session* se, const std::string& mountpoint, unsigned max_entries,
                       bool say_why);

// Ends every ring thread, once the session's loop has ended. A thread serving a request
// finishes it first. The rings and their buffers are freed by the deleter.
void stop_rings(Rings& rings) noexcept;

} // namespace guardfs::fusefs
