// Asking (issue #4, design §6, §7): a scripted approver answers ask verdicts; timeouts, crashes,
// remembered answers at each scope, de-duplication, concurrency, the audit log, reload, and
// guardfs's own files. Questions are counted on the approver's side (its log file).
#include "support/audit_log.hpp"
#include "support/mount_fixture.hpp"
#include "support/process.hpp"
#include "support/temp_dir.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace guardfs::test;

namespace {

const std::string kDouble = std::string(GUARDFS_SOURCE_DIR) + "/tests/support/approvers/double.py";

std::size_t count_lines(const std::string& path) {
    std::ifstream in(path);
    std::size_t n = 0;
    for (std::string l; std::getline(in, l);) {
        n += l.empty() ? 0U : 1U;
    }
    return n;
}

// A mount whose approver is the double, with the given behaviour.
struct AskingMount {
    std::string log;
    std::unique_ptr<MountedGuard> g;

    AskingMount(const std::string& policy, std::map<std::string, std::string> env,
                std::vector<std::string> extra = {},
                std::function<void(const std::string&)> setup = {},
                bool separate_mountpoint = false) {
        MountSpec spec;
        spec.policy_yaml = policy;
        spec.separate_mountpoint = separate_mountpoint;
        spec.setup = std::move(setup);
        spec.extra_args = {"--approver", "python3 " + kDouble};
        spec.extra_args.insert(spec.extra_args.end(), extra.begin(), extra.end());
        log = std::filesystem::temp_directory_path() /
              ("guardfs-approver-" + std::to_string(::getpid()) + "-" +
               std::to_string(counter()++) + ".log");
        std::filesystem::remove(log);
        env["APPROVER_LOG"] = log;
        spec.env = std::move(env);
        g = std::make_unique<MountedGuard>(std::move(spec));
    }

    ~AskingMount() {
        g.reset();
        std::filesystem::remove(log);
    }

    AskingMount(const AskingMount&) = delete;
    AskingMount& operator=(const AskingMount&) = delete;

    [[nodiscard]] std::size_t questions() const { return count_lines(log); }

    // Waits (bounded) until the approver has logged n questions: it logs them on its own
    // schedule, possibly after guardfs gave up on an answer.
    [[nodiscard]] std::size_t questions_when(std::size_t n) const {
        const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (count_lines(log) < n && std::chrono::steady_clock::now() < until) {
            std::this_thread::yield();
        }
        return count_lines(log);
    }

    static int& counter() {
        static int n = 0;
        return n;
    }
};

// The agent-configuration tier makes `.claude` an ask directory.
const char* const kAskPolicy = "deny: [\".env\"]\n";

void make_claude_dir(const std::string& ws) {
    std::filesystem::create_directories(ws + "/.claude");
}

} // namespace

TEST_CASE("an approver's allow passes the write and its deny refuses it",
          "[integration][approver]") {
    SECTION("allow") {
        AskingMount m(kAskPolicy, {{"APPROVER_MODE", "allow"}}, {}, make_claude_dir);
        CHECK(write_text(m.g->ws(".claude/notes.md"), "hello\n") == 0);
        CHECK(m.questions() == 1);
        CHECK(m.g->unmount() == 0);
        CHECK(read_file(m.g->ws(".claude/notes.md")) == "hello\n");
    }
    SECTION("deny") {
        AskingMount m(kAskPolicy, {{"APPROVER_MODE", "deny"}}, {}, make_claude_dir);
        CHECK(write_text(m.g->ws(".claude/notes.md"), "hello\n") == EACCES);
        CHECK(m.questions() == 1);
        CHECK(m.g->unmount() == 0);
        CHECK_FALSE(std::filesystem::exists(m.g->ws(".claude/notes.md")));
    }
}

