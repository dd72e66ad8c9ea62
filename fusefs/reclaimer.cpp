// The descriptor reclaimer; see reclaimer.hpp.
#include "fusefs/reclaimer.hpp"

#include "fusefs/mountinfo.hpp"

#include <algorithm>
#include <array>
#include <climits>
#include <cstdio>
#include <initializer_list>
#include <string>
#include <unordered_set>
#include <vector>

#include <dirent.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace guardfs::fusefs {

namespace {

// Descriptors kept free for everything that is not an inode: open handles, the audit log, the
// approver's pipes, libfuse's own, and the judge's reads of the underlying tree.
constexpr std::size_t kReserveMax = 256;

// The least headroom the reclaimer leaves above its high-water mark (see refresh_limit).
constexpr std::size_t kHeadroomMin = 4096;

// Whether anything is mounted on a guardfs mount at one of `points` in this mount namespace
// (a mount below a mount below it is found through its parent). Invalidating an entry detaches
// the mounts on and below it (d_invalidate), so the reclaimer must not touch such a tree.
// `mountinfo` is /proc/self/mountinfo, opened once: near the descriptor limit no new descriptor
// may be available. When it cannot be read, the answer is yes (fail safe).
bool has_submounts(int mountinfo, std::initializer_list<const std::string*> points) {
    std::string text;
    if (!read_all_at_start(mountinfo, text)) {
        return true;
    }
    const std::vector<MountEntry> mounts = parse_mountinfo(text);
    std::vector<std::string> ours;
    for (const MountEntry& m : mounts) {
        for (const std::string* p : points) {
            if (m.fstype == "fuse.guardfs" && m.mount_point == *p) {
                ours.push_back(m.id);
            }
        }
    }
    if (ours.empty()) {
        return true; // our own mount not found: something is off, stand aside
    }
    return std::any_of(mounts.begin(), mounts.end(), [&](const MountEntry& m) {
        return std::find(ours.begin(), ours.end(), m.parent) != ours.end();
    });
}

// The working and root directories of every process this daemon can see, as paths in the
// underlying tree (a path under the mount point is also given under the workspace). `proc` is
// /proc opened once: near the descriptor limit no new descriptor may be had. False when /proc
// cannot be listed (then no directory may be reclaimed).
bool directories_in_use(int proc, const FsConfig& cfg, std::unordered_set<std::string>& out) {
    if (proc < 0 || ::lseek(proc, 0, SEEK_SET) != 0) {
        return false;
    }
    alignas(dirent64) std::array<char, 32768> dents{};
    std::array<char, PATH_MAX + 1> buf{};
    for (;;) {
        const long got = ::syscall(SYS_getdents64, proc, dents.data(), dents.size());
        if (got < 0) {
            return false;
        }
        if (got == 0) {
            return true;
        }
        for (long off = 0; off < got;) {
            const auto* e = reinterpret_cast<const dirent64*>(dents.data() + off); // NOLINT
            off += e->d_reclen;
            if (e->d_name[0] < '1' || e->d_name[0] > '9') {
                continue;
            }
            for (const char* link : {"cwd", "root"}) {
                const std::string at = std::string("/proc/") + e->d_name + "/" + link;
                const ssize_t n = ::readlink(at.c_str(), buf.data(), buf.size() - 1);
                if (n <= 0) {
                    continue;
                }
                std::string path(buf.data(), static_cast<std::size_t>(n));
                // /proc gives the real path: the mount point's, or its spelling when the same
                for (const std::string* mnt : {&cfg.mount_spelled, &cfg.mount_real}) {
                    if (*mnt == "/") {
                        out.insert(cfg.ws_real + (path == "/" ? std::string() : path));
                    } else if (path.size() > mnt->size() &&
                               path.compare(0, mnt->size(), *mnt) == 0 &&
                               path[mnt->size()] == '/') {
                        out.insert(cfg.ws_real + path.substr(mnt->size()));
                    }
                }
                out.insert(std::move(path));
            }
        }
    }
}

} // namespace

