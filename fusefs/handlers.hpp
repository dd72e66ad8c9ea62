// The handler of every filled slot, one factory per slot, defined in the ops_*.cpp file that
// owns it; ops_table.cpp wires them (and is the only file that writes fuse_lowlevel_ops).
#pragma once

#include "fusefs/channel.hpp"
#include "fusefs/ops_table.hpp"

namespace guardfs::fusefs::handlers {

// ops_entry.cpp
PassHandler<Slot::lookup> lookup() noexcept;
PassHandler<Slot::forget> forget() noexcept;
PassHandler<Slot::forget_multi> forget_multi() noexcept;
PassHandler<Slot::getattr> getattr() noexcept;
GatedHandler<Slot::setattr> setattr() noexcept;
PassHandler<Slot::readlink> readlink() noexcept;
GatedHandler<Slot::mknod> mknod() noexcept;
GatedHandler<Slot::mkdir> mkdir() noexcept;
GatedHandler<Slot::unlink> unlink() noexcept;
GatedHandler<Slot::rmdir> rmdir() noexcept;
GatedHandler<Slot::symlink> symlink() noexcept;
GatedHandler<Slot::rename> rename() noexcept;
GatedHandler<Slot::link> link() noexcept;
PassHandler<Slot::access> access() noexcept;
PassHandler<Slot::statfs> statfs() noexcept;

// ops_file.cpp
GatedHandler<Slot::open> open() noexcept;
GatedHandler<Slot::create> create() noexcept;
PassHandler<Slot::read> read() noexcept;
HandleHandler<Slot::write_buf> write_buf() noexcept;
// READ and WRITE served without libfuse's request, as read and write_buf serve them
// (channel.hpp: serve_data_ops; its argument is the session's Fs). Not a slot, so the slot
// classes above do not constrain it: it writes only through FileHandle::write_fd(), as a Handle
// slot must.
DataServer data() noexcept;
PassHandler<Slot::flush> flush() noexcept;
PassHandler<Slot::release> release() noexcept;
PassHandler<Slot::fsync> fsync() noexcept;
HandleHandler<Slot::fallocate> fallocate() noexcept;
HandleHandler<Slot::copy_file_range> copy_file_range() noexcept;
PassHandler<Slot::lseek> lseek() noexcept;

// ops_dir.cpp
PassHandler<Slot::opendir> opendir() noexcept;
PassHandler<Slot::readdir> readdir() noexcept;
PassHandler<Slot::readdirplus> readdirplus() noexcept;
PassHandler<Slot::releasedir> releasedir() noexcept;
PassHandler<Slot::fsyncdir> fsyncdir() noexcept;

// ops_xattr.cpp
GatedHandler<Slot::setxattr> setxattr() noexcept;
PassHandler<Slot::getxattr> getxattr() noexcept;
PassHandler<Slot::listxattr> listxattr() noexcept;
GatedHandler<Slot::removexattr> removexattr() noexcept;

} // namespace guardfs::fusefs::handlers
