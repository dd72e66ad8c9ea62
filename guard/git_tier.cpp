// Matching the git tier; see git_tier.hpp.
//
// A submodule's name may hold slashes, so `.git/modules/a/b/config` is the config of module
// "a/b". Surfaces are matched wide: every split of the path after `modules/` is tried, so a
// surface is never missed (the cost: a branch named `config` inside a submodule's refs is
// refused too). The "through" judgement for renames is narrower, because git renames pack files
// and refs inside module directories all the time: a module's name ends at the first segment
// after its first that is an entry git renames inside (objects, refs, logs, ...).
#include "guard/git_tier.hpp"

#include <algorithm>
#include <array>

namespace guardfs::guard {

namespace {

constexpr std::array<std::string_view, 28> kHooks{
    "applypatch-msg",
    "pre-applypatch",
    "post-applypatch",
    "pre-commit",
    "pre-merge-commit",
    "prepare-commit-msg",
    "commit-msg",
    "post-commit",
    "pre-rebase",
    "post-checkout",
    "post-merge",
    "pre-push",
    "pre-receive",
    "update",
    "proc-receive",
    "post-receive",
    "post-update",
    "reference-transaction",
    "push-to-checkout",
    "pre-auto-gc",
    "post-rewrite",
    "sendemail-validate",
    "fsmonitor-watchman",
    "p4-changelist",
    "p4-prepare-changelist",
    "p4-post-changelist",
    "p4-pre-submit",
    "post-index-change",
};

// Entries git keeps at the top of a git directory; a module name ends before one of these.
constexpr std::array<std::string_view, 30> kGitDirEntries{
    "HEAD",
    "config",
    "config.worktree",
    "commondir",
    "description",
    "hooks",
    "info",
    "objects",
    "refs",
    "logs",
    "index",
    "packed-refs",
    "modules",
    "worktrees",
    "branches",
    "FETCH_HEAD",
    "ORIG_HEAD",
    "MERGE_HEAD",
    "COMMIT_EDITMSG",
    "shallow",
    "gitdir",
    "lfs",
    "rr-cache",
    "sequencer",
    "rebase-merge",
    "rebase-apply",
    "CHERRY_PICK_HEAD",
    "REVERT_HEAD",
    "AUTO_MERGE",
    "locked",
};

// The entries of a git directory that lead to a surface (see through_at).
constexpr std::array<std::string_view, 7> kSurfaceEntries{
    "hooks", "info", "config", "config.worktree", "commondir", "modules", "worktrees",
};

template <std::size_t N>
bool one_of(std::string_view s, const std::array<std::string_view, N>& set) noexcept {
    return std::find(set.begin(), set.end(), s) != set.end();
}

using Segs = std::span<const std::string_view>;

// A surface of the git directory whose contents begin at tail[0], or below one.
GitMatch surface_at(Segs tail) noexcept {
    if (tail.empty()) {
        return {};
    }
    const std::string_view first = tail[0];
    if (first == "config") {
        return {GitSurface::Config, ".git/config"};
    }
    if (first == "config.worktree") {
        return {GitSurface::ConfigWorktree, ".git/config.worktree"};
    }
    if (first == "commondir") {
        return {GitSurface::Commondir, ".git/commondir"};
    }
    if (first == "hooks" && tail.size() >= 2 && one_of(tail[1], kHooks)) {
        return {GitSurface::Hook, ".git/hooks/<hook>"};
    }
    if (first == "info" && tail.size() >= 2 && tail[1] == "attributes") {
        return {GitSurface::Attributes, ".git/info/attributes"};
    }
    if (first == "modules") {
        // Every split of the module name (wide): modules/<name...>/<surface>. A new commondir
        // is never let in here: the wide match also reads `<name>/worktrees/<wt>` as the name of
        // a module, whose own git directory git never gives one.
        for (std::size_t k = 2; k < tail.size(); ++k) {
            GitMatch m = surface_at(tail.subspan(k));
            if (m.matched()) {
                if (m.surface == GitSurface::Hook) {
                    m.row = ".git/modules/<name>/hooks/<hook>";
                } else if (m.surface == GitSurface::Config) {
                    m.row = ".git/modules/<name>/config";
                } else {
                    m.row = ".git/modules/<name>/...";
                }
                m.new_allowed = false;
                return m;
            }
        }
        return {};
    }
    if (first == "worktrees" && tail.size() >= 3) {
        GitMatch m = surface_at(tail.subspan(2));
        if (m.matched()) {
            m.row = ".git/worktrees/<name>/...";
            m.new_allowed = m.surface == GitSurface::Commondir && tail.size() == 3;
        }
        return m;
    }
    return {};
}

// git init's probe for symlink support: a symlink named by mkstemp("tXXXXXX") in the new git
// directory, removed at once (a submodule's clone runs it inside .git/modules/<name>).
bool is_symlink_probe(std::string_view name) noexcept {
    return name.size() == 7 && name[0] == 't' &&
           std::all_of(name.begin() + 1, name.end(), [](char c) {
               return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
           });
}

// Is tail a proper prefix of a surface path (so renaming it, or making it a symlink, would move
// or redirect what git runs)? `new_symlink`: the name is a symlink being made.
bool through_at(Segs tail, bool new_symlink) noexcept {
    if (tail.empty()) {
        return true; // the git directory itself
    }
    const std::string_view first = tail[0];
    if (tail.size() == 1 && (first == "hooks" || first == "info")) {
        return true;
    }
    if (first == "modules") {
        // modules/ itself and a module's git directory are on the way to its surfaces. The name
        // may hold slashes (`git submodule add URL libs/x` names it "libs/x"), so every
        // directory below modules/ is one, or on the way to one. The first segment is always
        // (part of) the name. A later segment that is an entry git keeps in a git directory
        // may end the name: past it, only the entries that lead to a surface lead on. Where
        // the entry is one of those (hooks, info, modules, worktrees, config: a module at
        // `tools/hooks`), the name may also go on; at any other (objects, refs, logs, ...) it
        // ends, because git renames inside those all day.
        if (tail.size() <= 2) {
            return true;
        }
        for (std::size_t k = 2; k < tail.size(); ++k) {
            if (!one_of(tail[k], kGitDirEntries)) {
                continue;
            }
            if (through_at(tail.subspan(k), new_symlink)) {
                return true;
            }
            if (!one_of(tail[k], kSurfaceEntries)) {
                return false;
            }
        }
        return !new_symlink || !is_symlink_probe(tail.back());
    }
    if (first == "worktrees") {
        return tail.size() <= 2 || through_at(tail.subspan(2), new_symlink);
    }
    return false;
}

} // namespace

std::span<const std::string_view> git_hook_names() noexcept {
    return kHooks;
}

bool has_git_segment(std::span<const std::string_view> segs) noexcept {
    return std::find(segs.begin(), segs.end(), std::string_view(".git")) != segs.end();
}

GitMatch match_git(Segs segs, std::size_t strip, const Target& t, Op op) noexcept {
    GitMatch best;
    for (std::size_t i = strip; i < segs.size(); ++i) {
        if (segs[i] != ".git") {
            continue;
        }
        const Segs tail = segs.subspan(i + 1);
        if (tail.empty()) {
            // The `.git` entry itself. A directory is a repository (git init makes one); an
            // existing regular file or symlink is a gitdir pointer and is not rewritten,
            // replaced, removed or renamed. A new pointer file may be created (git worktree add,
            // submodule clones write one).
            const bool is_dir = t.kind == Kind::Directory || op == Op::Mkdir || op == Op::Rmdir;
            if (t.through) {
                return {GitSurface::Through, ".git"};
            }
            if (!is_dir && t.exists) {
                return {GitSurface::Pointer, ".git (gitdir pointer file)"};
            }
            // git writes a new pointer in place (write_file); a file renamed onto `.git` would
            // plant one with no look at where it goes, and a symlink named `.git` (made, linked
            // or renamed) redirects the whole git directory.
            if (op == Op::Rename || op == Op::Exchange || t.kind == Kind::Symlink) {
                return {GitSurface::Pointer, ".git (a pointer or symlink put in place)"};
            }
            // A new pointer goes only into an empty directory, as git writes one (git worktree
            // add, a submodule's clone): beside a working tree, as after `rm -rf .git`, it would
            // aim that tree's git at other hooks and config.
            if (!is_dir && t.among_others) {
                return {GitSurface::Pointer, ".git (new gitdir pointer beside other files)"};
            }
            best.possible = true;
            continue;
        }
        const GitMatch m = surface_at(tail);
        if (m.matched()) {
            best.possible = true; // whether or not this operation is let through below
            // A mode or time change leaves what git reads from config, attributes and commondir
            // as it was (git init itself probes core.filemode with a chmod of config); on a hook
            // the executable bit is what turns it on, so there it stays refused.
            const bool metadata_only = op == Op::Chmod || op == Op::Utimes;
            if (metadata_only && m.surface != GitSurface::Hook) {
                continue;
            }
            // Removing a hook, config or attributes file plants nothing: git falls back to its
            // defaults, and putting a new one there is judged as a write (`rm -rf` of a
            // repository needs this). Not commondir: a new one may be created, so removing the
            // old one first would be a rewrite.
            if (op == Op::Unlink && m.surface != GitSurface::Commondir) {
                continue;
            }
            // `git worktree add` writes a new worktree's commondir with a plain create, as it
            // writes the new worktree's `.git` pointer: a new one may be created there, an
            // existing one is never rewritten (docs/git-tier.md says what this leaves open).
            if (m.new_allowed && op == Op::Create && !t.exists) {
                continue;
            }
            return m;
        }
        if (t.through && through_at(tail, op == Op::Symlink)) {
            best.surface = GitSurface::Through;
            best.row = ".git/... (a directory on the way to a git surface)";
        }
    }
    return best;
}

} // namespace guardfs::guard
