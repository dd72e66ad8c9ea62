// Matching paths against a compiled rule table (design §2): segment runs anywhere, ancestors
// cover descendants, wide readings on the deny/ask side, exact bytes on the allow side.
#include "patterns/glob.hpp"
#include "patterns/rule_table.hpp"

#include <catch2/catch.hpp>

#include <map>
#include <string>
#include <utility>
#include <vector>

using namespace guardfs::patterns;

namespace {

struct Row {
    std::string pattern;
    Verdict verdict;
};

RuleTable make_table(const std::vector<Row>& rows,
                     const std::map<std::string, std::vector<std::string>>& anchors = {}) {
    std::vector<RuleSpec> specs;
    for (const auto& row : rows) {
        auto c = compile_pattern(row.pattern);
        REQUIRE(c.has_value());
        Rule r;
        r.pattern = row.pattern;
        r.verdict = row.verdict;
        specs.push_back(RuleSpec{r, c.value()});
    }
    return RuleTable::build(std::move(specs), anchors);
}

// The verdict of the guard side, lifted to allow by an allow row on the exact bytes.
Verdict judge(const RuleTable& t, const std::string& path, std::size_t strip = 0) {
    Readings r;
    r.build(path, strip);
    const auto m = t.match_guard(r);
    if (!m.matched()) {
        return Verdict::Allow;
    }
    if (m.best.verdict == Verdict::Ask && t.match_allow(r).matched()) {
        return Verdict::Allow;
    }
    return m.best.verdict;
}

Verdict partial(const RuleTable& t, const std::string& path) {
    Readings r;
    r.build(path, 0);
    const auto m = t.match_guard_partial(r);
    return m.matched() ? m.best.verdict : Verdict::Allow;
}

constexpr auto A = Verdict::Allow;
constexpr auto Q = Verdict::Ask;
constexpr auto D = Verdict::Deny;

} // namespace

TEST_CASE("a pattern matches a run of segments anywhere, and everything below it",
          "[patterns][segments]") {
    const auto t = make_table({{".ssh", D},
                               {"credentials", D},
                               {".git/hooks", D},
                               {"a/*/c", D},
                               {"*.pem", Q},
                               {".env.*", Q}});
    auto [path, expected] = GENERATE(table<std::string, Verdict>({
        {"/home/u/.ssh/id_rsa", D},        // ancestor covers descendants
        {"/home/u/.ssh", D},               // the name itself
        {"/srv/deep/tree/.ssh/config", D}, // at any depth
        {"/home/u/ssh/id_rsa", A},
        {"/home/u/.sshx/id_rsa", A}, // segment-wise, not by prefix
        {"/home/u/x.ssh/id_rsa", A},
        {"/p/credentials", D},
        {"/p/credentials/token.txt", D},
        {"/p/credentials-backup", A}, // seed 000: credentials vs credentials-backup
        {"/p/credentials-backup/token.txt", A},
        {"/p/my-credentials", A},
        {"/r/.git/hooks/pre-commit", D},
        {"/r/.git/hooks", D},
        {"/r/.git", A}, // half a run is no match
        {"/r/.git/hooksx/x", A},
        {"/r/x.git/hooks/x", A},
        {"/r/nested/.git/hooks/post-checkout", D},
        {"/a/b/c", D},   // '*' is one whole segment here
        {"/a/b/x/c", A}, // and never crosses '/'
        {"/a/c", A},
        {"/x/a/anything/c/below", D},
        {"/k/server.pem", Q},
        {"/k/server.pem.bak", A},
        {"/k/server.pem/inside", Q},
        {"/p/.env.local", Q},
        {"/p/.env", A},
    }));
    CAPTURE(path);
    CHECK(judge(t, path) == expected);
}

TEST_CASE("question marks and brackets in a pattern are literal", "[patterns][segments]") {
    const auto t = make_table({{"id_rsa?", D}, {"[ab]", D}});
    CHECK(judge(t, "/k/id_rsa?") == D);
    CHECK(judge(t, "/k/id_rsa1") == A);
    CHECK(judge(t, "/k/[ab]/x") == D);
    CHECK(judge(t, "/k/a/x") == A);
}

