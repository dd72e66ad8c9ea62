// Directories: opendir, readdir, readdirplus, releasedir, fsyncdir. Listing changes nothing;
// the read face (design §8) leaves hidden entries out here.
#include "fusefs/handlers.hpp"
#include "fusefs/ops_common.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

namespace guardfs::fusefs {

namespace {

bool is_dot_or_dotdot(const char* name) noexcept {
    return name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0'));
}

// A descriptor of inode `in` open for listing, or -1 with errno. Reopened through /proc, so
// only read permission on the directory is needed, as for opendir(3) (openat(fd, ".") would also
// need search permission); the daemon's own open is where an unreadable directory is refused.
int open_listing(Fs& fs, Inode& in) {
    const ProcAt proc(fs, in.fd.get());
    return open_relieved(
        fs, [&] { return ::openat(proc.dir(), proc.name(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); });
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

// The listing of `dir` that continues at `offset`, into `out`: its unfinished one when that
// stopped there, else the directory opened afresh and placed at the offset (the d_off of the
// last entry handed out). Entries are read `raw_bytes` at a time (one request's size), so a
// listing a program abandons keeps its descriptor and at most that many bytes until the
// directory is listed again or forgotten. Returns 0 or an errno.
int listing_at(Fs& fs, Inode& dir, off_t offset, std::size_t raw_bytes,
               std::unique_ptr<Listing>& out) {
    {
        std::lock_guard<std::mutex> lock(dir.m);
        out = std::move(dir.listing);
    }
    if (out != nullptr && out->next == offset) {
        return 0;
    }
    out = std::make_unique<Listing>();
    out->fd = base::UniqueFd(open_listing(fs, dir));
    if (!out->fd.valid() || (offset != 0 && ::lseek(out->fd.get(), offset, SEEK_SET) < 0)) {
        return errno;
    }
    out->next = offset;
    const std::size_t words = (raw_bytes + sizeof(std::uint64_t) - 1) / sizeof(std::uint64_t);
    out->raw = std::make_unique_for_overwrite<std::uint64_t[]>(words);
    out->raw_bytes = words * sizeof(std::uint64_t);
    return 0;
}

// One READDIR(PLUS) answer. The kernel fills its listing cache from offset 0 on, one request
// after another, so the listing is kept with the inode between them (Listing); a request at
// any other offset (a program that seeks) opens the directory afresh.
void list(fuse_req_t req, fuse_ino_t ino, size_t size, off_t offset, bool plus) {
    Fs& fs = fs_of(req);
    Inode& dir = fs.inodes.get(ino);
    std::string dir_path;
    const bool filter = fs.read_face.load(std::memory_order_relaxed);
    if (filter && underlying_path(fs, dir, dir_path) != 0) {
        fuse_reply_err(req, EACCES); // cannot place the directory: list nothing
        return;
    }
    // A dirent64 is never larger than the FUSE entry made of it: `size` bytes of them fill an
    // answer (a READDIRPLUS answer holds about a fifth as many).
    std::unique_ptr<Listing> l;
    if (const int open_err = listing_at(fs, dir, offset, std::max<std::size_t>(size, 4096), l);
        open_err != 0) {
        fuse_reply_err(req, open_err);
        return;
    }
    // Not zeroed: only the size - rem bytes the entries fill are sent.
    const auto answer = std::make_unique_for_overwrite<char[]>(size);
    char* p = answer.get();
    size_t rem = size;
    int err = 0;
    for (;;) {
        if (l->pos == l->len) {
            if (l->at_end) {
                break;
            }
            char* raw = reinterpret_cast<char*>(l->raw.get()); // NOLINT: byte view
            const ssize_t n = ::getdents64(l->fd.get(), raw, l->raw_bytes);
            if (n <= 0) {
                err = n < 0 ? errno : 0;
                l->at_end = true;
                l->fd.reset(); // the end: only `next` is needed to answer the next request
                break;
            }
            l->pos = 0;
            l->len = static_cast<std::size_t>(n);
        }
        const auto* entry = reinterpret_cast<const dirent64*>( // NOLINT: the kernel's records
            reinterpret_cast<const char*>(l->raw.get()) + l->pos);
        if (filter && !is_dot_or_dotdot(entry->d_name) &&
            hidden(fs, req, dir_path, entry->d_name, guard::Op::ReadDir, false)) {
            l->pos += entry->d_reclen; // left out as if absent (design §8)
            l->next = entry->d_off;
            continue;
        }
        if (plus && rem != size && fs.reclaimer != nullptr &&
            fs.inodes.approx_size() > fs.reclaimer->high()) {
            // Over the reclaimer's mark: end this batch, so the kernel lets go of the
            // directory's lock and the reclaimer can drop entries in it.
            break;
        }
        fuse_entry_param e{};
        e.attr.st_ino = entry->d_ino;
        e.attr.st_mode = static_cast<mode_t>(entry->d_type) << 12U;
        size_t entsize = 0;
        bool looked_up = false;
        if (plus && !is_dot_or_dotdot(entry->d_name)) {
            // Without a lookup (gone since, or not searchable: a directory that may be read
            // but not searched), the entry goes with FUSE id 0: the kernel lists the name and
            // looks it up itself when asked. "." and "..": the kernel ignores their attributes.
            fuse_entry_param found{};
            if (do_lookup(fs, dir, entry->d_name, found, entry->d_ino) == 0) {
                e = found;
                looked_up = true;
            }
        }
        entsize = plus ? fuse_add_direntry_plus(req, p, rem, entry->d_name, &e, entry->d_off)
                       : fuse_add_direntry(req, p, rem, entry->d_name, &e.attr, entry->d_off);
        if (entsize > rem) {
            if (looked_up) {
                fs.inodes.forget(e.ino, 1); // not handed to the kernel after all
            }
            break; // this entry comes first next time
        }
        p += entsize;
        rem -= entsize;
        l->pos += entry->d_reclen;
        l->next = entry->d_off;
    }
    if (err == 0 && !(l->at_end && l->pos == l->len && rem == size)) {
        // Unfinished, or finished with entries in this answer: the next request continues it
        // (the kernel asks once more, and gets the end, after a non-empty answer).
        std::lock_guard<std::mutex> lock(dir.m);
        if (dir.listing == nullptr) {
            dir.listing = std::move(l);
        }
    }
    // An error after some entries: return those (their lookup counts are already taken).
    if (err != 0 && rem == size) {
        fuse_reply_err(req, err);
        return;
    }
    fuse_reply_buf(req, answer.get(), size - rem);
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
