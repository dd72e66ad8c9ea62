// The folded reading (design §2): NFC with case folded, by utf8proc; invalid UTF-8 neither
// crashes nor disappears.
#include "patterns/fold.hpp"

#include <catch2/catch.hpp>

#include <string>

using guardfs::patterns::fold;
using guardfs::patterns::needs_fold;

TEST_CASE("folding lowers ASCII and leaves lower case alone", "[patterns][fold]") {
    CHECK(fold(".SSH") == ".ssh");
    CHECK(fold("Id_RSA") == "id_rsa");
    CHECK(fold("already.lower") == "already.lower");
    CHECK_FALSE(needs_fold("already.lower"));
    CHECK(needs_fold("Upper"));
    CHECK(needs_fold("caf\xC3\xA9"));
}

TEST_CASE("folding composes decomposed Unicode (NFC)", "[patterns][fold]") {
    // "é" as e + COMBINING ACUTE ACCENT folds to the precomposed U+00E9.
    CHECK(fold("caf"
               "e\xCC\x81") == "caf\xC3\xA9");
    // and an upper-case decomposed É folds to the same.
    CHECK(fold("CAF"
               "E\xCC\x81") == "caf\xC3\xA9");
}

TEST_CASE("folding uses Unicode case folding, not just ASCII", "[patterns][fold]") {
    CHECK(fold("\xE2\x84\xAA") == "k"); // KELVIN SIGN
    CHECK(fold(".\xC5\xBF"
               "sh") == ".ssh"); // LATIN SMALL LETTER LONG S
    CHECK(fold("STRA\xC3\x9F"
               "E") == "strasse"); // sharp s folds to "ss"
}

TEST_CASE("invalid UTF-8 keeps its bytes and folds the valid parts", "[patterns][fold]") {
    const std::string in = std::string(".SSH") + "\xFF" + "X\xC3";
    const std::string out = fold(in);
    CHECK(out == std::string(".ssh") + "\xFF" + "x\xC3");
    // overlong '/' and a lone surrogate are not decoded into anything
    CHECK(fold("\xC0\xAF") == "\xC0\xAF");
    CHECK(fold("\xED\xA0\x80") == "\xED\xA0\x80");
}

TEST_CASE("folds_to agrees with fold for ASCII, Unicode and invalid names", "[patterns][fold]") {
    const std::string inputs[] = {".git",         ".GIT",      ".Git",      ".gitx",
                                  ".gi",          "commondir", "CommonDir", "commondi\xE2\x84\xAA",
                                  "\xE2\x84\xAA", ".git\xFF",  "",          ".g\xC3\xAFt",
                                  "COMMONDIR "};
    const std::string targets[] = {".git", "commondir", "k", ""};
    for (const auto& s : inputs) {
        for (const auto& t : targets) {
            CAPTURE(s, t);
            CHECK(guardfs::patterns::folds_to(s, t) == (fold(s) == t));
        }
    }
    CHECK(guardfs::patterns::folds_to("\xE2\x84\xAA", "k")); // KELVIN SIGN, via full folding
    CHECK(guardfs::patterns::folds_to(".GiT", ".git"));
}

TEST_CASE("is_ascii finds a byte of 0x80 or more at any position and length", "[patterns][fold]") {
    // Eight bytes at a time and then one by one: every length up to three words, every
    // position of the one high byte, and the boundary bytes 0x7F and 0x80.
    for (std::size_t len = 0; len <= 24; ++len) {
        const std::string ascii(len, '\x7F');
        CAPTURE(len);
        CHECK(guardfs::patterns::is_ascii(ascii));
        for (std::size_t at = 0; at < len; ++at) {
            std::string s = ascii;
            s[at] = '\x80';
            CAPTURE(at);
            CHECK_FALSE(guardfs::patterns::is_ascii(s));
        }
    }
}

TEST_CASE("folding ASCII lowers A-Z alone at any position and length", "[patterns][fold]") {
    // Eight bytes at a time, the last word read again, and then byte by byte below eight: every
    // length up to three words, every ASCII byte at every position, among capitals and
    // lower-case letters, appended after what the output already holds.
    auto lowered = [](std::string s) {
        for (char& c : s) {
            c = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
        }
        return s;
    };
    for (std::size_t len = 0; len <= 24; ++len) {
        std::string base;
        for (std::size_t k = 0; k < len; ++k) {
            base += k % 3 == 0 ? static_cast<char>('A' + k) : static_cast<char>('z' - k);
        }
        for (std::size_t at = 0; at < len; ++at) {
            for (int b = 0; b < 0x80; ++b) {
                std::string s = base;
                s[at] = static_cast<char>(b);
                std::string out = "Keep/";
                guardfs::patterns::fold_into(s, out);
                CAPTURE(len, at, b);
                REQUIRE(out == "Keep/" + lowered(s));
            }
        }
    }
}
