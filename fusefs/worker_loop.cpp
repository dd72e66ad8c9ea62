// The request loop; see worker_loop.hpp.
#include "fusefs/worker_loop.hpp"

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
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include <linux/fuse.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <unistd.h>

namespace guardfs::fusefs {

namespace {

class Pool;

struct Worker {
    pthread_t thread{};
    fuse_buf buf{}; // the request read last; libfuse allocates buf.mem on first use
    std::array<char, kSmallRead> small_read{}; // a small READ's data (channel.hpp: kSmallRead)
    std::condition_variable cv;                // a parked worker waits here
    bool woken = false;                        // set, under the pool's lock, by whoever unparks it
    bool stopped = false;             // set, under the pool's lock, when it has left its loop
    std::atomic<bool> reading{false}; // in (or about to enter) read(2) on /dev/fuse
    Pool* pool = nullptr;
};

class Pool {
public:
    Pool(fuse_session* se, unsigned max_threads)
        : se_(se)
        , max_threads_(std::max(max_threads, kReaders))
        , readers_wanted_(std::clamp(online_cpus(), kReaders, max_threads_)) {
        ::sem_init(&finish_, 0, 0);
    }

    Pool(const Pool&) = delete;
    Pool& operator=(const Pool&) = delete;

    ~Pool() {
        for (const auto& w : workers_) {
            std::free(w->buf.mem); // NOLINT: libfuse's malloc
        }
        ::sem_destroy(&finish_);
    }

