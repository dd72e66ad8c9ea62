// The git tier (design §4a): the places git later runs code from, in every git directory at any
// depth (a `.git` directory, submodule git directories under `.git/modules/<name>`, linked
// worktrees under `.git/worktrees/<name>`), and a `.git` that is a regular file (a gitdir
// pointer). Hooks are guarded by name (githooks(5)), so the `*.sample` files and the empty
// `hooks/` that `git init` creates are not; config is guarded as a file, and its rename from
// `config.lock` is judged by content (git_config.hpp). Everything else in a git directory
// (objects, refs, index, logs) is an ordinary file. docs/git-tier.md has the reasons.
#pragma once

#include "guard/request.hpp"

#include <span>
#include <string_view>

namespace guardfs::guard {

enum class GitSurface : std::uint8_t {
    None,
    Hook,           // <gitdir>/hooks/<hook name>
    Config,         // <gitdir>/config
    ConfigWorktree, // <gitdir>/config.worktree
    Commondir,      // <gitdir>/commondir
    Attributes,     // <gitdir>/info/attributes
    Pointer,        // a `.git` that is (or would replace) a regular file or a symlink
    Through,        // a name on the way to a surface (renamed, or made a symlink)
};

struct GitMatch {
    GitSurface surface = GitSurface::None;
    std::string_view row; // e.g. ".git/hooks/<hook>"
    // With no match: whether another operation, kind of file or existence of the target could
    // have matched (a `.git` entry itself, or a surface that this operation may touch). False
    // means no operation on this path is the git tier's business (Decision::settled).
    bool possible = false;
    // A commondir where `git worktree add` creates one (<gitdir>/worktrees/<name>/commondir): a
    // new one may be created there. Anywhere else git never writes one.
    bool new_allowed = false;

    [[nodiscard]] bool matched() const noexcept { return surface != GitSurface::None; }
};

// Does the path with these segments (a reading of a target) name a git execution surface, or
// lie below one? Only runs that start at index >= strip count (see Readings). `t` tells whether
// a `.git` entry is a pointer file and whether the name is being renamed or linked (through).
GitMatch match_git(std::span<const std::string_view> segs, std::size_t strip, const Target& t,
                   Op op) noexcept;

// Does a `.git` segment appear at or after index 0 of these segments? (A data root there would
// strip a git directory's own name and unguard its surfaces: design §5 refuses it.)
bool has_git_segment(std::span<const std::string_view> segs) noexcept;

// The hook names git executes (githooks(5)), in the order of that page.
std::span<const std::string_view> git_hook_names() noexcept;

} // namespace guardfs::guard
