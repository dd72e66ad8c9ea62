// The only translation unit that writes fuse_lowlevel_ops (style guide B.6): one line per slot,
// each through set_slot(), whose overloads accept only the handler kind the slot's class allows.
// Also the gate (check) and the lifecycle slots.
#include "fusefs/ops_table.hpp"

#include "fusefs/handlers.hpp"

namespace guardfs::fusefs {

Fs& fs_of(fuse_req_t req) noexcept {
    return *static_cast<Fs*>(fuse_req_userdata(req));
}

guard::Decision check(Fs& fs, fuse_req_t req, guard::Request& request) noexcept {
    if (const fuse_ctx* ctx = fuse_req_ctx(req); ctx != nullptr) {
        request.caller.pid = ctx->pid;
        request.caller.uid = ctx->uid;
        request.caller.gid = ctx->gid;
    }
    return fs.arbiter->decide(request);
}

int refuse_unplaceable(Fs& fs, fuse_req_t req, Prepared& p) noexcept {
    const guard::Decision d = check(fs, req, p.request);
    (void)d; // a target without a view is always a refusal (tier internal)
    return EACCES;
}

namespace {

void do_init(void* userdata, fuse_conn_info* conn) {
    Fs& fs = *static_cast<Fs*>(userdata);
    auto want = [conn](unsigned cap) {
        if ((conn->capable & cap) != 0) {
            conn->want |= cap;
        }
    };
    // O_TRUNC reaches open() (and is judged there); without it the kernel sends setattr(size)
    // first, which is judged on its own as well.
    want(FUSE_CAP_ATOMIC_O_TRUNC);
    if (fs.cfg.writeback && fs.cfg.timeout > 0) {
        want(FUSE_CAP_WRITEBACK_CACHE);
    }
    // File data goes out spliced; requests come in with read(2) (fusefs/channel.hpp).
    want(FUSE_CAP_SPLICE_WRITE);
    want(FUSE_CAP_SPLICE_MOVE);
    want(FUSE_CAP_PARALLEL_DIROPS);
    want(FUSE_CAP_READDIRPLUS);
    want(FUSE_CAP_READDIRPLUS_AUTO);
    conn->want &= ~static_cast<unsigned>(FUSE_CAP_EXPORT_SUPPORT);
    // libfuse asks by default that the kernel drop a file's cached pages whenever it sees a new
    // mtime. With cached attributes the only new mtimes it sees are those of writes made
    // through the mount, which keep the cache up to date themselves: every read after a write
    // cost a GETATTR and a READ, and the next write a GETXATTR (decision 008).
    if (fs.cfg.timeout > 0) {
        conn->want &= ~static_cast<unsigned>(FUSE_CAP_AUTO_INVAL_DATA);
    }
    // With cached listings, OPENDIR is answered ENOSYS once and the kernel then opens
    // directories itself, keeping their listings cached (decision 008): two round trips less
    // per opendir(3).
    fs.no_opendir.store(fs.cfg.timeout > 0 && (conn->capable & FUSE_CAP_NO_OPENDIR_SUPPORT) != 0,
                        std::memory_order_relaxed);
}

void do_destroy(void* /*userdata*/) {}

} // namespace

fuse_lowlevel_ops make_ops() noexcept {
    fuse_lowlevel_ops ops{};
    set_slot(ops, pass<Slot::init, &do_init>());
    set_slot(ops, pass<Slot::destroy, &do_destroy>());
    set_slot(ops, handlers::lookup());
    set_slot(ops, handlers::forget());
    set_slot(ops, handlers::getattr());
    set_slot(ops, handlers::setattr());
    set_slot(ops, handlers::readlink());
    set_slot(ops, handlers::mknod());
    set_slot(ops, handlers::mkdir());
    set_slot(ops, handlers::unlink());
    set_slot(ops, handlers::rmdir());
    set_slot(ops, handlers::symlink());
    set_slot(ops, handlers::rename());
    set_slot(ops, handlers::link());
    set_slot(ops, handlers::open());
    set_slot(ops, handlers::read());
    set_slot(ops, handlers::flush());
    set_slot(ops, handlers::release());
    set_slot(ops, handlers::fsync());
    set_slot(ops, handlers::opendir());
    set_slot(ops, handlers::readdir());
    set_slot(ops, handlers::releasedir());
    set_slot(ops, handlers::fsyncdir());
    set_slot(ops, handlers::statfs());
    set_slot(ops, handlers::setxattr());
    set_slot(ops, handlers::getxattr());
    set_slot(ops, handlers::listxattr());
    set_slot(ops, handlers::removexattr());
    set_slot(ops, handlers::access());
    set_slot(ops, handlers::create());
    set_slot(ops, handlers::write_buf());
    set_slot(ops, handlers::forget_multi());
    set_slot(ops, handlers::fallocate());
    set_slot(ops, handlers::readdirplus());
    set_slot(ops, handlers::copy_file_range());
    set_slot(ops, handlers::lseek());
    // Unset on purpose (libfuse answers ENOSYS; see GUARDFS_FUSE_SLOTS): write (write_buf
    // serves every write), getlk, setlk and flock (the kernel keeps locks locally), bmap,
    // ioctl (nothing that could change file flags passes unjudged), poll, retrieve_reply.
    return ops;
}

} // namespace guardfs::fusefs
