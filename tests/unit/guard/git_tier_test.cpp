// The git tier (design §4a): execution surfaces in every git directory at any depth, hooks by
// name, the gitdir pointer file, and renames through them.
#include "guard_support.hpp"

#include <catch2/catch.hpp>

using namespace guardfs;
using guard::Kind;
using guard::Op;
using guard::Role;
using guard::Tier;
using guard::Verdict;

namespace {

dataroot::RealFs g_fs;

guard::Judge git_only() {
    return guard::Judge(test::policy_of("agent_config: false\n"), g_fs);
}

// The verdict on renaming `from` (which exists) to `to`, both judged as a directory that moves.
Verdict rename_verdict(const guard::Judge& j, const std::string& from, const std::string& to,
                       Op op = Op::Rename) {
    guard::Target a = test::target(from, Role::RenameSource);
    guard::Target b = test::target(to, Role::RenameDestination);
    a.through = b.through = true;
    a.exists = true;
    return j.decide(test::request(op, {a, b})).verdict;
}

} // namespace

TEST_CASE("git surfaces are guarded at any depth, objects, refs and samples are not",
          "[guard][git]") {
    const guard::Judge j = git_only();
    auto [path, expected] = GENERATE(table<std::string, Verdict>({
        {"/w/.git/hooks/pre-commit", Verdict::Deny},
        {"/w/.git/hooks/post-checkout", Verdict::Deny},
        {"/w/.git/hooks/fsmonitor-watchman", Verdict::Deny},
        {"/w/.git/hooks/pre-commit.sample", Verdict::Allow}, // git init's templates
        {"/w/.git/hooks/my-helper.sh", Verdict::Allow},      // git never runs it by name
        {"/w/.git/hooks", Verdict::Allow},                   // the empty dir git init makes
        {"/w/.git/config", Verdict::Deny},
        {"/w/.git/config.lock", Verdict::Allow}, // judged at its rename
        {"/w/.git/config.worktree", Verdict::Deny},
        {"/w/.git/commondir", Verdict::Deny},
        {"/w/.git/info/attributes", Verdict::Deny},
        {"/w/.git/info/exclude", Verdict::Allow},
        {"/w/.git/objects/ab/cdef0123", Verdict::Allow},
        {"/w/.git/refs/heads/main", Verdict::Allow},
        {"/w/.git/refs/heads/config", Verdict::Allow}, // a branch named config
        {"/w/.git/index", Verdict::Allow},
        {"/w/.git/HEAD", Verdict::Allow},
        {"/w/.git/logs/HEAD", Verdict::Allow},
        {"/w/vendor/sub/.git/hooks/pre-commit", Verdict::Deny},  // nested repository
        {"/w/.git/modules/sub/hooks/pre-commit", Verdict::Deny}, // submodule git dir
        {"/w/.git/modules/sub/config", Verdict::Deny},
        {"/w/.git/modules/a/b/config", Verdict::Deny}, // a module name with a slash
        {"/w/.git/modules/a/modules/b/hooks/post-merge", Verdict::Deny},
        {"/w/.git/modules/sub/objects/pack/p.pack", Verdict::Allow},
        {"/w/.git/worktrees/wt/config.worktree", Verdict::Deny},
        {"/w/.git/worktrees/wt/commondir", Verdict::Deny},
        {"/w/.git/worktrees/wt/HEAD", Verdict::Allow},
        {"/w/.git/worktrees/wt/refs/heads/config", Verdict::Allow},
        {"/w/.GIT/HOOKS/PRE-COMMIT", Verdict::Deny}, // wide, like every deny row
        {"/w/.git\\hooks\\pre-commit", Verdict::Deny},
        {"/w/src/hooks/pre-commit", Verdict::Allow}, // not in a git directory
        {"/w/src/config", Verdict::Allow},
    }));
    CAPTURE(path);
    const auto d = test::write_to(j, path);
    CHECK(d.verdict == expected);
    if (expected == Verdict::Deny) {
        CHECK(d.tier == Tier::Git);
    }
}

TEST_CASE("an existing .git pointer file is not rewritten, removed or renamed, a new one may be "
          "created",
          "[guard][git][pointer]") {
    const guard::Judge j = git_only();
    guard::Target existing = test::target("/w/wt/.git");
    existing.exists = true;
    existing.kind = Kind::File;
    CHECK(j.decide(test::request(Op::OpenWrite, {existing})).verdict == Verdict::Deny);
    CHECK(j.decide(test::request(Op::Truncate, {existing})).verdict == Verdict::Deny);
    CHECK(j.decide(test::request(Op::Unlink, {existing})).verdict == Verdict::Deny);
    guard::Target fresh = test::target("/w/wt/.git");
    fresh.kind = Kind::File;
    CHECK(j.decide(test::request(Op::Create, {fresh})).verdict == Verdict::Allow);
    // beside a working tree (after `rm -rf .git`) a new pointer would redirect that tree's git
    fresh.among_others = true;
    for (const Op op : {Op::Create, Op::Mknod, Op::Link, Op::Write}) {
        CHECK(j.decide(test::request(op, {fresh})).verdict == Verdict::Deny);
    }
    // git never renames a pointer into place, and a symlink named .git is refused however made
    fresh.among_others = false;
    guard::Target from = test::target("/w/wt/ptr", Role::RenameSource);
    from.exists = true;
    from.kind = Kind::File;
    fresh.role = Role::RenameDestination;
    CHECK(j.decide(test::request(Op::Rename, {from, fresh})).verdict == Verdict::Deny);
    guard::Target symlink = test::target("/w/wt/.git");
    symlink.kind = Kind::Symlink;
    CHECK(j.decide(test::request(Op::Link, {symlink})).verdict == Verdict::Deny);
    guard::Target dir = test::target("/w/repo/.git");
    dir.kind = Kind::Directory;
    CHECK(j.decide(test::request(Op::Mkdir, {dir})).verdict == Verdict::Allow);
    dir.exists = true;
    CHECK(j.decide(test::request(Op::Chmod, {dir})).verdict == Verdict::Allow);
}

