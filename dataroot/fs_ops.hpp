// The two questions canonicalization asks of a filesystem, behind an interface so that the FUSE
// layer can answer them for paths under its own mount point from the underlying tree (asking
// the mount itself from inside its daemon would deadlock), and tests can answer them too.
#pragma once

#include <string>
#include <vector>

#include <sys/types.h>

namespace guardfs::dataroot {

enum class FileKind : unsigned char { Missing, Directory, Symlink, Other };

class FsOps {
public:
    virtual ~FsOps() = default;

    // What is at abs_path, without following a final symlink. Returns 0, or an errno
    // (ENOENT for nothing there is reported as 0 with kind Missing).
    virtual int lstat_kind(const std::string& abs_path, FileKind& kind) = 0;

    // The target of the symlink at abs_path. Returns 0, or an errno.
    virtual int read_link(const std::string& abs_path, std::string& target) = 0;

    // The (st_dev, st_ino) of what abs_path names, following symlinks. Returns 0, or an errno.
    virtual int identity(const std::string& abs_path, dev_t& dev, ino_t& ino) = 0;

    // Other absolute spellings of the same file by which a judged path may name it: below a FUSE
    // mount point (as given, or its real path) or its workspace, the same path below the others.
    // None by default.
    [[nodiscard]] virtual std::vector<std::string> aliases(const std::string& /*abs_path*/) const {
        return {};
    }
};

// Answers from the real filesystem with lstat(2) and readlink(2).
class RealFs final : public FsOps {
public:
    int lstat_kind(const std::string& abs_path, FileKind& kind) override;
    int read_link(const std::string& abs_path, std::string& target) override;
    int identity(const std::string& abs_path, dev_t& dev, ino_t& ino) override;
};

} // namespace guardfs::dataroot
