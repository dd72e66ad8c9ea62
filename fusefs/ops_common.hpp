// Helpers shared by the handler files (style guide B.7): file and directory handles, lookups
// that fill the inode table, /proc/self/fd paths, and ownership of new entries. Handlers return
// positive errno ints internally and reply exactly once.
#pragma once

#include "base/unique_fd.hpp"
#include "fusefs/fs.hpp"
#include "fusefs/ops_table.hpp"
#include "fusefs/reclaimer.hpp"

#include <fuse_lowlevel.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <mutex>
#include <string>

#include <dirent.h>
#include <sys/stat.h>

namespace guardfs::fusefs {

// An open file. Write permission was decided when it was opened (style guide B.6 rule 4): the
// descriptor to write through exists only when the gate allowed a write at open or create.
class FileHandle final : public OpenHandle {
public:
    FileHandle(base::UniqueFd fd, bool write_granted) noexcept
        : fd_(std::move(fd))
        , write_granted_(write_granted) {}

    [[nodiscard]] int fd() const noexcept { return fd_.get(); }

    // -1 when no write was granted at open: every data write goes through this.
    [[nodiscard]] int write_fd() const noexcept { return write_granted_ ? fd_.get() : -1; }

    [[nodiscard]] bool write_granted() const noexcept { return write_granted_; }

    // The kernel writes through this handle on the backing file itself (passthrough), with
    // no request the daemon could stop: counted in Inode::pt_writers while open.
    [[nodiscard]] bool passthrough_writer() const noexcept { return passthrough_writer_; }

    void set_passthrough_writer() noexcept { passthrough_writer_ = true; }

private:
    base::UniqueFd fd_;
    bool write_granted_;
    bool passthrough_writer_ = false;
};

// Set-user-ID or set-group-ID: bits a write by another user may clear (set-group-ID without
// group execute too, for a writer outside the group, on Linux 6.x).
inline bool has_setid_bits(mode_t mode) noexcept {
    return (mode & (S_ISUID | S_ISGID)) != 0;
}

inline FileHandle& file_handle(const fuse_file_info* fi) noexcept {
    return *reinterpret_cast<FileHandle*>(fi->fh); // NOLINT: set by open/create
}

// "/proc/self/fd/N", NUL-terminated, without allocating: ProcAt's absolute form, for the calls
// that take no directory (truncate, the l*xattr family).
class ProcPath {
public:
    explicit ProcPath(int fd) noexcept : at_(-1, fd) {}

    [[nodiscard]] const char* c_str() const noexcept { return at_.name(); }

private:
    ProcAt at_;
};

// Calls open() (a descriptor, or -1 with errno); when it failed for want of descriptors, has the
// reclaimer make the kernel forget some inodes and calls it once more.
template <typename Open>
int open_relieved(Fs& fs, Open&& open) {
    int fd = open();
    if (fd < 0 && (errno == EMFILE || errno == ENFILE) && fs.reclaimer != nullptr &&
        fs.reclaimer->relieve(std::chrono::milliseconds(1000))) {
        fd = open();
    }
    return fd;
}

// An inode's descriptor for one operation: the table's own (no system call), or for a detached
// inode (Inode::fd) one opened again by the directory and name of its last lookup, checked to
// be the same file, and closed at the end. get() is -1 when none could be had; error() then
// says why (ESTALE: the name leads elsewhere now, or its directory is no longer known).
class InodeFd {
public:
    InodeFd(Fs& fs, const Inode& inode);

    [[nodiscard]] int get() const noexcept { return fd_; }