TEST_CASE("removing a hook, config or attributes file is allowed, putting one back is judged as "
          "a write",
          "[guard][git][unlink]") {
    const guard::Judge j = git_only();
    auto path = GENERATE(as<std::string>{}, "/w/.git/hooks/pre-commit", "/w/.git/config",
                         "/w/.git/config.worktree", "/w/.git/info/attributes",
                         "/w/.git/modules/sub/config", "/w/.git/worktrees/wt/config.worktree");
    CAPTURE(path);
    guard::Target existing = test::target(path);
    existing.exists = true;
    existing.kind = Kind::File;
    // rm -rf of a repository and git worktree remove unlink them; what git reads instead is
    // nothing (its defaults)
    CHECK(j.decide(test::request(Op::Unlink, {existing})).verdict == Verdict::Allow);
    CHECK(j.decide(test::request(Op::OpenWrite, {existing})).verdict == Verdict::Deny);
    CHECK(j.decide(test::request(Op::Truncate, {existing})).verdict == Verdict::Deny);
    guard::Target fresh = test::target(path);
    fresh.kind = Kind::File;
    CHECK(j.decide(test::request(Op::Create, {fresh})).verdict == Verdict::Deny);
}

TEST_CASE("a new commondir may be created only where git worktree add writes one",
          "[guard][git][commondir]") {
    const guard::Judge j = git_only();
    auto create = [&](const std::string& path) {
        guard::Target fresh = test::target(path);
        fresh.kind = Kind::File;
        return j.decide(test::request(Op::Create, {fresh})).verdict;
    };
    CHECK(create("/w/.git/worktrees/wt/commondir") == Verdict::Allow);
    CHECK(create("/w/.git/commondir") == Verdict::Deny);
    CHECK(create("/w/.git/modules/sub/commondir") == Verdict::Deny);
    // Module names are matched wide: "sub/worktrees/wt" may be a module whose own git directory
    // this is, so a submodule's worktree cannot be added inside the mount (docs/git-tier.md).
    CHECK(create("/w/.git/modules/sub/worktrees/wt/commondir") == Verdict::Deny);
    CHECK(create("/w/.git/modules/worktrees/wt/commondir") == Verdict::Deny);
}

TEST_CASE("an existing commondir is not removed: a new one may be created, so removal would be a "
          "rewrite",
          "[guard][git][unlink]") {
    const guard::Judge j = git_only();
    guard::Target existing = test::target("/w/.git/worktrees/wt/commondir");
    existing.exists = true;
    existing.kind = Kind::File;
    CHECK(j.decide(test::request(Op::Unlink, {existing})).verdict == Verdict::Deny);
}

TEST_CASE("renames and symlinks through a git directory's surfaces are refused",
          "[guard][git][rename]") {
    const guard::Judge j = git_only();
    auto rename = [&](const std::string& from, const std::string& to) {
        return rename_verdict(j, from, to);
    };
    CHECK(rename("/w/r/.git/hooks/pre-commit.sample", "/w/r/.git/hooks/pre-commit") ==
          Verdict::Deny);
    CHECK(rename("/w/r/.git", "/w/r/.git-away") == Verdict::Deny);
    CHECK(rename("/w/r/.gitx", "/w/r/.git") == Verdict::Deny);
    CHECK(rename("/w/r/.git/hooks", "/w/r/.git/hooks-old") == Verdict::Deny);
    CHECK(rename("/w/prepared", "/w/r/.git/hooks") == Verdict::Deny);
    CHECK(rename("/w/r/.git/modules/sub", "/w/r/.git/modules/x") == Verdict::Deny);
    CHECK(rename("/w/r", "/w/r2") == Verdict::Allow);
    // what git itself renames all day
    CHECK(rename("/w/r/.git/index.lock", "/w/r/.git/index") == Verdict::Allow);
    CHECK(rename("/w/r/.git/HEAD.lock", "/w/r/.git/HEAD") == Verdict::Allow);
    CHECK(rename("/w/r/.git/refs/heads/main.lock", "/w/r/.git/refs/heads/main") == Verdict::Allow);
    CHECK(rename("/w/r/.git/objects/pack/tmp_pack_x", "/w/r/.git/objects/pack/pack-1.pack") ==
          Verdict::Allow);
    CHECK(rename("/w/r/.git/modules/sub/objects/pack/tmp_x",
                 "/w/r/.git/modules/sub/objects/pack/pack-2.pack") == Verdict::Allow);
    // a symlink named hooks or .git redirects what git runs
    guard::Target link = test::target("/w/r/.git/hooks", Role::NewName);
    link.through = true;
    guard::Target to = test::target("/tmp/evil", Role::LinkTarget);
    to.leaves_tree = true;
    CHECK(j.decide(test::request(Op::Symlink, {link, to})).verdict == Verdict::Deny);
}