TEST_CASE("deny and ask read the target wide: case, NFC and backslash spellings",
          "[patterns][readings]") {
    const auto t = make_table({{".ssh", D},
                               {".claude/settings.json", D},
                               {"caf\xC3\xA9", D},
                               {".kube", D},
                               {"CLAUDE.md", Q}});
    auto [path, expected] = GENERATE(table<std::string, Verdict>({
        {"/h/.SSH/id_rsa", D}, // case folded
        {"/h/.Ssh/id_rsa", D},
        {"/w/.Claude/Settings.JSON", D},
        {"/w/.claude\\settings.json", D}, // '\' read as a separator
        {"/w\\.claude\\settings.json", D},
        {"/w/.CLAUDE\\SETTINGS.JSON", D}, // both at once
        {"/w/cafe\xCC\x81/x", D},         // decomposed é (NFC)
        {"/w/CAFE\xCC\x81", D},
        {"/h/.\xE2\x84\xAA"
         "ube/config",
         D},                 // KELVIN SIGN folds to k
        {"/w/claude.md", Q}, // the pattern is folded too
        {"/w/docs/CLAUDE.md", Q},
        {"/h/.ssh\xFF/x", A},   // invalid UTF-8: no crash, no match
        {"/h/\xFF/.ssh/id", D}, // invalid bytes elsewhere don't hide it
        {"/h/\xFF/.SSH/id", D},
    }));
    CAPTURE(path);
    CHECK(judge(t, path) == expected);
}

TEST_CASE("allow rows lift an ask only on the exact bytes, and never lift a deny",
          "[patterns][allow]") {
    const auto t = make_table({{".claude", Q},
                               {".claude/notes.md", A},
                               {".env", D},
                               {".env", A},
                               {"docs/*.md", A},
                               {"docs", Q}});
    auto [path, expected] = GENERATE(table<std::string, Verdict>({
        {"/w/.claude/notes.md", A},
        {"/w/.claude/other.md", Q},
        {"/w/.CLAUDE/notes.md", Q}, // a folded spelling is caught, not granted
        {"/w/.claude/NOTES.md", Q},
        {"/w/.claude\\notes.md", Q}, // a backslash spelling is caught, not granted
        {"/w/.env", D},              // allow never lifts deny
        {"/w/docs/readme.md", A},
        {"/w/docs/README.MD", Q},
        {"/w/docs/sub/readme.md", Q},
        {"/w/docs/readme.md/inside", A}, // the allow row covers its descendants too
    }));
    CAPTURE(path);
    CHECK(judge(t, path) == expected);
}

TEST_CASE("partial matches find rows whose run passes through the last segment",
          "[patterns][partial]") {
    const auto t = make_table({{".git/hooks", D}, {".claude/settings.json", D}, {".env", Q}});
    CHECK(partial(t, "/r/.git") == D); // moving .git moves hooks/
    CHECK(partial(t, "/r/.GIT") == D);
    CHECK(partial(t, "/r/.claude") == D);
    CHECK(partial(t, "/r") == A);            // the repository dir: no run passes through
    CHECK(partial(t, "/r/.git/hooks") == A); // a full match is not a partial one
    CHECK(partial(t, "/r/.env") == A);       // a one-segment row has no proper prefix
}

TEST_CASE("the first stripped segments (a data root) do not start a match", "[patterns][strip]") {
    const auto t = make_table({{".sema", Q}, {".ssh", D}, {".sema/settings.json", D}});
    // /h/.sema/engine-data is the root: 3 segments.
    CHECK(judge(t, "/h/.sema/engine-data/mem.md", 3) == A);
    CHECK(judge(t, "/h/.sema/engine-data/x/.ssh/id_rsa", 3) == D);
    CHECK(judge(t, "/h/.sema/engine-data/.sema/x", 3) == Q);
    CHECK(judge(t, "/h/.sema/engine-data/mem.md", 0) == Q);
}

TEST_CASE("a row opening with an agent_config_dirs segment also guards below that directory",
          "[patterns][anchored]") {
    const auto t = make_table({{".claude", Q}, {".claude/settings.json", D}, {".claude/hooks", D}},
                              {{".claude", {"/srv/claude-config"}}});
    auto [path, expected] = GENERATE(table<std::string, Verdict>({
        {"/srv/claude-config/settings.json", D},
        {"/srv/claude-config/hooks/pre.sh", D},
        {"/srv/claude-config/notes.md", Q},
        {"/srv/claude-config", Q},
        {"/srv/claude-configx/settings.json", A},
        {"/srv/settings.json", A},
        {"/x/srv/claude-config/settings.json", A}, // anchored at the root, not anywhere
        {"/SRV/Claude-Config/Settings.json", D},   // wide like every deny row
        {"/w/.claude/settings.json", D},           // the pattern still guards .claude anywhere
    }));
    CAPTURE(path);
    CHECK(judge(t, path) == expected);
    // Renaming an ancestor of the anchored directory moves guarded paths.
    CHECK(partial(t, "/srv") == D);
}

