// Files: open, create, read, write_buf, flush, release, fsync, fallocate, copy_file_range,
// lseek. Write permission is decided when a file is opened (style guide B.6 rule 4): open and
// create judge the original flags (O_TRUNC counts even with O_RDONLY) and store the grant in the
// FileHandle; data writes use FileHandle::write_fd() and never ask again.
#include "base/io.hpp"
#include "fusefs/channel.hpp"
#include "fusefs/handlers.hpp"
#include "fusefs/ops_common.hpp"
#include "patterns/fold.hpp"

#include <cerrno>
#include <cstdint>
#include <memory>
#include <span>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace guardfs::fusefs {

using guard::Op;
using guard::Target;

namespace {

bool opens_for_write(int flags) noexcept {
    return (flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC) != 0;
}

// The flags for the underlying open. With the writeback cache the kernel may read through a
// write-only file and keeps O_APPEND itself (as libfuse's passthrough_hp explains). O_DIRECT
// stays with the caller (docs/decisions/013), as virtiofsd and virtio-9p do: the kernel already
// sends its every read and write to the daemon, past the mount's page cache; a descriptor opened
// O_DIRECT would take only aligned buffers, which a request's data is not, nor the tail of a
// write the kernel makes from its page cache through the same handle.
int underlying_flags(const Fs& fs, int flags) noexcept {
    flags &= ~(O_NOFOLLOW | O_CREAT | O_EXCL | O_NOCTTY | O_DIRECT);
    if (fs.cfg.writeback) {
        if ((flags & O_ACCMODE) == O_WRONLY) {
            flags = (flags & ~O_ACCMODE) | O_RDWR;
        }
        flags &= ~O_APPEND;
    }
    return flags | O_CLOEXEC;
}

// The page cache options of a handle that does not pass through. Called with in.m held.
void set_open_flags(Fs& fs, Inode& in, fuse_file_info* fi) noexcept {
    if (fs.self_files.contains(in.dev, in.ino)) {
        // guardfs's own file, written by the daemon underneath: no page cache.
        fi->direct_io = 1;
        fi->keep_cache = 0;
        return;
    }
    // Passthrough handles wrote to the file behind the pages cached before: drop them.
    fi->keep_cache = fs.cfg.timeout > 0 && !in.pages_stale ? 1 : 0;
    in.pages_stale = false;
}

// How a new handle of `in`, open as `fd`, does its I/O (docs/decisions/011): `backing` > 0 is
// the backing file the kernel reads and writes itself, 0 the daemon and the page cache. The
// first handle decides for all that are open at once, as the kernel requires: passthrough for a
// regular file of the workspace (not guardfs's own, not one with set-ID bits: the kernel writes
// a backing file with the daemon's credentials, which keep them). A write handle that would
// pass through onto a file that has gained set-ID bits since, opened by someone other than its
// owner or root, is refused (ETXTBSY). Called with in.m held, before the handle is counted.
int choose_io(Fs& fs, fuse_req_t req, Inode& in, int fd, bool for_write, FileHandle& fh,
              int& backing) {
    backing = 0;
    if (!fs.cfg.passthrough || !S_ISREG(in.type) || (in.nopen > 0 && in.backing_id == 0) ||
        (in.nopen == 0 && !passthrough_on()) || fs.self_files.contains(in.dev, in.ino)) {
        return 0;
    }
    const uid_t uid = fuse_req_ctx(req)->uid;

    // The file's mode matters to the first handle and to a writer; a reader that joins open
    // handles needs no fstat.
    struct stat st {};

    if ((in.nopen == 0 || for_write) && ::fstat(fd, &st) != 0) {
        return errno;
    }
    if (in.nopen > 0) {
        if (for_write && has_setid_bits(st.st_mode) && uid != 0 && uid != st.st_uid) {
            return ETXTBSY;
        }
        backing = in.backing_id;
    } else {
        if (has_setid_bits(st.st_mode)) {
            return 0;
        }
        const int id = open_backing(fd);
        if (id < 0) {
            return 0; // the page cache, as without passthrough
        }
        in.backing_id = backing = id;
        in.pages_stale = true;
    }
    if (for_write) {
        in.pt_writers_mixed = in.pt_writers_mixed || (in.pt_writers > 0 && in.pt_writer_uid != uid);
        in.pt_writer_uid = uid;
        ++in.pt_writers;
        fh.set_passthrough_writer();
    }
    return 0;
}

// Counts a handle out of its inode: at release, or when the kernel never took it.
void drop_handle(Fs& fs, Inode& in, FileHandle& fh) noexcept {
    fs.open_handles.remove(fh);
    std::lock_guard<std::mutex> lock(in.m);
    --in.nopen;
    if (fh.passthrough_writer() && --in.pt_writers == 0) {
        in.pt_writers_mixed = false;
    }
    if (in.nopen == 0 && in.backing_id > 0) {
        close_backing(in.backing_id);
        in.backing_id = 0;
    }
}

// Counts a new handle in, with its I/O chosen by choose_io() and the reply's options set.
int add_handle(Fs& fs, fuse_req_t req, Inode& in, FileHandle& fh, bool for_write,
               fuse_file_info* fi) {
    std::lock_guard<std::mutex> lock(in.m);
    int backing = 0;
    if (const int err = choose_io(fs, req, in, fh.fd(), for_write, fh, backing); err != 0) {
        return err;
    }
    ++in.nopen;
    fs.open_handles.add(fh);
    if (backing > 0) {
        fi->keep_cache = 0;
        fi->direct_io = 0;
        reply_with_backing(backing);
    } else {
        set_open_flags(fs, in, fi);
    }
    return 0;
}

int build_open(Fs& fs, fuse_req_t /*req*/, Prepared& p, fuse_ino_t ino, fuse_file_info* fi) {
    p.flags = fi->flags;
    if (!opens_for_write(fi->flags)) {
        if (!fs.read_face.load(std::memory_order_relaxed)) {
            p.judge = false;
            return 0;
        }
        // An inode the kernel already knew (before a reload hid it, or by another name).
        p.request.op = Op::OpenRead;
        return add_inode_target(fs, fs.inodes.get(ino), p);
    }
    // With or without O_TRUNC this is the open for writing the design's questions name
    // open_write (`echo x > notes.md`); truncate is truncate(2) and ftruncate(2).
    p.request.op = Op::OpenWrite;
    return add_inode_target(fs, fs.inodes.get(ino), p);
}

// A handle that may write is gone (or never came to be): its count in Inode::open_writers is
// given back, and a rename waiting for the file's writers (attach_git_config) is woken.
void give_back_writer(Fs& fs, Inode& in) noexcept {
    {
        std::lock_guard<std::mutex> lock(fs.released_m);
        --in.open_writers;
    }
    fs.released_cv.notify_all();
}

// An open for writing, counted in Inode::open_writers from before it looks for a WriteSeal
// until its handle goes to the kernel (keep(); release() gives it back then) or the open fails.
class CountedWriter {
public:
    CountedWriter(Fs& fs, Inode& in, bool counts) : fs_(fs), in_(in), counts_(counts) {
        if (counts_) {
            ++in_.open_writers; // seq_cst: before the seal is read
        }
    }

