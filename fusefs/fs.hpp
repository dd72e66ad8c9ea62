// The filesystem object handed to every handler as libfuse userdata (no globals), and the
// helpers that turn inodes into the paths the guard judges (design §3).
#pragma once

#include "base/unique_fd.hpp"
#include "dataroot/fs_ops.hpp"
#include "fusefs/inode_table.hpp"
#include "fusefs/settled_paths.hpp"
#include "guard/arbiter.hpp"
#include "guard/host_files.hpp"
#include "guard/request.hpp"

#include <array>
#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace guardfs::fusefs {

struct FsConfig {
    std::string mount_spelled;      // the mount point as given, made absolute lexically
    std::string ws_real;            // the underlying workspace's path when it was opened
    std::string mount_real;         // the mount point with its symlinks resolved, before mounting
    double timeout = 86400.0;       // entry and attribute timeouts, seconds
    bool chown_to_caller = false;   // the daemon is root and other users reach the mount
    bool writeback = false;         // the kernel's writeback cache (docs/decisions/008)
    bool passthrough = false;       // FUSE passthrough where the kernel allows (decision 011)
    bool passthrough_asked = false; // -o passthrough: say why when passthrough is off
    bool ring = true;               // FUSE over io_uring where the kernel offers it (decision 012)
    bool ring_asked = false;        // -o io_uring: say why when the ring is off
    // FLUSH is passed on (close of a duplicate) unless closing does nothing on every filesystem
    // below the workspace; then it is answered ENOSYS once and the kernel stops sending it.
    bool pass_flush = true;
    // The daemon holds CAP_FSETID, so its own writes keep set-ID bits: where the kernel leaves
    // clearing them to the daemon (fusefs/channel.hpp), it clears them for its callers. Without
    // CAP_FSETID the filesystem below clears them as the daemon writes.
    bool clears_setid = false;
};

// Answers the judge's filesystem questions (data roots, link targets) without ever asking the
// mount itself: a path under the mount point is resolved in the underlying tree, from the
// workspace descriptor the daemon opened before mounting.
class UnderlyingFs final : public dataroot::FsOps {
public:
    UnderlyingFs(const FsConfig& cfg, int root_fd) : cfg_(cfg), root_fd_(root_fd) {}

    int lstat_kind(const std::string& abs_path, dataroot::FileKind& kind) override;
    int read_link(const std::string& abs_path, std::string& target) override;
    int identity(const std::string& abs_path, dev_t& dev, ino_t& ino) override;
    // A path under the mount point is also spelled under the workspace, and the other way round.
    [[nodiscard]] std::vector<std::string> aliases(const std::string& abs_path) const override;

private:
    // The part of abs_path below the mount (or the workspace), "." for the root itself; false
    // when abs_path lies outside both.
    bool relative(const std::string& abs_path, std::string& rel) const;

    const FsConfig& cfg_;
    int root_fd_;
};

// guardfs's own files, reached in the underlying tree when they lie under the mount point (the
// daemon must never write through its own mount: it would judge, and refuse, itself).
class UnderlyingHostFiles final : public guard::HostFiles {
public:
    UnderlyingHostFiles(const FsConfig& cfg, int root_fd) : cfg_(cfg), root_fd_(root_fd) {}

    int open_append(const std::string& path) override;
    int replace(const std::string& path, std::string_view content) override;
    int read(const std::string& path, std::string& out) override;

    // Called after a file under the mount was replaced (dirfd is the workspace root, rel the
    // file's path below it), so the kernel can drop the name's cached entry.
    std::function<void(const std::string& rel)> on_replaced;

private:
    // (dirfd, rel) for a path: under the mount point or workspace -> (root fd, relative path);
    // elsewhere -> (AT_FDCWD, path).
    std::pair<int, std::string> locate(const std::string& path) const;

    const FsConfig& cfg_;
    int root_fd_;
};

// The identities of guardfs's own files (design §7). The daemon writes them underneath the
// mount, so the kernel must not cache their attributes or pages: they are served with an
// attribute timeout of 0 and direct I/O.
class SelfFiles {
public:
    // `reachable`: a name under the mount may lead to one of them already (one lies under the
    // workspace, or the kernel may have been handed one: a reload).
    void set(std::vector<guard::FileId> ids, bool reachable) {
        std::lock_guard<std::mutex> lock(m_);
        ids_ = std::move(ids);
        any_ = !ids_.empty();
        if (any_ && reachable) {
            reachable_.store(true, std::memory_order_release);
        }
    }

