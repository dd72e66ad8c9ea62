// Directories: opendir, readdir, readdirplus, releasedir, fsyncdir. Listing changes nothing;
// the read face (design §8) leaves hidden entries out here.
#include "fusefs/handlers.hpp"
#include "fusefs/ops_common.hpp"

#include <cerrno>
#include <cstring>
#include <memory>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

namespace guardfs::fusefs {

namespace {

bool is_dot_or_dotdot(const char* name) noexcept {
    return name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0'));
}

void do_opendir_op(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
    Fs& fs = fs_of(req);
    Inode& in = fs.inodes.get(ino);
    auto d = std::make_unique<DirHandle>();
    const int fd = open_relieved(
        fs, [&] { return ::openat(in.fd.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC); });
    if (fd < 0) {
        fuse_reply_err(req, errno);
        return;
    }
    d->dp = ::fdopendir(fd);
    if (d->dp == nullptr) {
        const int err = errno;
        ::close(fd);
        fuse_reply_err(req, err);
        return;
    }
    fi->fh = reinterpret_cast<uint64_t>(d.get()); // NOLINT: libfuse's handle slot
    if (fs.cfg.timeout > 0) {
        fi->keep_cache = 1;
        fi->cache_readdir = 1;
    }
    if (fuse_reply_open(req, fi) == 0) {
        d.release(); // owned by the kernel's open directory until releasedir()
    }
}

void list(fuse_req_t req, fuse_ino_t ino, size_t size, off_t offset, fuse_file_info* fi,
          bool plus) {
    Fs& fs = fs_of(req);
    DirHandle& d = dir_handle(fi);
    std::lock_guard<std::mutex> lock(d.m);
    std::vector<char> buf(size);
    char* p = buf.data();
    size_t rem = size;
    int err = 0;
    if (offset != d.offset) {
        ::seekdir(d.dp, offset);
        d.offset = offset;
    }
    Inode& dir = fs.inodes.get(ino);
    std::string dir_path;
    const bool filter = fs.read_face.load(std::memory_order_relaxed);
    if (filter && underlying_path(fs, dir, dir_path) != 0) {
        fuse_reply_err(req, EACCES); // cannot place the directory: list nothing
        return;
    }
    for (;;) {
        errno = 0;
        dirent* entry = ::readdir(d.dp);
        if (entry == nullptr) {
            err = errno;
            break;
        }
        if (filter && !is_dot_or_dotdot(entry->d_name) &&
            hidden(fs, req, dir_path, entry->d_name, guard::Op::ReadDir, false)) {
            d.offset = entry->d_off; // left out as if absent (design §8)
            continue;
        }
        fuse_entry_param e{};
        size_t entsize = 0;
        bool looked_up = false;
        if (plus && rem != size && fs.reclaimer != nullptr &&
            fs.inodes.approx_size() > fs.reclaimer->high()) {
            // Over the reclaimer's mark: end this batch, so the kernel lets go of the
            // directory's lock and the reclaimer can drop entries in it.
            ::seekdir(d.dp, d.offset);
            break;
        }
        if (plus && !is_dot_or_dotdot(entry->d_name)) {
            err = do_lookup(fs, dir, entry->d_name, e);
            if (err != 0) {
                ::seekdir(d.dp, d.offset); // this entry comes first next time
                break;
            }
            looked_up = true;
            entsize = fuse_add_direntry_plus(req, p, rem, entry->d_name, &e, entry->d_off);
        } else {
            // "." and "..": the kernel ignores their attributes and lookup counts.
            e.attr.st_ino = entry->d_ino;
            e.attr.st_mode = static_cast<mode_t>(entry->d_type) << 12U;
            entsize = plus ? fuse_add_direntry_plus(req, p, rem, entry->d_name, &e, entry->d_off)
                           : fuse_add_direntry(req, p, rem, entry->d_name, &e.attr, entry->d_off);
        }
        if (entsize > rem) {
            if (looked_up) {
                fs.inodes.forget(e.ino, 1); // not handed to the kernel after all
            }
            ::seekdir(d.dp, d.offset); // this entry comes first next time
            break;
        }
        d.offset = entry->d_off;
        p += entsize;
        rem -= entsize;
    }
    // An error after some entries: return those (their lookup counts are already taken).
    if (err != 0 && rem == size) {
        fuse_reply_err(req, err);
        return;
    }
    fuse_reply_buf(req, buf.data(), size - rem);
}

void do_readdir_op(fuse_req_t req, fuse_ino_t ino, size_t size, off_t offset, fuse_file_info* fi) {
    list(req, ino, size, offset, fi, false);
}

void do_readdirplus_op(fuse_req_t req, fuse_ino_t ino, size_t size, off_t offset,
                       fuse_file_info* fi) {
    list(req, ino, size, offset, fi, true);
}

void do_releasedir_op(fuse_req_t req, fuse_ino_t /*ino*/, fuse_file_info* fi) {
    std::unique_ptr<DirHandle> d(&dir_handle(fi));
    d.reset();
    fuse_reply_err(req, 0);
}

void do_fsyncdir_op(fuse_req_t req, fuse_ino_t /*ino*/, int datasync, fuse_file_info* fi) {
    const int fd = ::dirfd(dir_handle(fi).dp);
    const int rc = datasync != 0 ? ::fdatasync(fd) : ::fsync(fd);
    fuse_reply_err(req, rc == 0 ? 0 : errno);
}

} // namespace

namespace handlers {

PassHandler<Slot::opendir> opendir() noexcept {
    return pass<Slot::opendir, &do_opendir_op>();
}

PassHandler<Slot::readdir> readdir() noexcept {
    return pass<Slot::readdir, &do_readdir_op>();
}

PassHandler<Slot::readdirplus> readdirplus() noexcept {
    return pass<Slot::readdirplus, &do_readdirplus_op>();
}

PassHandler<Slot::releasedir> releasedir() noexcept {
    return pass<Slot::releasedir, &do_releasedir_op>();
}

PassHandler<Slot::fsyncdir> fsyncdir() noexcept {
    return pass<Slot::fsyncdir, &do_fsyncdir_op>();
}

} // namespace handlers

} // namespace guardfs::fusefs
