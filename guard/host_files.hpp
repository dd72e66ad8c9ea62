// guardfs's own files (the audit log, the allow file, the policy on reload) are read and
// written by the daemon itself. When one lies under the mount point, going through the mount
// would have the daemon judge (and refuse, design §7) its own writes, so the FUSE layer supplies
// an implementation that reaches the underlying tree directly. This is the plain one.
#pragma once

#include <string>
#include <string_view>

namespace guardfs::guard {

class HostFiles {
public:
    virtual ~HostFiles() = default;

    // Opens path for appending, creating it (mode 0600) if needed. Returns an fd or -errno.
    virtual int open_append(const std::string& path) = 0;

    // Replaces path's content atomically (a temporary file in the same directory, fsync,
    // rename). Returns 0 or an errno.
    virtual int replace(const std::string& path, std::string_view content) = 0;

    // Reads the whole file. Returns 0 or an errno.
    virtual int read(const std::string& path, std::string& out) = 0;
};

class PlainHostFiles final : public HostFiles {
public:
    int open_append(const std::string& path) override;
    int replace(const std::string& path, std::string_view content) override;
    int read(const std::string& path, std::string& out) override;
};

// Helpers for implementations: the same three operations relative to a directory fd (AT_FDCWD
// for plain paths). `rel` must not be empty.
int open_append_at(int dirfd, const std::string& rel);
int replace_at(int dirfd, const std::string& rel, std::string_view content);
int read_at(int dirfd, const std::string& rel, std::string& out);

} // namespace guardfs::guard
