// The built-in tables (design §4): every row compiles cleanly, has a reason, and keeps the
// tier rule that configuration directories ask while files and executable bodies deny.
#include "guard/builtin_tables.hpp"
#include "patterns/pattern.hpp"

#include <catch2/catch.hpp>

#include <set>
#include <string>

using namespace guardfs;

TEST_CASE("every built-in row compiles without a warning and has a reason", "[guard][builtin]") {
    for (auto rows : {guard::recommended_rows(), guard::agent_config_rows()}) {
        std::set<std::string> seen;
        for (const auto& row : rows) {
            CAPTURE(row.pattern);
            auto c = patterns::compile_pattern(row.pattern);
            REQUIRE(c.has_value());
            CHECK(c->warnings.empty());
            CHECK_FALSE(row.reason.empty());
            CHECK(row.reason.find('\n') == std::string_view::npos);
            CHECK(row.verdict != patterns::Verdict::Allow);
            CHECK(seen.insert(std::string(row.pattern)).second); // no duplicate rows
        }
    }
}

TEST_CASE("the agent-configuration tier: directories ask, their files and bodies deny",
          "[guard][builtin][agent-config]") {
    auto verdict_of = [](std::string_view pattern) {
        for (const auto& row : guard::agent_config_rows()) {
            if (row.pattern == pattern) {
                return row.verdict;
            }
        }
        FAIL("no row " << pattern);
        return patterns::Verdict::Allow;
    };
    for (const char* dir : {".claude", ".sema", ".cursor", ".codex", ".gemini"}) {
        CAPTURE(dir);
        CHECK(verdict_of(dir) == patterns::Verdict::Ask);
    }
    for (const char* file :
         {".claude/settings.json", ".claude/settings.local.json", ".mcp.json",
          ".sema/settings.json", ".cursor/mcp.json", ".codex/config.toml", ".gemini/settings.json",
          ".claude/hooks", ".claude/agents", ".sema/hooks", ".sema/agents"}) {
        CAPTURE(file);
        CHECK(verdict_of(file) == patterns::Verdict::Deny);
    }
}

TEST_CASE("no built-in row reaches into a git directory (that is the git tier's)",
          "[guard][builtin]") {
    for (auto rows : {guard::recommended_rows(), guard::agent_config_rows()}) {
        for (const auto& row : rows) {
            CAPTURE(row.pattern);
            CHECK(row.pattern.find(".git/") == std::string_view::npos);
            CHECK(row.pattern != ".git");
        }
    }
}