    [[nodiscard]] bool contains(dev_t dev, ino_t ino) {
        if (!any_.load(std::memory_order_relaxed)) {
            return false;
        }
        std::lock_guard<std::mutex> lock(m_);
        for (const auto& id : ids_) {
            if (id.dev == dev && id.ino == ino) {
                reachable_.store(true, std::memory_order_release);
                return true;
            }
        }
        return false;
    }

    // Whether a name the kernel asks to remove may be one of them, which only a stat of it can
    // tell. The kernel removes only names it looked up through the mount, and every entry it is
    // handed passes contains() (do_lookup): a file outside the workspace that no lookup found
    // under the mount (a hard link made underneath) is no name it can remove. Once true, true.
    [[nodiscard]] bool reachable() const noexcept {
        return reachable_.load(std::memory_order_acquire);
    }

private:
    std::mutex m_;
    std::vector<guard::FileId> ids_; // protected by m_
    std::atomic<bool> any_{false};
    std::atomic<bool> reachable_{false};
};

// What `guardfs reload` reads through the control attributes of the mount's root directory.
struct ControlState {
    std::atomic<std::uint64_t> generation{0}; // reload attempts so far
    std::mutex m;
    std::string last; // "ok" or "error: ..." for the latest attempt; protected by m
};

// Extended attributes of the root directory that the daemon answers itself (never on disk).
inline constexpr std::string_view kPidXattr = "user.guardfs.pid";
inline constexpr std::string_view kReloadXattr = "user.guardfs.reload";

class Reclaimer;

// A handle the kernel holds (FileHandle), linked into Fs::open_handles from open until release.
class OpenHandle {
public:
    OpenHandle() = default;
    OpenHandle(const OpenHandle&) = delete;
    OpenHandle& operator=(const OpenHandle&) = delete;
    virtual ~OpenHandle() = default;

private:
    friend class OpenHandles;
    OpenHandle* prev_ = nullptr; // protected by OpenHandles::m_
    OpenHandle* next_ = nullptr; // protected by OpenHandles::m_
};

// The handles the kernel holds. A daemon that is unmounted or signalled while programs have
// files open gets no RELEASE for them; it frees them when it ends.
class OpenHandles {
public:
    OpenHandles() = default;
    OpenHandles(const OpenHandles&) = delete;
    OpenHandles& operator=(const OpenHandles&) = delete;
    ~OpenHandles();

    void add(OpenHandle& h) noexcept;
    void remove(OpenHandle& h) noexcept; // h must have been added

private:
    std::mutex m_; // taken after an inode's lock, never before
    OpenHandle head_;
};

struct Fs {
    Fs(FsConfig config, base::UniqueFd root_fd, const struct stat& root_st)
        : cfg(std::move(config))
        , inodes(std::move(root_fd), root_st)
        , underlying(cfg, inodes.root().fd.get()) {}

    FsConfig cfg;
    InodeTable inodes;
    UnderlyingFs underlying;           // answers the judge's filesystem questions
    guard::Arbiter* arbiter = nullptr; // set before the session starts; never null after
    ControlState control;
    SelfFiles self_files;
    SettledPaths settled_paths; // made lately and settled; for requests that name an entry
    // Signalled whenever a write-granted handle is released (see attach_git_config).
    std::mutex released_m;
    std::condition_variable released_cv;
    // Files no open may take for writing for now (WriteSeal): a config.lock whose content the
    // guard judged, until the rename that lands it as a git config is done.
    std::mutex sealed_m;
    std::vector<std::pair<dev_t, ino_t>> sealed; // under sealed_m
    std::atomic<std::size_t> sealed_count{0};
    // Judged git-config renames landed in this mount (the sum of every Inode::landings, and of
    // files the table did not hold): do_create looks again at a name it opened when this moved.
    std::atomic<std::uint64_t> landings{0};
    OpenHandles open_handles;
    std::atomic<bool> read_face{false}; // the policy hides paths (design §8)
    // The kernel opens directories without OPENDIR (decision 008): set once, at INIT.
    std::atomic<bool> no_opendir{false};
    Reclaimer* reclaimer = nullptr; // set before requests are served, cleared after
    // /proc/self/fd of the serving process, opened once after daemonizing (a descriptor opened
    // before the fork would name the parent's table); invalid until then. See ProcAt.
    base::UniqueFd proc_fds;
};