TEST_CASE("a module's git directory is on the way to its surfaces whatever its name holds",
          "[guard][git][rename]") {
    // `git submodule add URL libs/x` keeps the module's git directory at .git/modules/libs/x:
    // moving it out, planting a hook, and moving it back ran the hook at the next commit.
    const guard::Judge j = git_only();
    auto rename = [&](const std::string& from, const std::string& to, Op op = Op::Rename) {
        return rename_verdict(j, from, to, op);
    };
    CHECK(rename("/w/r/.git/modules/libs/x", "/w/stash") == Verdict::Deny);
    CHECK(rename("/w/stash", "/w/r/.git/modules/libs/x") == Verdict::Deny);
    CHECK(rename("/w/r/.git/modules/libs", "/w/stash") == Verdict::Deny);
    CHECK(rename("/w/r/.git/modules/a/b/c", "/w/stash") == Verdict::Deny);
    CHECK(rename("/w/r/.git/modules/libs/x", "/w/empty", Op::Exchange) == Verdict::Deny);
    CHECK(rename("/w/stash", "/w/r/.git/modules/objects/x") == Verdict::Deny); // a name "objects/x"
    CHECK(rename("/w/stash", "/w/r/.git/modules/libs/x/modules/y/z") == Verdict::Deny);
    CHECK(rename("/w/r/.git/modules", "/w/stash") == Verdict::Deny);
    CHECK(rename("/w/r/.git/modules/x/modules", "/w/stash") == Verdict::Deny);
    CHECK(rename("/w/r/.git/worktrees/wt/modules", "/w/stash") == Verdict::Deny);
    // a module at tools/hooks, src/config, deps/info: its own hooks directory
    CHECK(rename("/w/r/.git/modules/tools/hooks/hooks", "/w/h") == Verdict::Deny);
    CHECK(rename("/w/h", "/w/r/.git/modules/tools/hooks/hooks") == Verdict::Deny);
    CHECK(rename("/w/r/.git/modules/src/config/hooks", "/w/h") == Verdict::Deny);
    CHECK(rename("/w/r/.git/modules/deps/info/info", "/w/h") == Verdict::Deny);
    CHECK(rename("/w/r/.git/modules/tools/hooks", "/w/h") == Verdict::Deny);
    // what git renames inside such a module stays open
    CHECK(rename("/w/r/.git/modules/libs/x/objects/pack/tmp_x",
                 "/w/r/.git/modules/libs/x/objects/pack/pack-2.pack") == Verdict::Allow);
    CHECK(rename("/w/r/.git/modules/libs/x/refs/heads/a",
                 "/w/r/.git/modules/libs/x/refs/heads/b") == Verdict::Allow);
    CHECK(rename("/w/r/.git/modules/tools/hooks/refs/heads/a",
                 "/w/r/.git/modules/tools/hooks/refs/heads/b") == Verdict::Allow);
    CHECK(rename("/w/r/.git/modules/x/logs/refs/heads/a", "/w/r/.git/modules/x/logs/refs/b") ==
          Verdict::Allow);

    auto symlink = [&](const std::string& name, const std::string& target) {
        guard::Target link = test::target(name, Role::NewName);
        link.through = true;
        guard::Target to = test::target(target, Role::LinkTarget);
        return j.decide(test::request(Op::Symlink, {link, to})).verdict;
    };
    CHECK(symlink("/w/r/.git/modules/libs/x", "/w/elsewhere") == Verdict::Deny);
    CHECK(symlink("/w/r/.git/modules/libs/x/hooks", "/w/elsewhere") == Verdict::Deny);
    // git init's probe for symlinks, in a module's new git directory, whatever its name
    CHECK(symlink("/w/r/.git/modules/libs/x/tAb3dE9", "/w/r/.git/modules/libs/x/testing") ==
          Verdict::Allow);
    CHECK(symlink("/w/r/.git/modules/x/tQ2w3e4", "/w/r/.git/modules/x/testing") == Verdict::Allow);
    CHECK(symlink("/w/r/.git/modules/libs/x/tAb3dE9x", "/w/elsewhere") == Verdict::Deny);
}

TEST_CASE("the git tier can be switched off", "[guard][git]") {
    guard::Judge j(test::policy_of("git: false\n"), g_fs);
    CHECK(test::write_to(j, "/w/.git/hooks/pre-commit").verdict == Verdict::Allow);
}
