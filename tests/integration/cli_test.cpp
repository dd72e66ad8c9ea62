// `guardfs check` and `guardfs policy` driven as a user drives them (design §10, §11): output
// lines beginning with the verdict word, JSON lines, exit codes 0 / 2, errors with
// file:line:column. No mount is needed for these.
#include "support/process.hpp"
#include "support/temp_dir.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

using guardfs::test::ProcessResult;
using guardfs::test::TempDir;

namespace {

ProcessResult guardfs_cmd(std::vector<std::string> args, const std::string& cwd = {},
                          std::map<std::string, std::string> env = {}) {
    args.insert(args.begin(), GUARDFS_BIN);
    guardfs::test::RunOptions o;
    o.cwd = cwd;
    o.env = std::move(env);
    o.env.emplace("AGENT_DATA_DIR", "");
    return guardfs::test::run(args, o);
}

std::vector<std::string> lines(const std::string& s) {
    std::vector<std::string> out;
    std::istringstream in(s);
    for (std::string l; std::getline(in, l);) {
        out.push_back(l);
    }
    return out;
}

std::string first_word(const std::string& line) {
    return line.substr(0, line.find(' '));
}

// `guardfs mount -f OPTIONS t/ws`, expected to refuse before mounting: its exit code. Should it
// mount after all, it is stopped after a few seconds and t/ws unmounted, so that a failing test
// leaves no mount behind.
int refused_to_mount(const TempDir& t, std::vector<std::string> options) {
    std::filesystem::create_directories(t / "ws");
    std::vector<std::string> args{GUARDFS_BIN, "mount", "-f"};
    args.insert(args.end(), options.begin(), options.end());
    args.push_back(t / "ws");
    guardfs::test::RunOptions o;
    o.env.emplace("AGENT_DATA_DIR", "");
    o.timeout = std::chrono::seconds(5);
    const auto r = guardfs::test::run(args, o);
    guardfs::test::run({"fusermount3", "-u", "-z", t / "ws"});
    return r.exit_code;
}

} // namespace

TEST_CASE("check prints one line per path, beginning with the verdict word", "[cli][check]") {
    TempDir t;
    const auto r = guardfs_cmd({"check", t / "home/.ssh/id_rsa", t / "w/src/main.c",
                                t / "w/.claude/settings.json", t / "w/.claude/notes.md"});
    REQUIRE(r.exit_code == 0);
    const auto l = lines(r.out);
    REQUIRE(l.size() == 4);
    CHECK(first_word(l[0]) == "deny");
    CHECK(l[0].find(t / "home/.ssh/id_rsa") != std::string::npos);
    CHECK(l[0].find(".ssh") != std::string::npos);
    CHECK(l[0].find("recommended") != std::string::npos);
    CHECK(first_word(l[1]) == "allow");
    CHECK(first_word(l[2]) == "deny");
    CHECK(l[2].find("agent-config") != std::string::npos);
    CHECK(first_word(l[3]) == "ask");
}

TEST_CASE("check --json prints one JSON object per path with the deciding rule",
          "[cli][check][json]") {
    TempDir t;
    const auto r = guardfs_cmd({"check", "--json", t / "w/.git/hooks/pre-commit", t / "w/a.c"});
    REQUIRE(r.exit_code == 0);
    const auto l = lines(r.out);
    REQUIRE(l.size() == 2);
    const auto j = nlohmann::json::parse(l[0]);
    CHECK(j["verdict"] == "deny");
    CHECK(j["path"] == t / "w/.git/hooks/pre-commit");
    CHECK(j["tier"] == "git");
    CHECK(j["view"] == "spelled");
    CHECK_FALSE(j["rule"].is_null());
    const auto k = nlohmann::json::parse(l[1]);
    CHECK(k["verdict"] == "allow");
    CHECK(k["rule"].is_null());
}

TEST_CASE("a name that is not UTF-8 still gives one parseable JSON line", "[cli][json]") {
    TempDir t;
    const std::string bad = t / "w/.env\xFF";
    const auto r = guardfs_cmd({"check", "--json", bad});
    REQUIRE(r.exit_code == 0);
    const auto j = nlohmann::json::parse(lines(r.out).at(0));
    CHECK(j.contains("path_hex"));
}

