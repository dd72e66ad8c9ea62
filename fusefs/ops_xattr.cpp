// Extended attributes: setxattr and removexattr are gated (design §3: they change the tree);
// getxattr and listxattr pass. A symlink's attributes are reached through its directory, never
// through /proc/self/fd (which would follow the link, possibly out of the tree).
#include "fusefs/handlers.hpp"
#include "fusefs/ops_common.hpp"

#include <cerrno>
#include <string>
#include <vector>

#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

namespace guardfs::fusefs {

using guard::Op;

namespace {

// The path to use with the l*xattr calls for an inode: "/proc/self/fd/N" for anything but a
// symlink (followed to the inode itself), "/proc/self/fd/<dir>/<name>" for a symlink and for a
// detached inode (Inode::fd).
struct XattrPath {
    std::string path;
    base::UniqueFd parent; // keeps the directory open while the path is used
    bool follow = true;
};

int xattr_path(Fs& fs, const Inode& in, XattrPath& out) {
    if (!S_ISLNK(in.type) && in.fd.valid()) {
        out.path = ProcPath(in.fd.get()).c_str();
        return 0;
    }
    std::string name;
    if (const int err = open_parent_of(fs, in, out.parent, name); err != 0) {
        return err;
    }
    out.path = std::string(ProcPath(out.parent.get()).c_str()) + "/" + name;
    out.follow = false;
    return 0;
}

int build_inode_write(Fs& fs, Prepared& p, fuse_ino_t ino, Op op) {
    p.request.op = op;
    return add_inode_target(fs, fs.inodes.get(ino), p);
}

bool is_control(fuse_ino_t ino, const char* name) noexcept {
    return ino == FUSE_ROOT_ID && (name == kPidXattr || name == kReloadXattr);
}

int build_setxattr(Fs& fs, fuse_req_t /*req*/, Prepared& p, fuse_ino_t ino, const char* name,
                   const char* /*value*/, size_t /*size*/, int /*flags*/) {
    if (is_control(ino, name)) {
        return EPERM; // answered by the daemon; never written
    }
    return build_inode_write(fs, p, ino, Op::SetXattr);
}

void do_setxattr(Fs& fs, fuse_req_t req, Prepared& /*p*/, fuse_ino_t ino, const char* name,
                 const char* value, size_t size, int flags) {
    XattrPath x;
    if (const int err = xattr_path(fs, fs.inodes.get(ino), x); err != 0) {
        fuse_reply_err(req, err);
        return;
    }
    const int rc = x.follow ? ::setxattr(x.path.c_str(), name, value, size, flags)
                            : ::lsetxattr(x.path.c_str(), name, value, size, flags);
    fuse_reply_err(req, rc == 0 ? 0 : errno);
}

int build_removexattr(Fs& fs, fuse_req_t /*req*/, Prepared& p, fuse_ino_t ino, const char* name) {
    if (is_control(ino, name)) {
        return EPERM;
    }
    return build_inode_write(fs, p, ino, Op::RemoveXattr);
}

void do_removexattr(Fs& fs, fuse_req_t req, Prepared& /*p*/, fuse_ino_t ino, const char* name) {
    XattrPath x;
    if (const int err = xattr_path(fs, fs.inodes.get(ino), x); err != 0) {
        fuse_reply_err(req, err);
        return;
    }
    const int rc =
        x.follow ? ::removexattr(x.path.c_str(), name) : ::lremovexattr(x.path.c_str(), name);
    fuse_reply_err(req, rc == 0 ? 0 : errno);
}

void reply_sized(fuse_req_t req, size_t size, ssize_t n, const std::vector<char>& buf) {
    if (n < 0) {
        fuse_reply_err(req, errno);
    } else if (size == 0) {
        fuse_reply_xattr(req, static_cast<size_t>(n));
    } else {
        fuse_reply_buf(req, buf.data(), static_cast<size_t>(n));
    }
}

// The control attributes of the root: the daemon's pid and the latest reload's outcome
// ("<generation> ok" or "<generation> error: ..."), for `guardfs reload`.
bool reply_control(Fs& fs, fuse_req_t req, const char* name, size_t size) {
    std::string value;
    if (name == kPidXattr) {
        value = std::to_string(::getpid());
    } else {
        std::lock_guard<std::mutex> lock(fs.control.m);
        value = std::to_string(fs.control.generation.load()) + " " + fs.control.last;
    }
    if (size == 0) {
        fuse_reply_xattr(req, value.size());
    } else if (size < value.size()) {
        fuse_reply_err(req, ERANGE);
    } else {
        fuse_reply_buf(req, value.data(), value.size());
    }
    return true;
}

void do_getxattr_op(fuse_req_t req, fuse_ino_t ino, const char* name, size_t size) {
    Fs& fs = fs_of(req);
    if (is_control(ino, name)) {
        reply_control(fs, req, name, size);
        return;
    }
    XattrPath x;
    if (const int err = xattr_path(fs, fs.inodes.get(ino), x); err != 0) {
        fuse_reply_err(req, err);
        return;
    }
    std::vector<char> buf(size);
    const ssize_t n = x.follow ? ::getxattr(x.path.c_str(), name, buf.data(), size)
                               : ::lgetxattr(x.path.c_str(), name, buf.data(), size);
    reply_sized(req, size, n, buf);
}

void do_listxattr_op(fuse_req_t req, fuse_ino_t ino, size_t size) {
    Fs& fs = fs_of(req);
    XattrPath x;
    if (const int err = xattr_path(fs, fs.inodes.get(ino), x); err != 0) {
        fuse_reply_err(req, err);
        return;
    }
    std::vector<char> buf(size);
    const ssize_t n = x.follow ? ::listxattr(x.path.c_str(), buf.data(), size)
                               : ::llistxattr(x.path.c_str(), buf.data(), size);
    reply_sized(req, size, n, buf);
}

} // namespace

namespace handlers {

GatedHandler<Slot::setxattr> setxattr() noexcept {
    return gated<Slot::setxattr, &build_setxattr, &do_setxattr>();
}

PassHandler<Slot::getxattr> getxattr() noexcept {
    return pass<Slot::getxattr, &do_getxattr_op>();
}

PassHandler<Slot::listxattr> listxattr() noexcept {
    return pass<Slot::listxattr, &do_listxattr_op>();
}

GatedHandler<Slot::removexattr> removexattr() noexcept {
    return gated<Slot::removexattr, &build_removexattr, &do_removexattr>();
}

} // namespace handlers

} // namespace guardfs::fusefs
