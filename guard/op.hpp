// Every kind of operation the guard judges (design §3, §8; style guide B.3). The write kinds
// list what can change the tree, in the manner of rust-landlock's access rights; the read kinds
// exist for the read face. Each enumerator names the FUSE slot(s) and flags that produce it.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string_view>

namespace guardfs::guard {

enum class Op : std::uint8_t {
    Write,       // generic write (guardfs check without --op)
    Create,      // create; open with O_CREAT of a new name
    Mknod,       // mknod (fifos, sockets, devices, regular files)
    Mkdir,       // mkdir
    Symlink,     // symlink: the new link's path and the path its target names
    Link,        // link: the new name and every name of the existing inode
    Unlink,      // unlink
    Rmdir,       // rmdir
    Rename,      // rename (and RENAME_NOREPLACE): both ends, and rows passing through them
    Exchange,    // rename with RENAME_EXCHANGE: both ends, each as both
    OpenWrite,   // open / create with O_WRONLY or O_RDWR
    Truncate,    // open with O_TRUNC; setattr of size
    Chmod,       // setattr of mode
    Chown,       // setattr of uid / gid
    Utimes,      // setattr of atime / mtime
    SetXattr,    // setxattr
    RemoveXattr, // removexattr
    Fallocate,   // fallocate (judged through the handle's open grant)
    CopyInto,    // copy_file_range into a file (judged through the destination's open grant)
    Ioctl,       // ioctl (refused; nothing that can change flags passes unjudged)
    Lookup,      // read face: lookup of a name
    ReadDir,     // read face: listing a directory
    OpenRead,    // read face: open for reading
};

// The protocol name (design §6), e.g. "open_write".
const char* to_string(Op op) noexcept;

std::optional<Op> op_from_string(std::string_view s) noexcept;

// True for the read-face kinds.
constexpr bool is_read_op(Op op) noexcept {
    return op == Op::Lookup || op == Op::ReadDir || op == Op::OpenRead;
}

std::ostream& operator<<(std::ostream& os, Op op);

} // namespace guardfs::guard
