// Strict loading of the policy file (design §10): every error names file, line and column, and
// other tools' syntax loads with a warning.
#include "patterns/policy.hpp"

#include <catch2/catch.hpp>

#include <string>

#include <unistd.h>

using namespace guardfs::patterns;

namespace {

std::string error_of(const std::string& yaml) {
    auto r = load_policy_text(yaml, "p.yaml");
    REQUIRE_FALSE(r.has_value());
    return r.error().message;
}

LoadedPolicy ok(const std::string& yaml) {
    auto r = load_policy_text(yaml, "p.yaml");
    if (!r) {
        FAIL(r.error().message);
    }
    return std::move(r.value());
}

} // namespace

TEST_CASE("the design's example policy loads", "[patterns][yaml]") {
    const auto p = ok(R"(version: 1
recommended: true
agent_config: true
deny:  [".env", ".env.*", "*.pem", {pattern: "secrets", reason: "team secrets"}]
ask:   [".github/workflows"]
allow: ["docs/*.md"]
read:
  deny: ["secrets"]
data_root: ~/.ai-agent
agent_config_dirs: {".claude": /srv/claude-config}
links_out: allow
approver: {command: ["python3", "approver.py"], timeout: 30}
audit: {path: /var/log/guardfs/audit.jsonl, all: false}
allow_file: ~/.config/guardfs/allowed.yaml
)");
    const Policy& pol = p.policy;
    CHECK(pol.recommended);
    CHECK(pol.agent_config);
    REQUIRE(pol.deny.size() == 4);
    CHECK(pol.deny[3].pattern == "secrets");
    CHECK(pol.deny[3].reason == "team secrets");
    CHECK(pol.deny[0].where.line == 4);
    REQUIRE(pol.ask.size() == 1);
    REQUIRE(pol.allow.size() == 1);
    REQUIRE(pol.read_deny.size() == 1);
    REQUIRE(pol.data_root.size() == 1);
    CHECK(pol.data_root[0] == "~/.ai-agent");
    REQUIRE(pol.agent_config_dirs.size() == 1);
    CHECK(pol.agent_config_dirs[0].first == ".claude");
    CHECK(pol.agent_config_dirs[0].second == "/srv/claude-config");
    CHECK(pol.links_out == Verdict::Allow);
    CHECK(pol.approver.command == std::vector<std::string>{"python3", "approver.py"});
    CHECK(pol.approver.timeout_seconds == Approx(30));
    CHECK(pol.audit.path == "/var/log/guardfs/audit.jsonl");
    CHECK_FALSE(pol.audit.all);
    CHECK(pol.allow_file == "~/.config/guardfs/allowed.yaml");
    CHECK(p.warnings.empty());
}

TEST_CASE("every key is optional and in a file the recommended set is opt-in", "[patterns][yaml]") {
    const auto empty = ok("");
    CHECK_FALSE(empty.policy.recommended);
    CHECK(empty.policy.agent_config);
    CHECK(empty.policy.git);
    CHECK(empty.policy.links_out == Verdict::Allow);
    const auto builtin = Policy::builtin_default();
    CHECK(builtin.recommended);
    CHECK(builtin.agent_config);
    CHECK(builtin.git);
}

TEST_CASE("errors name the file, line and column", "[patterns][yaml][errors]") {
    auto [yaml, needle] = GENERATE(table<std::string, std::string>({
        {"deny: [\"\"]\n", "p.yaml:1:8:"}, // zero segments
        {"deny:\n  - \"/\"\n", "p.yaml:2:5:"},
        {"deny:\n  - \"~/.ssh\"\n", "opens with '~'"},
        {"deny:\n  - ~\n", "p.yaml:2:5: a null row"}, // YAML null, not a pattern
        {"deny:\n  - \"./x\"\n", "'.' segment"},
        {"denny: [x]\n", "p.yaml:1:1: the policy: unknown key 'denny'"},
        {"deny: x\n", "p.yaml:1:7: 'deny' must be a list"},
        {"recommended: yes\n", "p.yaml:1:14: 'recommended' must be true or false"},
        {"recommended: \"true\"\n", "must be true or false"},
        {"links_out: maybe\n", "p.yaml:1:12: 'links_out': unknown verdict 'maybe'"},
        {"version: 2\n", "'version' must be 1"},
        {"deny: [{pattern: x, verdict: deny}]\n", "unknown key 'verdict'"},
        {"deny: [{reason: x}]\n", "needs a 'pattern'"},
        {"approver: {command: [a], socket: /s}\n", "not both"},
        {"approver: {timeout: -1}\n", "greater than 0"},
        {"approver: {timeout: \"30\"}\n", "must be a number"},
        {"audit: {path: \"\"}\n", "must not be empty"},
        {"audit: {rotate: true}\n", "unknown key 'rotate'"},
        {"agent_config_dirs: {\".claude/x\": /srv}\n", "one literal path segment"},
        {"agent_config_dirs: [a]\n", "must be a mapping"},
        {"read: {deny: [\"\"]}\n", "no segments"},
        {"read: {hide: [x]}\n", "unknown key 'hide'"},
        {"deny: [x]\ndeny: [y]\n", "duplicate key 'deny'"},
        {"deny: [x\n", "p.yaml:"}, // YAML syntax error
        {"- just\n- a list\n", "the policy must be a mapping"},
        {"plain scalar\n", "the policy must be a mapping"},
        {"deny: [\"/~/.ssh\"]\n", "p.yaml:1:8: pattern '/~/.ssh' opens with '~'"},
        // One document: what follows a '---' or '...' is not silently dropped.
        {"version: 1\n---\ndeny: [\".env\"]\n", "p.yaml:2:1: a second YAML document"},
        // yaml-cpp's LoadAll never returns on this one (empty documents without end; found by
        // the fuzzer): documents are counted, at most two.
        {"!x \"a\", \"\"", "a second YAML document"},
        {"version: 1\n---\n", "a second YAML document"},
        {"deny: [x]\n...\ngarbage: [\n", "p.yaml:4:1:"},
        // An empty value is named where it stands, not at the token after it.
        {"version: 1\nread:\n\ndeny: [x]\n", "p.yaml:2:5: 'read' must be a mapping, not null"},
        {"deny:\n  - x\n  -\n  - y\n", "p.yaml:3:3: a null row"},
        {"version:\n", "p.yaml:1:8: 'version' must be 1"},
    }));
    CAPTURE(yaml);
    const std::string err = error_of(yaml);
    CAPTURE(err);
    CHECK(err.find(needle) != std::string::npos);
}

