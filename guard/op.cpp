// Operation names; see op.hpp.
#include "guard/op.hpp"

#include <array>
#include <utility>

namespace guardfs::guard {

namespace {

constexpr std::array<std::pair<Op, std::string_view>, 23> kNames{{
    {Op::Write, "write"},
    {Op::Create, "create"},
    {Op::Mknod, "mknod"},
    {Op::Mkdir, "mkdir"},
    {Op::Symlink, "symlink"},
    {Op::Link, "link"},
    {Op::Unlink, "unlink"},
    {Op::Rmdir, "rmdir"},
    {Op::Rename, "rename"},
    {Op::Exchange, "exchange"},
    {Op::OpenWrite, "open_write"},
    {Op::Truncate, "truncate"},
    {Op::Chmod, "chmod"},
    {Op::Chown, "chown"},
    {Op::Utimes, "utimes"},
    {Op::SetXattr, "setxattr"},
    {Op::RemoveXattr, "removexattr"},
    {Op::Fallocate, "fallocate"},
    {Op::CopyInto, "copy_file_range"},
    {Op::Ioctl, "ioctl"},
    {Op::Lookup, "lookup"},
    {Op::ReadDir, "readdir"},
    {Op::OpenRead, "read"},
}};

} // namespace

const char* to_string(Op op) noexcept {
    for (const auto& [o, name] : kNames) {
        if (o == op) {
            return name.data();
        }
    }
    return "write";
}

std::optional<Op> op_from_string(std::string_view s) noexcept {
    for (const auto& [o, name] : kNames) {
        if (name == s) {
            return o;
        }
    }
    return std::nullopt;
}

std::ostream& operator<<(std::ostream& os, Op op) {
    return os << to_string(op);
}

} // namespace guardfs::guard