TEST_CASE("a policy file decides; a path no rule matches is allowed", "[cli][check][policy]") {
    TempDir t;
    const std::string p = t.write("p.yaml", "deny: [\".env\", \"*.pem\", credentials]\n"
                                            "ask: [.github/workflows]\n"
                                            "allow: [\"docs/*.md\"]\n");
    const auto r =
        guardfs_cmd({"check", "--policy", p, t / "w/.env", t / "w/k/server.pem",
                     t / "w/credentials/token", t / "w/credentials-backup",
                     t / "w/.github/workflows/ci.yml", t / "w/.ENV", t / "w/.ssh/id_rsa"});
    REQUIRE(r.exit_code == 0);
    const auto l = lines(r.out);
    REQUIRE(l.size() == 7);
    CHECK(first_word(l[0]) == "deny");
    CHECK(first_word(l[1]) == "deny");
    CHECK(first_word(l[2]) == "deny");
    CHECK(first_word(l[3]) == "allow"); // credentials-backup: segment-wise
    CHECK(first_word(l[4]) == "ask");
    CHECK(first_word(l[5]) == "deny");  // .ENV: folded
    CHECK(first_word(l[6]) == "allow"); // the recommended set is opt-in in a file
}

TEST_CASE("policy errors exit 2 and name file, line and column", "[cli][errors]") {
    TempDir t;
    const std::string p = t.write("bad.yaml", "deny:\n  - \"~/.ssh\"\n  - \"\"\nbogus: 1\n");
    const auto r = guardfs_cmd({"check", "--policy", p, "/x"});
    CHECK(r.exit_code == 2);
    CHECK(r.err.find(p + ":2:5:") != std::string::npos);
    CHECK(r.err.find(p + ":3:5:") != std::string::npos);
    CHECK(r.err.find(p + ":4:1:") != std::string::npos);
    CHECK(r.out.empty());
    const auto missing = guardfs_cmd({"check", "--policy", t / "nope.yaml", "/x"});
    CHECK(missing.exit_code == 2);
    // A directory is not an empty policy: check refuses it, and mount does not start.
    t.mkdir("policy.d");
    const auto dir = guardfs_cmd({"check", "--policy", t / "policy.d", t / "w/.env"});
    CHECK(dir.exit_code == 2);
    CHECK(dir.err.find("Is a directory") != std::string::npos);
    CHECK(dir.out.empty());
    CHECK(refused_to_mount(t, {"--policy", t / "policy.d"}) == 2);
    // What follows a second document marker is not dropped.
    const std::string two = t.write("two.yaml", "version: 1\n---\ndeny: [\".env\"]\n");
    const auto r2 = guardfs_cmd({"check", "--policy", two, "/x"});
    CHECK(r2.exit_code == 2);
    CHECK(r2.err.find(two + ":2:1: a second YAML document") != std::string::npos);
}

TEST_CASE("usage errors exit 2", "[cli][errors]") {
    CHECK(guardfs_cmd({}).exit_code == 2);
    CHECK(guardfs_cmd({"frobnicate"}).exit_code == 2);
    CHECK(guardfs_cmd({"check"}).exit_code == 2);
    CHECK(guardfs_cmd({"check", "--op", "teleport", "/x"}).exit_code == 2);
    CHECK(guardfs_cmd({"check", "--op", "rename", "/only-one"}).exit_code == 2);
    CHECK(guardfs_cmd({"check", "--no-such-flag", "/x"}).exit_code == 2);
    CHECK(guardfs_cmd({"policy"}).exit_code == 2);
    CHECK(guardfs_cmd({"--help"}).exit_code == 0);
    // An empty value (an unset shell variable) is not the default: `--policy ""` would
    // silently mean the built-in policy, and `check ""` the current directory.
    CHECK(guardfs_cmd({"check", "--policy", "", "/x"}).exit_code == 2);
    CHECK(guardfs_cmd({"check", ""}).exit_code == 2);
    CHECK(guardfs_cmd({"policy", "--check", ""}).exit_code == 2);
    TempDir t;
    CHECK(refused_to_mount(t, {"--policy", ""}) == 2);
    CHECK(refused_to_mount(t, {"--audit-log", ""}) == 2);
    t.mkdir("ws");
    CHECK(guardfs_cmd({"run", "--policy", "", t / "ws", "--", "true"}).exit_code == 2);
    CHECK(guardfs_cmd({"mount", ""}).exit_code == 2);
    {
        // MOUNTPOINT "" is not WORKSPACE (it mounted over WORKSPACE).
        guardfs::test::RunOptions o;
        o.timeout = std::chrono::seconds(5);
        const auto r = guardfs::test::run({GUARDFS_BIN, "mount", "-f", t / "ws", ""}, o);
        guardfs::test::run({"fusermount3", "-u", "-z", t / "ws"});
        CHECK(r.exit_code == 2);
    }
    CHECK(guardfs_cmd({"reload", ""}).exit_code == 2);
    CHECK(guardfs_cmd({"approve", "--socket", ""}).exit_code == 2);
}

