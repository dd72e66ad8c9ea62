// The FUSE-over-io_uring loop; see ring_loop.hpp.
#include "fusefs/ring_loop.hpp"

#include "fusefs/channel.hpp"
#include "fusefs/threads.hpp"

#include <fuse_lowlevel.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <mutex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <liburing.h>
#include <linux/fuse.h>
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace guardfs::fusefs {

namespace {

// The protocol's own structures (7.42, Linux 6.14), newer than Debian 12's <linux/fuse.h>.
constexpr std::size_t kInOutSize = 128; // FUSE_URING_IN_OUT_HEADER_SZ
constexpr std::size_t kOpInSize = 128;  // FUSE_URING_OP_IN_OUT_SZ

struct EntInOut { // struct fuse_uring_ent_in_out
    std::uint64_t flags;
    std::uint64_t commit_id; // the request's unique, to be named in the commit
    std::uint32_t payload_sz;
    std::uint32_t padding;
    std::uint64_t reserved;
};

struct ReqHeader {                       // struct fuse_uring_req_header: an entry's first buffer
    std::array<char, kInOutSize> in_out; // fuse_in_header in, fuse_out_header back
    std::array<char, kOpInSize> op_in;   // the request's first argument (its fixed part)
    EntInOut ent;
};

struct CmdReq { // struct fuse_uring_cmd_req, in the SQE's command area
    std::uint64_t flags;
    std::uint64_t commit_id;
    std::uint16_t qid;
    std::array<std::uint8_t, 6> padding;
};

static_assert(sizeof(ReqHeader) == 288 && sizeof(CmdReq) == 24);

constexpr std::uint32_t kCmdRegister = 1;       // FUSE_IO_URING_CMD_REGISTER
constexpr std::uint32_t kCmdCommitAndFetch = 2; // FUSE_IO_URING_CMD_COMMIT_AND_FETCH

// The largest request or reply: libfuse 3.14 asks for max_write and max_pages of 1 MiB (the
// channel offers the ring only if the INIT reply stays within this).
constexpr std::size_t kPayloadCapacity = std::size_t{1} << 20;

// Room before the payload, where a request's header and first argument are copied so that the
// whole request lies contiguous, as libfuse reads it.
constexpr std::size_t kLead = 4096;
static_assert(kLead >= sizeof(fuse_in_header) + kOpInSize);

// The watchdog's looks (Rings::watch): every kTick while some queue's entries are all busy,
// every kLoadTick at the CPUs' load, and asleep after kQuiet without a request.
constexpr std::chrono::milliseconds kTick{10};
constexpr std::chrono::milliseconds kLoadTick{50};
constexpr std::chrono::milliseconds kQuiet{1000};
constexpr std::int64_t kLoadTickNs = std::chrono::nanoseconds(kLoadTick).count();
constexpr std::int64_t kQuietNs = std::chrono::nanoseconds(kQuiet).count();

// Nanoseconds on CLOCK_MONOTONIC_COARSE: a few nanoseconds to read (vDSO), to the kernel's tick,
// enough to say whether a look at the load is due.
std::int64_t coarse_now_ns() noexcept {
    timespec ts{};
    ::clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return std::int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

// The number of queues the kernel makes: one per possible CPU (num_possible_cpus()), counted
// from /sys/devices/system/cpu/possible ("0-3", "0,2-3").
unsigned possible_cpus() {
    std::ifstream in("/sys/devices/system/cpu/possible");
    std::string text;
    unsigned count = 0;
    if (std::getline(in, text)) {
        std::size_t at = 0;
        while (at < text.size()) {
            const std::size_t comma = std::min(text.find(',', at), text.size());
            const std::string part = text.substr(at, comma - at);
            const std::size_t dash = part.find('-');
            try {
                const unsigned long first = std::stoul(part.substr(0, dash));
                const unsigned long last =
                    dash == std::string::npos ? first : std::stoul(part.substr(dash + 1));
                count += last >= first ? static_cast<unsigned>(last - first + 1) : 0U;
            } catch (const std::exception&) {
                return 0;
            }
            at = comma + 1;
        }
    }
    return count;
}

// Sets the calling thread's scheduling policy (priority 0, nice kept): true when it took it.
bool set_policy(int policy) noexcept {
    sched_param none{};
    return ::sched_setscheduler(0, policy, &none) == 0;
}

// Whether a thread of this daemon may wait under SCHED_IDLE and come back (see Rings): it runs
// under SCHED_OTHER, and may return to it from SCHED_IDLE (root, CAP_SYS_NICE, or an
// RLIMIT_NICE that allows its nice value). Tried in a thread of its own, which ends either way.
bool can_wait_idle() {
    bool ok = false;
    try {
        std::thread([&ok] {
            ok = ::sched_getscheduler(0) == SCHED_OTHER && set_policy(SCHED_IDLE) &&
                 set_policy(SCHED_OTHER);
        }).join();
    } catch (const std::system_error&) {
        return false;
    }
    return ok;
}

// Sets the policy of thread `tid` of this process (see set_policy).
bool set_policy_of(pid_t tid, int policy) noexcept {
    sched_param none{};
    return ::syscall(SYS_sched_setscheduler, tid, policy, &none) == 0;
}

// How long each CPU has been idle, from /proc/stat (idle + iowait, in clock ticks), and in all.
// Read through a descriptor kept open, from the start each time.
class CpuIdle {
public:
    CpuIdle() : fd_(::open("/proc/stat", O_RDONLY | O_CLOEXEC)) {}

    CpuIdle(const CpuIdle&) = delete;
    CpuIdle& operator=(const CpuIdle&) = delete;

    ~CpuIdle() {
        if (fd_ >= 0) {
            ::close(fd_);
        }
    }

    // Whether some CPU was idle for at least half of the time since the last call (true on the
    // first call, or when /proc/stat cannot be read: nothing says otherwise).
    bool some_cpu_idle() {
        std::array<char, 8192> buf{};
        const ssize_t n = fd_ >= 0 ? ::pread(fd_, buf.data(), buf.size() - 1, 0) : -1;
        if (n <= 0) {
            return true;
        }
        std::vector<std::pair<std::uint64_t, std::uint64_t>> now; // (idle, total) per CPU
        const std::string_view text(buf.data(), static_cast<std::size_t>(n));
        std::size_t at = 0;
        while (at < text.size()) {
            const std::size_t end = std::min(text.find('\n', at), text.size());
            const std::string_view line = text.substr(at, end - at);
            at = end + 1;
            if (line.size() < 4 || line.substr(0, 3) != "cpu" || line[3] == ' ') {
                continue; // the "cpu " line sums every CPU; others are not CPUs
            }
            std::uint64_t idle = 0;
            std::uint64_t total = 0;
            std::size_t field = 0;
            std::size_t p = line.find(' ');
            while (p != std::string_view::npos && field < 8) {
                while (p < line.size() && line[p] == ' ') {
                    ++p;
                }
                std::uint64_t v = 0;
                while (p < line.size() && line[p] >= '0' && line[p] <= '9') {
                    v = v * 10 + static_cast<std::uint64_t>(line[p] - '0');
                    ++p;
                }
                total += v;
                idle += (field == 3 || field == 4) ? v : 0; // idle, iowait
                ++field;
                p = line.find(' ', p);
            }
            now.emplace_back(idle, total);
        }
        bool idle_cpu = last_.size() != now.size();
        for (std::size_t i = 0; i < now.size() && !idle_cpu; ++i) {
            const std::uint64_t dt = now[i].second - last_[i].second;
            const std::uint64_t di = now[i].first - last_[i].first;
            idle_cpu = dt > 0 && 2 * di >= dt;
        }
        last_ = std::move(now);
        return idle_cpu;
    }

private:
    int fd_;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> last_;
};

// ---- a ring in the daemon's own memory ---------------------------------------------------------
//
// liburing maps a ring's memory from the ring's file, and such a mapping holds the ring open
// while the daemon's address space lives: after SIGKILL, for as long as any thread of the daemon
// waits in the kernel. The ring holds /dev/fuse registered, so the connection would not be
// aborted, and a kick (Rings::kick) that waits for the daemon's answer would wait for ever. With
// IORING_SETUP_NO_MMAP (Linux 6.5; FUSE over io_uring needs 6.14) the kernel uses memory the
// daemon gives it, and the ring is closed with its descriptor. liburing 2.3 (Debian 12) cannot
// set such a ring up (io_uring_queue_init_mem came with 2.5): it is set up here and described in
// liburing's struct as io_uring_queue_mmap does for a mapped one.

constexpr unsigned kSetupNoMmap = 1U << 14; // IORING_SETUP_NO_MMAP, newer than liburing 2.3

// A page for the kernel, followed by one it cannot use: should the kernel ever want more, the
// setup fails instead of pinning memory that is not the ring's.
struct RingPage {
    void* at = nullptr;

    static std::size_t page_size() noexcept { return static_cast<std::size_t>(::getpagesize()); }

    bool map() noexcept {
        void* p = ::mmap(nullptr, 2 * page_size(), PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) {
            return false;
        }
        at = p;
        return ::mprotect(at, page_size(), PROT_READ | PROT_WRITE) == 0;
    }

    void unmap() noexcept {
        if (at != nullptr) {
            ::munmap(at, 2 * page_size());
            at = nullptr;
        }
    }
};

struct OwnRing {
    io_uring ring{}; // never io_uring_queue_exit: it would unmap and close what ~OwnRing does
    RingPage rings;  // the SQ and CQ rings
    RingPage sqes;
    bool open = false;

    OwnRing() = default;
    OwnRing(const OwnRing&) = delete;
    OwnRing& operator=(const OwnRing&) = delete;

    ~OwnRing() {
        if (open) {
            ::close(ring.ring_fd); // the kernel unpins the pages when it frees the ring
        }
        rings.unmap();
        sqes.unmap();
    }

    // A ring of `entries` 128-byte SQEs (IORING_SETUP_SQE128): 0, or -errno.
    int init(unsigned entries) noexcept {
        if (!rings.map() || !sqes.map()) {
            return -ENOMEM;
        }
        io_uring_params p{};
        p.flags = IORING_SETUP_SQE128 | kSetupNoMmap;
        p.cq_off.resv2 = reinterpret_cast<std::uintptr_t>(rings.at); // cq_off.user_addr
        p.sq_off.resv2 = reinterpret_cast<std::uintptr_t>(sqes.at);  // sq_off.user_addr
        const int fd = static_cast<int>(::syscall(__NR_io_uring_setup, entries, &p));
        if (fd < 0) {
            return -errno;
        }
        ring.ring_fd = fd;
        open = true;
        const std::size_t page = RingPage::page_size();
        if (p.sq_entries * 2 * sizeof(io_uring_sqe) > page ||
            p.sq_off.array + p.sq_entries * sizeof(unsigned) > page ||
            p.cq_off.cqes + p.cq_entries * sizeof(io_uring_cqe) > page) {
            return -EOVERFLOW; // cannot be: the kernel would have failed to pin the guard page
        }
        char* const base = static_cast<char*>(rings.at);
        const auto at = [base](std::uint32_t off) {
            return reinterpret_cast<unsigned*>(base + off);
        };
        io_uring_sq& sq = ring.sq;
        sq.khead = at(p.sq_off.head);
        sq.ktail = at(p.sq_off.tail);
        sq.kring_mask = at(p.sq_off.ring_mask);
        sq.kring_entries = at(p.sq_off.ring_entries);
        sq.kflags = at(p.sq_off.flags);
        sq.kdropped = at(p.sq_off.dropped);
        sq.array = at(p.sq_off.array);
        sq.sqes = static_cast<io_uring_sqe*>(sqes.at);
        sq.ring_sz = page;
        sq.ring_ptr = base;
        sq.ring_mask = *sq.kring_mask;
        sq.ring_entries = *sq.kring_entries;
        io_uring_cq& cq = ring.cq;
        cq.khead = at(p.cq_off.head);
        cq.ktail = at(p.cq_off.tail);
        cq.kring_mask = at(p.cq_off.ring_mask);
        cq.kring_entries = at(p.cq_off.ring_entries);
        cq.kflags = p.cq_off.flags != 0 ? at(p.cq_off.flags) : nullptr;
        cq.koverflow = at(p.cq_off.overflow);
        cq.cqes = reinterpret_cast<io_uring_cqe*>(base + p.cq_off.cqes);
        cq.ring_sz = page;
        cq.ring_ptr = base;
        cq.ring_mask = *cq.kring_mask;
        cq.ring_entries = *cq.kring_entries;
        for (unsigned i = 0; i < sq.ring_entries; ++i) {
            sq.array[i] = i; // each SQ slot is its SQE, as liburing 2.3 sets a ring up
        }
        ring.flags = p.flags;
        ring.enter_ring_fd = fd;
        ring.features = p.features;
        return 0;
    }
};

// Binds the calling thread to `cpu`, if the process may run there (`allowed`).
void pin_to(unsigned cpu, const cpu_set_t& allowed) noexcept {
    if (cpu < CPU_SETSIZE && CPU_ISSET(cpu, &allowed)) {
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(cpu, &one);
        ::pthread_setaffinity_np(::pthread_self(), sizeof one, &one);
    }
}

// Shared with the kicks, which may outlive the rings (one may wait until the unmount).
struct Queue {
    unsigned qid = 0;
    std::atomic<unsigned> entries{0};   // registered or about to be
    std::atomic<unsigned> busy{0};      // entries whose request is being served
    std::atomic<std::uint64_t> done{0}; // requests served
    std::atomic<bool> grow{false};      // a request for the disk took its last free entry
    std::uint64_t seen_done = 0;        // done at the watchdog's last look (its own)
};

struct Entry {
    Rings* owner = nullptr;
    std::shared_ptr<Queue> queue;
    bool kick_when_registered = false; // added because the queue ran out of entries
    OwnRing own;
    io_uring& ring = own.ring;
    ReqHeader* header = nullptr; // mapped, a page
    char* area = nullptr;        // mapped: kLead bytes, then the payload
    std::array<iovec, 2> iov{};
    RingReply reply;
    pthread_t thread{};
    bool thread_started = false;
    std::atomic<bool> waiting{false}; // in (or about to enter) the wait for a request
    std::atomic<bool> stopped{false}; // has left its loop
    std::atomic<pid_t> tid{0};        // its thread's id, once it runs
    std::uint32_t last_cmd = 0;       // the command prepared last (sent again on EAGAIN)

    char* payload() const noexcept { return area + kLead; }

    Entry() = default;
    Entry(const Entry&) = delete;
    Entry& operator=(const Entry&) = delete;

    ~Entry() {
        if (header != nullptr) {
            ::munmap(header, sizeof *header);
        }
        if (area != nullptr) {
            ::munmap(area, kLead + kPayloadCapacity);
        }
    }
};

// The entry whose thread this is (a ring thread's), for note_ring_thread_may_wait.
thread_local Entry* t_entry = nullptr;

} // namespace

class Rings {
public:
    Rings(fuse_session* se, std::string mountpoint, unsigned nqueues, unsigned max_entries)
        : se_(se)
        , dev_fd_(fuse_session_fd(se))
        , mountpoint_(std::move(mountpoint))
        , max_entries_(std::max(max_entries, nqueues)) {
        ::sched_getaffinity(0, sizeof allowed_, &allowed_);
        for (unsigned q = 0; q < nqueues; ++q) {
            queues_.push_back(std::make_shared<Queue>());
            queues_.back()->qid = q;
        }
    }

    Rings(const Rings&) = delete;
    Rings& operator=(const Rings&) = delete;

    ~Rings() { stop(); }

    // An entry for every queue, each thread waiting for start(). On failure, says why. One is
    // enough for a program's stream of requests: a release or readahead that overlaps the next
    // request waits for the entry's commit, which hands it over at once, to the same thread.
    bool prepare(std::string& why) {
        may_wait_idle_.store(online_cpus() > 1 && can_wait_idle());
        idle_while_waiting_.store(may_wait_idle_.load());
        std::lock_guard<std::mutex> lock(m_);
        for (const auto& q : queues_) {
            if (!add_entry_locked(q, false, why)) {
                return false;
            }
        }
        watchdog_ = with_signals_blocked([this] { return std::thread([this] { watch(); }); });
        return true;
    }

    // The INIT reply took the ring: entries register.
    static void start(void* self) {
        auto* rings = static_cast<Rings*>(self);
        {
            std::lock_guard<std::mutex> lock(rings->m_);
            rings->started_ = true;
        }
        rings->start_cv_.notify_all();
    }

    // The calling ring thread's request may wait long: the watchdog watches its queue.
    void may_wait() noexcept {
        if (watch_idle_.load()) {
            wake_watchdog();
        }
    }

    void stop() noexcept {
        std::vector<Entry*> all;
        {
            std::lock_guard<std::mutex> lock(m_);
            if (stopping_) {
                return;
            }
            stopping_ = true;
            exiting_.store(true);
            for (const auto& e : entries_) {
                all.push_back(e.get());
            }
        }
        start_cv_.notify_all();
        watch_cv_.notify_all();
        if (watchdog_.joinable()) {
            watchdog_.join();
        }
        install_wake_handler();
        for (;;) {
            bool all_stopped = true;
            for (Entry* e : all) {
                if (!e->thread_started || e->stopped.load()) {
                    continue;
                }
                all_stopped = false;
                if (e->waiting.load()) {
                    ::pthread_kill(e->thread, wake_signal());
                }
            }
            if (all_stopped) {
                break;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
        for (Entry* e : all) {
            if (e->thread_started) {
                ::pthread_join(e->thread, nullptr);
            }
        }
    }

private:
    // A new entry of queue `q`: its ring, its buffers, its thread. Called with m_ held.
    bool add_entry_locked(const std::shared_ptr<Queue>& q, bool kick, std::string& why) {
        auto e = std::make_unique<Entry>();
        e->owner = this;
        e->queue = q;
        e->kick_when_registered = kick;
        // 128-byte SQEs: the command area holds the fuse_uring_cmd_req.
        if (const int rc = e->own.init(2); rc != 0) {
            why = std::string("io_uring_setup: ") + strerrordesc_np(-rc);
            return false;
        }
        if (const int rc = ::io_uring_register_files(&e->ring, &dev_fd_, 1); rc != 0) {
            why = std::string("io_uring_register_files: ") + strerrordesc_np(-rc);
            return false;
        }
        void* header = ::mmap(nullptr, sizeof(ReqHeader), PROT_READ | PROT_WRITE,
                              MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        void* area = ::mmap(nullptr, kLead + kPayloadCapacity, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        e->header = header == MAP_FAILED ? nullptr : static_cast<ReqHeader*>(header);
        e->area = area == MAP_FAILED ? nullptr : static_cast<char*>(area);
        if (e->header == nullptr || e->area == nullptr) {
            why = "cannot map a ring entry's buffers";
            return false;
        }
        e->iov[0] = iovec{e->header, sizeof(ReqHeader)};
        e->iov[1] = iovec{e->payload(), kPayloadCapacity};
        e->reply.header = e->header->in_out.data();
        e->reply.payload = e->payload();
        e->reply.capacity = kPayloadCapacity;
        Entry* raw = e.get();
        raw->thread_started =
            with_signals_blocked(
                [&] { return ::pthread_create(&raw->thread, nullptr, &Rings::main_of, raw); }) == 0;
        if (!raw->thread_started) {
            why = "cannot start a ring thread";
            return false;
        }
        q->entries.fetch_add(1);
        entries_.push_back(std::move(e));
        return true;
    }

    // Requests that came while every entry of a queue was busy wait in the kernel's queue until
    // an entry of that queue commits a reply: a new entry is not given one (Linux 6.14-6.18
    // hand a queued request only to the entry that just committed). When the entries are busy
    // for long (questions waiting for an approver) and the program whose request waits makes no
    // other, nothing would commit. A kick is a statfs(2) of the mount point made on the queue's
    // CPU: a request the daemon answers at once, after which its entry takes the next waiting
    // request. From a thread of its own, which may wait behind them; one per entry added, so at
    // most max_entries_.
    //
    // The kernel waits for the answer to a request the daemon has taken without letting even
    // SIGKILL end the wait. A kick sharing the daemon's descriptor table would then hold
    // /dev/fuse and the rings open after every other thread died: the connection never aborted,
    // the daemon a zombie and every caller of the mount hung. So a kick first takes a table of
    // its own holding only 0-2 (for a sanitizer's report; fuse_session_mount keeps /dev/fuse, and
    // with it every ring, above them), and the rings' memory is not mapped from their
    // files (OwnRing): when the daemon dies they are closed, the kernel aborts the connection
    // and the kick returns. Should close_range fail (ENOMEM), it kicks all the same: a queue
    // left waiting hangs callers for certain, the other only if SIGKILL lands within a
    // request's round trip.
    void kick(const std::shared_ptr<Queue>& q) noexcept {
        try {
            std::thread t = with_signals_blocked([&] {
                return std::thread([q, path = mountpoint_, allowed = allowed_] {
                    (void)::close_range(3, ~0U, CLOSE_RANGE_UNSHARE);
                    pin_to(q->qid, allowed);
                    struct statfs st {};

                    (void)::statfs(path.c_str(), &st);
                });
            });
            t.detach(); // it may wait until the unmount; it holds nothing of the rings
        } catch (const std::system_error&) {
            // no thread: the next entry added kicks again
        }
    }

    static void* main_of(void* arg) {
        auto* e = static_cast<Entry*>(arg);
        e->owner->run(*e);
        return nullptr;
    }

    // The next command of `e` into its ring: REGISTER with its buffers, or COMMIT_AND_FETCH of
    // the request it served.
    static void prepare_command(Entry& e, std::uint32_t op, std::uint64_t commit_id) noexcept {
        io_uring_sqe* sqe = ::io_uring_get_sqe(&e.ring);
        if (sqe == nullptr) {
            return; // cannot be: one command at a time, and the ring holds two
        }
        // 128 bytes with IORING_SETUP_SQE128: the command area runs past the struct's end.
        std::memset(static_cast<void*>(sqe), 0, 2 * sizeof(io_uring_sqe));
        sqe->opcode = IORING_OP_URING_CMD;
        sqe->flags = IOSQE_FIXED_FILE;
        sqe->fd = 0; // the registered /dev/fuse
        sqe->cmd_op = op;
        if (op == kCmdRegister) {
            sqe->addr = reinterpret_cast<std::uintptr_t>(e.iov.data()); // NOLINT: the ABI's u64
            sqe->len = static_cast<std::uint32_t>(e.iov.size());
        }
        e.last_cmd = op;
        CmdReq cmd{};
        cmd.commit_id = commit_id;
        cmd.qid = static_cast<std::uint16_t>(e.queue->qid);
        std::memcpy(sqe->cmd, &cmd, sizeof cmd);
    }

    // Submits the prepared command and waits for the next request, in one system call. Returns
    // the completion's result (0: a request is in the buffers), or -EINTR when the daemon is
    // stopping (a reply prepared is still delivered; stop() interrupts the wait).
    int submit_and_wait(Entry& e) noexcept {
        for (;;) {
            e.waiting.store(true);
            if (exiting_.load()) {
                e.waiting.store(false);
                ::io_uring_submit(&e.ring);
                return -EINTR;
            }
            const bool idle = idle_while_waiting_.load(std::memory_order_relaxed);
            if (idle) {
                set_policy(SCHED_IDLE);
            }
            const int rc = ::io_uring_submit_and_wait(&e.ring, 1);
            if (idle && !set_policy(SCHED_OTHER)) {
                may_wait_idle_.store(false); // cannot be: checked at the start
                idle_while_waiting_.store(false);
                std::fprintf(stderr, "guardfs: a ring thread could not leave SCHED_IDLE\n");
            }
            e.waiting.store(false);
            if (rc < 0 && rc != -EINTR) {
                return rc;
            }
            io_uring_cqe* cqe = nullptr;
            if (::io_uring_peek_cqe(&e.ring, &cqe) == 0 && cqe != nullptr) {
                const int res = cqe->res;
                ::io_uring_cqe_seen(&e.ring, cqe);
                return res == -EINTR ? -EAGAIN : res; // -EINTR is kept for "stopping"
            }
        }
    }

    // The request in `e`'s buffers, laid out contiguous before the payload and served; the
    // reply is left in the buffers for the commit.
    void serve(Entry& e) noexcept {
        ReqHeader& h = *e.header;
        fuse_in_header in{};
        std::memcpy(&in, h.in_out.data(), sizeof in);
        const std::size_t payload = h.ent.payload_sz;
        const std::size_t fixed =
            sizeof in + payload <= in.len ? in.len - sizeof in - payload : kOpInSize + 1;
        if (fixed > kOpInSize || payload > kPayloadCapacity) {
            fuse_out_header out{}; // not a request this loop can lay out: refused, not stranded
            out.len = sizeof out;
            out.error = -EIO;
            out.unique = in.unique;
            std::memcpy(h.in_out.data(), &out, sizeof out);
            h.ent.payload_sz = 0;
            return;
        }
        char* msg = e.payload() - sizeof in - fixed;
        std::memcpy(msg, &in, sizeof in);
        std::memcpy(msg + sizeof in, h.op_in.data(), fixed);
        // Readahead and large writes come several at once and wait on the disk: one that takes
        // the queue's last free entry has the watchdog add one now, so that the next is not
        // left waiting for this one (the kernel hands a request only to a free entry or one
        // that commits).
        if (e.queue->busy.load() >= e.queue->entries.load() && may_wait_on_disk(msg, in.len) &&
            !e.queue->grow.exchange(true)) {
            wake_watchdog();
        }
        serve_ring_request(se_, e.reply, msg, in.len);
        h.ent.payload_sz = e.reply.payload_size;
    }

    // Registers `e` with the kernel: true when it took it. The kernel answers a REGISTER at once
    // only when it refuses it; a taken entry completes with its first request, which may already
    // be there (the ring became ready and a request was waiting): it is left for the loop.
    bool register_entry(Entry& e) noexcept {
        for (;;) {
            prepare_command(e, kCmdRegister, 0);
            int rc = 0;
            while ((rc = ::io_uring_submit(&e.ring)) == -EINTR) {
            }
            if (rc < 0) {
                refused(-rc);
                return false;
            }
            io_uring_cqe* cqe = nullptr;
            if (::io_uring_peek_cqe(&e.ring, &cqe) != 0 || cqe == nullptr || cqe->res >= 0) {
                return true;
            }
            const int res = cqe->res;
            ::io_uring_cqe_seen(&e.ring, cqe);
            if (res == -EAGAIN || res == -EINTR) {
                continue; // not yet accepted: the connection is being initialised
            }
            // ENOTCONN, ECONNABORTED: unmounted already. Anything else: the kernel refused the
            // ring (and serves /dev/fuse instead).
            if (res != -ENOTCONN && res != -ECONNABORTED) {
                refused(-res);
            }
            return false;
        }
    }

    void run(Entry& e) {
        Queue& q = *e.queue;
        e.tid.store(static_cast<pid_t>(::syscall(SYS_gettid)));
        t_entry = &e;
        pin_to(q.qid, allowed_);
        {
            std::unique_lock<std::mutex> lock(m_);
            start_cv_.wait(lock, [&] { return started_ || exiting_.load(); });
        }
        if (exiting_.load() || !register_entry(e)) {
            e.stopped.store(true);
            return;
        }
        if (e.kick_when_registered) {
            kick(e.queue);
        }
        int res = 0;
        while ((res = submit_and_wait(e)) != -EINTR) {
            if (res == -EAGAIN) {
                // Not taken (the kernel asks for it again): the same command.
                prepare_command(e, e.last_cmd,
                                e.last_cmd == kCmdRegister ? 0 : e.header->ent.commit_id);
                continue;
            }
            if (res == -ENOTCONN || res == -ECONNABORTED) {
                break; // unmounted or aborted: the ring is torn down
            }
            if (res < 0) {
                // The kernel refused a commit (it found no such request): it keeps the entry
                // but will hand it nothing more. The same buffers go in as a new entry.
                std::fprintf(stderr,
                             "guardfs: a ring entry's commit failed (%s); registering "
                             "it again\n",
                             strerrordesc_np(-res));
                if (!register_entry(e)) {
                    break;
                }
                continue;
            }
            note_ring_on();
            q.busy.fetch_add(1);
            if (watch_idle_.load() && look_due()) {
                wake_watchdog();
            }
            serve(e);
            q.busy.fetch_sub(1);
            q.done.fetch_add(1);
            prepare_command(e, kCmdCommitAndFetch, e.header->ent.commit_id);
        }
        e.stopped.store(true);
    }

    void refused(int err) {
        if (!reported_.exchange(true)) {
            std::fprintf(stderr,
                         "guardfs: FUSE over io_uring off: the kernel refused a ring entry (%s); "
                         "serving /dev/fuse\n",
                         strerrordesc_np(err));
        }
    }

    // The first request on some entry: the ring is ready (the kernel sends none before every
    // queue has an entry).
    void note_ring_on() {
        if (!reported_.load(std::memory_order_relaxed) && !reported_.exchange(true)) {
            std::fprintf(stderr, "guardfs: FUSE over io_uring on (%zu queues)\n", queues_.size());
        }
    }

    // Whether the watchdog, asleep, should take a look now (see watch).
    bool look_due() const noexcept {
        return coarse_now_ns() >= next_look_ns_.load(std::memory_order_relaxed);
    }

    void wake_watchdog() {
        {
            std::lock_guard<std::mutex> lock(m_);
            watch_idle_.store(false);
        }
        watch_cv_.notify_one();
    }

    // Every kLoadTick: ring threads wait under SCHED_IDLE only while some CPU was idle half the
    // time or more. That is when the reply would move the program to it (the reason for the
    // idle wait); on CPUs that are all busy, a SCHED_IDLE thread waits for every other program
    // before it may serve a request (a cold 512 MiB read through the mount took over 30 s
    // beside four busy loops, 1.9 s on /dev/fuse). Threads waiting under SCHED_IDLE when the
    // CPUs become busy are put back under SCHED_OTHER at once. A look after more than two
    // kLoadTicks without one (the watchdog slept) only starts a fresh count. Called with m_ held
    // and the time of the look (coarse_now_ns).
    void watch_load(std::int64_t now) {
        if (!may_wait_idle_.load()) {
            return;
        }
        const std::int64_t due = next_load_look_ns_;
        if (now < due) {
            return;
        }
        next_load_look_ns_ = now + kLoadTickNs;
        const bool stale = now - due > kLoadTickNs;
        const bool idle_cpu = cpu_idle_.some_cpu_idle();
        if (stale) {
            return;
        }
        idle_while_waiting_.store(idle_cpu);
        if (!idle_cpu) {
            for (const auto& e : entries_) {
                if (const pid_t tid = e->tid.load(); tid > 0 && !e->stopped.load()) {
                    set_policy_of(tid, SCHED_OTHER);
                }
            }
        }
    }

    // Whether every entry of some queue is busy: a request that comes may wait in the kernel.
    bool some_queue_full() const noexcept {
        return std::any_of(queues_.begin(), queues_.end(), [](const auto& q) {
            const unsigned busy = q->busy.load();
            return busy > 0 && busy >= q->entries.load();
        });
    }

    // Whether some queue asked for an entry now (Queue::grow).
    bool growth_asked() const noexcept {
        return std::any_of(queues_.begin(), queues_.end(),
                           [](const auto& q) { return q->grow.load(); });
    }

    // A queue whose entries were all busy at the last look and still are, none having finished
    // a request since (they wait: questions, a lock, a slow disk), gets one more entry (up to
    // max_entries_ in all), which kicks the queue once registered. So a request left waiting
    // in the kernel behind them is taken soon. Only then can a request be left waiting: an
    // entry that commits takes the next waiting request in its queue, so while some entry is
    // free none waits. The watchdog looks every kTick while some queue's entries are all busy;
    // every kLoadTick while ring threads wait under SCHED_IDLE (whose load it must watch,
    // watch_load), until kQuiet passes without a request; and sleeps otherwise. Asleep, it is
    // woken by a ring thread whose request may wait (an ask: note_ring_thread_may_wait; the
    // disk: Queue::grow) or that takes a request a kLoadTick or more after the last look. It
    // used to look every kTick while requests flowed: on the build, where the CPUs are busy,
    // those wake-ups were about a sixth of the daemon's CPU time.
    void watch() {
        std::unique_lock<std::mutex> lock(m_);
        std::int64_t last_request = coarse_now_ns();
        bool full = false; // some queue's entries were all busy at the last look
        while (!exiting_.load()) {
            if (watch_idle_.load()) {
                watch_cv_.wait(lock, [&] { return !watch_idle_.load() || exiting_.load(); });
                for (const auto& q : queues_) {
                    q->seen_done = q->done.load();
                }
                last_request = coarse_now_ns();
            } else {
                watch_cv_.wait_for(lock, full ? kTick : kLoadTick,
                                   [&] { return exiting_.load() || growth_asked(); });
            }
            if (exiting_.load()) {
                break;
            }
            for (const auto& q : queues_) {
                std::string why;
                if (q->grow.exchange(false) && entries_.size() < max_entries_ &&
                    !add_entry_locked(q, true, why)) {
                    std::fprintf(stderr, "guardfs: cannot add a ring entry: %s\n", why.c_str());
                }
            }
            bool active = false;
            for (const auto& q : queues_) {
                const std::uint64_t done = q->done.load();
                const unsigned busy = q->busy.load();
                if (full && busy > 0 && busy >= q->entries.load() && done == q->seen_done &&
                    entries_.size() < max_entries_) {
                    std::string why;
                    if (!add_entry_locked(q, true, why)) {
                        std::fprintf(stderr, "guardfs: cannot add a ring entry: %s\n", why.c_str());
                    }
                }
                active = active || busy > 0 || done != q->seen_done;
                q->seen_done = done;
            }
            const std::int64_t now = coarse_now_ns();
            if (active) {
                last_request = now;
            }
            next_look_ns_.store(now + kLoadTickNs);
            watch_load(now);
            full = some_queue_full();
            if (full) {
                continue;
            }
            if (idle_while_waiting_.load() && now - last_request < kQuietNs) {
                continue;
            }
            // To sleep. A ring thread whose request may wait (note_ring_thread_may_wait) after
            // the look above but saw the watchdog awake would not wake it: look again once
            // asleep (both sides use sequentially consistent atomics, so one sees the other).
            watch_idle_.store(true);
            if (some_queue_full() || growth_asked()) {
                watch_idle_.store(false);
                full = true;
            }
        }
    }

    fuse_session* se_;
    int dev_fd_;
    const std::string mountpoint_; // what a kick stats
    const unsigned max_entries_;
    cpu_set_t allowed_{};
    std::vector<std::shared_ptr<Queue>> queues_; // fixed after construction
    std::mutex m_;                               // guards everything below but the atomics
    std::condition_variable start_cv_;           // entries wait here for start()
    std::condition_variable watch_cv_;
    std::vector<std::unique_ptr<Entry>> entries_;
    bool started_ = false;
    bool stopping_ = false;
    std::atomic<bool> exiting_{false};
    std::atomic<bool> watch_idle_{true}; // the watchdog sleeps until a ring thread wakes it
    std::atomic<bool> reported_{false};  // "on" or "off" was said
    // Ring threads wait for their next request under SCHED_IDLE (can_wait_idle(), and more than
    // one CPU) while some CPU is mostly idle: the watchdog decides (watch_load()).
    std::atomic<bool> may_wait_idle_{false};
    std::atomic<bool> idle_while_waiting_{false};
    CpuIdle cpu_idle_;                   // the watchdog's
    std::int64_t next_load_look_ns_ = 0; // when its next look at the load is due (coarse_now_ns)
    // When a ring thread that takes a request should wake the watchdog, asleep, for a look.
    std::atomic<std::int64_t> next_look_ns_{0};
    std::thread watchdog_;
};

void note_ring_thread_may_wait() noexcept {
    if (t_entry != nullptr) {
        t_entry->owner->may_wait();
    }
}

void RingsDeleter::operator()(Rings* rings) const noexcept {
    delete rings; // NOLINT: the owner of a Rings made by prepare_rings
}

RingsPtr prepare_rings(fuse_session* se, const std::string& mountpoint, unsigned max_entries,
                       bool say_why) {
    const unsigned nqueues = possible_cpus();
    if (nqueues == 0 || nqueues > 0xffff) {
        if (say_why) {
            std::fprintf(stderr, "guardfs: FUSE over io_uring off: cannot count the CPUs\n");
        }
        return nullptr;
    }
    RingsPtr rings(new Rings(se, mountpoint, nqueues, max_entries)); // NOLINT: its deleter owns it
    std::string why;
    if (!rings->prepare(why)) {
        if (say_why) {
            std::fprintf(stderr, "guardfs: FUSE over io_uring off: %s\n", why.c_str());
        }
        return nullptr;
    }
    offer_ring(&Rings::start, rings.get(), kPayloadCapacity, say_why);
    return rings;
}

void stop_rings(Rings& rings) noexcept {
    rings.stop();
}

} // namespace guardfs::fusefs