// Descriptor `fd` of the daemon reached through /proc, as the (directory, name) pair of an *at
// system call: "N" in the daemon's open /proc/self/fd when it has one, so that each call walks
// one component instead of four; otherwise the absolute "/proc/self/fd/N". The name alone is
// never a path: it is relative to dir(). No allocation.
class ProcAt {
public:
    ProcAt(int proc_fds, int fd) noexcept;

    ProcAt(const Fs& fs, int fd) noexcept : ProcAt(fs.proc_fds.get(), fd) {}

    [[nodiscard]] int dir() const noexcept { return dir_; }

    [[nodiscard]] const char* name() const noexcept { return buf_.data(); }

private:
    int dir_;
    std::array<char, 32> buf_{};
};

// Whether `path` is `root` or lies below it (absolute, lexical paths).
bool under(std::string_view path, std::string_view root);

// The underlying path of an inode now (the kernel's own record, /proc/self/fd): follows every
// rename, wherever it was made. Returns 0, or an errno: ENOENT when the inode was deleted,
// EXDEV when it no longer lies under the workspace. A detached inode (Inode::fd) is placed by
// the directory and name of its last lookup, and is ENOENT when that name leads elsewhere now.
int underlying_path(Fs& fs, const Inode& inode, std::string& out);

// Adds the views of an underlying path (absolute, under ws_real) to a target: as spelled under
// the mount point, and as the canonical underlying path when the two differ.
void add_views(const Fs& fs, std::string_view canonical, guard::Target& target,
               guard::View spelled_view = guard::View::Spelled);

// Refuses opens for writing of one file (dev, ino) while it lives (Fs::sealed). The opener
// counts itself in Inode::open_writers before it asks write_sealed(), and the sealer seals
// before it waits for open_writers to reach zero: so either the opener sees the seal, or the
// sealer sees the opener.
class WriteSeal {
public:
    WriteSeal(Fs& fs, dev_t dev, ino_t ino);
    ~WriteSeal();

    WriteSeal(const WriteSeal&) = delete;
    WriteSeal& operator=(const WriteSeal&) = delete;

    [[nodiscard]] dev_t dev() const noexcept { return dev_; }

    [[nodiscard]] ino_t ino() const noexcept { return ino_; }

private:
    Fs& fs_;
    dev_t dev_;
    ino_t ino_;
};

// Whether a WriteSeal holds (dev, ino) now.
bool write_sealed(Fs& fs, dev_t dev, ino_t ino) noexcept;

// The prefix of the names the daemon gives a judged git config on its way into place
// (do_rename): no request through the mount may name such an entry.
inline constexpr std::string_view kGitConfigTmpPrefix = ".guardfs-config-";

// With the read face on (design §8), a directory's link count would tell how many
// subdirectories it holds, hidden ones too (2 + that number): every directory says 1 then, as
// filesystems that do not count subdirectories do (find(1) and others take it as "unknown").
inline void hide_subdir_count(const Fs& fs, struct stat& st) noexcept {
    if (S_ISDIR(st.st_mode) && fs.read_face.load(std::memory_order_relaxed)) {
        st.st_nlink = 1;
    }
}

// The verdict on opening the file at `path` (an underlying path) for writing, as one name of a
// file: the judge's, without asking (an ask already answered for the mount counts as allow).
patterns::Verdict name_verdict(Fs& fs, const std::string& path);

// Adds `path` (an underlying path) to the names seen for `inode` (design §3). When
// Inode::kMaxNames are kept already, the weakest kept name (by name_verdict) is given up for
// `path` if `path` is stronger; otherwise `path` is not kept: a guarded name is never dropped
// for a weaker one.
void remember_name(Fs& fs, Inode& inode, std::string path);

// A target for an inode: its current path, and every other name seen for it (design §3).
// Returns 0 or an errno (the caller refuses the operation: where it lands is unknown).
// target.settled is the inode's Inode::settled token when the target is the one that token was
// given for (its one path is Inode::settled_path, no other name known), else 0.
int target_of_inode(Fs& fs, Inode& inode, guard::Target& target);

// A target for `name` in directory `parent`. Returns 0 or an errno. target.settled is the token
// the gate gave lately for a target at that path (Fs::settled_paths), else 0.
int target_of_entry(Fs& fs, const Inode& parent, std::string_view name, guard::Target& target);

} // namespace guardfs::fusefs