    [[nodiscard]] int error() const noexcept { return err_; }

private:
    base::UniqueFd owned_;
    int fd_ = -1;
    int err_ = 0;
};

// Adds a target for an existing inode to p.request (design §3: its path and its other names).
// A file with no name left (unlinked, still open) changes no path when it is written, so it is
// not judged: p.judge becomes false. Returns 0 or an errno (then the operation is refused).
int add_inode_target(Fs& fs, Inode& inode, Prepared& p);

// Whether `in` was put in place as a git config by a judged rename after p's target for it was
// read (add_inode_target): p's verdict was for the names it had before, and the operation is
// refused (EACCES; tried again, it is judged by the config's row). False when p read none.
// A review of 2026-12-07: an open judged on config.lock's names (held at the approver) ran
// after the rename had landed it and its seal had gone, and wrote `[core] hooksPath`.
bool landed_since(const Inode& in, const Prepared& p) noexcept;

// After p's operation made `in` (create, mknod, mkdir) at its one target: remembers in the
// inode the gate's Decision::settled token (Prepared::settled) for that target's path, and the
// path in fs.settled_paths.
void remember_settled(Fs& fs, Inode& in, const Prepared& p);

// The read face (design §8): is `name` in `parent` (whose underlying path is parent_path) hidden?
// Decided from the path alone, before the disk is touched. `audit` records a refusal (a lookup
// that was refused); listing leaves entries out silently.
bool hidden(Fs& fs, fuse_req_t req, const std::string& parent_path, std::string_view name,
            guard::Op op, bool audit);

// Looks `name` up in `parent`: opens it O_PATH, stats it, enters it in the inode table (lookup
// count + 1) and fills `e`. Returns 0 or an errno. `listed_ino` is the inode number a listing
// gave for the name (0: none): when the table holds that inode already, the name is only
// stat'ed (one system call instead of open, stat and close).
int do_lookup(Fs& fs, Inode& parent, const char* name, fuse_entry_param& e, ino_t listed_ino = 0);

// After creating `name` in `dirfd` for a caller other than the daemon's user: give it to the
// caller (design §9). `mode` is the mode the caller asked for (umask applied): changing the owner
// clears set-user-ID and set-group-ID, so they are put back as the caller would have had them.
// No-op unless FsConfig::chown_to_caller. Returns 0 or an errno.
int give_to_caller(const Fs& fs, fuse_req_t req, int dirfd, const char* name, mode_t mode,
                   int fd = -1);

// Is `gid` the caller's group or one of its supplementary groups?
bool caller_in_group(fuse_req_t req, gid_t gid) noexcept;

// How a handler learns that its caller lacks CAP_FSETID, so that its writes clear set-ID bits.
enum class SetidCaller {
    Flagged,   // the kernel says so with the request: WRITE, SETATTR of the size, OPEN or
               // CREATE with O_TRUNC (fusefs/channel.hpp)
    Unflagged, // FALLOCATE and COPY_FILE_RANGE carry no flag: the caller's capabilities are read
};

// Would a write by the caller of this request clear set-ID bits the daemon must clear itself?
// No system call: the daemon's CAP_FSETID, the kernel's flag and, for Flagged, the request's.
bool setid_clear_wanted(const Fs& fs, SetidCaller how) noexcept;

// The first half of clear_setid, without the request: whether `fd` is a regular file with set-ID
// bits that a write by this request's caller may have to clear (`st` then holds its stat).
// Returns 0 or an errno.
int setid_bits_at_stake(const Fs& fs, int fd, SetidCaller how, struct stat& st,
                        bool& at_stake) noexcept;

// Before a write to the file open as `fd` (any descriptor, O_PATH too) by a caller without
// CAP_FSETID: clears set-user-ID, and set-group-ID when the file is group-executable or its
// group is not the caller's, as the kernel does on a local filesystem (since linux 6.0 for the
// second case). Only while the kernel leaves this to the daemon and the daemon's own writes
// would keep the bits (FsConfig::clears_setid). Returns 0 or an errno.
int clear_setid(const Fs& fs, fuse_req_t req, int fd, SetidCaller how) noexcept;

// Opens the parent directory of a non-directory inode inside the workspace (no symlink
// followed, nothing outside the workspace reached) and returns the inode's name in it, checked
// to still be that inode. For operations a symlink needs without following it. 0 or an errno.
int open_parent_of(Fs& fs, const Inode& inode, base::UniqueFd& parent, std::string& name);

} // namespace guardfs::fusefs