TEST_CASE("the strongest verdict wins and names the lowest rule", "[patterns][fold]") {
    const auto t = make_table({{"a", Q}, {"b", D}, {"c", Q}});
    Readings r;
    r.build("/a/b/c", 0);
    const auto m = t.match_guard(r);
    REQUIRE(m.matched());
    CHECK(m.best.verdict == D);
    CHECK(t.rule(m.best.rule).pattern == "b");
    r.build("/c/a", 0);
    const auto m2 = t.match_guard(r);
    CHECK(m2.best.verdict == Q);
    CHECK(t.rule(m2.best.rule).pattern == "a");
}

TEST_CASE("many patterns sharing prefixes and suffixes still match exactly", "[patterns][trie]") {
    std::vector<Row> rows;
    for (int i = 0; i < 500; ++i) {
        rows.push_back({"lit" + std::to_string(i), D});
        rows.push_back({"pre" + std::to_string(i) + "*", Q});
        rows.push_back({"*.ext" + std::to_string(i), Q});
        rows.push_back({"dir" + std::to_string(i) + "/sub*/leaf", D});
    }
    const auto t = make_table(rows);
    CHECK(judge(t, "/x/lit499") == D);
    CHECK(judge(t, "/x/lit500") == A);
    CHECK(judge(t, "/x/pre42-whatever") == Q);
    CHECK(judge(t, "/x/file.ext7") == Q);
    CHECK(judge(t, "/x/file.ext7x") == A);
    CHECK(judge(t, "/x/dir9/subway/leaf") == D);
    CHECK(judge(t, "/x/dir9/way/leaf") == A);
}

TEST_CASE("globs with '*' at both ends match as the glob alone does, with few or many pairs",
          "[patterns][trie]") {
    // The trie tries such a glob only at a pair of bytes of its longest chunk: found with
    // memchr when the pairs start with few distinct bytes, by a filter on every byte when
    // they start with many. Checked against SegmentGlob::matches on every name of up to four
    // bytes over the alphabet, and the rule named must be the first row that matches.
    const std::vector<std::vector<std::string>> row_sets{
        {"*ab*", "*ba*", "*aab*", "*bb*a*", "*abc*d*"},                         // 'a', 'b'
        {"*ab*", "*bc*", "*cd*", "*de*", "*ea*", "*dd*", "*cab*", "*e*db*c*"}}; // 'a'-'e'
    const std::string alphabet = "abcde";
    for (const auto& patterns : row_sets) {
        std::vector<Row> rows;
        std::vector<SegmentGlob> globs;
        for (const auto& p : patterns) {
            rows.push_back({p, D});
            globs.emplace_back(p);
        }
        const auto t = make_table(rows);
        std::vector<std::string> names{""};
        for (std::size_t len = 1; len <= 4; ++len) {
            std::vector<std::string> longer;
            for (const auto& n : names) {
                if (n.size() + 1 == len) {
                    for (const char c : alphabet) {
                        longer.push_back(n + c);
                    }
                }
            }
            names.insert(names.end(), longer.begin(), longer.end());
        }
        Readings r;
        for (const auto& name : names) {
            if (name.empty()) {
                continue;
            }
            CAPTURE(name);
            std::string expected;
            for (std::size_t i = 0; i < globs.size() && expected.empty(); ++i) {
                if (globs[i].matches(name)) {
                    expected = patterns[i];
                }
            }
            const std::string path = "/dir/" + name; // the readings are views of it
            r.build(path, 0);
            const auto m = t.match_guard(r);
            CHECK(m.matched() == !expected.empty());
            if (m.matched()) {
                CHECK(t.rule(m.best.rule).pattern == expected);
            }
        }
    }
}