TEST_CASE("no approver, or no answer in time, is a refusal", "[integration][approver]") {
    SECTION("no approver configured") {
        MountSpec spec;
        spec.policy_yaml = kAskPolicy;
        spec.setup = make_claude_dir;
        MountedGuard g(spec);
        CHECK(write_text(g.ws(".claude/notes.md"), "x") == EACCES);
    }
    SECTION("an approver that cannot be started, with the reason in the audit log") {
        TempDir logs;
        const std::string log = logs.path() + "/audit.jsonl";
        MountSpec spec;
        spec.policy_yaml =
            std::string(kAskPolicy) + "approver: {command: [\"no-such-approver-5cd1\"]}\n";
        spec.setup = make_claude_dir;
        spec.extra_args = {"--audit-log", log};
        MountedGuard g(spec);
        CHECK(write_text(g.ws(".claude/notes.md"), "x") == EACCES);
        REQUIRE(g.unmount() == 0);
        bool said = false;
        for (const auto& j : audit_lines(log)) {
            said = said || (j.contains("reason") &&
                            j["reason"].get<std::string>().find(
                                "cannot start the approver no-such-approver-5cd1: No such file") !=
                                std::string::npos);
        }
        CHECK(said);
    }
    SECTION("an approver that never answers") {
        AskingMount m(kAskPolicy, {{"APPROVER_MODE", "silent"}}, {"--ask-timeout", "0.5"},
                      make_claude_dir);
        CHECK(write_text(m.g->ws(".claude/notes.md"), "x") == EACCES);
        CHECK(m.questions_when(1) == 1);
    }
    SECTION("an approver that writes garbage before its answer is still understood") {
        TempDir logs;
        const std::string log = logs.path() + "/audit.jsonl";
        AskingMount m(kAskPolicy, {{"APPROVER_MODE", "garbage"}},
                      {"--ask-timeout", "5", "--audit-log", log}, make_claude_dir);
        CHECK(write_text(m.g->ws(".claude/notes.md"), "x") == 0);
        // design §6: each unusable line is logged (the audit log: a daemon in the background
        // has no stderr) and ignored.
        std::size_t ignored = 0;
        for (const auto& j : audit_lines(log)) {
            if (j.value("event", "") == "approver" &&
                j["message"].get<std::string>().find("ignored") != std::string::npos) {
                ++ignored;
            }
        }
        CHECK(ignored == 4); // not JSON, a bad id, an unknown id, no verdict (double.py)
    }
}

TEST_CASE("a crashed approver refuses, and the next question reaches a restarted one",
          "[integration][approver]") {
    const std::string state =
        std::filesystem::temp_directory_path() / ("guardfs-crash-" + std::to_string(::getpid()));
    std::filesystem::remove(state);
    AskingMount m(kAskPolicy, {{"APPROVER_MODE", "crash-once"}, {"APPROVER_STATE", state}},
                  {"--ask-timeout", "10"}, make_claude_dir);
    CHECK(write_text(m.g->ws(".claude/a.md"), "x") == EACCES);
    CHECK(write_text(m.g->ws(".claude/b.md"), "y") == 0);
    CHECK(m.questions() == 2);
    std::filesystem::remove(state);
}

