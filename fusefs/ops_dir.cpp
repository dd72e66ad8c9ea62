// Directories: opendir, readdir, readdirplus, releasedir, fsyncdir. Listing changes nothing;
// the read face (design §8) leaves hidden entries out here.
#include "fusefs/handlers.hpp"
#include "fusefs/ops_common.hpp"

#include <cerrno>
#include <cstdint>
#include <string>
#include <vector>

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

namespace guardfs::fusefs {

namespace {

bool is_dot_or_dotdot(const char* name) noexcept {
    return name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0'));
}

// A descriptor of inode `in` open for listing (the daemon's own open: where an unreadable
// directory is refused), or -1 with errno.
int open_listing(Fs& fs, Inode& in) {
    return open_relieved(
        fs, [&] { return ::openat(in.fd.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC); });
}

// Directories keep no handle (decision 008). Where the kernel supports it, OPENDIR is answered
// ENOSYS once: from then on the kernel opens directories itself, sends no OPENDIR or RELEASEDIR,
// and caches every listing (two round trips less per opendir(3)). Otherwise the open is checked
// here and answered without a handle.
void do_opendir_op(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
    Fs& fs = fs_of(req);
    if (fs.no_opendir.load(std::memory_order_relaxed)) {
        fuse_reply_err(req, ENOSYS);
        return;
    }
    const base::UniqueFd fd(open_listing(fs, fs.inodes.get(ino)));
    if (!fd.valid()) {
        fuse_reply_err(req, errno);
        return;
    }
    fi->fh = 0;
    if (fs.cfg.timeout > 0) {
        fi->keep_cache = 1;
        fi->cache_readdir = 1;
    }
    fuse_reply_open(req, fi);
}

// One READDIR(PLUS) answer: the directory is opened for this request alone and placed at the
// offset (the d_off of the last entry handed out), so requests share no state. The kernel fills
// its listing cache from offset 0 on and asks for other offsets only when a program seeks.
void list(fuse_req_t req, fuse_ino_t ino, size_t size, off_t offset, bool plus) {
    Fs& fs = fs_of(req);
    Inode& dir = fs.inodes.get(ino);
    std::string dir_path;
    const bool filter = fs.read_face.load(std::memory_order_relaxed);
    if (filter && underlying_path(fs, dir, dir_path) != 0) {
        fuse_reply_err(req, EACCES); // cannot place the directory: list nothing
        return;
    }
    const base::UniqueFd fd(open_listing(fs, dir));
    if (!fd.valid()) {
        fuse_reply_err(req, errno);
        return;
    }
    if (offset != 0 && ::lseek(fd.get(), offset, SEEK_SET) < 0) {
        fuse_reply_err(req, errno);
        return;
    }
    // The answer, and the raw entries in 8-byte units (dirent64's alignment). A dirent64 is
    // never larger than the FUSE entry made of it, so `size` bytes of them fill the answer with
    // one getdents64 call as a rule.
    std::vector<char> answer(size);
    std::vector<std::uint64_t> raw_buf((size + 7) / 8);
    char* const out = answer.data();
    char* const raw = reinterpret_cast<char*>(raw_buf.data()); // NOLINT: byte view
    const size_t raw_size = raw_buf.size() * sizeof(std::uint64_t);
    char* p = out;
    size_t rem = size;
    int err = 0;
    bool full = false;
    while (!full) {
        const ssize_t n = ::getdents64(fd.get(), raw, raw_size);
        if (n <= 0) {
            err = n < 0 ? errno : 0; // 0: the end
            break;
        }
        for (ssize_t at = 0; at < n;) {
            const auto* entry = reinterpret_cast<const dirent64*>(raw + at); // NOLINT: kernel
            at += entry->d_reclen;
            if (filter && !is_dot_or_dotdot(entry->d_name) &&
                hidden(fs, req, dir_path, entry->d_name, guard::Op::ReadDir, false)) {
                continue; // left out as if absent (design §8)
            }
            if (plus && rem != size && fs.reclaimer != nullptr &&
                fs.inodes.approx_size() > fs.reclaimer->high()) {
                // Over the reclaimer's mark: end this batch, so the kernel lets go of the
                // directory's lock and the reclaimer can drop entries in it.
                full = true;
                break;
            }
            fuse_entry_param e{};
            size_t entsize = 0;
            bool looked_up = false;
            if (plus && !is_dot_or_dotdot(entry->d_name)) {
                err = do_lookup(fs, dir, entry->d_name, e);
                if (err != 0) {
                    full = true; // this entry comes first next time
                    break;
                }
                looked_up = true;
                entsize = fuse_add_direntry_plus(req, p, rem, entry->d_name, &e, entry->d_off);
            } else {
                // "." and "..": the kernel ignores their attributes and lookup counts.
                e.attr.st_ino = entry->d_ino;
                e.attr.st_mode = static_cast<mode_t>(entry->d_type) << 12U;
                entsize =
                    plus ? fuse_add_direntry_plus(req, p, rem, entry->d_name, &e, entry->d_off)
                         : fuse_add_direntry(req, p, rem, entry->d_name, &e.attr, entry->d_off);
            }
            if (entsize > rem) {
                if (looked_up) {
                    fs.inodes.forget(e.ino, 1); // not handed to the kernel after all
                }
                full = true; // this entry comes first next time
                break;
            }
            p += entsize;
            rem -= entsize;
        }
    }
    // An error after some entries: return those (their lookup counts are already taken).
    if (err != 0 && rem == size) {
        fuse_reply_err(req, err);
        return;
    }
    fuse_reply_buf(req, out, size - rem);
}

void do_readdir_op(fuse_req_t req, fuse_ino_t ino, size_t size, off_t offset,
                   fuse_file_info* /*fi*/) {
    list(req, ino, size, offset, false);
}

void do_readdirplus_op(fuse_req_t req, fuse_ino_t ino, size_t size, off_t offset,
                       fuse_file_info* /*fi*/) {
    list(req, ino, size, offset, true);
}

void do_releasedir_op(fuse_req_t req, fuse_ino_t /*ino*/, fuse_file_info* /*fi*/) {
    fuse_reply_err(req, 0); // no handle to release
}

void do_fsyncdir_op(fuse_req_t req, fuse_ino_t ino, int datasync, fuse_file_info* /*fi*/) {
    Fs& fs = fs_of(req);
    const base::UniqueFd fd(open_listing(fs, fs.inodes.get(ino)));
    if (!fd.valid()) {
        fuse_reply_err(req, errno);
        return;
    }
    const int rc = datasync != 0 ? ::fdatasync(fd.get()) : ::fsync(fd.get());
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
