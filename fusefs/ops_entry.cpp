// Names and metadata: lookup, forget, getattr, setattr, readlink, mknod, mkdir, unlink, rmdir,
// symlink, rename, link, access, statfs (design §3, §9). Every slot that changes the tree is built
// with gated<>: build the targets (every view), one gate decision, then the *at() call on the
// same descriptors.
#include "base/io.hpp"
#include "base/path.hpp"
#include "dataroot/canonicalize.hpp"
#include "fusefs/handlers.hpp"
#include "fusefs/ops_common.hpp"
#include "guard/git_config.hpp"
#include "patterns/fold.hpp"

#include <array>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include <fcntl.h>
#include <stdio.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

namespace guardfs::fusefs {

using guard::Kind;
using guard::Op;
using guard::Role;
using guard::Target;

namespace {

Inode& inode_of(Fs& fs, fuse_ino_t ino) noexcept {
    return fs.inodes.get(ino);
}

Kind kind_of(mode_t mode) noexcept {
    return S_ISDIR(mode)   ? Kind::Directory
           : S_ISLNK(mode) ? Kind::Symlink
           : S_ISREG(mode) ? Kind::File
                           : Kind::Other;
}

// What is at parent/name now (exists, kind, identity), for the views that need it.
void stat_entry(const Inode& parent, const char* name, Target& t) {
    struct stat st {};

    if (::fstatat(parent.fd.get(), name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
        t.exists = true;
        t.kind = kind_of(st.st_mode);
        t.identity = guard::FileId{st.st_dev, st.st_ino};
    }
}

void reply_entry_or_err(fuse_req_t req, int err, const fuse_entry_param& e) {
    if (err != 0) {
        fuse_reply_err(req, err);
    } else {
        fuse_reply_entry(req, &e);
    }
}

// ---- lookup, forget, getattr, readlink, statfs, access -------------------------------------

void do_lookup_op(fuse_req_t req, fuse_ino_t parent, const char* name) {
    Fs& fs = fs_of(req);
    if (fs.read_face.load(std::memory_order_relaxed)) {
        // Hidden names answer EACCES whether or not they exist: decided from the path alone.
        std::string dir;
        if (const int err = underlying_path(fs, inode_of(fs, parent), dir); err != 0) {
            fuse_reply_err(req, EACCES);
            return;
        }
        if (hidden(fs, req, dir, name, Op::Lookup, true)) {
            fuse_reply_err(req, EACCES);
            return;
        }
    }
    fuse_entry_param e{};
    const int err = do_lookup(fs, inode_of(fs, parent), name, e);
    if (err == ENOENT) {
        // A negative entry, cached for the timeout like any other.
        std::memset(&e, 0, sizeof e);
        e.attr_timeout = fs.cfg.timeout;
        e.entry_timeout = fs.cfg.timeout;
        fuse_reply_entry(req, &e);
        return;
    }
    reply_entry_or_err(req, err, e);
}

void do_forget_op(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup) {
    fs_of(req).inodes.forget(ino, nlookup);
    fuse_reply_none(req);
}

void do_forget_multi_op(fuse_req_t req, size_t count, fuse_forget_data* forgets) {
    Fs& fs = fs_of(req);
    for (size_t i = 0; i < count; ++i) {
        fs.inodes.forget(forgets[i].ino, forgets[i].nlookup);
    }
    fuse_reply_none(req);
}

void do_getattr_op(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
    Fs& fs = fs_of(req);

    struct stat st {};

    if (fi != nullptr) {
        if (::fstat(file_handle(fi).fd(), &st) != 0) {
            fuse_reply_err(req, errno);
            return;
        }
    } else if (const InodeFd fd(fs, inode_of(fs, ino));
               fd.get() < 0 ||
               ::fstatat(fd.get(), "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) != 0) {
        fuse_reply_err(req, fd.get() < 0 ? fd.error() : errno);
        return;
    }
    hide_subdir_count(fs, st);
    fuse_reply_attr(req, &st, fs.self_files.contains(st.st_dev, st.st_ino) ? 0.0 : fs.cfg.timeout);
}

void do_readlink_op(fuse_req_t req, fuse_ino_t ino) {
    Fs& fs = fs_of(req);
    std::array<char, PATH_MAX + 1> buf{};
    const InodeFd fd(fs, inode_of(fs, ino));
    if (fd.get() < 0) {
        fuse_reply_err(req, fd.error());
        return;
    }
    const ssize_t n = ::readlinkat(fd.get(), "", buf.data(), buf.size());
    if (n < 0) {
        fuse_reply_err(req, errno);
        return;
    }
    if (static_cast<size_t>(n) >= buf.size()) {
        fuse_reply_err(req, ENAMETOOLONG);
        return;
    }
    buf[static_cast<size_t>(n)] = '\0';
    fuse_reply_readlink(req, buf.data());
}

void do_statfs_op(fuse_req_t req, fuse_ino_t /*ino*/) {
    Fs& fs = fs_of(req);

    struct statvfs st {};

    if (::fstatvfs(fs.inodes.root().fd.get(), &st) != 0) {
        fuse_reply_err(req, errno);
        return;
    }
    fuse_reply_statfs(req, &st);
}

// access(2) (sent only without default_permissions): the file's own answer, and for W_OK the
// guard's too, so that a write the guard denies is not reported writable. An ask is reported
// writable: the write itself will be asked about.
void do_access_op(fuse_req_t req, fuse_ino_t ino, int mask) {
    Fs& fs = fs_of(req);
    Inode& in = inode_of(fs, ino);
    if (S_ISLNK(in.type)) {
        fuse_reply_err(req, 0);
        return;
    }
    if (const InodeFd fd(fs, in); fd.get() < 0) {
        fuse_reply_err(req, fd.error());
        return;
    } else if (const ProcAt proc(fs, fd.get());
               ::faccessat(proc.dir(), proc.name(), mask, 0) != 0) {
        fuse_reply_err(req, errno);
        return;
    }
    if ((mask & W_OK) != 0) {
        guard::Request r;
        r.op = Op::OpenWrite;
        r.targets.emplace_back();
        if (target_of_inode(fs, in, r.targets.back()) != 0 ||
            fs.arbiter->judge().decide(r).verdict == guard::Verdict::Deny) {
            fuse_reply_err(req, EACCES);
            return;
        }
    }
    fuse_reply_err(req, 0);
}

// ---- setattr ---------------------------------------------------------------------------------

// Set-ID bits may be set on a file that handles write through a backing file (passthrough,
// docs/decisions/011) only by the one user who opened them all: the kernel writes a backing file
// with the daemon's credentials and so would not clear the bits under another user's writes.
bool setid_allowed_under_writers(Inode& in, uid_t caller) {
    const std::lock_guard<std::mutex> lock(in.m);
    return in.pt_writers == 0 || (!in.pt_writers_mixed && in.pt_writer_uid == caller);
}

int build_setattr(Fs& fs, fuse_req_t /*req*/, Prepared& p, fuse_ino_t ino, struct stat* /*attr*/,
                  int valid, fuse_file_info* fi) {
    Inode& in = inode_of(fs, ino);
    const bool size = (valid & FUSE_SET_ATTR_SIZE) != 0;
    const bool mode = (valid & FUSE_SET_ATTR_MODE) != 0;
    const bool owner = (valid & (FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID)) != 0;
    const bool times = (valid & (FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_MTIME |
                                 FUSE_SET_ATTR_ATIME_NOW | FUSE_SET_ATTR_MTIME_NOW)) != 0;
    // Size and times changed through a handle opened with a write grant ride on that grant
    // (ftruncate, and the kernel's writeback of mtime through the handle). So does the kernel's
    // flush of mtime after granted writes when no handle is left (mtime and ctime only).
    const bool via_grant = fi != nullptr && file_handle(fi).write_granted();
    const int flush_bits = FUSE_SET_ATTR_MTIME | FUSE_SET_ATTR_CTIME;
    const bool time_flush =
        (valid & ~flush_bits) == 0 && (valid & FUSE_SET_ATTR_MTIME) != 0 && in.write_granted.load();
    const bool size_judged = size && !via_grant;
    const bool times_judged = times && !via_grant && !time_flush;
    if (!size_judged && !mode && !owner && !times_judged) {
        p.judge = false;
        return 0;
    }
    p.request.op = size_judged ? Op::Truncate : mode ? Op::Chmod : owner ? Op::Chown : Op::Utimes;
    return add_inode_target(fs, in, p);
}

int set_times(Fs& fs, const Inode& in, const struct stat& attr, int valid, fuse_file_info* fi) {
    struct timespec tv[2];
    tv[0].tv_sec = tv[1].tv_sec = 0;
    tv[0].tv_nsec = tv[1].tv_nsec = UTIME_OMIT;
    if ((valid & FUSE_SET_ATTR_ATIME_NOW) != 0) {
        tv[0].tv_nsec = UTIME_NOW;
    } else if ((valid & FUSE_SET_ATTR_ATIME) != 0) {
        tv[0] = attr.st_atim;
    }
    if ((valid & FUSE_SET_ATTR_MTIME_NOW) != 0) {
        tv[1].tv_nsec = UTIME_NOW;
    } else if ((valid & FUSE_SET_ATTR_MTIME) != 0) {
        tv[1] = attr.st_mtim;
    }
    if (fi != nullptr) {
        return ::futimens(file_handle(fi).fd(), tv) == 0 ? 0 : errno;
    }
    if (S_ISLNK(in.type) || !in.fd.valid()) {
        // Never through /proc/self/fd: that would follow the link, maybe out of the tree. A
        // detached inode (Inode::fd) is reached the same way, by its directory and name.
        base::UniqueFd parent;
        std::string name;
        if (const int err = open_parent_of(fs, in, parent, name); err != 0) {
            return err;
        }
        return ::utimensat(parent.get(), name.c_str(), tv, AT_SYMLINK_NOFOLLOW) == 0 ? 0 : errno;
    }
    const ProcAt proc(fs, in.fd.get());
    return ::utimensat(proc.dir(), proc.name(), tv, 0) == 0 ? 0 : errno;
}

void do_setattr(Fs& fs, fuse_req_t req, Prepared& p, fuse_ino_t ino, struct stat* attr, int valid,
                fuse_file_info* fi) {
    Inode& in = inode_of(fs, ino);
    int err = 0;
    if ((valid & FUSE_SET_ATTR_SIZE) != 0 &&
        (write_sealed(fs, in.dev, in.ino) || landed_since(in, p))) {
        err = EACCES; // a judged config.lock on its way into place, or put there: content stays
    } else if ((valid & FUSE_SET_ATTR_MODE) != 0 && has_setid_bits(attr->st_mode) &&
               !setid_allowed_under_writers(in, fuse_req_ctx(req)->uid)) {
        err = ETXTBSY;
    } else if ((valid & FUSE_SET_ATTR_MODE) != 0) {
        if (S_ISLNK(in.type)) {
            err = EOPNOTSUPP;
        } else if (fi != nullptr) {
            err = ::fchmod(file_handle(fi).fd(), attr->st_mode) == 0 ? 0 : errno;
        } else if (const InodeFd fd(fs, in); fd.get() < 0) {
            err = fd.error();
        } else {
            const ProcAt proc(fs, fd.get());
            err = ::fchmodat(proc.dir(), proc.name(), attr->st_mode, 0) == 0 ? 0 : errno;
        }
    }
    if (err == 0 && (valid & (FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID)) != 0) {
        const uid_t uid = (valid & FUSE_SET_ATTR_UID) != 0 ? attr->st_uid : static_cast<uid_t>(-1);
        const gid_t gid = (valid & FUSE_SET_ATTR_GID) != 0 ? attr->st_gid : static_cast<gid_t>(-1);
        const InodeFd fd(fs, in);
        err = fd.get() < 0 ? fd.error()
              : ::fchownat(fd.get(), "", uid, gid, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) == 0
                  ? 0
                  : errno;
    }
    if (err == 0 && (valid & FUSE_SET_ATTR_SIZE) != 0 && S_ISREG(in.type)) {
        if (fi != nullptr) {
            err = clear_setid(fs, req, file_handle(fi).fd(), SetidCaller::Flagged);
        } else {
            const InodeFd fd(fs, in);
            err = fd.get() < 0 ? fd.error() : clear_setid(fs, req, fd.get(), SetidCaller::Flagged);
        }
    }
    if (err == 0 && (valid & FUSE_SET_ATTR_SIZE) != 0) {
        if (fi != nullptr && file_handle(fi).write_granted()) {
            err = ::ftruncate(file_handle(fi).write_fd(), attr->st_size) == 0 ? 0 : errno;
        } else if (!S_ISREG(in.type)) {
            err = S_ISDIR(in.type) ? EISDIR : EINVAL;
        } else if (const InodeFd fd(fs, in); fd.get() < 0) {
            err = fd.error();
        } else {
            err = ::truncate(ProcPath(fd.get()).c_str(), attr->st_size) == 0 ? 0 : errno;
        }
    }
    if (err == 0 && (valid & (FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_MTIME | FUSE_SET_ATTR_ATIME_NOW |
                              FUSE_SET_ATTR_MTIME_NOW)) != 0) {
        err = set_times(fs, in, *attr, valid, fi);
    }
    if (err != 0) {
        fuse_reply_err(req, err);
        return;
    }
    do_getattr_op(req, ino, fi);
}

// ---- mknod, mkdir, symlink ----------------------------------------------------------------

int build_new_entry(Fs& fs, Prepared& p, fuse_ino_t parent, const char* name, Op op, Kind kind) {
    p.request.op = op;
    p.request.targets.emplace_back();
    Target& t = p.request.targets.back();
    t.role = Role::NewName;
    t.kind = kind;
    Inode& dir = inode_of(fs, parent);
    if (const int err = target_of_entry(fs, dir, name, t); err != 0) {
        return err;
    }
    if (patterns::folds_to(name, ".git")) {
        stat_entry(dir, name, t); // the gitdir-pointer row needs to know what is there
        if (!t.exists && kind != Kind::Directory) {
            t.among_others = base::has_entries(dir.fd.get(), ".");
        }
    }
    return 0;
}

void finish_new_entry(Fs& fs, fuse_req_t req, const Prepared& p, fuse_ino_t parent,
                      const char* name, mode_t mode, int rc) {
    if (rc != 0) {
        fuse_reply_err(req, errno);
        return;
    }
    Inode& dir = inode_of(fs, parent);
    if (const int err = give_to_caller(fs, req, dir.fd.get(), name, mode); err != 0) {
        fuse_reply_err(req, err);
        return;
    }
    fuse_entry_param e{};
    const int err = do_lookup(fs, dir, name, e);
    if (err == 0) {
        remember_settled(fs, fs.inodes.get(e.ino), p);
    }
    reply_entry_or_err(req, err, e);
}

int build_mknod(Fs& fs, fuse_req_t /*req*/, Prepared& p, fuse_ino_t parent, const char* name,
                mode_t mode, dev_t /*rdev*/) {
    return build_new_entry(fs, p, parent, name, Op::Mknod, kind_of(mode));
}

void do_mknod(Fs& fs, fuse_req_t req, Prepared& p, fuse_ino_t parent, const char* name, mode_t mode,
              dev_t rdev) {
    const int rc = ::mknodat(inode_of(fs, parent).fd.get(), name, mode, rdev);
    finish_new_entry(fs, req, p, parent, name, mode, rc);
}

int build_mkdir(Fs& fs, fuse_req_t /*req*/, Prepared& p, fuse_ino_t parent, const char* name,
                mode_t /*mode*/) {
    return build_new_entry(fs, p, parent, name, Op::Mkdir, Kind::Directory);
}

void do_mkdir(Fs& fs, fuse_req_t req, Prepared& p, fuse_ino_t parent, const char* name,
              mode_t mode) {
    const int rc = ::mkdirat(inode_of(fs, parent).fd.get(), name, mode);
    finish_new_entry(fs, req, p, parent, name, S_IFDIR | mode, rc);
}

// The target of a symbolic link reached by the entry `at` (a new symlink's name, a second name
// of one, or where a renamed one lands): resolved lexically against the link's directory, and
// with its existing components resolved, judged as a write to where it leads (design §3).
Target link_target(Fs& fs, std::string_view text, const Target& at) {
    Target to;
    to.role = Role::LinkTarget;
    bool leaves = true;
    const bool absolute = !text.empty() && text.front() == '/';
    const bool in_place = fs.cfg.ws_real == fs.cfg.mount_real;
    auto add = [&to](std::string path, guard::View view) {
        for (const auto& w : to.views) {
            if (w.path == path) {
                return;
            }
        }
        to.views.push_back(guard::PathView{std::move(path), view});
    };
    for (const auto& v : at.views) {
        const std::string dir = v.path.substr(0, v.path.rfind('/'));
        const std::string resolved =
            base::lexical_absolute(text, dir.empty() ? std::string_view("/") : dir);
        // The kernel resolves the target where the caller meets the link, under the mount
        // point: an absolute one from the root, a relative one from the link's directory there.
        // So it is inside only under the mount point; the workspace's own path, when the mount
        // point is apart from it, is the tree below the guard.
        bool inside = false;
        if (absolute) {
            inside = under(resolved, fs.cfg.mount_spelled) || under(resolved, fs.cfg.mount_real);
        } else if (v.view == guard::View::Canonical) {
            inside = in_place && under(resolved, fs.cfg.ws_real);
        } else {
            inside = under(resolved, fs.cfg.mount_spelled);
        }
        leaves = leaves && !inside;
        add(resolved, guard::View::LinkTarget);
        // Where it lands with its existing components resolved (in the underlying tree).
        const std::string raw = absolute
                                    ? std::string(text)
                                    : (dir.empty() ? std::string() : dir) + "/" + std::string(text);
        if (auto c = dataroot::canonicalize_target(raw, fs.underlying, true)) {
            // A link aimed at an existing `.git` file gets that gitdir pointer's verdict (it
            // is judged as a write to the pointer; guardfs check stats it the same way).
            const std::string& path = c.value();
            dataroot::FileKind kind = dataroot::FileKind::Missing;
            if (patterns::folds_to(std::string_view(path).substr(path.rfind('/') + 1), ".git") &&
                fs.underlying.lstat_kind(path, kind) == 0 && kind != dataroot::FileKind::Missing) {
                to.exists = true;
                to.kind = kind == dataroot::FileKind::Directory ? Kind::Directory
                          : kind == dataroot::FileKind::Symlink ? Kind::Symlink
                                                                : Kind::File;
            }
            add(path, guard::View::LinkTargetCanonical);
        }
    }
    // The same files spelled under the workspace or the mount point apart from it: guardfs's
    // own files and mapped configuration directories are known by one spelling.
    for (std::size_t i = 0, n = to.views.size(); i < n; ++i) {
        for (std::string& alias : fs.underlying.aliases(to.views[i].path)) {
            add(std::move(alias), guard::View::LinkTargetCanonical);
        }
    }
    to.leaves_tree = leaves;
    return to;
}

// symlink(TARGET, parent/name): the new name (and the rows passing through it: a link named
// `.git` or `hooks` redirects git), and the target (link_target).
int build_symlink(Fs& fs, fuse_req_t /*req*/, Prepared& p, const char* link, fuse_ino_t parent,
                  const char* name) {
    if (const int err = build_new_entry(fs, p, parent, name, Op::Symlink, Kind::Symlink);
        err != 0) {
        return err;
    }
    p.request.targets.back().through = true;
    p.request.targets.push_back(link_target(fs, link, p.request.targets.front()));
    return 0;
}

void do_symlink(Fs& fs, fuse_req_t req, Prepared& p, const char* link, fuse_ino_t parent,
                const char* name) {
    const int rc = ::symlinkat(link, inode_of(fs, parent).fd.get(), name);
    finish_new_entry(fs, req, p, parent, name, S_IFLNK | 0777, rc);
}

// ---- unlink, rmdir ---------------------------------------------------------------------------

int build_remove(Fs& fs, Prepared& p, fuse_ino_t parent, const char* name, Op op) {
    p.request.op = op;
    p.request.targets.emplace_back();
    Target& t = p.request.targets.back();
    Inode& dir = inode_of(fs, parent);
    if (const int err = target_of_entry(fs, dir, name, t); err != 0) {
        return err;
    }
    // What is there matters to the gitdir-pointer and commondir rows (by name) and to
    // self-protection by identity, where one of guardfs's files may be reached by a name under
    // the mount; nothing else needs the extra system call.
    if (patterns::folds_to(name, ".git") || patterns::folds_to(name, "commondir") ||
        fs.self_files.reachable()) {
        stat_entry(dir, name, t);
    }
    return 0;
}

int build_unlink(Fs& fs, fuse_req_t /*req*/, Prepared& p, fuse_ino_t parent, const char* name) {
    return build_remove(fs, p, parent, name, Op::Unlink);
}

void do_unlink(Fs& fs, fuse_req_t req, Prepared& /*p*/, fuse_ino_t parent, const char* name) {
    const int rc = ::unlinkat(inode_of(fs, parent).fd.get(), name, 0);
    fuse_reply_err(req, rc == 0 ? 0 : errno);
}

int build_rmdir(Fs& fs, fuse_req_t /*req*/, Prepared& p, fuse_ino_t parent, const char* name) {
    return build_remove(fs, p, parent, name, Op::Rmdir);
}

void do_rmdir(Fs& fs, fuse_req_t req, Prepared& /*p*/, fuse_ino_t parent, const char* name) {
    const int rc = ::unlinkat(inode_of(fs, parent).fd.get(), name, AT_REMOVEDIR);
    fuse_reply_err(req, rc == 0 ? 0 : errno);
}

// ---- rename ----------------------------------------------------------------------------------

// Reads a whole small file from an open descriptor, from its start (false when it cannot).
bool read_small(int fd, std::string& out) {
    out.clear();
    std::array<char, 65536> buf{};
    for (off_t at = 0;;) {
        const ssize_t n = ::pread(fd, buf.data(), buf.size(), at);
        if (n < 0) {
            return false;
        }
        if (n == 0) {
            return true;
        }
        out.append(buf.data(), static_cast<size_t>(n));
        at += n;
        if (out.size() > guard::kMaxGitConfigBytes) {
            return false;
        }
    }
}

// Reads a whole small file relative to a directory ("" and false when it cannot).
bool read_small(int dirfd, const char* name, std::string& out) {
    base::UniqueFd fd(::openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
    return fd.valid() && read_small(fd.get(), out);
}

// git writes config through config.lock and a rename; the guard judges that rename by the new
// content (design §4a). The content is handed over only when it is what will land: a regular
// file with one name and no open writer, sealed against new ones (WriteSeal) until the request
// is done, and do_rename puts that very file in place (not whatever the name holds by then).
// Everything else is judged by the config row itself.
void attach_git_config(Fs& fs, Prepared& p, Inode& from_dir, const char* name, Inode& to_dir,
                       const char* newname) {
    const Target& dst = p.request.targets.back();
    if (!guard::is_git_config_path(dst.views.back().path)) {
        return;
    }

    // Looked at before it is opened (a fifo would hold the open), then opened without waiting
    // and looked at again through the descriptor: that file is the one judged.
    struct stat named {};

    if (::fstatat(from_dir.fd.get(), name, &named, AT_SYMLINK_NOFOLLOW) != 0 ||
        !S_ISREG(named.st_mode)) {
        return;
    }
    base::UniqueFd fd(
        ::openat(from_dir.fd.get(), name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));

    struct stat st {};

    if (!fd.valid() || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1 ||
        static_cast<size_t>(st.st_size) > guard::kMaxGitConfigBytes) {
        return;
    }
    auto seal = std::make_unique<WriteSeal>(fs, st.st_dev, st.st_ino);
    if (const auto id = fs.inodes.find(st.st_dev, st.st_ino)) {
        // The kernel sends release after close() has returned, so git's rename can arrive
        // before the release of its own config.lock: wait for that (briefly). A writer that
        // really keeps the file open leaves the rename to the config row.
        Inode& lock_file = fs.inodes.get(*id);
        std::unique_lock<std::mutex> lock(fs.released_m);
        if (!fs.released_cv.wait_for(lock, std::chrono::milliseconds(500),
                                     [&] { return lock_file.open_writers.load() == 0; })) {
            return;
        }
    }
    guard::GitConfigChange change;
    if (!read_small(fd.get(), change.proposed)) {
        return;
    }
    std::string current;
    if (read_small(to_dir.fd.get(), newname, current)) {
        change.current = std::move(current);
    } else if (errno != ENOENT) {
        return;
    }
    p.request.git_config = std::move(change);
    p.judged = std::move(fd);
    p.seal = std::move(seal);
}

// Puts the judged file of a git-config rename (Prepared::judged) in place as to_dir/newname.
// A rename by name lands whatever `name` holds when it runs, so the name is first moved to one
// of the daemon's own (no request through the mount may name it: target_of_entry), checked to
// be the judged file, and only then renamed over the config; a name that holds another file by
// then is put back and the rename fails (EBUSY). Renames, not a new link: the daemon's O_PATH
// descriptor of the file follows its entry, so the file is known by its new path from then on.
// Returns 0 or an errno.
int rename_judged(const Prepared& p, Inode& from_dir, const char* name, Inode& to_dir,
                  const char* newname, unsigned int flags) {
    std::array<unsigned char, 8> rnd{};
    if (::getrandom(rnd.data(), rnd.size(), 0) != static_cast<ssize_t>(rnd.size())) {
        return EIO;
    }
    std::string tmp(kGitConfigTmpPrefix);
    for (const unsigned char b : rnd) {
        tmp += "0123456789abcdef"[b >> 4U];
        tmp += "0123456789abcdef"[b & 15U];
    }
    const int to = to_dir.fd.get();
    if (::renameat2(from_dir.fd.get(), name, to, tmp.c_str(), RENAME_NOREPLACE) != 0) {
        return errno;
    }
    // Back to its name; if that name was taken meanwhile, the file (a lock file nobody can use
    // any more) is removed rather than left under a name no request may touch.
    auto put_back = [&] {
        if (::renameat2(to, tmp.c_str(), from_dir.fd.get(), name, RENAME_NOREPLACE) != 0) {
            ::unlinkat(to, tmp.c_str(), 0);
        }
    };

    struct stat judged {};

    struct stat moved {};

    // The very file read, still with one name (a link made after the check would leave the
    // config another name no rule guards).
    if (::fstat(p.judged.get(), &judged) != 0 ||
        ::fstatat(to, tmp.c_str(), &moved, AT_SYMLINK_NOFOLLOW) != 0 ||
        moved.st_dev != judged.st_dev || moved.st_ino != judged.st_ino || moved.st_nlink != 1) {
        put_back();
        return EBUSY;
    }
    if (::renameat2(to, tmp.c_str(), to, newname, flags) != 0) {
        const int err = errno;
        put_back();
        return err;
    }
    return 0;
}

int build_rename(Fs& fs, fuse_req_t /*req*/, Prepared& p, fuse_ino_t parent, const char* name,
                 fuse_ino_t newparent, const char* newname, unsigned int flags) {
    if ((flags & ~static_cast<unsigned>(RENAME_NOREPLACE | RENAME_EXCHANGE)) != 0) {
        return EINVAL; // RENAME_WHITEOUT and unknown flags: not for a guarded tree
    }
    p.request.op = (flags & RENAME_EXCHANGE) != 0 ? Op::Exchange : Op::Rename;
    Inode& from_dir = inode_of(fs, parent);
    Inode& to_dir = inode_of(fs, newparent);
    for (const auto& [dir, entry, role] : {std::tuple{&from_dir, name, Role::RenameSource},
                                           std::tuple{&to_dir, newname, Role::RenameDestination}}) {
        p.request.targets.emplace_back();
        Target& t = p.request.targets.back();
        t.role = role;
        t.through = true;
        if (const int err = target_of_entry(fs, *dir, entry, t); err != 0) {
            return err;
        }
        stat_entry(*dir, entry, t);
    }
    // Rows pass *through* a renamed name only when a directory moves (design §3): nothing lies
    // below a file. A symlink may lead to a directory, so it moves like one. With
    // RENAME_EXCHANGE either end may be the one that moves.
    auto moves_like_dir = [](const Target& t) {
        return t.kind == Kind::Directory || t.kind == Kind::Symlink;
    };
    const bool dir_moves = moves_like_dir(p.request.targets[0]) ||
                           (p.request.op == Op::Exchange && moves_like_dir(p.request.targets[1]));
    for (Target& t : p.request.targets) {
        t.through = dir_moves;
    }
    // A symlink that moves is a new symlink where it lands: its target is judged from there (a
    // relative one is aimed anew by the move).
    for (const auto& [from, to] : {std::pair{0, 1}, std::pair{1, 0}}) {
        const Target& moving = p.request.targets.at(static_cast<std::size_t>(from));
        if (moving.kind != Kind::Symlink || (from == 1 && p.request.op != Op::Exchange)) {
            continue;
        }
        std::string text;
        if (const int err = base::read_link_at(from == 0 ? from_dir.fd.get() : to_dir.fd.get(),
                                               from == 0 ? name : newname, text);
            err != 0) {
            return err;
        }
        Target target = link_target(fs, text, p.request.targets.at(static_cast<std::size_t>(to)));
        p.request.targets.push_back(std::move(target));
    }
    if (p.request.op == Op::Rename) {
        attach_git_config(fs, p, from_dir, name, to_dir, newname);
    }
    return 0;
}

namespace {

// After a rename through the mount: the kernel moves its entry without looking the name up
// again, so the table learns the inode's new place here, where a detached inode (Inode::fd) is
// reached by it, and where a later lookup by the new name is not taken for a change made
// underneath (do_lookup: it would read both of the file's paths back). The moved file is known
// by the identity its build found; without one, only a detached inode is worth a stat.
void note_moved(Fs& fs, Inode& dir, const char* name, const std::optional<guard::FileId>& id) {
    struct stat st {};

    if (id) {
        st.st_dev = id->dev;
        st.st_ino = id->ino;
    } else if (!fs.inodes.has_detached() ||
               ::fstatat(dir.fd.get(), name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
        return;
    }
    fs.inodes.touch_known(st.st_dev, st.st_ino, dir, name);
}

// After a rename the gate settled (Decision::settled: nothing matched on either end, nor could
// for any operation): a later request naming the new path (its unlink, a rename on) carries the
// token and is not walked again. Both paths after an exchange.
void remember_renamed(Fs& fs, const Prepared& p) {
    if (p.settled == 0) {
        return;
    }
    for (const Target& t : p.request.targets) {
        if ((t.role == Role::RenameDestination || p.request.op == Op::Exchange) &&
            !t.views.empty()) {
            // The underlying path is the last view (add_views): the one target_of_entry finds.
            fs.settled_paths.remember(t.views.back().path, p.settled);
        }
    }
}

} // namespace

void do_rename(Fs& fs, fuse_req_t req, Prepared& p, fuse_ino_t parent, const char* name,
               fuse_ino_t newparent, const char* newname, unsigned int flags) {
    Inode& from_dir = inode_of(fs, parent);
    Inode& to_dir = inode_of(fs, newparent);
    int err = 0;
    if (p.judged.valid() && p.request.op == Op::Rename) {
        err = rename_judged(p, from_dir, name, to_dir, newname, flags);
    } else if (::renameat2(from_dir.fd.get(), name, to_dir.fd.get(), newname, flags) != 0) {
        err = errno;
    }
    if (err == 0) {
        const auto& ends = p.request.targets;
        if (p.judged.valid() && p.seal) {
            // The landed file (the one judged and sealed, whatever the source's name held when
            // the request was built). The config's path is one of its names from now on,
            // should a name be added later (a link judged before this rename, executed after
            // it) and the inode be forgotten and looked up by that other name.
            if (const auto id = fs.inodes.find(p.seal->dev(), p.seal->ino())) {
                Inode& landed = fs.inodes.get(*id);
                if (ends.size() >= 2 && !ends[1].views.empty()) {
                    remember_name(fs, landed, ends[1].views.back().path);
                }
                // Counted after the name and before the seal goes (with p): an open, truncate
                // or link judged by the file's names before the name above was added sees this
                // once the seal is gone, and is refused (landed_since).
                landed.landings.fetch_add(1);
            }
            fs.landings.fetch_add(1); // seq_cst, as the seal: see do_create
        }
        note_moved(fs, to_dir, newname, ends.empty() ? std::nullopt : ends[0].identity);
        if ((flags & RENAME_EXCHANGE) != 0) {
            note_moved(fs, from_dir, name, ends.size() < 2 ? std::nullopt : ends[1].identity);
        }
        remember_renamed(fs, p);
    }
    fuse_reply_err(req, err);
}

// ---- link --------------------------------------------------------------------------------------

int build_link(Fs& fs, fuse_req_t /*req*/, Prepared& p, fuse_ino_t ino, fuse_ino_t newparent,
               const char* newname) {
    p.request.op = Op::Link;
    Inode& in = inode_of(fs, ino);
    if (const int err = add_inode_target(fs, in, p); err != 0) {
        return err;
    }
    if (!p.request.targets.empty()) {
        p.request.targets.back().role = Role::ExistingNames;
    }
    p.judge = true; // the new name is always judged, even for a file with no name left
    if (const int err = build_new_entry(fs, p, newparent, newname, Op::Link,
                                        S_ISDIR(in.type)   ? Kind::Directory
                                        : S_ISLNK(in.type) ? Kind::Symlink
                                                           : Kind::File);
        err != 0) {
        return err;
    }
    // A second name of a symlink is a new symlink there: rows pass through it as through one
    // made by symlink(2) (it may lead to a directory: `ln -P h .git/hooks` for `h -> evil/`),
    // and its target is judged from its new directory.
    if (S_ISLNK(in.type)) {
        p.request.targets.back().through = true;
        const InodeFd fd(fs, in);
        std::string text;
        if (fd.get() < 0) {
            return fd.error();
        }
        if (const int err = base::read_link_at(fd.get(), "", text); err != 0) {
            return err;
        }
        Target to = link_target(fs, text, p.request.targets.back());
        p.request.targets.push_back(std::move(to));
    }
    return 0;
}

void do_link(Fs& fs, fuse_req_t req, Prepared& p, fuse_ino_t ino, fuse_ino_t newparent,
             const char* newname) {
    Inode& in = inode_of(fs, ino);
    Inode& dir = inode_of(fs, newparent);
    if (write_sealed(fs, in.dev, in.ino) || landed_since(in, p)) {
        // A judged config.lock on its way into place keeps one name; one put in place since
        // this link was judged is judged again.
        fuse_reply_err(req, EACCES);
        return;
    }
    const InodeFd fd(fs, in);
    if (fd.get() < 0) {
        fuse_reply_err(req, fd.error());
        return;
    }
    // With CAP_DAC_READ_SEARCH, link the descriptor itself; otherwise through /proc.
    int rc = ::linkat(fd.get(), "", dir.fd.get(), newname, AT_EMPTY_PATH);
    if (rc != 0 && errno == ENOENT && !S_ISLNK(in.type)) {
        const ProcAt proc(fs, fd.get());
        rc = ::linkat(proc.dir(), proc.name(), dir.fd.get(), newname, AT_SYMLINK_FOLLOW);
    }
    if (rc != 0) {
        fuse_reply_err(req, errno);
        return;
    }
    fuse_entry_param e{};
    e.attr_timeout = fs.cfg.timeout;
    e.entry_timeout = fs.cfg.timeout;
    if (::fstatat(fd.get(), "", &e.attr, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) != 0) {
        fuse_reply_err(req, errno);
        return;
    }
    fs.inodes.add_lookup(in);
    e.ino = fs.inodes.id_of(in);
    // The new name is a name of this inode from now on (design §3). The last view of a
    // target is its canonical path (add_views puts the spelled one first).
    remember_name(fs, in, p.request.targets.back().views.back().path);
    fuse_reply_entry(req, &e);
}

} // namespace

namespace handlers {

PassHandler<Slot::lookup> lookup() noexcept {
    return pass<Slot::lookup, &do_lookup_op>();
}

PassHandler<Slot::forget> forget() noexcept {
    return pass<Slot::forget, &do_forget_op>();
}

PassHandler<Slot::forget_multi> forget_multi() noexcept {
    return pass<Slot::forget_multi, &do_forget_multi_op>();
}

PassHandler<Slot::getattr> getattr() noexcept {
    return pass<Slot::getattr, &do_getattr_op>();
}

GatedHandler<Slot::setattr> setattr() noexcept {
    return gated<Slot::setattr, &build_setattr, &do_setattr>();
}

PassHandler<Slot::readlink> readlink() noexcept {
    return pass<Slot::readlink, &do_readlink_op>();
}

GatedHandler<Slot::mknod> mknod() noexcept {
    return gated<Slot::mknod, &build_mknod, &do_mknod>();
}

GatedHandler<Slot::mkdir> mkdir() noexcept {
    return gated<Slot::mkdir, &build_mkdir, &do_mkdir>();
}

GatedHandler<Slot::unlink> unlink() noexcept {
    return gated<Slot::unlink, &build_unlink, &do_unlink>();
}

GatedHandler<Slot::rmdir> rmdir() noexcept {
    return gated<Slot::rmdir, &build_rmdir, &do_rmdir>();
}

GatedHandler<Slot::symlink> symlink() noexcept {
    return gated<Slot::symlink, &build_symlink, &do_symlink>();
}

GatedHandler<Slot::rename> rename() noexcept {
    return gated<Slot::rename, &build_rename, &do_rename>();
}

GatedHandler<Slot::link> link() noexcept {
    return gated<Slot::link, &build_link, &do_link>();
}

PassHandler<Slot::access> access() noexcept {
    return pass<Slot::access, &do_access_op>();
}

PassHandler<Slot::statfs> statfs() noexcept {
    return pass<Slot::statfs, &do_statfs_op>();
}

} // namespace handlers

} // namespace guardfs::fusefs