Reclaimer::Reclaimer(Fs& fs, fuse_session* se)
    : fs_(fs)
    , se_(se)
    , mountinfo_(::open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC))
    , proc_(::open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) {
    refresh_limit();
    thread_ = std::thread([this] { run(); });
}

void Reclaimer::stop() {
    {
        std::lock_guard<std::mutex> lock(m_);
        done_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) {
        thread_.join();
    }
}

void Reclaimer::wake() noexcept {
    {
        std::lock_guard<std::mutex> lock(m_);
        wanted_ = true;
    }
    cv_.notify_all();
}

bool Reclaimer::relieve(std::chrono::milliseconds limit) {
    const std::size_t before = fs_.inodes.approx_size();
    wake();
    // The kernel forgets asynchronously (FORGET requests, answered by other workers): poll. A
    // lookup waiting here holds its directory's lock in the kernel, so entries of that directory
    // cannot be dropped until it gives up; the high-water mark is meant to make this rare.
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline) {
        if (fs_.inodes.approx_size() < before) {
            return true;
        }
        if (standing_aside_.load(std::memory_order_relaxed)) {
            return false; // nothing will be forgotten: do not hold the caller up
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return fs_.inodes.approx_size() < before;
}

void Reclaimer::refresh_limit() noexcept {
    // Read each time: the limit may be changed from outside (prlimit).
    rlimit lim{};
    std::size_t limit = 1024;
    if (::getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY) {
        limit = static_cast<std::size_t>(lim.rlim_cur);
    } else if (lim.rlim_cur == RLIM_INFINITY) {
        limit = std::size_t{1} << 30U;
    }
    const std::size_t reserve = std::min(kReserveMax, limit / 4);
    const std::size_t budget = limit - reserve;
    // Headroom above the mark, for lookups made while the kernel is still forgetting (a lookup
    // that meets EMFILE holds its directory, so entries there cannot be dropped until it gives
    // up): a quarter of the budget, but at least kHeadroomMin descriptors and at most half. A
    // small limit (1,024: half the budget) needs the room more than a large one (20,000: a
    // quarter), where a lower mark would only make the kernel forget a tree it walks again.
    const std::size_t headroom = std::min(budget / 2, std::max(budget / 4, kHeadroomMin));
    const std::size_t high = budget - headroom;
    high_.store(high, std::memory_order_relaxed);
    low_ = high / 3 * 2;
}

void Reclaimer::run() {
    std::unique_lock<std::mutex> lock(m_);
    for (;;) {
        cv_.wait_for(lock, std::chrono::seconds(1), [this] { return done_ || wanted_; });
        if (done_) {
            return;
        }
        wanted_ = false;
        lock.unlock();
        refresh_limit();
        const std::size_t size = fs_.inodes.approx_size();
        if (size > high_.load(std::memory_order_relaxed) &&
            has_submounts(mountinfo_.get(),
                          {&fs_.cfg.mount_spelled, &fs_.cfg.mount_real, &fs_.cfg.ws_real})) {
            standing_aside_.store(true, std::memory_order_relaxed);
            if (!warned_) {
                std::fprintf(stderr,
                             "guardfs: %zu inodes held, near the descriptor limit, but something "
                             "is mounted below %s: not asking the kernel to forget entries (that "
                             "would detach those mounts)\n",
                             size, fs_.cfg.mount_spelled.c_str());
                warned_ = true;
            }
        } else if (size > high_.load(std::memory_order_relaxed)) {
            standing_aside_.store(false, std::memory_order_relaxed);
            std::unordered_set<std::string> in_use;
            const bool known = directories_in_use(proc_.get(), fs_.cfg, in_use);
            for (const auto& e :
                 fs_.inodes.reclaim_candidates(size - low_, known ? &in_use : nullptr)) {
                fuse_lowlevel_notify_inval_entry(se_, e.parent_id, e.name.c_str(), e.name.size());
            }
        }
        lock.lock();
    }
}

} // namespace guardfs::fusefs
