// Everyday git keeps working and every place git runs code from stays guarded (issue #5, design
// §4a), under the built-in recommended policy with no approver. Each attack plants a program
// that would create a marker file; after the attack git is run again and the marker must not
// exist.
#include "support/mount_fixture.hpp"
#include "support/process.hpp"
#include "support/temp_dir.hpp"

#include <catch2/catch.hpp>

#include <cerrno>
#include <filesystem>
#include <string>

#include <fcntl.h>
#include <stdio.h>

using namespace guardfs::test;

namespace {

// git with no system or user config of its own, a fixed identity, and local submodules allowed.
RunOptions git_env(const std::string& cwd, const std::string& home) {
    RunOptions o;
    o.cwd = cwd;
    o.env = {{"HOME", home},
             {"GIT_CONFIG_NOSYSTEM", "1"},
             {"GIT_AUTHOR_NAME", "t"},
             {"GIT_AUTHOR_EMAIL", "t@example.com"},
             {"GIT_COMMITTER_NAME", "t"},
             {"GIT_COMMITTER_EMAIL", "t@example.com"},
             {"GIT_CONFIG_COUNT", "1"},
             {"GIT_CONFIG_KEY_0", "protocol.file.allow"},
             {"GIT_CONFIG_VALUE_0", "always"}};
    return o;
}

ProcessResult git(const std::string& script, const std::string& cwd, const std::string& home) {
    return sh(script, git_env(cwd, home));
}

// A repository with a submodule at `at` (its name too), made outside the mount, to clone from.
void make_source(const std::string& root, const std::string& src = "src",
                 const std::string& at = "sub") {
    const std::string home = root + "/home";
    std::filesystem::create_directories(home);
    REQUIRE(git("(test -d sub || (git init -q sub && cd sub && echo s > s && git add s && "
                "git commit -qm s)) && git init -q " +
                    src + " && cd " + src +
                    " && echo a > a && git add a && git commit -qm a && git submodule add -q "
                    "../sub " +
                    at + " && git commit -qm sub",
                root, home)
                .exit_code == 0);
}

MountSpec builtin_policy() {
    MountSpec spec;
    spec.use_policy_file = false; // the built-in recommended policy
    return spec;
}

std::string marker_script(const std::string& marker) {
    return "#!/bin/sh\ntouch " + marker + "\n";
}

} // namespace

TEST_CASE("everyday git works under the recommended policy, at the root and nested",
          "[integration][git]") {
    MountedGuard g(builtin_policy());
    const std::string home = g.root() + "/home";
    std::filesystem::create_directories(home);
    make_source(g.root());
    for (const std::string& dir : {std::string(""), std::string("nested/deeper")}) {
        CAPTURE(dir);
        const std::string where = dir.empty() ? g.ws() : g.ws(dir);
        std::filesystem::create_directories(where);
        const auto r =
            git("set -e\n"
                "git init -q repo && cd repo\n"
                "git config user.email someone@example.com\n"
                "echo one > f && git add f && git commit -qm one\n"
                "git branch topic && git checkout -q topic\n"
                "echo two >> f && git commit -qam two\n"
                "git checkout -q - && echo three > g && git add g && git commit -qm three\n"
                "git merge -q --no-edit topic\n"
                "git checkout -q topic && git rebase -q - 2>/dev/null || git rebase -q master "
                "|| git rebase -q main\n"
                "echo wip >> f && git stash -q && git stash pop -q && git checkout -q -- f\n"
                "git tag v1\n"
                "git remote add origin " +
                    g.root() +
                    "/src\n"
                    "git worktree add -q ../wt-" +
                    std::to_string(dir.size()) +
                    "\n"
                    "git gc -q\n"
                    "git status --porcelain\n"
                    "cd .. && git clone -q --recurse-submodules " +
                    g.root() +
                    "/src clone\n"
                    "cd clone && git submodule status && echo x > x && git add x && "
                    "git commit -qm x && git log --oneline | wc -l\n",
                where, home);
        CAPTURE(r.out, r.err);
        CHECK(r.exit_code == 0);
        CHECK(std::filesystem::exists(where + "/clone/sub/s"));
        CHECK(std::filesystem::exists(where + "/clone/.git/modules/sub/config"));
    }
}