TEST_CASE("remembered answers stop the repeated question at each scope",
          "[integration][approver][remember]") {
    // Also with a mount point apart from the workspace, where each path has two views (the
    // answer for one view left the other asking until 2026-12-07).
    const bool separate = GENERATE(false, true);
    CAPTURE(separate);
    auto setup = [](const std::string& ws) {
        std::filesystem::create_directories(ws + "/.claude/skills");
        std::filesystem::create_directories(ws + "/other/.claude");
    };
    SECTION("once: every write asks again") {
        AskingMount m(kAskPolicy, {{"APPROVER_REMEMBER", "once"}}, {}, setup, separate);
        CHECK(write_text(m.g->mnt(".claude/a.md"), "1") == 0);
        CHECK(write_text(m.g->mnt(".claude/a.md"), "2") == 0);
        CHECK(m.questions() == 2);
    }
    SECTION("path") {
        AskingMount m(kAskPolicy, {{"APPROVER_REMEMBER", "mount"}, {"APPROVER_SCOPE", "path"}}, {},
                      setup, separate);
        CHECK(write_text(m.g->mnt(".claude/a.md"), "1") == 0);
        CHECK(write_text(m.g->mnt(".claude/a.md"), "2") == 0);
        CHECK(write_text(m.g->mnt(".claude/a.md"), "3", O_APPEND) == 0);
        CHECK(m.questions() == 1);
        CHECK(write_text(m.g->mnt(".claude/b.md"), "x") == 0); // another path asks
        CHECK(m.questions() == 2);
    }
    SECTION("dir") {
        AskingMount m(kAskPolicy, {{"APPROVER_REMEMBER", "mount"}, {"APPROVER_SCOPE", "dir"}}, {},
                      setup, separate);
        CHECK(write_text(m.g->mnt(".claude/skills/a.md"), "1") == 0);
        CHECK(write_text(m.g->mnt(".claude/skills/b.md"), "2") == 0);
        CHECK(m.questions() == 1);
        // Not the directory itself: its own chmod (or a rename taking it away) asks.
        CHECK(::chmod(m.g->mnt(".claude/skills").c_str(), 0750) == 0);
        CHECK(m.questions() == 2);
        // ... answered for the entries of .claude/, where it is one
        CHECK(write_text(m.g->mnt(".claude/c.md"), "3") == 0);
        CHECK(m.questions() == 2);
        CHECK(write_text(m.g->mnt("other/.claude/d.md"), "4") == 0); // another dir asks
        CHECK(m.questions() == 3);
    }
    SECTION("rule") {
        AskingMount m(kAskPolicy, {{"APPROVER_REMEMBER", "mount"}, {"APPROVER_SCOPE", "rule"}}, {},
                      setup, separate);
        CHECK(write_text(m.g->mnt(".claude/a.md"), "1") == 0);
        CHECK(write_text(m.g->mnt("other/.claude/b.md"), "2") == 0);
        CHECK(m.questions() == 1);
    }
    SECTION("a remembered allow never lifts a deny") {
        AskingMount m(kAskPolicy, {{"APPROVER_REMEMBER", "mount"}, {"APPROVER_SCOPE", "rule"}}, {},
                      setup, separate);
        CHECK(write_text(m.g->mnt(".claude/a.md"), "1") == 0);
        CHECK(write_text(m.g->mnt(".claude/settings.json"), "{}") == EACCES);
        CHECK(write_text(m.g->mnt(".env"), "X=1") == EACCES);
        CHECK(m.questions() == 1);
    }
}

TEST_CASE("SIGTERM while a question waits refuses it and unmounts at once",
          "[integration][approver]") {
    // The question waited out its timeout (30 s here, 60 by default) with the mount hanging:
    // SIGTERM ended the session, but a worker stayed inside the question.
    AskingMount m(kAskPolicy, {{"APPROVER_MODE", "silent"}}, {"--ask-timeout", "30"},
                  make_claude_dir);
    std::atomic<int> result{-1};
    std::thread asker([&] { result = write_text(m.g->mnt(".claude/x.md"), "x"); });
    REQUIRE(m.questions_when(1) == 1);
    const auto start = std::chrono::steady_clock::now();
    CHECK(m.g->terminate(SIGTERM) == 0);
    asker.join();
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
    CHECK(result.load() == EACCES);
    CHECK_FALSE(std::filesystem::exists(m.g->ws(".claude/x.md")));
}