    ~CountedWriter() { give_back(); }

    CountedWriter(const CountedWriter&) = delete;
    CountedWriter& operator=(const CountedWriter&) = delete;

    // Whether the file is sealed against writers (a judged config.lock on its way into place).
    [[nodiscard]] bool sealed() const noexcept {
        return counts_ && write_sealed(fs_, in_.dev, in_.ino);
    }

    void keep() noexcept { counts_ = false; }

    // Gives the count back now (before the inode may be forgotten and freed).
    void give_back() noexcept {
        if (counts_) {
            counts_ = false;
            give_back_writer(fs_, in_);
        }
    }

private:
    Fs& fs_;
    Inode& in_;
    bool counts_;
};

void do_open(Fs& fs, fuse_req_t req, Prepared& p, fuse_ino_t ino, fuse_file_info* fi) {
    Inode& in = fs.inodes.get(ino);
    const bool for_write = opens_for_write(fi->flags);
    CountedWriter writer(fs, in, for_write);
    if (writer.sealed() || (for_write && landed_since(in, p))) {
        fuse_reply_err(req, EACCES);
        return;
    }
    const InodeFd path(fs, in);
    if (path.get() < 0) {
        fuse_reply_err(req, path.error());
        return;
    }
    base::UniqueFd fd(open_relieved(fs, [&] {
        const ProcAt proc(fs, path.get());
        return ::openat(proc.dir(), proc.name(), underlying_flags(fs, fi->flags));
    }));
    if (!fd.valid()) {
        fuse_reply_err(req, errno);
        return;
    }
    // O_TRUNC has emptied the file: nothing the caller wrote is in it yet.
    if (const int err = clear_setid(fs, req, fd.get(), SetidCaller::Flagged); err != 0) {
        fuse_reply_err(req, err);
        return;
    }
    auto fh = std::make_unique<FileHandle>(std::move(fd), for_write);
    if (const int err = add_handle(fs, req, in, *fh, for_write, fi); err != 0) {
        fuse_reply_err(req, err);
        return;
    }
    if (for_write) {
        in.write_granted = true;
    }
    fi->fh = reinterpret_cast<uint64_t>(fh.get()); // NOLINT: libfuse's handle slot
    if (fuse_reply_open(req, fi) == -ENOENT) {
        // The request was interrupted: nobody will release this handle.
        drop_handle(fs, in, *fh);
        return;
    }
    writer.keep();
    fh.release(); // owned by the kernel's file until release()
}

int build_create(Fs& fs, fuse_req_t /*req*/, Prepared& p, fuse_ino_t parent, const char* name,
                 mode_t /*mode*/, fuse_file_info* fi) {
    p.request.op = Op::Create;
    p.request.targets.emplace_back();
    Target& t = p.request.targets.back();
    t.role = guard::Role::NewName;
    t.kind = guard::Kind::File;
    Inode& dir = fs.inodes.get(parent);
    if (const int err = target_of_entry(fs, dir, name, t); err != 0) {
        return err;
    }
    if (patterns::folds_to(name, ".git") || patterns::folds_to(name, "commondir")) {
        struct stat st {};

        if (::fstatat(dir.fd.get(), name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
            t.exists = true; // the kernel thought it absent; rows for existing files apply
        } else if (patterns::folds_to(name, ".git")) {
            t.among_others = base::has_entries(dir.fd.get(), ".");
        }
    }
    p.flags = fi->flags;
    return 0;
}

void do_create(Fs& fs, fuse_req_t req, Prepared& p, fuse_ino_t parent, const char* name,
               mode_t mode, fuse_file_info* fi) {
    Inode& dir = fs.inodes.get(parent);

    // O_TRUNC clears set-ID bits only of a file that existed (the kernel does not truncate a
    // file that O_CREAT made): a new one keeps those it was created with. Asked only when a
    // clearing is wanted at all.
    struct stat before {};

    const bool existed = setid_clear_wanted(fs, SetidCaller::Flagged) &&
                         ::fstatat(dir.fd.get(), name, &before, AT_SYMLINK_NOFOLLOW) == 0;
    const std::uint64_t landings = fs.landings.load(); // before the name is opened
    if (fs.sealed_count.load() != 0) {
        // A name the kernel thought absent may be a sealed file by now: not even truncated.
        struct stat st {};

        if (::fstatat(dir.fd.get(), name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
            write_sealed(fs, st.st_dev, st.st_ino)) {
            fuse_reply_err(req, EACCES);
            return;
        }
    }
    base::UniqueFd fd(open_relieved(fs, [&] {
        return ::openat(dir.fd.get(), name, underlying_flags(fs, fi->flags) | O_CREAT, mode);
    }));
    if (!fd.valid()) {
        fuse_reply_err(req, errno);
        return;
    }
    if (existed) {
        if (const int err = clear_setid(fs, req, fd.get(), SetidCaller::Flagged); err != 0) {
            fuse_reply_err(req, err);
            return;
        }
    }
    if (const int err = give_to_caller(fs, req, dir.fd.get(), name, S_IFREG | mode, fd.get());
        err != 0) {
        fuse_reply_err(req, err);
        return;
    }
    fuse_entry_param e{};
    if (const int err = do_lookup(fs, dir, name, e); err != 0) {
        fuse_reply_err(req, err);
        return;
    }
    Inode& in = fs.inodes.get(e.ino);
    CountedWriter writer(fs, in, true);

    // The name looked up must still be the file opened: otherwise the writer would be counted
    // on another file, and a judged config.lock could be written unseen (a review of 2026-12-07:
    // swap the name between the openat and the lookup). Such a race is refused.
    struct stat opened {};

    bool same = ::fstat(fd.get(), &opened) == 0 && opened.st_dev == e.attr.st_dev &&
                opened.st_ino == e.attr.st_ino;
    const bool sealed = writer.sealed();
    if (same && !sealed && fs.landings.load() != landings) {
        // A judged rename landed some file as a git config meanwhile, its seal gone by now
        // (counted before it went): if that was this one, its name has moved.
        struct stat now {};

        same = ::fstatat(dir.fd.get(), name, &now, AT_SYMLINK_NOFOLLOW) == 0 &&
               now.st_dev == opened.st_dev && now.st_ino == opened.st_ino;
    }
    if (!same || sealed) {
        writer.give_back();         // before the forget, which may free the inode
        fs.inodes.forget(e.ino, 1); // the lookup above counted on a reply that will not come
        fuse_reply_err(req, same ? EACCES : EAGAIN);
        return;
    }
    remember_settled(fs, in, p);
    auto fh = std::make_unique<FileHandle>(std::move(fd), true);
    if (const int err = add_handle(fs, req, in, *fh, true, fi); err != 0) {
        writer.give_back();
        fs.inodes.forget(e.ino, 1); // the lookup above counted on a reply that will not come
        fuse_reply_err(req, err);
        return;
    }
    in.write_granted = true;
    fi->fh = reinterpret_cast<uint64_t>(fh.get()); // NOLINT: libfuse's handle slot
    if (fuse_reply_create(req, &e, fi) == -ENOENT) {
        drop_handle(fs, in, *fh);
        return;
    }
    writer.keep();
    fh.release();
}

void do_read_op(fuse_req_t req, fuse_ino_t /*ino*/, size_t size, off_t off, fuse_file_info* fi) {
    // A request from a ring entry (fusefs/ring_loop.hpp) is answered in the entry's payload
    // buffer: read straight into it, no copy on the way back.
    if (const std::span<char> out = ring_reply_buffer(); out.size() >= size) {
        const ssize_t n = ::pread(file_handle(fi).fd(), out.data(), size, off);
        if (n < 0) {
            fuse_reply_err(req, errno);
        } else {
            fuse_reply_buf(req, out.data(), static_cast<size_t>(n));
        }
        return;
    }
    fuse_bufvec buf = FUSE_BUFVEC_INIT(size);
    buf.buf[0].flags = static_cast<fuse_buf_flags>(FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK);
    buf.buf[0].fd = file_handle(fi).fd();
    buf.buf[0].pos = off;
    fuse_reply_data(req, &buf, FUSE_BUF_SPLICE_MOVE);
}

// READ and WRITE without libfuse's request (data_op.hpp), as do_read_op and
// do_write_buf_op serve them. A write that must clear set-ID bits first is left to
// do_write_buf_op: whether set-group-ID goes depends on the caller's groups, which libfuse's
// request reads.
std::int64_t serve_data_op(void* fs, const DataOp& op, std::span<char> buffer) noexcept {
    const FileHandle& fh = *reinterpret_cast<const FileHandle*>(op.fh); // NOLINT: open's handle
    const auto off = static_cast<off_t>(op.offset);
    if (!op.write) {
        if (buffer.size() < op.size) {
            return kNotServed;
        }
        const ssize_t n = ::pread(fh.fd(), buffer.data(), op.size, off);
        return n < 0 ? -errno : n;
    }
    const int fd = fh.write_fd();
    if (fd < 0) {
        return -EACCES; // no write was granted when this file was opened
    }

    struct stat st {};

    bool at_stake = false;
    if (const int err = setid_bits_at_stake(*static_cast<const Fs*>(fs), fd, SetidCaller::Flagged,
                                            st, at_stake);
        err != 0) {
        return -err;
    }
    if (at_stake) {
        return kNotServed;
    }
    const ssize_t n = ::pwrite(fd, op.data, op.size, off);
    return n < 0 ? -errno : n;
}

void do_write_buf_op(fuse_req_t req, fuse_ino_t /*ino*/, fuse_bufvec* in, off_t off,
                     fuse_file_info* fi) {
    const int fd = file_handle(fi).write_fd();
    if (fd < 0) {
        fuse_reply_err(req, EACCES); // no write was granted when this file was opened
        return;
    }
    // Before the data lands, as the kernel does: no moment when the new bytes carry set-ID bits.
    if (const int err = clear_setid(fs_of(req), req, fd, SetidCaller::Flagged); err != 0) {
        fuse_reply_err(req, err);
        return;
    }
    fuse_bufvec out = FUSE_BUFVEC_INIT(fuse_buf_size(in));
    out.buf[0].flags = static_cast<fuse_buf_flags>(FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK);
    out.buf[0].fd = fd;
    out.buf[0].pos = off;
    const ssize_t n = fuse_buf_copy(&out, in, FUSE_BUF_SPLICE_MOVE);
    if (n < 0) {
        fuse_reply_err(req, static_cast<int>(-n));
    } else {
        fuse_reply_write(req, static_cast<size_t>(n));
    }
}

void do_flush_op(fuse_req_t req, fuse_ino_t /*ino*/, fuse_file_info* fi) {
    if (!fs_of(req).cfg.pass_flush) {
        // Closing does nothing on the filesystems below (FsConfig::pass_flush): ENOSYS makes the
        // kernel stop sending FLUSH, one round trip less on every close. Dirty pages are still
        // written and their errors reported by close(2) before this request would be sent.
        fuse_reply_err(req, ENOSYS);
        return;
    }
    const int rc = ::close(::dup(file_handle(fi).fd()));
    fuse_reply_err(req, rc == 0 ? 0 : errno);
}

void do_release_op(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
    Fs& fs = fs_of(req);
    std::unique_ptr<FileHandle> fh(&file_handle(fi));
    Inode& in = fs.inodes.get(ino);
    drop_handle(fs, in, *fh);
    if (fh->write_granted()) {
        give_back_writer(fs, in);
    }
    fh.reset();
    fuse_reply_err(req, 0);
}

void do_fsync_op(fuse_req_t req, fuse_ino_t /*ino*/, int datasync, fuse_file_info* fi) {
    const int fd = file_handle(fi).fd();
    const int rc = datasync != 0 ? ::fdatasync(fd) : ::fsync(fd);
    fuse_reply_err(req, rc == 0 ? 0 : errno);
}

void do_fallocate_op(fuse_req_t req, fuse_ino_t /*ino*/, int mode, off_t offset, off_t length,
                     fuse_file_info* fi) {
    const int fd = file_handle(fi).write_fd();
    if (fd < 0) {
        fuse_reply_err(req, EACCES);
        return;
    }
    if (const int err = clear_setid(fs_of(req), req, fd, SetidCaller::Unflagged); err != 0) {
        fuse_reply_err(req, err);
        return;
    }
    const int rc = ::fallocate(fd, mode, offset, length);
    fuse_reply_err(req, rc == 0 ? 0 : errno);
}

void do_copy_file_range_op(fuse_req_t req, fuse_ino_t /*ino_in*/, off_t off_in,
                           fuse_file_info* fi_in, fuse_ino_t /*ino_out*/, off_t off_out,
                           fuse_file_info* fi_out, size_t len, int flags) {
    const int out = file_handle(fi_out).write_fd();
    if (out < 0) {
        fuse_reply_err(req, EACCES);
        return;
    }
    if (const int err = clear_setid(fs_of(req), req, out, SetidCaller::Unflagged); err != 0) {
        fuse_reply_err(req, err);
        return;
    }
    loff_t in_off = off_in;
    loff_t out_off = off_out;
    const ssize_t n = ::copy_file_range(file_handle(fi_in).fd(), &in_off, out, &out_off, len,
                                        static_cast<unsigned>(flags));
    if (n < 0) {
        fuse_reply_err(req, errno);
    } else {
        fuse_reply_write(req, static_cast<size_t>(n));
    }
}

void do_lseek_op(fuse_req_t req, fuse_ino_t /*ino*/, off_t off, int whence, fuse_file_info* fi) {
    const off_t r = ::lseek(file_handle(fi).fd(), off, whence);
    if (r < 0) {
        fuse_reply_err(req, errno);
    } else {
        fuse_reply_lseek(req, r);
    }
}

} // namespace

namespace handlers {

GatedHandler<Slot::open> open() noexcept {
    return gated<Slot::open, &build_open, &do_open>();
}

GatedHandler<Slot::create> create() noexcept {
    return gated<Slot::create, &build_create, &do_create>();
}

PassHandler<Slot::read> read() noexcept {
    return pass<Slot::read, &do_read_op>();
}

DataServer data() noexcept {
    return &serve_data_op;
}

HandleHandler<Slot::write_buf> write_buf() noexcept {
    return handle<Slot::write_buf, &do_write_buf_op>();
}

PassHandler<Slot::flush> flush() noexcept {
    return pass<Slot::flush, &do_flush_op>();
}

PassHandler<Slot::release> release() noexcept {
    return pass<Slot::release, &do_release_op>();
}

PassHandler<Slot::fsync> fsync() noexcept {
    return pass<Slot::fsync, &do_fsync_op>();
}

HandleHandler<Slot::fallocate> fallocate() noexcept {
    return handle<Slot::fallocate, &do_fallocate_op>();
}

HandleHandler<Slot::copy_file_range> copy_file_range() noexcept {
    return handle<Slot::copy_file_range, &do_copy_file_range_op>();
}

PassHandler<Slot::lseek> lseek() noexcept {
    return pass<Slot::lseek, &do_lseek_op>();
}

} // namespace handlers

} // namespace guardfs::fusefs
