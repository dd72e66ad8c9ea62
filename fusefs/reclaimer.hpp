// Keeps the daemon within its descriptor limit (issue #8). The daemon holds an O_PATH
// descriptor for every inode the kernel knows, and the kernel forgets inodes only under memory
// pressure, so a walk of a tree larger than RLIMIT_NOFILE would otherwise run the daemon out of
// descriptors. When the inode table passes a high-water mark below the limit, the reclaimer asks
// the kernel to drop the entries of the least recently looked-up inodes that no handle holds open
// (fuse_lowlevel_notify_inval_entry); the kernel then forgets them and their descriptors close.
// A later access looks the name up again. Invalidating an entry detaches any mount on or below
// it, so nothing is reclaimed while something is mounted below the mount point.
#pragma once

#include "base/unique_fd.hpp"
#include "fusefs/fs.hpp"

#include <fuse_lowlevel.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <thread>

namespace guardfs::fusefs {

class Reclaimer {
public:
    // Starts its thread. Notifications are sent from that thread only, never from a request
    // (libfuse's rule).
    Reclaimer(Fs& fs, fuse_session* se);

    Reclaimer(const Reclaimer&) = delete;
    Reclaimer& operator=(const Reclaimer&) = delete;

    ~Reclaimer() { stop(); }

    void stop();

    // After a lookup: wakes the thread when the table has passed the high-water mark. Cheap.
    void noticed(std::size_t table_size) noexcept {
        if (table_size > high_.load(std::memory_order_relaxed)) {
            wake();
        }
    }

    // A descriptor could not be opened (EMFILE or ENFILE): wakes the thread and waits at most
    // `limit` for the kernel to forget some inodes. True when the table shrank (worth a retry);
    // false at once while the reclaimer stands aside for a mount inside the guard.
    bool relieve(std::chrono::milliseconds limit);

    // The current high-water mark (inodes), derived from RLIMIT_NOFILE.
    [[nodiscard]] std::size_t high() const noexcept {
        return high_.load(std::memory_order_relaxed);
    }

private:
    void wake() noexcept;
    void run();
    void refresh_limit() noexcept;

    Fs& fs_;
    fuse_session* se_;
    base::UniqueFd mountinfo_; // /proc/self/mountinfo, re-read from the start each time
    base::UniqueFd proc_;      // /proc, listed from the start each time
    std::atomic<std::size_t> high_{0};
    std::size_t low_ = 0; // reclaim down to this many; only the thread touches it
    bool warned_ = false; // about submounts; only the thread touches it
    // Set while a mount inside the guard keeps the thread from reclaiming: relieve() then
    // returns at once instead of waiting for forgets that will not come.
    std::atomic<bool> standing_aside_{false};
    std::mutex m_;
    std::condition_variable cv_;
    bool wanted_ = false; // protected by m_
    bool done_ = false;   // protected by m_
    std::thread thread_;
};

} // namespace guardfs::fusefs