TEST_CASE("an open that truncates is asked as open_write, and the approver keeps a umask",
          "[integration][approver]") {
    ::umask(022); // the mount, and so its approver, inherit this one
    AskingMount m(kAskPolicy, {{"APPROVER_MODE", "allow"}}, {}, [](const std::string& ws) {
        std::filesystem::create_directories(ws + "/.claude");
        std::ofstream(ws + "/.claude/notes.md") << "old\n";
    });
    CHECK(write_text(m.g->mnt(".claude/notes.md"), "new\n") == 0); // O_TRUNC, as `>` does
    REQUIRE(m.questions() == 1);
    std::ifstream in(m.log);
    std::string line;
    std::getline(in, line);
    const auto q = nlohmann::json::parse(line);
    CHECK(q["op"] == "open_write"); // design §6's name for it, not "truncate"

    // The approver created its log under umask 022, not the daemon's own umask 0.
    struct stat st {};

    REQUIRE(::stat(m.log.c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0644);
}

TEST_CASE("a rename from one ask row onto another asks about both, and needs both allowed",
          "[integration][approver]") {
    // mv .claude/skills/e CLAUDE.md was one question naming .claude; CLAUDE.md's own row was
    // never put to the approver, and the file landed.
    auto setup = [](const std::string& ws) {
        std::filesystem::create_directories(ws + "/.claude/skills");
        std::ofstream(ws + "/.claude/skills/e") << "evil\n";
    };
    SECTION("the approver allows both") {
        AskingMount m(kAskPolicy, {{"APPROVER_MODE", "allow"}}, {}, setup);
        CHECK(::rename(m.g->mnt(".claude/skills/e").c_str(), m.g->mnt("CLAUDE.md").c_str()) == 0);
        CHECK(m.questions() == 2);
    }
    SECTION("the approver allows .claude/skills/e and refuses the other row") {
        AskingMount m(kAskPolicy,
                      {{"APPROVER_MODE", "path-then-deny"}, {"APPROVER_ALLOW_SUFFIX", "/e"}}, {},
                      setup);
        errno = 0;
        CHECK(::rename(m.g->mnt(".claude/skills/e").c_str(), m.g->mnt("CLAUDE.md").c_str()) == -1);
        CHECK(errno == EACCES);
        errno = 0;
        CHECK(::link(m.g->mnt(".claude/skills/e").c_str(), m.g->mnt("AGENTS.md").c_str()) == -1);
        CHECK(errno == EACCES);
        CHECK(m.questions() == 4);
        CHECK_FALSE(std::filesystem::exists(m.g->ws("CLAUDE.md")));
        CHECK_FALSE(std::filesystem::exists(m.g->ws("AGENTS.md")));
    }
}

TEST_CASE("a persisted answer survives a remount, and a broken allow file stops the mount",
          "[integration][approver][remember]") {
    const std::string dir =
        std::filesystem::temp_directory_path() / ("guardfs-allow-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const std::string allow = dir + "/allowed.yaml";
    std::filesystem::remove(allow);
    const std::string policy = std::string(kAskPolicy) + "allow_file: " + allow + "\n";
    {
        AskingMount m(policy, {{"APPROVER_REMEMBER", "persist"}, {"APPROVER_SCOPE", "path"}}, {},
                      make_claude_dir);
        CHECK(write_text(m.g->ws(".claude/a.md"), "1") == 0);
        CHECK(m.questions() == 1);
        CHECK(std::filesystem::exists(allow));
        // the allow file is guardfs's own: nothing under the mount may write it
    }
    CHECK(read_file(allow).find("verdict: allow") != std::string::npos);
    {
        AskingMount m(policy, {{"APPROVER_MODE", "deny"}}, {}, [](const std::string& ws) {
            std::filesystem::create_directories(ws + "/.claude");
        });
        // The paths differ per mount (a fresh temporary workspace), so the persisted answer is
        // for another path: it is asked (and denied) here, and the file is still valid.
        CHECK(write_text(m.g->ws(".claude/a.md"), "1") == EACCES);
        CHECK(m.questions() == 1);
    }
    write_file(allow, "version: 1\nanswers: [ {verdict: maybe} ]\n");
    MountSpec spec;
    spec.policy_yaml = policy;
    const std::string root =
        std::filesystem::temp_directory_path() / ("guardfs-badallow-" + std::to_string(::getpid()));
    std::filesystem::create_directories(root + "/ws");
    write_file(root + "/p.yaml", policy);
    const auto r = run({GUARDFS_BIN, "mount", "-f", "--policy", root + "/p.yaml", root + "/ws"});
    CHECK(r.exit_code == 2);
    CHECK(r.err.find(allow) != std::string::npos);
    CHECK_FALSE(is_mount_point(root + "/ws"));
    std::filesystem::remove_all(root);
    std::filesystem::remove_all(dir);
}

TEST_CASE("identical questions in flight are asked once", "[integration][approver][dedup]") {
    AskingMount m(kAskPolicy, {{"APPROVER_DELAY", "1"}}, {}, [](const std::string& ws) {
        std::filesystem::create_directories(ws + "/.claude");
        write_file(ws + "/.claude/shared.md", "old\n");
    });
    // Opening an existing file for writing takes no directory lock, so both opens reach the
    // guard at once with the same question.
    std::vector<std::jthread> threads;
    std::atomic<int> ok{0};
    for (int i = 0; i < 2; ++i) {
        threads.emplace_back([&] {
            const int fd = ::open(m.g->ws(".claude/shared.md").c_str(), O_WRONLY);
            if (fd >= 0) {
                ++ok;
                ::close(fd);
            }
        });
    }
    for (auto& t : threads) {
        t.join();
    }
    CHECK(ok == 2);
    CHECK(m.questions() == 1);
}

TEST_CASE("while a question waits, other requests in the mount complete promptly",
          "[integration][approver][concurrency]") {
    AskingMount m(kAskPolicy, {{"APPROVER_MODE", "silent"}}, {"--ask-timeout", "8"},
                  [](const std::string& ws) {
                      make_claude_dir(ws);
                      write_file(ws + "/readme.txt", "read me\n");
                  });
    std::atomic<int> asked{-1};
    std::jthread asker([&] { asked = write_text(m.g->ws(".claude/waits.md"), "x"); });
    // Wait (bounded) until the question has reached the approver.
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (m.questions() == 0 && std::chrono::steady_clock::now() < until) {
        std::this_thread::yield();
    }
    REQUIRE(m.questions() == 1);
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < 50; ++i) {
        CHECK(write_text(m.g->ws("file" + std::to_string(i) + ".txt"), "data") == 0);
        CHECK(read_file(m.g->ws("readme.txt")) == "read me\n");
    }
    const auto took = std::chrono::steady_clock::now() - start;
    CHECK(took < std::chrono::seconds(3)); // a generous bound; the question waits 8 s
    asker.join();
    CHECK(asked == EACCES);
}

TEST_CASE("ten concurrent questions are all answered, with no deadlock",
          "[integration][approver][concurrency]") {
    AskingMount m(kAskPolicy, {{"APPROVER_DELAY", "0.2"}}, {"--ask-timeout", "30"},
                  make_claude_dir);
    std::vector<std::jthread> threads;
    std::atomic<int> ok{0};
    for (int i = 0; i < 10; ++i) {
        threads.emplace_back([&, i] {
            // distinct directories: creates in one directory would be serialised by the kernel
            const std::string dir = m.g->ws(".claude/d" + std::to_string(i));
            if (::mkdir(dir.c_str(), 0755) == 0) {
                ++ok;
            }
        });
    }
    for (auto& t : threads) {
        t.join();
    }
    CHECK(ok == 10);
    CHECK(m.questions() == 10);
}

TEST_CASE("the audit log holds one parseable line per decision with the design's fields",
          "[integration][audit]") {
    const std::string root =
        std::filesystem::temp_directory_path() / ("guardfs-audit-" + std::to_string(::getpid()));
    std::filesystem::create_directories(root);
    const std::string log = root + "/audit.jsonl";
    std::filesystem::remove(log);
    {
        AskingMount m(kAskPolicy, {{"APPROVER_MODE", "allow"}}, {"--audit-log", log},
                      [](const std::string& ws) {
                          make_claude_dir(ws);
                          write_file(ws + "/.env", "S=1\n");
                      });
        CHECK(write_text(m.g->ws(".env"), "x") == EACCES);    // deny
        CHECK(write_text(m.g->ws(".claude/a.md"), "x") == 0); // ask, allowed
        CHECK(write_text(m.g->ws("plain.txt"), "x") == 0);    // allow: not logged
        const std::string odd = m.g->ws(std::string(".env\n\"\x01\xff"));
        CHECK(write_text(odd, "x") == 0);               // not guarded: not logged
        CHECK(::unlink(m.g->ws(".env").c_str()) == -1); // deny
        CHECK(m.g->unmount() == 0);
    }
    // Every line is a decision (the mount, its approver starting and the unmount are told on
    // stderr), carrying the fields design §7 names, under those names.
    auto decisions = audit_lines(log);
    REQUIRE(decisions.size() == 3);
    for (const auto& j : decisions) {
        for (const char* key : {"time", "operation", "paths", "verdict", "rule", "tier", "view",
                                "exemption", "process", "answer", "latency"}) {
            CAPTURE(key, j.dump());
            CHECK(j.contains(key));
        }
        CHECK(j["op"] == j["operation"]);
        CHECK(j["latency"].is_number_integer());
        CHECK(j["latency"].get<long long>() >= 0);
        CHECK(j["process"].contains("pid"));
        CHECK(j["process"].contains("command"));
    }
    CHECK(decisions[0]["verdict"] == "deny");
    CHECK(decisions[0]["rule"] == ".env");
    CHECK(decisions[1]["verdict"] == "allow");
    CHECK(decisions[1]["judged"] == "ask");
    CHECK(decisions[1]["answer"]["source"] == "approver");
    CHECK(decisions[2]["operation"] == "unlink");
    std::filesystem::remove_all(root);
}

TEST_CASE("a name with newlines, quotes and invalid UTF-8 keeps the audit log one JSON object "
          "per line",
          "[integration][audit][hostile]") {
    const std::string root =
        std::filesystem::temp_directory_path() / ("guardfs-audit2-" + std::to_string(::getpid()));
    std::filesystem::create_directories(root);
    const std::string log = root + "/audit.jsonl";
    std::filesystem::remove(log);
    const std::string name = std::string("x\n\"}{\x01\xff\xfe.env");
    {
        MountSpec spec;
        spec.policy_yaml = "deny: [\"*.env\"]\n";
        spec.extra_args = {"--audit-log", log};
        MountedGuard g(spec);
        CHECK(write_text(g.ws(name), "x") == EACCES);
    }
    bool found = false;
    for (const auto& j : audit_lines(log)) {
        if (j.contains("paths_hex")) {
            found = true;
            CHECK(j["paths_hex"][0].get<std::string>().size() % 2 == 0);
        }
    }
    CHECK(found);
    std::filesystem::remove_all(root);
}

TEST_CASE("reload re-reads the allow file, and names the keys it applies only at the next mount",
          "[integration][reload]") {
    // The allow file was read at mount time only: an answer the user revoked there stayed in
    // force, and the next persisted answer wrote it back. A changed approver was ignored by a
    // reload that said only "policy reloaded".
    TempDir files;
    const std::string allow = files.path() + "/allowed.yaml";
    write_file(allow, "version: 1\nanswers:\n  - {verdict: allow, scope: rule, rule: askme, "
                      "tier: policy}\n");
    const std::string policy = "ask: [askme]\nallow_file: " + allow + "\n";
    MountSpec spec;
    spec.policy_yaml = policy;
    spec.setup = [](const std::string& ws) {
        std::filesystem::create_directories(ws + "/askme");
    };
    MountedGuard g(spec);
    CHECK(write_text(g.ws("askme/a"), "x") == 0); // the persisted answer
    write_file(allow, "version: 1\nanswers: []\n");
    auto r = run({GUARDFS_BIN, "reload", g.ws()});
    CHECK(r.exit_code == 0);
    CHECK(r.err.empty());
    CHECK(write_text(g.ws("askme/b"), "x") == EACCES); // revoked; no approver to ask
    // A broken allow file is refused like a broken policy, and the answers in force stay.
    write_file(allow, "version: 1\nanswers: [ {verdict: maybe} ]\n");
    r = run({GUARDFS_BIN, "reload", g.ws()});
    CHECK(r.exit_code == 2);
    CHECK(r.err.find(allow) != std::string::npos);
    write_file(allow, "version: 1\nanswers: []\n");
    // The approver is set up at mount time: the reload says that its change waits.
    write_file(g.root() + "/policy.yaml", policy + "approver: {command: [\"true\"]}\n");
    r = run({GUARDFS_BIN, "reload", g.ws()});
    CHECK(r.exit_code == 0);
    CHECK(r.out.find("policy reloaded") != std::string::npos);
    CHECK(r.err.find("approver changed in the policy") != std::string::npos);
    CHECK(r.err.find("next mount") != std::string::npos);
}

TEST_CASE("reload takes a valid policy and keeps the old one when the new one is broken",
          "[integration][reload]") {
    TempDir logs;
    const std::string log = logs.path() + "/audit.jsonl";
    MountSpec spec;
    spec.policy_yaml = "deny: [\"first\"]\n";
    spec.extra_args = {"--audit-log", log};
    MountedGuard g(spec);
    const std::string policy = g.root() + "/policy.yaml";
    CHECK(write_text(g.ws("second"), "x") == 0);
    write_file(policy, "deny: [\"first\", \"second2\"]\n");
    auto r = run({GUARDFS_BIN, "reload", g.ws()});
    CHECK(r.exit_code == 0);
    CHECK(write_text(g.ws("second2"), "x") == EACCES);
    write_file(policy, "deny: [\"first\", \"\"]\nbogus: [\n");
    r = run({GUARDFS_BIN, "reload", g.ws()});
    CHECK(r.exit_code == 2);
    CHECK(r.err.find(policy) != std::string::npos);
    CHECK(write_text(g.ws("second2"), "x") == EACCES); // the old policy stays
    CHECK(write_text(g.ws("first"), "x") == EACCES);
    CHECK(g.daemon_log().find("reload failed") != std::string::npos);
    // ... and in the audit log, the one line there that is not a decision (a daemon in the
    // background has no stderr); the successful reload before it wrote none.
    {
        std::vector<nlohmann::json> events;
        for (const auto& j : audit_lines(log)) {
            if (!j.contains("verdict")) {
                events.push_back(j);
            }
        }
        REQUIRE(events.size() == 1);
        CHECK(events[0]["event"] == "reload-failed");
        CHECK(events[0]["message"].get<std::string>().find(policy) != std::string::npos);
    }
    // SIGHUP itself, as the design says
    write_file(policy, "deny: [\"third\"]\n");
    ::kill(g.daemon_pid(), SIGHUP);
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (write_text(g.ws("third"), "x") == 0 && std::chrono::steady_clock::now() < until) {
        ::unlink(g.ws("third").c_str());
    }
    CHECK(write_text(g.ws("third"), "x") == EACCES);
    CHECK(write_text(g.ws("second2"), "y") == 0);
}

TEST_CASE("guardfs's own policy and audit log are refused to writers under the mount, by name "
          "and by identity",
          "[integration][self-protection]") {
    MountSpec spec;
    spec.use_policy_file = false;
    spec.setup = [](const std::string& ws) {
        write_file(ws + "/guard/policy.yaml", "deny: [\".env\"]\n");
    };
    spec.extra_args = {"--policy", "{ws}/guard/policy.yaml", "--audit-log", "{ws}/guard/audit.log"};
    MountedGuard g(spec);
    const FileState policy_before = file_state(g.ws("guard/policy.yaml"));
    RunOptions o;
    o.cwd = g.ws();
    for (const char* attack :
         {"echo 'deny: []' > guard/policy.yaml", "echo x >> guard/audit.log", "rm guard/audit.log",
          "mv guard/policy.yaml guard/old.yaml", "mv guard guard2", "ln guard/policy.yaml copy",
          "truncate -s 0 guard/audit.log", "chmod 777 guard/policy.yaml",
          "cp /dev/null guard/policy.yaml"}) {
        CAPTURE(attack);
        CHECK(sh(attack, o).exit_code != 0);
    }
    // The daemon itself still writes its log (through the underlying tree, not the mount) and
    // still reads its policy on reload.
    CHECK(write_text(g.ws(".env"), "x") == EACCES);
    CHECK(run({GUARDFS_BIN, "reload", g.ws()}).exit_code == 0);
    CHECK(read_file(g.ws("guard/audit.log")).find("\"rule\":\".env\"") != std::string::npos);
    CHECK(g.unmount() == 0);
    CHECK(file_state(g.ws("guard/policy.yaml")) == policy_before);
    CHECK_FALSE(std::filesystem::exists(g.ws("copy")));
}

TEST_CASE("the terminal approver is answered as a person would, under tmux",
          "[integration][approver][tmux]") {
    const std::string sock = std::filesystem::temp_directory_path() /
                             ("guardfs-tmux-" + std::to_string(::getpid()) + ".sock");
    const std::string session = "guardfs-test-" + std::to_string(::getpid());
    MountSpec spec;
    spec.policy_yaml = kAskPolicy;
    spec.setup = make_claude_dir;
    spec.extra_args = {"--approver-socket", sock, "--ask-timeout", "20"};
    MountedGuard g(spec);

    // A tmux server of the test's own (-S), not the user's default one: the session never
    // appears in their server, and the server and its socket go with the test.
    struct Tmux {
        std::string socket;

        ~Tmux() {
            run({"tmux", "-S", socket, "kill-server"});
            std::error_code ignored;
            std::filesystem::remove(socket, ignored);
        }
    } tmux{std::filesystem::temp_directory_path() /
           ("guardfs-tmux-server-" + std::to_string(::getpid()) + ".sock")};

    auto tmux_run = [&](std::vector<std::string> args) {
        args.insert(args.begin(), {"tmux", "-S", tmux.socket});
        return run(args);
    };

    REQUIRE(tmux_run({"new-session", "-d", "-s", session, "-x", "120", "-y", "40",
                      std::string(GUARDFS_BIN) + " approve --socket " + sock})
                .exit_code == 0);
    auto screen = [&] {
        return tmux_run({"capture-pane", "-p", "-t", session}).out;
    };
    auto wait_for = [&](const std::string& text) {
        const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(15);
        while (screen().find(text) == std::string::npos &&
               std::chrono::steady_clock::now() < until) {
            std::this_thread::yield();
        }
        return screen().find(text) != std::string::npos;
    };
    REQUIRE(wait_for("answering questions"));
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (g.daemon_log().find("terminal approver connected") == std::string::npos &&
           std::chrono::steady_clock::now() < until) {
        std::this_thread::yield();
    }
    REQUIRE(g.daemon_log().find("terminal approver connected") != std::string::npos);
    // allow once
    std::atomic<int> first{-1};
    std::jthread w1([&] { first = write_text(g.ws(".claude/one.md"), "1"); });
    REQUIRE(wait_for(".claude/one.md"));
    const std::string shown = screen();
    CHECK(shown.find("create") != std::string::npos);
    CHECK(shown.find("agent-config") != std::string::npos);
    CHECK(shown.find("pid") != std::string::npos);
    tmux_run({"send-keys", "-t", session, "a"});
    w1.join();
    CHECK(first == 0);
    // deny
    std::atomic<int> second{-1};
    std::jthread w2([&] { second = write_text(g.ws(".claude/two.md"), "2"); });
    REQUIRE(wait_for(".claude/two.md"));
    tmux_run({"send-keys", "-t", session, "d"});
    w2.join();
    CHECK(second == EACCES);
    CHECK(wait_for("denied"));
    tmux_run({"send-keys", "-t", session, "q"});
    CHECK(g.unmount() == 0);
    CHECK(read_file(g.ws(".claude/one.md")) == "1");
    CHECK_FALSE(std::filesystem::exists(g.ws(".claude/two.md")));
}
