// Shared handler helpers; see ops_common.hpp.
#include "fusefs/ops_common.hpp"

#include "fusefs/channel.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <fcntl.h>
#include <linux/capability.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace guardfs::fusefs {

namespace {

// The inode `name` in `parent` leads to, when the table holds it already (a listing named an
// inode the kernel knows): its lookup count raised and e.attr filled. nullptr otherwise.
Inode* lookup_known(Fs& fs, Inode& parent, const char* name, fuse_entry_param& e,
                    ino_t listed_ino) {
    if (listed_ino == 0 || !fs.inodes.find(parent.dev, listed_ino).has_value()) {
        return nullptr;
    }
    // The name may lead elsewhere by now: the inode is the one the stat finds, if known.
    if (::fstatat(parent.fd.get(), name, &e.attr, AT_SYMLINK_NOFOLLOW) != 0) {
        return nullptr; // the open below reports what is wrong
    }
    return fs.inodes.acquire_known(e.attr);
}

} // namespace

InodeFd::InodeFd(Fs& fs, const Inode& inode) {
    if (inode.fd.valid()) {
        fd_ = inode.fd.get();
        return;
    }
    std::string name;
    Inode* parent = fs.inodes.pin_parent(inode, name);
    if (parent == nullptr) {
        err_ = ESTALE;
        return;
    }
    owned_.reset(open_relieved(fs, [&] {
        return ::openat(parent->fd.get(), name.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC);
    }));
    err_ = owned_.valid() ? 0 : errno;

    struct stat st {};

    if (err_ == 0 && (::fstatat(owned_.get(), "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) != 0 ||
                      st.st_dev != inode.dev || st.st_ino != inode.ino)) {
        err_ = ESTALE; // renamed or removed where the mount did not see it: not this file
        owned_.reset();
    }
    if (err_ == ENOENT) {
        err_ = ESTALE;
    }
    fs.inodes.forget(fs.inodes.id_of(*parent), 1);
    fd_ = owned_.get();
}

int do_lookup(Fs& fs, Inode& parent, const char* name, fuse_entry_param& e, ino_t listed_ino) {
    std::memset(&e, 0, sizeof e);
    e.attr_timeout = fs.cfg.timeout;
    e.entry_timeout = fs.cfg.timeout;
    Inode* found = lookup_known(fs, parent, name, e, listed_ino);
    if (found == nullptr) {
        const auto open = [&] {
            return ::openat(parent.fd.get(), name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        };
        // Above the reclaimer's high-water mark, or out of descriptors, a new non-directory is
        // held detached (Inode::fd): the descriptors left stay for handles, creates, directories
        // and listings while the reclaimer catches up. Waiting for it would not do: the kernel
        // holds this directory's lock for the lookup, so it cannot forget entries here until
        // the lookup ends, and in a walk of one directory larger than the limit a lookup (or a
        // create) that waited ran out its time. An inode in the table already needs no
        // descriptor (a directory whose entry the reclaimer dropped while files below it stay
        // open); only a new directory waits.
        const bool spare =
            fs.reclaimer == nullptr || fs.inodes.approx_size() <= fs.reclaimer->high();
        base::UniqueFd fd(spare ? open() : -1);
        if (!spare || (!fd.valid() && (errno == EMFILE || errno == ENFILE))) {
            if (::fstatat(parent.fd.get(), name, &e.attr, AT_SYMLINK_NOFOLLOW) != 0) {
                return errno;
            }
            found = fs.inodes.acquire_known(e.attr);
            if (found == nullptr && !S_ISDIR(e.attr.st_mode)) {
                found = &fs.inodes.acquire(base::UniqueFd(), e.attr);
            } else if (found == nullptr) {
                fd.reset(open_relieved(fs, open));
            }
        }
        if (found == nullptr) {
            if (!fd.valid()) {
                return errno;
            }
            if (::fstatat(fd.get(), "", &e.attr, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) != 0) {
                return errno;
            }
            found = &fs.inodes.acquire(std::move(fd), e.attr);
        }
    }
    if (found->type != (e.attr.st_mode & S_IFMT)) {
        // A detached inode's number, passed to a file of another kind after it was deleted
        // (nothing held it): not the same file, and not one the kernel may be handed under the
        // old one's id. The name works again once the kernel forgets the old inode.
        fs.inodes.forget(fs.inodes.id_of(*found), 1);
        return ESTALE;
    }
    Inode& in = *found;
    e.ino = fs.inodes.id_of(in);
    const bool renamed = fs.inodes.touch(in, parent, name);
    if (fs.reclaimer != nullptr) {
        fs.reclaimer->noticed(fs.inodes.approx_size());
    }
    if (fs.self_files.contains(e.attr.st_dev, e.attr.st_ino)) {
        e.attr_timeout = 0; // written by the daemon underneath the mount: never cached
    }
    if (S_ISREG(e.attr.st_mode) && (e.attr.st_nlink > 1 || renamed)) {
        // A file with several names: remember this one, so that writing through any name is
        // judged by all of them (design §3). So too a file found by another name than at its
        // last lookup (linked, renamed or unlinked underneath, or renamed through the mount),
        // and then also the name the daemon holds it by, which may be gone by the next request.
        auto note = [&fs, &in](std::string path) {
            remember_name(fs, in, std::move(path));
        };
        std::string path;
        if (underlying_path(fs, parent, path) == 0) {
            if (path != "/") {
                path += '/';
            }
            path += name;
            note(std::move(path));
        }
        if (renamed && underlying_path(fs, in, path) == 0) {
            note(std::move(path));
        }
    }
    hide_subdir_count(fs, e.attr);
    return 0;
}

bool hidden(Fs& fs, fuse_req_t req, const std::string& parent_path, std::string_view name,
            guard::Op op, bool audit) {
    guard::Request r;
    r.op = op;
    r.targets.emplace_back();
    std::string path = parent_path;
    if (path != "/") {
        path += '/';
    }
    path.append(name);
    add_views(fs, path, r.targets.back());
    const guard::Decision d = audit ? check(fs, req, r) : fs.arbiter->judge().decide(r);
    return !d.allowed();
}

int add_inode_target(Fs& fs, Inode& inode, Prepared& p) {
    p.landings = inode.landings.load(); // seq_cst: before the names (see do_rename)
    p.request.targets.emplace_back();
    const int err = target_of_inode(fs, inode, p.request.targets.back());
    if (err == ENOENT) {
        struct stat st {};

        // A detached inode with no name left cannot be reached to ask: refused as ENOENT.
        if (const InodeFd fd(fs, inode);
            fd.get() >= 0 &&
            ::fstatat(fd.get(), "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) == 0 &&
            st.st_nlink == 0) {
            p.request.targets.pop_back();
            p.judge = !p.request.targets.empty();
            return 0;
        }
    }
    return err;
}

bool landed_since(const Inode& in, const Prepared& p) noexcept {
    return p.landings && in.landings.load() != *p.landings;
}

void remember_settled(Fs& fs, Inode& in, const Prepared& p) {
    if (p.request.targets.size() != 1 || p.request.targets.front().views.empty()) {
        return;
    }
    // The canonical (underlying) path is the last view add_views gives (the spelled one first,
    // when they differ): the path target_of_inode will read back for this inode.
    const std::string& path = p.request.targets.front().views.back().path;
    {
        std::lock_guard<std::mutex> lock(in.m);
        if (p.settled == 0) {
            in.settled = 0; // a file made again at a path not settled now
            return;
        }
        in.settled = p.settled;
        in.settled_path = path;
    }
    fs.settled_paths.remember(path, p.settled);
}

int give_to_caller(const Fs& fs, fuse_req_t req, int dirfd, const char* name, mode_t mode, int fd) {
    if (!fs.cfg.chown_to_caller) {
        return 0;
    }
    const fuse_ctx* ctx = fuse_req_ctx(req);
    if (ctx == nullptr || (ctx->uid == ::geteuid() && ctx->gid == ::getegid())) {
        return 0;
    }

    struct stat dir {};

    if (::fstatat(dirfd, "", &dir, AT_EMPTY_PATH) != 0) {
        return errno;
    }
    // In a set-group-ID directory the new entry already has the directory's group.
    const bool setgid_dir = (dir.st_mode & S_ISGID) != 0;
    const gid_t gid = setgid_dir ? static_cast<gid_t>(-1) : ctx->gid;
    const int rc = fd >= 0 ? ::fchown(fd, ctx->uid, gid)
                           : ::fchownat(dirfd, name, ctx->uid, gid, AT_SYMLINK_NOFOLLOW);
    if (rc != 0) {
        return errno;
    }
    if (!has_setid_bits(mode) || S_ISLNK(mode)) {
        return 0;
    }
    // The chown cleared the set-ID bits; put back those the caller would have kept: a
    // non-directory keeps set-group-ID only if its group is one of the caller's (in a setgid
    // directory the group is the directory's).
    mode_t keep = mode & 07777;
    if (!S_ISDIR(mode) && (keep & S_ISGID) != 0 && setgid_dir &&
        !caller_in_group(req, dir.st_gid)) {
        keep &= ~static_cast<mode_t>(S_ISGID);
    }
    const int rc2 = fd >= 0 ? ::fchmod(fd, keep) : ::fchmodat(dirfd, name, keep, 0);
    return rc2 == 0 ? 0 : errno;
}

bool caller_in_group(fuse_req_t req, gid_t gid) noexcept {
    if (const fuse_ctx* ctx = fuse_req_ctx(req); ctx != nullptr && ctx->gid == gid) {
        return true;
    }
    std::array<gid_t, 64> some{};
    const int n = fuse_req_getgroups(req, static_cast<int>(some.size()), some.data());
    if (n <= 0) {
        return false;
    }
    std::vector<gid_t> all;
    const gid_t* groups = some.data();
    if (static_cast<std::size_t>(n) > some.size()) {
        all.resize(static_cast<std::size_t>(n));
        if (fuse_req_getgroups(req, n, all.data()) != n) {
            return false;
        }
        groups = all.data();
    }
    return std::find(groups, groups + n, gid) != groups + n;
}

namespace {

// Does the caller hold CAP_FSETID? Read from its /proc status; false when that cannot be read
// (the bits are then cleared, the safe side).
bool caller_holds_fsetid(fuse_req_t req) noexcept {
    const fuse_ctx* ctx = fuse_req_ctx(req);
    if (ctx == nullptr || ctx->pid <= 0) {
        return false;
    }
    std::array<char, 48> path{};
    const auto r = fmt::format_to_n(path.data(), path.size() - 1, "/proc/{}/status", ctx->pid);
    *r.out = '\0';
    const base::UniqueFd fd(::open(path.data(), O_RDONLY | O_CLOEXEC));
    std::array<char, 4096> text{};
    const ssize_t n = fd.valid() ? ::read(fd.get(), text.data(), text.size() - 1) : -1;
    if (n <= 0) {
        return false;
    }
    const char* eff = std::strstr(text.data(), "\nCapEff:");
    if (eff == nullptr) {
        return false;
    }
    const unsigned long long caps = std::strtoull(eff + 8, nullptr, 16);
    return (caps & (1ULL << CAP_FSETID)) != 0;
}

} // namespace

bool setid_clear_wanted(const Fs& fs, SetidCaller how) noexcept {
    return fs.cfg.clears_setid && setid_left_to_daemon() &&
           (how == SetidCaller::Unflagged || request_kills_setid());
}

int setid_bits_at_stake(const Fs& fs, int fd, SetidCaller how, struct stat& st,
                        bool& at_stake) noexcept {
    at_stake = false;
    if (!setid_clear_wanted(fs, how)) {
        return 0;
    }
    if (::fstat(fd, &st) != 0) {
        return errno;
    }
    at_stake = S_ISREG(st.st_mode) && has_setid_bits(st.st_mode);
    return 0;
}

int clear_setid(const Fs& fs, fuse_req_t req, int fd, SetidCaller how) noexcept {
    struct stat st {};

    bool at_stake = false;
    if (const int err = setid_bits_at_stake(fs, fd, how, st, at_stake); err != 0 || !at_stake) {
        return err;
    }
    if (how == SetidCaller::Unflagged && caller_holds_fsetid(req)) {
        return 0;
    }
    mode_t clear = st.st_mode & S_ISUID;
    if ((st.st_mode & S_ISGID) != 0 &&
        ((st.st_mode & S_IXGRP) != 0 || !caller_in_group(req, st.st_gid))) {
        clear |= S_ISGID;
    }
    if (clear == 0) {
        return 0;
    }
    const ProcAt proc(fs, fd);
    return ::fchmodat(proc.dir(), proc.name(), st.st_mode & 07777 & ~clear, 0) == 0 ? 0 : errno;
}

int open_parent_of(Fs& fs, const Inode& inode, base::UniqueFd& parent, std::string& name) {
    std::string path;
    if (const int err = underlying_path(fs, inode, path); err != 0) {
        return err;
    }
    const auto slash = path.rfind('/');
    if (slash == std::string::npos || path.size() <= fs.cfg.ws_real.size()) {
        return EINVAL;
    }
    name = path.substr(slash + 1);
    std::string rel = path.substr(0, slash);
    rel = rel.size() <= fs.cfg.ws_real.size() ? "." : rel.substr(fs.cfg.ws_real.size() + 1);
    open_how how{};
    how.flags = O_PATH | O_DIRECTORY | O_CLOEXEC;
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
    const long fd =
        ::syscall(SYS_openat2, fs.inodes.root().fd.get(), rel.c_str(), &how, sizeof how);
    if (fd < 0) {
        return errno;
    }
    parent.reset(static_cast<int>(fd));

    struct stat st {};

    if (::fstatat(parent.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
        return errno;
    }
    if (st.st_dev != inode.dev || st.st_ino != inode.ino) {
        return ESTALE; // renamed in between: refuse rather than act on another file
    }
    return 0;
}

} // namespace guardfs::fusefs
