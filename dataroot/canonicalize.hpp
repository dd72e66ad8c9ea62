// Canonical paths, resolved one component at a time as the kernel resolves them (design §3, §5).
// Every failure is reported, never papered over: the caller falls to the deny side.
#pragma once

#include "base/result.hpp"
#include "dataroot/fs_ops.hpp"

#include <string>
#include <string_view>

namespace guardfs::dataroot {

inline constexpr int kMaxSymlinkHops = 40;

// The canonical form of an existing path: absolute, no symlinks, no "." or "..".
// Fails (CanonicalizeFailed with the errno) when any component is missing, a loop is met, or a
// non-directory has components after it. abs_path must be absolute.
base::Result<std::string> canonicalize_existing(std::string_view abs_path, FsOps& fs);

// The canonical form of a target that may not exist yet: the longest existing prefix resolved,
// the missing tail appended lexically. A final symlink is followed only when follow_last is set
// (a write through the name lands at its target; an unlink or rename does not).
// Fails on loops, I/O errors and non-directories in the middle.
base::Result<std::string> canonicalize_target(std::string_view abs_path, FsOps& fs,
                                              bool follow_last);

} // namespace guardfs::dataroot