TEST_CASE("output that cannot be written is a runtime failure, exit 1", "[cli][errors]") {
    // `guardfs policy --recommended > p.yaml` on a full disk must not report success.
    const auto policy = guardfs::test::sh("'" GUARDFS_BIN "' policy --recommended > /dev/full");
    CHECK(policy.exit_code == 1);
    CHECK(policy.err.find("cannot write standard output") != std::string::npos);
    CHECK(guardfs::test::sh("'" GUARDFS_BIN "' check /w/.ssh > /dev/full").exit_code == 1);
    CHECK(guardfs::test::sh("'" GUARDFS_BIN "' check --json /w/.ssh > /dev/full").exit_code == 1);
    CHECK(guardfs::test::sh("'" GUARDFS_BIN "' policy --recommended > /dev/null").exit_code == 0);
}

TEST_CASE("a path holding a newline still gives one line, beginning with its verdict",
          "[cli][check]") {
    const auto r = guardfs_cmd({"check", "/w/a\ndeny /w/b", "/w/.ssh/x"});
    REQUIRE(r.exit_code == 0);
    const auto l = lines(r.out);
    REQUIRE(l.size() == 2);
    CHECK(l[0].rfind("allow /w/a\\x0adeny /w/b ", 0) == 0);
    CHECK(first_word(l[1]) == "deny");
}

TEST_CASE("other tools' syntax warns on stderr and still loads", "[cli][warnings]") {
    TempDir t;
    const std::string p = t.write("p.yaml", "deny: [\"**/.env\"]\n");
    const auto r = guardfs_cmd({"check", "--policy", p, t / "w/.env"});
    CHECK(r.exit_code == 0);
    CHECK(r.err.find(p + ":1:8: warning:") != std::string::npos);
    CHECK(first_word(lines(r.out).at(0)) == "deny");
}

TEST_CASE("the --data-root flag exempts the agent's data directory from its ancestors' rows",
          "[cli][dataroot]") {
    TempDir t;
    const std::string root = t.mkdir("home/.sema/engine-data");
    const auto r = guardfs_cmd({"check", "--data-root", root, root + "/mem/today.md",
                                root + "/x/.ssh/id_rsa", t / "home/.sema/other.md"});
    CAPTURE(r.err);
    REQUIRE(r.exit_code == 0);
    const auto l = lines(r.out);
    REQUIRE(l.size() == 3);
    CHECK(first_word(l[0]) == "allow");
    CHECK(first_word(l[1]) == "deny");
    CHECK(first_word(l[2]) == "ask");
    // the same from $AGENT_DATA_DIR
    guardfs::test::RunOptions with_env;
    with_env.env = {{"AGENT_DATA_DIR", root}};
    auto env = guardfs::test::run({GUARDFS_BIN, "check", root + "/mem/today.md"}, with_env);
    CHECK(first_word(lines(env.out).at(0)) == "allow");
}

TEST_CASE("a data root that straddles a deny row is refused with exit 2", "[cli][dataroot]") {
    TempDir t;
    const std::string root = t.mkdir("home/.claude");
    const auto r = guardfs_cmd({"check", "--data-root", root, t / "x"});
    CHECK(r.exit_code == 2);
    CHECK(r.err.find(".claude/settings.json") != std::string::npos);
}

TEST_CASE("a data root that reduces to nothing is taken and exempts nothing", "[cli][dataroot]") {
    TempDir t;
    const std::string root = t.mkdir("home/.sema/engine-data");
    const std::string target = root + "/mem/today.md";
    for (const std::string value : {"\"\"", "[\"\"]", "/", "[\"\", /]"}) {
        CAPTURE(value);
        const std::string policy =
            t.write("p.yaml", "recommended: false\ndeny: [.sema]\ndata_root: " + value + "\n");
        // Found first, the policy's value keeps $AGENT_DATA_DIR from applying.
        const auto r =
            guardfs_cmd({"check", "--policy", policy, target}, {}, {{"AGENT_DATA_DIR", root}});
        CAPTURE(r.err);
        REQUIRE(r.exit_code == 0);
        CHECK(first_word(lines(r.out).at(0)) == "deny");
    }
    const auto flag = guardfs_cmd({"check", "--data-root", "", "--data-root", "/", target});
    CHECK(flag.exit_code == 0);
    CHECK(first_word(lines(flag.out).at(0)) == "ask"); // .sema: the agent-configuration tier
}