TEST_CASE("matching a path resumed after its directory gives what matching it whole gives",
          "[patterns][trie][resume]") {
    // The rows mix every kind of segment the trie indexes differently (literals, prefixes,
    // suffixes, '*' at both ends, lone '*'), runs of several segments, folded and anchored
    // rows; the paths mix names that start, continue and end those runs, upper case, a
    // backslash and non-ASCII bytes, at every depth.
    const auto t = make_table({{".ssh", D},
                               {".env", Q},
                               {".env.*", D},
                               {"*.pem", D},
                               {"id_*", Q},
                               {"*secret*", D},
                               {".git/hooks", D},
                               {"a/b/c", D},
                               {"a/*/d", Q},
                               {"*/x/*", Q},
                               {"Node_Modules/.bin", D},
                               {"*", Q},
                               {".claude", Q},
                               {".claude/settings.json", D},
                               {"deep/er/still/more", D},
                               {"b/c", Q},
                               {"*.PEM.bak", D}},
                              {{".claude", {"/srv/claude", "/a/b"}}});
    const std::vector<std::string> names{"a",
                                         "b",
                                         "c",
                                         "d",
                                         "x",
                                         ".ssh",
                                         ".env",
                                         ".env.prod",
                                         "k.pem",
                                         "K.PEM",
                                         "id_rsa",
                                         "mysecretfile",
                                         ".git",
                                         "hooks",
                                         "srv",
                                         "claude",
                                         ".claude",
                                         "settings.json",
                                         "node_modules",
                                         ".BIN",
                                         "a\\b",
                                         "\xc3\xa9t\xc3\xa9",
                                         "deep",
                                         "er",
                                         "still",
                                         "more",
                                         "K.pem.bak",
                                         "file.txt"};
    std::uint32_t seed = 12345;
    auto next = [&seed] {
        seed = seed * 1103515245U + 12345U;
        return (seed >> 16U) & 0x7fffU;
    };
    const auto verdict_of = [](const GuardMatch& m) {
        return m.matched() ? std::pair{m.best.verdict, m.best.rule} : std::pair{A, kNoRule};
    };
    Readings whole;
    Readings below;
    for (int n = 0; n < 3000; ++n) {
        const std::size_t depth = 1 + next() % 7;
        std::string path;
        for (std::size_t i = 0; i < depth; ++i) {
            path += "/" + names[next() % names.size()];
        }
        CAPTURE(path);
        whole.build(path, 0);
        const auto expected = verdict_of(t.match_guard(whole));
        // Resumed after every directory above the path, not only the nearest.
        for (std::size_t at = path.find('/', 1); at != std::string::npos;
             at = path.find('/', at + 1)) {
            GuardPrefix dir;
            dir.reset(std::string_view(path).substr(0, at));
            CAPTURE(path.substr(0, at));
            CHECK(verdict_of(t.match_guard(whole, dir)) == expected);
        }
        // As the judge reads it below the nearest directory: the name alone read again.
        const std::size_t last = path.rfind('/');
        if (last != 0) {
            GuardPrefix dir;
            dir.reset(std::string_view(path).substr(0, last));
            below.build_below(dir.readings(), std::string_view(path).substr(last + 1));
            CHECK(verdict_of(t.match_guard(below, dir)) == expected);
        }
        // A directory's state carried down from one above it (DirMemo), for every pair of
        // directories on the path; the one above used first by this path (its readings'
        // states made), by a path without capitals, or not at all (nothing to carry).
        std::vector<std::size_t> slashes;
        for (std::size_t at = path.find('/', 1); at != std::string::npos;
             at = path.find('/', at + 1)) {
            slashes.push_back(at);
        }
        for (std::size_t a = 0; a < slashes.size(); ++a) {
            for (std::size_t d = a + 1; d < slashes.size(); ++d) {
                const std::string_view upper = std::string_view(path).substr(0, slashes[a]);
                const std::string_view lower = std::string_view(path).substr(0, slashes[d]);
                CAPTURE(upper, lower);
                GuardPrefix above;
                above.reset(upper);
                const std::string plain = std::string(upper) + "/x/file.txt";
                Readings other;
                switch (next() % 3) {
                case 0:
                    (void)t.match_guard(whole, above);
                    break;
                case 1:
                    other.build(plain, 0);
                    (void)t.match_guard(other, above);
                    break;
                default:
                    break;
                }
                GuardPrefix carried;
                t.carry_down(above, lower, carried);
                CHECK(verdict_of(t.match_guard(whole, carried)) == expected);
                if (d + 1 == slashes.size()) {
                    below.build_below(carried.readings(),
                                      std::string_view(path).substr(slashes[d] + 1));
                    CHECK(verdict_of(t.match_guard(below, carried)) == expected);
                }
            }
        }
    }
}
