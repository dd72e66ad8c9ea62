// Compiling patterns (design §2): what is an error, and what loads with a warning.
#include "patterns/pattern.hpp"

#include <catch2/catch.hpp>

#include <string>

using guardfs::base::ErrorCode;
using guardfs::patterns::compile_pattern;

TEST_CASE("patterns that would guard nothing are errors", "[patterns][compile]") {
    auto [text, code] = GENERATE(table<std::string, ErrorCode>({
        {"", ErrorCode::PatternEmpty},
        {"/", ErrorCode::PatternEmpty},
        {"//", ErrorCode::PatternEmpty},
        {"///", ErrorCode::PatternEmpty},
        {"~/.ssh", ErrorCode::PatternTildeAnchored},
        {"~", ErrorCode::PatternTildeAnchored},
        {"~user/.ssh", ErrorCode::PatternTildeAnchored},
        {"/~/.ssh", ErrorCode::PatternTildeAnchored}, // empty segments dropped first
        {"//~", ErrorCode::PatternTildeAnchored},
        {"./src", ErrorCode::PatternDotSegment},
        {"a/../b", ErrorCode::PatternDotSegment},
        {std::string("a\0b", 3), ErrorCode::PatternNul},
    }));
    CAPTURE(text);
    auto r = compile_pattern(text);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code == code);
}

TEST_CASE("empty segments are dropped", "[patterns][compile]") {
    auto r = compile_pattern("a//b/");
    REQUIRE(r.has_value());
    REQUIRE(r->segments.size() == 2);
    CHECK(r->segments[0].text() == "a");
    CHECK(r->segments[1].text() == "b");
}

TEST_CASE("other tools' syntax loads with a warning that says what it matches",
          "[patterns][compile][warnings]") {
    auto [text, needle] = GENERATE(table<std::string, std::string>({
        {"**/.env", "write '.env'"},
        {"/secrets", "does not anchor"},
        {"id_rsa?", "'?' is literal"},
        {"[Ss]ecrets", "'[...]' is literal"},
        {"secrets.{json,yml}", "not alternation"},
        {"build/", "trailing '/'"},
        {"**", "every path"},
    }));
    CAPTURE(text);
    auto r = compile_pattern(text);
    REQUIRE(r.has_value());
    REQUIRE_FALSE(r->warnings.empty());
    bool found = false;
    for (const auto& w : r->warnings) {
        found = found || w.find(needle) != std::string::npos;
    }
    CHECK(found);
}

TEST_CASE("plain patterns load without warnings", "[patterns][compile][warnings]") {
    for (const char* text : {".env", ".env.*", "*.pem", ".git/hooks", "credentials"}) {
        CAPTURE(text);
        auto r = compile_pattern(text);
        REQUIRE(r.has_value());
        CHECK(r->warnings.empty());
    }
}