TEST_CASE("check judges both ends of rename, link and symlink", "[cli][check][views]") {
    TempDir t;
    t.write("w/.env", "SECRET=1\n");
    t.write("w/notes", "n\n");
    const auto r = guardfs_cmd({"check", "--op", "rename", t / "w/notes", t / "w/.env"});
    CHECK(first_word(lines(r.out).at(0)) == "ask");
    const auto l = guardfs_cmd({"check", "--op", "link", t / "w/.env", t / "w/other"});
    CHECK(first_word(lines(l.out).at(0)) == "ask");
    const auto s = guardfs_cmd({"check", "--op", "symlink", "../.env", t / "w/sub/notes"});
    const auto sl = lines(s.out).at(0);
    CHECK(first_word(sl) == "ask");
    CHECK(sl.find("link-target") != std::string::npos);
    const auto o =
        guardfs_cmd({"check", "--op", "symlink", "/usr/bin/python3", t / "w/venv/bin/python"});
    CHECK(first_word(lines(o.out).at(0)) == "allow");
}

TEST_CASE("check judges a moved or linked symlink as the mount does: a new symlink where it lands",
          "[cli][check][views]") {
    // A review (2026-12-07): check took a symlink for a plain file when it was renamed or
    // linked, so `mv h .git/hooks` (h -> planted hooks) was allowed by check and refused by the
    // mount, and a symlink's target was not judged from where it lands.
    TempDir t;
    t.mkdir("w/repo/.git");
    t.mkdir("w/repo2");
    t.mkdir("w/planted/hooks");
    t.mkdir("w/d");
    t.mkdir("w/r/plain");
    std::filesystem::create_symlink("../planted/hooks", t / "w/d/h");
    std::filesystem::create_symlink("planted", t / "w/d/c");
    std::filesystem::create_symlink("../.ssh/k", t / "w/r/plain/rl");
    t.write("w/r/plain/f", "x\n");
    for (const auto& [op, from, to] :
         std::vector<std::tuple<std::string, std::string, std::string>>{
             {"rename", "w/d/h", "w/repo/.git/hooks"},
             {"link", "w/d/h", "w/repo/.git/hooks"},
             {"link", "w/d/c", "w/repo2/.git"},
             {"rename", "w/r/plain/rl", "w/r/rl2"}, // lands aimed at w/r/.ssh/k
         }) {
        CAPTURE(op, from, to);
        const auto r = guardfs_cmd({"check", "--op", op, t / from, t / to});
        REQUIRE(r.exit_code == 0);
        CHECK(first_word(lines(r.out).at(0)) == "deny");
    }
    // a plain file moves as before
    const auto f = guardfs_cmd({"check", "--op", "rename", t / "w/r/plain/f", t / "w/r/f2"});
    CHECK(first_word(lines(f.out).at(0)) == "allow");
}

TEST_CASE("check judges a rename onto a git config by the content that lands, as the mount does",
          "[cli][check][git]") {
    // A review (2026-12-07): check refused every config.lock -> .git/config rename, while the
    // mount lets one through when it adds or changes no key through which git runs a program.
    TempDir t;
    t.write("w/r/.git/config", "[core]\n\tbare = false\n");
    t.write("w/r/.git/config.lock", "[core]\n\tbare = false\n[user]\n\temail = a@b.c\n");
    const auto ok =
        guardfs_cmd({"check", "--op", "rename", t / "w/r/.git/config.lock", t / "w/r/.git/config"});
    CHECK(first_word(lines(ok.out).at(0)) == "allow");
    t.write("w/r/.git/config.lock", "[core]\n\tbare = false\n\thooksPath = /tmp/x\n");
    const auto bad =
        guardfs_cmd({"check", "--op", "rename", t / "w/r/.git/config.lock", t / "w/r/.git/config"});
    const auto line = lines(bad.out).at(0);
    CHECK(first_word(line) == "deny");
    CHECK(line.find("core.hookspath") != std::string::npos);
}

