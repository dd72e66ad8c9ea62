// Small I/O helpers over raw descriptors, shared by the modules that read whole files.
#pragma once

#include <string>

namespace guardfs::base {

// Reads from `fd`'s current offset to the end into `out` (replacing it), retrying on EINTR.
// Returns 0, or the errno of the failed read.
int read_to_end(int fd, std::string& out);

// Whether the directory `dir` (relative to `dirfd`, which may be an O_PATH descriptor) holds an
// entry besides "." and "..". True also when it cannot be read: the caller's guard then takes the
// stricter side.
bool has_entries(int dirfd, const char* dir);

// The text of the symbolic link at `path` relative to `dirfd` (AT_FDCWD, or path "" with dirfd
// the link itself) into `out`. Returns 0, an errno, or ENAMETOOLONG past PATH_MAX.
int read_link_at(int dirfd, const char* path, std::string& out);

} // namespace guardfs::base