TEST_CASE("all errors are reported, not just the first", "[patterns][yaml][errors]") {
    const std::string err = error_of("deny: [\"\"]\nask: [\"~/x\"]\nbogus: 1\n");
    CHECK(err.find("p.yaml:1:") != std::string::npos);
    CHECK(err.find("p.yaml:2:") != std::string::npos);
    CHECK(err.find("p.yaml:3:") != std::string::npos);
}

TEST_CASE("rows in another tool's syntax load with a warning naming the row",
          "[patterns][yaml][warnings]") {
    const auto p = ok("deny:\n  - \"**/.env\"\n  - \"/secrets\"\nask: [\"id_rsa?\", "
                      "\"[Ss]ecrets\", \".claude\\\\settings.json\"]\n");
    REQUIRE(p.warnings.size() == 5);
    CHECK(p.warnings[0].where.line == 2);
    CHECK(p.warnings[0].to_string().find("p.yaml:2:5: warning: row '**/.env' in 'deny'") == 0);
    CHECK(p.warnings[1].message.find("does not anchor") != std::string::npos);
    CHECK(p.warnings[4].message.find("'\\' is literal") != std::string::npos);
}

TEST_CASE("data_root takes one directory or a list", "[patterns][yaml]") {
    CHECK(ok("data_root: /a\n").policy.data_root == std::vector<std::string>{"/a"});
    CHECK(ok("data_root: [/a, ~/b]\n").policy.data_root == std::vector<std::string>{"/a", "~/b"});
    CHECK(error_of("data_root: {a: b}\n").find("string or a list") != std::string::npos);
}

TEST_CASE("an approver command may be a shell string", "[patterns][yaml]") {
    const auto p = ok("approver: {command: \"python3 a.py --x\", timeout: 2.5}\n");
    CHECK(p.policy.approver.command ==
          std::vector<std::string>{"/bin/sh", "-c", "python3 a.py --x"});
    CHECK(p.policy.approver.timeout_seconds == Approx(2.5));
    CHECK(ok("approver: {socket: /run/g.sock}\n").policy.approver.socket == "/run/g.sock");
}

TEST_CASE("binary garbage and deep nesting get a clear error, not a crash",
          "[patterns][yaml][hostile]") {
    std::string garbage;
    for (int i = 0; i < 4096; ++i) {
        garbage += static_cast<char>((i * 131 + 7) % 256);
    }
    auto r = load_policy_text(garbage, "g.yaml");
    CHECK_FALSE(r.has_value());
    const std::string deep = std::string(20000, '[') + std::string(20000, ']');
    auto d = load_policy_text(deep, "d.yaml");
    CHECK_FALSE(d.has_value());
}

TEST_CASE("a missing file is an I/O error", "[patterns][yaml]") {
    auto r = load_policy_file("/nonexistent/guardfs/policy.yaml");
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code == guardfs::base::ErrorCode::PolicyIo);
}

TEST_CASE("a directory given as the policy file is an I/O error, not an empty policy",
          "[patterns][yaml]") {
    // A stream opens a directory and reads nothing from it, which parsed as an empty policy.
    auto r = load_policy_file("/");
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code == guardfs::base::ErrorCode::PolicyIo);
    CHECK(r.error().message.find("Is a directory") != std::string::npos);
}

TEST_CASE("a policy file read through a pipe loads", "[patterns][yaml]") {
    int fds[2];
    REQUIRE(::pipe(fds) == 0);
    const std::string text = "deny: [secrets]\n";
    REQUIRE(::write(fds[1], text.data(), text.size()) == static_cast<ssize_t>(text.size()));
    ::close(fds[1]);
    auto r = load_policy_file("/proc/self/fd/" + std::to_string(fds[0]));
    ::close(fds[0]);
    REQUIRE(r.has_value());
    REQUIRE(r->policy.deny.size() == 1);
    CHECK(r->policy.deny[0].pattern == "secrets");
}