    int run(const std::function<void()>& on_exit) {
        struct sigaction old_wake {};

        install_wake_handler(&old_wake);
        {
            std::lock_guard<std::mutex> lock(m_);
            for (unsigned i = 0; i < readers_wanted_ && start_locked(); ++i) {
                ++readers_;
            }
            if (workers_.empty()) {
                std::fprintf(stderr, "guardfs: cannot start a worker thread\n");
                ::sigaction(wake_signal(), &old_wake, nullptr);
                return -1;
            }
        }
        std::thread watchdog =
            with_signals_blocked([this] { return std::thread([this] { watch(); }); });
        while (!fuse_session_exited(se_)) {
            ::sem_wait(&finish_); // a worker that stopped posts; a signal interrupts the wait
        }
        if (on_exit) {
            on_exit();
        }
        std::vector<Worker*> all;
        {
            std::lock_guard<std::mutex> lock(m_);
            exiting_ = true;
            for (Worker* w : parked_) {
                w->cv.notify_one();
            }
            watch_cv_.notify_one();
            for (const auto& w : workers_) {
                all.push_back(w.get());
            }
        }
        // Workers blocked in read(2) are interrupted there; one serving a request sees exiting_
        // when it is done, and a parked one was just woken. The signal is sent again until each
        // reader has left its loop, since one may arrive just before its read begins.
        for (;;) {
            std::vector<pthread_t> running;
            bool all_stopped = true;
            {
                std::lock_guard<std::mutex> lock(m_);
                for (Worker* w : all) {
                    if (!w->stopped && w->reading.load()) {
                        running.push_back(w->thread);
                    }
                    all_stopped = all_stopped && w->stopped;
                }
            }
            if (all_stopped) {
                break;
            }
            for (const pthread_t t : running) {
                ::pthread_kill(t, wake_signal());
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
        for (Worker* w : all) {
            ::pthread_join(w->thread, nullptr);
        }
        watchdog.join();
        ::sigaction(wake_signal(), &old_wake, nullptr);
        return failed_ ? -1 : 0;
    }

    static void* main_of(void* arg) {
        auto* w = static_cast<Worker*>(arg);
        w->pool->work(*w);
        return nullptr;
    }

private:
    static constexpr std::chrono::milliseconds kTick{10};
    static constexpr unsigned kIdleTicks = 100; // a second without requests: the watchdog sleeps

    // Starts one more worker, counted among the readers by the caller.
    bool start_locked() {
        if (exiting_ || workers_.size() >= max_threads_) {
            return false;
        }
        auto w = std::make_unique<Worker>();
        w->pool = this;
        const int err = with_signals_blocked(
            [&] { return ::pthread_create(&w->thread, nullptr, &Pool::main_of, w.get()); });
        if (err != 0) {
            return false;
        }
        workers_.push_back(std::move(w));
        return true;
    }

    // One more reader: the worker that went idle last, else a new one. With neither (max_threads
    // busy), requests wait in the kernel until a worker is done.
    void add_reader_locked() {
        if (!parked_.empty()) {
            Worker* w = parked_.back();
            parked_.pop_back();
            w->woken = true;
            ++readers_;
            w->cv.notify_one();
        } else if (start_locked()) {
            ++readers_;
        }
    }

    void work(Worker& w) {
        for (;;) {
            w.reading.store(true);
            const int res = fuse_session_receive_buf(se_, &w.buf);
            w.reading.store(false);
            {
                const std::lock_guard<std::mutex> lock(m_);
                --readers_;
                if (exiting_ || fuse_session_exited(se_)) {
                    break;
                }
                if (res == -EINTR || res == -EAGAIN) {
                    ++readers_;
                    continue;
                }
                if (res <= 0) {
                    // 0: unmounted (libfuse saw ENODEV and ended the session); else an error.
                    if (res < 0 && res != -ENODEV) {
                        failed_ = true;
                    }
                    fuse_session_exit(se_);
                    break;
                }
                // No one may be left reading now. Most requests take microseconds and the next
                // one waits in the kernel meanwhile; one that takes longer is the watchdog's.
                // One that will likely wait on the disk has another reader woken at once.
                if (readers_ == 0 && may_wait_on_disk(w.buf.mem, w.buf.size)) {
                    add_reader_locked();
                }
                ++busy_;
                if (idle_) {
                    idle_ = false;
                    watch_cv_.notify_one();
                }
            }
            // READ and WRITE without libfuse's request object (data_op.hpp).
            if ((w.buf.flags & FUSE_BUF_IS_FD) != 0 ||
                !serve_dev_data_request(static_cast<char*>(w.buf.mem), w.buf.size, w.small_read)) {
                fuse_session_process_buf(se_, &w.buf);
            }
            std::unique_lock<std::mutex> lock(m_);
            --busy_;
            ++done_;
            if (exiting_ || fuse_session_exited(se_)) {
                break;
            }
            if (readers_ < readers_wanted_) {
                ++readers_;
                continue;
            }
            w.woken = false;
            parked_.push_back(&w);
            w.cv.wait(lock, [&] { return w.woken || exiting_; });
            if (!w.woken) {
                parked_.erase(std::find(parked_.begin(), parked_.end(), &w));
                break;
            }
        }
        {
            const std::lock_guard<std::mutex> lock(m_);
            w.stopped = true;
        }
        ::sem_post(&finish_);
    }

    // While requests flow, every kTick: when no worker is reading, some are busy and none has
    // finished a request since the last look (a request waits: an ask, a lock file's release, a
    // slow disk), wake or start another. After kIdleTicks without requests it sleeps until the
    // next one arrives.
    void watch() {
        std::unique_lock<std::mutex> lock(m_);
        std::uint64_t last = done_;
        unsigned quiet = 0;
        while (!exiting_) {
            if (idle_) {
                watch_cv_.wait(lock, [&] { return !idle_ || exiting_; });
                last = done_;
                continue;
            }
            watch_cv_.wait_for(lock, kTick, [&] { return exiting_; });
            if (exiting_) {
                break;
            }
            if (readers_ == 0 && busy_ > 0 && done_ == last) {
                add_reader_locked();
            }
            quiet = (busy_ == 0 && done_ == last) ? quiet + 1 : 0;
            if (quiet >= kIdleTicks) {
                idle_ = true;
                quiet = 0;
            }
            last = done_;
        }
    }

    fuse_session* se_;
    const unsigned max_threads_;
    const unsigned readers_wanted_; // idle workers kept in read(2): one per CPU, at least two
    sem_t finish_{};
    std::mutex m_; // guards everything below
    std::vector<std::unique_ptr<Worker>> workers_;
    std::vector<Worker*> parked_; // the last to park is the first woken
    unsigned readers_ = 0;        // workers in, or on their way to, read(2) on /dev/fuse
    unsigned busy_ = 0;           // workers serving a request
    std::uint64_t done_ = 0;      // requests served
    bool idle_ = false;           // the watchdog sleeps until the next request
    std::condition_variable watch_cv_;
    bool exiting_ = false;
    bool failed_ = false;
};

} // namespace

int run_workers(fuse_session* se, unsigned max_threads, const std::function<void()>& on_exit) {
    Pool pool(se, max_threads);
    return pool.run(on_exit);
}

} // namespace guardfs::fusefs