TEST_CASE("the configs git init, clone and remote write are judged without starting git",
          "[integration][git]") {
    // The daemon cannot find git: a config write it can judge only by running git is refused
    // (no answer: judged by its row), so what passes was read by guardfs itself.
    MountSpec spec = builtin_policy();
    spec.env["PATH"] = "/nonexistent-guardfs-test";
    MountedGuard g(spec);
    const std::string home = g.root() + "/home";
    std::filesystem::create_directories(home);
    make_source(g.root());
    const auto r = git("set -e\n"
                       "git init -q a && cd a\n"
                       "git config user.email someone@example.com\n"
                       "git remote add origin " +
                           g.root() +
                           "/src\n"
                           "git fetch -q origin\n"
                           "git remote rename origin up\n"
                           "cd .. && git clone -q --recurse-submodules " +
                           g.root() +
                           "/src c\n"
                           "cd c && git checkout -q -b topic\n"
                           "git branch -q -u \"$(git rev-parse --abbrev-ref origin/HEAD)\"\n"
                           "git config branch.topic.description 'a topic'\n",
                       g.ws(), home);
    CAPTURE(r.out, r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(read_file(g.ws("a/.git/config")).find("[remote \"up\"]") != std::string::npos);
    const std::string clone_config = read_file(g.ws("c/.git/config"));
    CHECK(clone_config.find("[submodule \"sub\"]") != std::string::npos);
    CHECK(clone_config.find("[branch \"topic\"]") != std::string::npos);
    CHECK(std::filesystem::exists(g.ws("c/sub/s")));
    // A key that could run a program still needs git's reading: refused here, nothing changed.
    const FileState before = file_state(g.ws("c/.git/config"));
    for (const char* change : {"git config alias.st status", "git config core.pager less",
                               "git config remote.origin.uploadpack x"}) {
        CAPTURE(change);
        CHECK(git(change, g.ws("c"), home).exit_code != 0);
        CHECK(file_state(g.ws("c/.git/config")) == before);
    }
}

TEST_CASE("every place git runs code from stays guarded, and git behaves as before",
          "[integration][git][attack]") {
    MountedGuard g(builtin_policy());
    const std::string home = g.root() + "/home";
    std::filesystem::create_directories(home);
    make_source(g.root());
    const std::string marker = g.root() + "/planted-program-ran";
    write_file(g.root() + "/evil.sh", marker_script(marker), 0755);
    const std::string evil = g.root() + "/evil.sh";
    REQUIRE(git("git init -q r && cd r && echo a > a && git add a && git commit -qm a && "
                "git worktree add -q ../wt && mkdir -p nested && cd nested && git init -q inner "
                "&& cd " +
                    g.ws() + " && git clone -q --recurse-submodules " + g.root() + "/src cl",
                g.ws(), home)
                .exit_code == 0);
    const FileState config_before = file_state(g.ws("r/.git/config"));
    const FileState pointer_before = file_state(g.ws("wt/.git"));

    const char* const attacks[] = {
        "printf '#!/bin/sh\\ntouch MARKER\\n' > .git/hooks/pre-commit && chmod +x "
        ".git/hooks/pre-commit",
        "cp .git/hooks/pre-commit.sample .git/hooks/x && printf '#!/bin/sh\\ntouch MARKER\\n' > "
        ".git/hooks/x; mv .git/hooks/pre-commit.sample .git/hooks/pre-commit",
        "git config core.hooksPath EVILDIR",
        "git config core.fsmonitor EVIL",
        "git config alias.st '!EVIL'",
        "git config alias.s2 '-c core.fsmonitor=EVIL status'",
        "git config tar.tgz.command 'EVIL; gzip -cn'",
        "git config include.path ../evil.cfg",
        "printf '[filter \"x\"]\\n\\tclean = EVIL\\n[core]\\n\\teditor = EVIL\\n' >> .git/config",
        "echo '* filter=x diff=x' > .git/info/attributes",
        "echo 'gitdir: EVILDIR' > ../wt/.git",
        // a link aimed at an existing gitdir pointer gets the pointer's verdict (design §3)
        "ln -s ../wt/.git pointer-link",
        "printf '#!/bin/sh\\ntouch MARKER\\n' > nested/inner/.git/hooks/post-checkout",
        "printf '#!/bin/sh\\ntouch MARKER\\n' > ../cl/.git/modules/sub/hooks/pre-commit",
        "mv .git .git-away",
        // -T: rename onto the name itself (plain mv would move into the existing directory)
        "mkdir -p ../prep && printf '#!/bin/sh\\ntouch MARKER\\n' > ../prep/pre-commit && "
        "chmod +x ../prep/pre-commit && mv ../prep .git/hooks2 && mv -T .git/hooks .git/hooks-old; "
        "mv -T .git/hooks2 .git/hooks",
        "ln -s EVILDIR .git/hooks-link; mv -T .git/hooks-link .git/hooks",
        "mkdir ../gitx && mv -T ../gitx .git",
    };
    std::filesystem::create_directories(g.root() + "/evildir");
    write_file(g.root() + "/evildir/pre-commit", marker_script(marker), 0755);
    for (std::string attack : attacks) {
        for (const auto& [token, value] : {std::pair<std::string, std::string>{"MARKER", marker},
                                           {"EVILDIR", g.root() + "/evildir"},
                                           {"EVIL", evil}}) {
            for (auto at = attack.find(token); at != std::string::npos; at = attack.find(token)) {
                attack.replace(at, token.size(), value);
            }
        }
        CAPTURE(attack);
        const auto r = git(attack, g.ws("r"), home);
        CHECK(r.exit_code != 0);
    }
    // git still works, and none of the planted programs runs
    const auto after =
        git("set -e\necho b > b && git add b && git commit -qm b && git status "
            "--porcelain && (git st 2>/dev/null || true) && (git s2 >/dev/null 2>&1 || true) && "
            "(git archive --format=tgz HEAD >/dev/null 2>&1 || true) && cd ../wt && "
            "git status --porcelain "
            "&& cd ../r/nested/inner && git checkout -q -b x && cd ../../../cl && "
            "cd sub && echo y > y && git add y && git commit -qm y",
            g.ws("r"), home);
    CAPTURE(after.out, after.err);
    CHECK(after.exit_code == 0);
    CHECK_FALSE(std::filesystem::exists(marker));
    CHECK(g.unmount() == 0);
    const FileState config_after = file_state(g.ws("r/.git/config"));
    CHECK(config_after.bytes.find("hooksPath") == std::string::npos);
    CHECK(config_after.bytes.find("fsmonitor") == std::string::npos);
    CHECK(config_after.bytes.find("filter") == std::string::npos);
    CHECK(config_after.bytes.find("include") == std::string::npos);
    const FileState pointer_after = file_state(g.ws("wt/.git"));
    CHECK(pointer_after.bytes == pointer_before.bytes);
    CHECK(pointer_after.mode == pointer_before.mode);
    CHECK_FALSE(std::filesystem::exists(g.ws("r/.git/hooks/pre-commit")));
    CHECK_FALSE(std::filesystem::exists(g.ws("r/.git/info/attributes")));
    CHECK_FALSE(std::filesystem::exists(g.ws("r/nested/inner/.git/hooks/post-checkout")));
    CHECK_FALSE(std::filesystem::exists(g.ws("cl/.git/modules/sub/hooks/pre-commit")));
    CHECK(std::filesystem::is_directory(g.ws("r/.git/hooks")));
    (void)config_before;
}

TEST_CASE("a submodule whose name holds a slash keeps its git directory where git looks for it",
          "[integration][git][attack]") {
    // `git submodule add URL libs/x` names the module "libs/x": its git directory is
    // .git/modules/libs/x. Moving it out, planting a hook and moving it back ran the hook at the
    // submodule's next commit.
    MountedGuard g(builtin_policy());
    const std::string home = g.root() + "/home";
    make_source(g.root(), "src2", "libs/x");
    const std::string marker = g.root() + "/planted-program-ran";
    git("git clone -q --recurse-submodules " + g.root() + "/src2 cl", g.ws(), home);
    REQUIRE(std::filesystem::is_directory(g.ws("cl/.git/modules/libs/x/hooks")));
    std::filesystem::create_directories(g.ws("empty"));
    const std::string plant =
        "mkdir -p ../prep/hooks && printf '#!/bin/sh\\ntouch " + marker +
        "\\n' > ../prep/hooks/pre-commit && chmod +x ../prep/hooks/pre-commit";
    REQUIRE(git(plant, g.ws("cl"), home).exit_code == 0);
    for (const std::string& attack : {
             std::string("mv .git/modules/libs/x ../stash"),
             std::string("mv .git/modules/libs ../stash"),
             std::string("mv ../prep .git/modules/libs/y"),
             std::string("mv -T ../prep .git/modules/libs/x"),
         }) {
        CAPTURE(attack);
        const auto r = git(attack, g.ws("cl"), home);
        CHECK(r.exit_code != 0);
    }
    for (const auto& [a, b] : {std::pair{"cl/.git/modules/libs/x", "empty"},
                               std::pair{"empty", "cl/.git/modules/libs/x"}}) {
        CAPTURE(a, b);
        CHECK(errno_of(::renameat2(AT_FDCWD, g.ws(a).c_str(), AT_FDCWD, g.ws(b).c_str(),
                                   RENAME_EXCHANGE)) == EACCES);
    }
    // the submodule's git still works, and no planted hook runs
    const auto after =
        git("set -e\ncd libs/x && echo y > y && git add y && git commit -qm y", g.ws("cl"), home);
    CAPTURE(after.out, after.err);
    CHECK(after.exit_code == 0);
    CHECK_FALSE(std::filesystem::exists(marker));
    CHECK(std::filesystem::is_directory(g.ws("cl/.git/modules/libs/x/hooks")));
}

TEST_CASE("a config judged by its content is what lands: no writer can change it on the way",
          "[integration][git][attack]") {
    // A review (2026-12-07): a rename of config.lock over .git/config was judged on the lock's
    // content, and a process that opened config.lock for writing between that check and the
    // rename appended `[core] hooksPath` through its descriptor (won on its second attempt).
    // Here the rename and such an open race 20 times, the open timed into the later part of the
    // rename (fac279c's binary lost 11 of 20 such races in one run on the development machine); a
    // win, or a dangerous key in the config afterwards, fails the test.
    MountedGuard g(builtin_policy());
    const std::string home = g.root() + "/home";
    std::filesystem::create_directories(home);
    REQUIRE(git("git init -q r", g.ws(), home).exit_code == 0);
    write_file(g.root() + "/race.py", R"(import os, sys, time
os.chdir(sys.argv[1])
evil = "\n[core]\n\thooksPath = /nonexistent/evil\n"
def prepare():
    cfg = open('.git/config').read()
    with open('.git/config.lock', 'w') as f:
        f.write(cfg + "# a comment makes the judge start git\n")
# How long a judged rename takes here, unraced: the opens below land in its later part, after
# the check for writers, while git reads the content.
took = []
for _ in range(5):
    prepare()
    t = time.monotonic()
    os.rename('.git/config.lock', '.git/config')
    took.append(time.monotonic() - t)
t_r = sorted(took)[2]
wins = 0
for attempt in range(20):
    prepare()
    pid = os.fork()
    if pid == 0:
        try:
            os.rename('.git/config.lock', '.git/config')
            os._exit(0)
        except OSError:
            os._exit(1)
    time.sleep(t_r * (0.3 + 0.65 * (attempt % 10) / 10))
    try:
        fd = os.open('.git/config.lock', os.O_WRONLY | os.O_APPEND)
    except OSError:
        fd = -1
    _, st = os.waitpid(pid, 0)
    if fd >= 0:
        if os.waitstatus_to_exitcode(st) == 0 and os.fstat(fd).st_ino == os.stat('.git/config').st_ino:
            os.write(fd, evil.encode())
            wins += 1
        os.close(fd)
    if os.path.exists('.git/config.lock'):
        os.unlink('.git/config.lock')
print(wins)
)");
    const auto r = git("python3 " + g.root() + "/race.py .", g.ws("r"), home);
    CAPTURE(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(r.out == "0\n");
    CHECK(read_file(g.ws("r/.git/config")).find("hooksPath") == std::string::npos);
    // the judged config still lands by rename, and names of the daemon's own are not for use
    CHECK(git("git config user.name racer && git config user.name", g.ws("r"), home).out ==
          "racer\n");
    CHECK(git("touch .git/.guardfs-config-0123", g.ws("r"), home).exit_code != 0);
    CHECK_FALSE(std::filesystem::exists(g.ws("r/.git/config.lock")));
}

TEST_CASE("an open judged on a config.lock's names before a rename landed it as the config is "
          "refused after",
          "[integration][git][attack]") {
    // A review (2026-12-07): CI lost one race of the test above. The seal keeps writers out
    // until the judged rename is done, but an open judged before that, on config.lock's names,
    // could run after it: with its question held at the approver, the open of config.lock was
    // let through once the rename had landed the file as .git/config, and wrote `[core]
    // hooksPath` (fails so on 835a079's binary). Here config.lock was also `held` (an ask name,
    // kept after that link is gone) when the mount saw it; the open waits at the approver while
    // the rename lands. (A truncate or a link of config.lock holds the file's lock in the
    // kernel, which the rename waits for: they land before it is judged.)
    MountSpec spec;
    spec.policy_yaml = "recommended: true\nask: [\"held\"]\n";
    spec.separate_mountpoint = true;
    spec.extra_args = {"--approver", "python3 " + std::string(GUARDFS_SOURCE_DIR) +
                                         "/tests/support/approvers/double.py"};
    const TempDir questions; // the approver's log: one line per question it received
    const std::string log = questions / "log";
    spec.env = {{"APPROVER_MODE", "allow"}, {"APPROVER_DELAY", "1"}, {"APPROVER_LOG", log}};
    MountedGuard g(spec);
    const std::string home = g.root() + "/home";
    std::filesystem::create_directories(home);
    REQUIRE(git("git init -q r", g.ws(), home).exit_code == 0); // outside the mount
    write_file(g.root() + "/landed.py", R"(import os, sys, time
under, through, log = sys.argv[1] + "/r/.git/", sys.argv[2] + "/r/.git/", sys.argv[3]
def questions():
    try:
        return sum(1 for line in open(log) if line.strip())
    except FileNotFoundError:
        return 0
with open(under + "config.lock", "w") as f:
    f.write(open(under + "config").read() + "# a comment makes the judge start git\n")
os.link(under + "config.lock", under + "../held")
os.stat(through + "../held")  # the mount sees both names
os.stat(through + "config.lock")
os.unlink(under + "../held")  # one name again, as a judged rename needs
pid = os.fork()
if pid == 0:
    try:
        fd = os.open(through + "config.lock", os.O_WRONLY | os.O_APPEND)
        os.write(fd, b"\n[core]\n\thooksPath = /nonexistent/evil\n")
        os._exit(0)
    except OSError as e:
        os._exit(e.errno)
until = time.monotonic() + 10
while questions() == 0 and time.monotonic() < until:
    time.sleep(0.01)  # the open's question is at the approver
os.rename(through + "config.lock", through + "config")
print("renamed, asked", questions())
_, st = os.waitpid(pid, 0)
print("open:", os.waitstatus_to_exitcode(st))
)");
    const auto r = git("python3 " + g.root() + "/landed.py " + g.ws() + " " + g.mnt() + " " + log,
                       g.ws(), home);
    CAPTURE(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(r.out == "renamed, asked 1\nopen: " + std::to_string(EACCES) + "\n");
    const std::string config = read_file(g.ws("r/.git/config"));
    CHECK(config.find("a comment makes the judge start git") != std::string::npos);
    CHECK(config.find("hooksPath") == std::string::npos);
    // opened again, the config is judged by its own row (the git tier denies, nothing is asked)
    CHECK(write_text(g.mnt("r/.git/config"), "[core]\n\thooksPath = x\n", O_APPEND) == EACCES);
}

TEST_CASE("rm -rf of a repository works, and a removed config or hook cannot come back harmful",
          "[integration][git][unlink]") {
    MountedGuard g(builtin_policy());
    const std::string home = g.root() + "/home";
    std::filesystem::create_directories(home);
    make_source(g.root());
    const std::string marker = g.root() + "/planted-program-ran";
    write_file(g.root() + "/evil.sh", marker_script(marker), 0755);
    REQUIRE(git("git init -q r && cd r && echo a > a && git add a && git commit -qm a && "
                "git clone -q --recurse-submodules " +
                    g.root() + "/src ../cl",
                g.ws(), home)
                .exit_code == 0);

    // removing config and a hook is allowed; putting a harmful one back is not
    CHECK(git("rm .git/config", g.ws("r"), home).exit_code == 0);
    CHECK(git("printf '[core]\\n\\tfsmonitor = " + g.root() + "/evil.sh\\n' > .git/config",
              g.ws("r"), home)
              .exit_code != 0);
    CHECK(git("git config core.fsmonitor " + g.root() + "/evil.sh", g.ws("r"), home).exit_code !=
          0);
    CHECK(
        git("printf '#!/bin/sh\\ntouch " + marker + "\\n' > .git/hooks/pre-commit", g.ws("r"), home)
            .exit_code != 0);
    // a harmless config may be written again (judged by content) and git keeps working
    const auto again = git("git config user.name someone && echo b > b && git add b && "
                           "git commit -qm b && git status --porcelain",
                           g.ws("r"), home);
    CAPTURE(again.out, again.err);
    CHECK(again.exit_code == 0);
    CHECK_FALSE(std::filesystem::exists(marker));
    CHECK(read_file(g.ws("r/.git/config")).find("fsmonitor") == std::string::npos);

    const auto rm = run({"rm", "-rf", g.ws("r")});
    CAPTURE(rm.err);
    CHECK(rm.exit_code == 0);
    CHECK_FALSE(std::filesystem::exists(g.ws("r")));

    // a submodule's .git pointer file is never removed (a new one may be created, so removing
    // the old one first would be a rewrite): rm -rf of such a clone stops there
    // (docs/git-tier.md)
    const auto rm_clone = run({"rm", "-rf", g.ws("cl")});
    CHECK(rm_clone.exit_code != 0);
    CHECK(std::filesystem::exists(g.ws("cl/sub/.git")));
    CHECK_FALSE(std::filesystem::exists(g.ws("cl/.git/config")));
}

TEST_CASE("a commondir or a gitdir pointer cannot aim an existing working tree at other hooks",
          "[integration][git][pointer]") {
    // design §4a: commondir and a `.git` that is a regular file stay guarded. An agent copies a
    // git directory, plants a hook in the copy (no git directory by name, so not guarded), and
    // aims the user's repository at it: through a new commondir, or by replacing .git with a
    // pointer. The user's next commit would run the hook.
    MountedGuard g(builtin_policy());
    const std::string home = g.root() + "/home";
    std::filesystem::create_directories(home);
    const std::string marker = g.root() + "/planted-program-ran";
    REQUIRE(git("for r in r1 r2; do git init -q $r && (cd $r && echo a > a && git add a && "
                "git commit -qm a) || exit 1; done && cp -r r1/.git evil && printf "
                "'#!/bin/sh\\ntouch " +
                    marker + "\\n' > evil/hooks/pre-commit && chmod +x evil/hooks/pre-commit",
                g.ws(), home)
                .exit_code == 0);
    // a commondir in the repository's own git directory (git writes one only for a worktree)
    CHECK(git("echo ../../evil > .git/commondir", g.ws("r1"), home).exit_code != 0);
    CHECK(git("echo ../../evil > .git/cd.new && mv .git/cd.new .git/commondir", g.ws("r1"), home)
              .exit_code != 0);
    CHECK_FALSE(std::filesystem::exists(g.ws("r1/.git/commondir")));
    const auto commit = git("git commit -qm b --allow-empty", g.ws("r1"), home);
    CAPTURE(commit.err);
    CHECK(commit.exit_code == 0);
    // .git removed (allowed: rm -rf of a repository works) and a pointer put in its place
    CHECK(git("rm -rf .git", g.ws("r2"), home).exit_code == 0);
    CHECK(git("echo 'gitdir: ../evil' > .git", g.ws("r2"), home).exit_code != 0);
    CHECK(git("echo 'gitdir: ../evil' > ../ptr && ln ../ptr .git", g.ws("r2"), home).exit_code !=
          0);
    CHECK(git("python3 -c \"import os; os.mknod('.git')\"", g.ws("r2"), home).exit_code != 0);
    CHECK(git("mv ../ptr .git", g.ws("r2"), home).exit_code != 0);
    CHECK(git("ln -s ../evil sl && mv sl .git", g.ws("r2"), home).exit_code != 0);
    CHECK_FALSE(std::filesystem::exists(g.ws("r2/.git")));
    CHECK_FALSE(std::filesystem::is_symlink(g.ws("r2/.git")));
    // hooks/ removed (allowed: nothing left to run) and a symlink to planted hooks moved in
    CHECK(git("rm -rf .git/hooks && ln -s ../../evil/hooks h && mv h .git/hooks", g.ws("r1"), home)
              .exit_code != 0);
    CHECK_FALSE(std::filesystem::is_symlink(g.ws("r1/.git/hooks")));
    const auto hooks_link =
        git("ln -s ../../evil/hooks h2 && ln -P h2 .git/hooks", g.ws("r1"), home);
    CHECK(hooks_link.err.find("Permission denied") != std::string::npos);
    CHECK_FALSE(std::filesystem::is_symlink(g.ws("r1/.git/hooks")));
    CHECK(git("git commit -qm c --allow-empty", g.ws("r1"), home).exit_code == 0);
    // a hard link of a symlink, named .git, even in an empty directory
    const auto linked = git("mkdir empty && ln -s evil sl2 && ln -P sl2 empty/.git", g.ws(), home);
    CHECK(linked.err.find("Permission denied") != std::string::npos);
    CHECK_FALSE(std::filesystem::is_symlink(g.ws("empty/.git")));
    CHECK(git("git -C " + g.ws("r2") + " commit -qm b --allow-empty", g.ws(), home).exit_code !=
          0); // no repository there any more
    CHECK_FALSE(std::filesystem::exists(marker));
    // where git writes a new pointer, into an empty directory, one may still be created
    CHECK(git("mkdir fresh && echo 'gitdir: ../evil' > fresh/.git", g.ws(), home).exit_code == 0);
}

TEST_CASE("a trusted hook is let in by a policy allow row where its row is ask",
          "[integration][git]") {
    // The git tier's hook rows are deny: nothing lifts them (design §2). A trusted hook is kept
    // where an ask row guards it (.githooks, with core.hooksPath pointing there, set before the
    // mount or through an approver), and let in by an allow row for exactly that file.
    MountSpec spec;
    spec.policy_yaml = "recommended: true\nallow: [\".githooks/pre-commit\"]\n";
    spec.setup = [](const std::string& ws) {
        std::filesystem::create_directories(ws + "/.githooks");
    };
    MountedGuard g(spec);
    CHECK(sh("printf '#!/bin/sh\\n' > " + g.ws(".githooks/pre-commit")).exit_code == 0);
    CHECK(sh("printf '#!/bin/sh\\n' > " + g.ws(".githooks/pre-push")).exit_code != 0);
    CHECK(sh("printf '#!/bin/sh\\n' > " + g.ws(".GITHOOKS/pre-commit")).exit_code != 0);
}
