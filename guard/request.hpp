// What the judge is asked and what it answers (design §3, style guide B.3): a Request names an
// operation and its targets, each target carries every view that could be the file, and a
// Decision says which rule, tier, view and exemption decided. A decision is data, not an error.
#pragma once

#include "guard/op.hpp"
#include "patterns/readings.hpp"
#include "patterns/rule.hpp"

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <sys/types.h>

namespace guardfs::guard {

using patterns::Tier;
using patterns::Verdict;

enum class View : std::uint8_t {
    None,                // nothing decided (allow, no rule)
    Spelled,             // the path as the agent spells it under the mount point
    Canonical,           // the underlying path, workspace root resolved
    OtherName,           // another name the guard has seen for the same inode
    LinkTarget,          // a new symlink's target, resolved lexically against its directory
    LinkTargetCanonical, // that target with its existing components resolved
    Identity,            // the inode itself (st_dev, st_ino)
};

const char* to_string(View v) noexcept;

std::ostream& operator<<(std::ostream& os, View v);

enum class Kind : std::uint8_t { Unknown, File, Directory, Symlink, Other };

struct PathView {
    std::string path; // absolute
    View view = View::Spelled;
};

struct FileId {
    dev_t dev = 0;
    ino_t ino = 0;

    friend bool operator==(const FileId&, const FileId&) = default;
};

// What part a target plays in its operation.
enum class Role : std::uint8_t {
    Only,              // the one target of most operations
    RenameSource,      // rename / exchange: the old name
    RenameDestination, // rename / exchange: the new name
    NewName,           // link / symlink: the name being created
    ExistingNames,     // link: the inode being given another name
    LinkTarget,        // symlink: what the new link points at
};

const char* to_string(Role r) noexcept;

struct Target {
    std::vector<PathView> views;    // every path that could be this file; at least one
    bool through = false;           // also rows whose guarding run passes through the last
                                    // segment (both ends of a rename; a new symlink's name)
    bool exists = false;            // the name exists before the operation
    Kind kind = Kind::Unknown;      // what the name is, or will be once created
    std::optional<FileId> identity; // the existing inode, when known
    Role role = Role::Only;
    bool leaves_tree = false; // a LinkTarget that lies outside the mounted tree
    // A new name `.git` only: the directory it lands in already holds other entries (a gitdir
    // pointer put beside a working tree would aim it at other hooks; git writes new ones into
    // empty directories).
    bool among_others = false;
    // A Decision::settled token the FUSE layer kept from a decision about these same views (the
    // one that made this file or renamed it there, or a recent one at the same path). While it
    // holds (the same judge and policy generation) the views are not walked again: they match
    // nothing. `identity` is still checked against guardfs's own files, and a rename's ends
    // against the read face. Ignored for a target judged `through` and a link target (links_out).
    std::uint64_t settled = 0;
};

struct Caller {
    pid_t pid = 0;
    uid_t uid = 0;
    gid_t gid = 0;
};

// A proposed new content of a git config file and the content it replaces (design §4a).
struct GitConfigChange {
    std::string proposed;
    std::optional<std::string> current; // nullopt when there is no current file
};

struct Request {
    Op op = Op::Write;
    std::vector<Target> targets;
    Caller caller;
    std::optional<GitConfigChange> git_config; // set by the FUSE layer for a rename onto config
};

struct Decision {
    Verdict verdict = Verdict::Allow;
    Tier tier = Tier::None;
    std::string rule; // the pattern or row that decided; empty when none
    View view = View::None;
    patterns::Reading reading = patterns::Reading::Raw;
    std::string path;        // the view's path that decided
    std::string exempt_root; // the data root the path was judged relative to; empty when none
    std::string reason;      // one line for people
    // Nonzero when the decision is an allow with nothing matched on any view, and would be for
    // any operation on a target that is not `through` with these same views (no row, no
    // guardfs file by name, no git surface for any operation, kind or existence): a later
    // request may carry it in such a target (Target::settled) so its views are not walked
    // again. It names the judge and the policy generation: a reload ends it.
    std::uint64_t settled = 0;

    [[nodiscard]] bool allowed() const noexcept { return verdict == Verdict::Allow; }
};

std::ostream& operator<<(std::ostream& os, const Decision& d);

} // namespace guardfs::guard
