// The agent's data root (design §5): its spellings, their canonical forms computed per decision,
// and byte-exact containment on a segment boundary.
//
// Invariant: every uncertainty exempts nothing. A spelling that cannot be resolved, a root that
// reduces to "/" or "", a target that is not byte-for-byte inside: no exemption.
#pragma once

#include "dataroot/fs_ops.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace guardfs::dataroot {

// The spellings one configured value resolves to (design §5): as written when absolute; with a
// leading '~' expanded against home and, as written, resolved against start_dir (an agent host
// that does not expand '~' resolves it that way); a relative value resolved against start_dir.
// Each is lexically absolute. A value that yields nothing usable (empty; '~' with no home;
// '~user') contributes only the spellings that could be formed.
std::vector<std::string> spellings(std::string_view value, std::string_view home,
                                   std::string_view start_dir);

// When target is root or lies below it (exact bytes, on a segment boundary), the number of
// root's segments; else nullopt. A root of "/" or "" contains nothing. Both are expected in the
// form base::join_absolute gives (single slashes, no trailing slash).
std::optional<std::size_t> inside_root(std::string_view target, std::string_view root) noexcept;

class DataRoots {
public:
    DataRoots() = default;

    explicit DataRoots(std::vector<std::string> spellings);

    [[nodiscard]] bool empty() const noexcept { return spellings_.empty(); }

    [[nodiscard]] const std::vector<std::string>& spellings() const noexcept { return spellings_; }

    // The containment keys for this decision: for each spelling that resolves, its lexical form
    // and its canonical form, canonicalized now (not cached: a retargeted symlink is followed).
    // A spelling that does not resolve contributes nothing; a key of "/" is never returned. Each
    // key's aliases (FsOps::aliases: under a mount point and under its workspace) are keys too.
    [[nodiscard]] std::vector<std::string> keys(FsOps& fs) const;

private:
    std::vector<std::string> spellings_;
};

} // namespace guardfs::dataroot