TEST_CASE("a write through a symlink is judged where it lands", "[cli][check][views]") {
    TempDir t;
    t.write("w/.env", "SECRET=1\n");
    std::filesystem::create_symlink(t / "w/.env", t / "w/innocent");
    const auto r = guardfs_cmd({"check", "--json", t / "w/innocent"});
    const auto j = nlohmann::json::parse(lines(r.out).at(0));
    CHECK(j["verdict"] == "ask");
    CHECK(j["view"] == "canonical");
    // unlinking the link itself touches only the link
    const auto u = guardfs_cmd({"check", "--op", "unlink", t / "w/innocent"});
    CHECK(first_word(lines(u.out).at(0)) == "allow");
}

TEST_CASE("a target that cannot be resolved is denied (seed 003: loops)", "[cli][check]") {
    TempDir t;
    std::filesystem::create_symlink(t / "b", t / "a");
    std::filesystem::create_symlink(t / "a", t / "b");
    const auto r = guardfs_cmd({"check", t / "a/file"});
    REQUIRE(r.exit_code == 0);
    CHECK(first_word(lines(r.out).at(0)) == "deny");
}

TEST_CASE("the read face answers --op read", "[cli][check][read-face]") {
    TempDir t;
    const std::string p = t.write("p.yaml", "read: {deny: [secrets]}\n");
    const auto r = guardfs_cmd(
        {"check", "--policy", p, "--op", "read", t / "w/secrets/a", t / "w/secrets-old/a"});
    const auto l = lines(r.out);
    REQUIRE(l.size() == 2);
    CHECK(first_word(l[0]) == "deny");
    CHECK(first_word(l[1]) == "allow");
}

TEST_CASE("policy --recommended prints YAML that loads back to the same verdicts",
          "[cli][policy]") {
    TempDir t;
    const auto printed = guardfs_cmd({"policy", "--recommended"});
    REQUIRE(printed.exit_code == 0);
    CHECK(printed.out.find("# ") != std::string::npos);
    const std::string p = t.write("rec.yaml", printed.out);
    CHECK(guardfs_cmd({"policy", "--check", p}).exit_code == 0);
    const std::vector<std::string> paths{
        t / "h/.ssh/authorized_keys",  t / "h/.bashrc",      t / "w/.env",
        t / "w/.claude/settings.json", t / "w/.claude/x.md", t / "w/.git/hooks/pre-push",
        t / "w/.git/config",           t / "w/src/a.c",      t / "w/.vscode/tasks.json",
        t / "w/.aws/credentials",      t / "w/.npmrc",       t / "w/README.md"};
    std::vector<std::string> builtin_args{"check"};
    std::vector<std::string> file_args{"check", "--policy", p};
    for (const auto& x : paths) {
        builtin_args.push_back(x);
        file_args.push_back(x);
    }
    const auto a = lines(guardfs_cmd(builtin_args).out);
    const auto b = lines(guardfs_cmd(file_args).out);
    REQUIRE(a.size() == paths.size());
    REQUIRE(b.size() == paths.size());
    for (std::size_t i = 0; i < paths.size(); ++i) {
        CAPTURE(paths[i]);
        CHECK(first_word(a[i]) == first_word(b[i]));
    }
}

TEST_CASE("agent_config_dirs with a bad value is a start-up error", "[cli][agent-config]") {
    TempDir t;
    const std::string p =
        t.write("p.yaml", "agent_config_dirs: {\".claude\": " + (t / "none") + "}\n");
    const auto r = guardfs_cmd({"check", "--policy", p, "/x"});
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("agent_config_dirs") != std::string::npos);
}

TEST_CASE("every example policy loads, and the recommended example is what guardfs prints",
          "[cli][examples]") {
    const std::string dir = std::string(GUARDFS_SOURCE_DIR) + "/examples/policies";
    for (const auto& e : std::filesystem::directory_iterator(dir)) {
        CAPTURE(e.path().string());
        const auto r = guardfs_cmd({"policy", "--check", e.path().string()});
        CHECK(r.exit_code == 0);
        CHECK(r.err.empty()); // no warnings in our own examples
    }
    std::ifstream in(dir + "/recommended.yaml");
    std::stringstream file;
    file << in.rdbuf();
    CHECK(file.str() == guardfs_cmd({"policy", "--recommended"}).out);
}
