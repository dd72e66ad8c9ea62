// Small I/O helpers over raw descriptors, shared by the modules that read whole files.
#pragma once

#include <string>

namespace guardfs::base {

// Reads from `fd`'s current offset to the end into `out` (replacing it), retrying on EINTR.
// Returns 0, or the errno of the failed read.
int read_to_end(int fd, std::string& out);

} // namespace guardfs::base
