// Segment globs (design §2), in the manner of git's t3070-wildmatch table: `*` stays inside one
// segment and is the only metacharacter.
#include "patterns/glob.hpp"

#include <catch2/catch.hpp>

#include <string_view>
#include <tuple>

using guardfs::patterns::SegmentGlob;

TEST_CASE("a segment glob treats only '*' as a wildcard", "[patterns][glob]") {
    auto [glob, name, expected] = GENERATE(table<std::string_view, std::string_view, bool>({
        {"foo", "foo", true},
        {"foo", "Foo", false}, // exact bytes; folding is the readings' job
        {"foo", "foobar", false},
        {"*", "", true}, // '*' may match nothing
        {"*", "anything", true},
        {"*.pem", "key.pem", true},
        {"*.pem", ".pem", true},
        {"*.pem", "key.pem.bak", false},
        {".env.*", ".env.local", true},
        {".env.*", ".env.", true},
        {".env.*", ".env", false},
        {"id_rsa*", "id_rsa", true},
        {"id_rsa*", "id_rsa.pub", true},
        {"*service-account*.json", "my-service-account-1.json", true},
        {"*service-account*.json", "service-account.json", true},
        {"*service-account*.json", "service-accoun.json", false},
        {"a*b*c", "abc", true},
        {"a*b*c", "aXbYc", true},
        {"a*b*c", "acb", false},
        {"a*a", "a", false}, // prefix and suffix may not overlap
        {"a*a", "aa", true},
        {"?", "?", true}, // '?' is literal
        {"?", "x", false},
        {"[ab]", "a", false}, // '[...]' is literal
        {"[ab]", "[ab]", true},
        {"\\x", "\\x", true}, // '\' is literal
        {"\\x", "x", false},
        {"**", "deep", true}, // '**' is just two stars: one segment
        {"{a,b}", "a", false},
    }));
    CAPTURE(glob, name);
    CHECK(SegmentGlob(glob).matches(name) == expected);
}

TEST_CASE("a literal segment keeps '*' as a byte", "[patterns][glob]") {
    const auto g = SegmentGlob::literal("a*b");
    CHECK(g.matches("a*b"));
    CHECK_FALSE(g.matches("axb"));
    CHECK(g.with_text("c*d").matches("c*d"));
    CHECK_FALSE(g.with_text("c*d").matches("cxd"));
}
