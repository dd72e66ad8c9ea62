// The readings of a path (design §2): the raw segments, the folded reading segment by segment,
// and the backslash readings. Checked against folding each raw segment on its own, with one
// Readings object reused from path to path as the judge reuses it.
#include "patterns/fold.hpp"
#include "patterns/readings.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

using namespace guardfs::patterns;

namespace {

std::vector<std::string> copy(std::span<const std::string_view> segs) {
    return {segs.begin(), segs.end()};
}

std::vector<std::string> folded_each(std::span<const std::string_view> segs) {
    std::vector<std::string> out;
    for (const auto s : segs) {
        out.push_back(fold(s));
    }
    return out;
}

// The non-empty parts of s between separators `sep`, built up one character at a time (a
// reference written unlike the code under test).
std::vector<std::string> parts(std::string_view s, char sep) {
    std::vector<std::string> out;
    std::string part;
    for (const char c : s) {
        if (c != sep) {
            part += c;
        } else if (!part.empty()) {
            out.push_back(std::move(part));
            part.clear();
        }
    }
    if (!part.empty()) {
        out.push_back(std::move(part));
    }
    return out;
}

const ReadingView* find(const Readings& r, Reading kind) {
    for (const auto& v : r.all()) {
        if (v.kind == kind) {
            return &v;
        }
    }
    return nullptr;
}

// `got` holds the same readings as `want`, in the same order, none of them stripped.
void check_same_readings(const Readings& got, const Readings& want) {
    REQUIRE(got.all().size() == want.all().size());
    for (std::size_t k = 0; k < want.all().size(); ++k) {
        const ReadingView& w = want.all()[k];
        const ReadingView& g = got.all()[k];
        CAPTURE(to_string(w.kind));
        CHECK(g.kind == w.kind);
        CHECK(g.strip == 0);
        CHECK(copy(g.segs) == copy(w.segs));
    }
}

// Random text for the tests below: a linear congruential sequence from `seed`; words of up to
// `max` bytes, one byte in `one_in` drawn from `alphabet` and the others plain lower-case
// letters, so that the bytes looked for stand alone.
class RandomText {
public:
    RandomText(std::uint32_t seed, std::string alphabet, unsigned one_in)
        : state_(seed)
        , alphabet_(std::move(alphabet))
        , one_in_(one_in) {}

    unsigned next() {
        state_ = state_ * 1103515245U + 12345U;
        return state_ >> 16;
    }

    std::string word(unsigned max) {
        std::string w;
        const unsigned len = next() % (max + 1);
        for (unsigned k = 0; k < len; ++k) {
            w += next() % one_in_ == 0 ? alphabet_[next() % alphabet_.size()]
                                       : static_cast<char>('a' + next() % 26);
        }
        return w;
    }

private:
    std::uint32_t state_;
    std::string alphabet_;
    unsigned one_in_;
};

} // namespace

TEST_CASE("the folded reading folds each segment that needs it and keeps the others",
          "[patterns][readings]") {
    Readings r; // reused: each build starts afresh
    const std::vector<std::string> paths = {
        "/var/tmp/ws/cmake-3.25/Modules/FindBoost.cmake",
        "/home/u/.SSH/id_rsa",
        "/w/caf\xC3\xA9/CAFE\xCC\x81/x",
        "/Upper/lower/Upper",
        "/h/\xFF/.SSH/id",
        "/all/lower/case",
        "/w/.CLAUDE\\SETTINGS.json",
        "/A",
    };
    for (const bool every : {false, true}) {
        for (const auto& path : paths) {
            CAPTURE(path, every);
            r.build(path, 1, every);
            const auto raw = copy(r.raw());
            const ReadingView* folded = find(r, Reading::Folded);
            const bool needs = every || needs_fold(path);
            REQUIRE((folded != nullptr) == needs);
            if (folded != nullptr) {
                CHECK(copy(folded->segs) == folded_each(r.raw()));
                CHECK(folded->strip == 1);
            }
            const ReadingView* fbs = find(r, Reading::FoldedBackslash);
            if (fbs != nullptr) {
                std::vector<std::string> want;
                for (const auto& s : folded_each(r.raw())) {
                    for (auto& part : parts(s, '\\')) {
                        want.push_back(std::move(part));
                    }
                }
                CHECK(copy(fbs->segs) == want);
            }
            CHECK(raw == copy(r.all().front().segs));
        }
    }
}

TEST_CASE("folding an ASCII name lowers its capitals only and appends", "[patterns][fold]") {
    std::string out = "kept/";
    fold_into("Modules-X_Y.Z@9", out);
    CHECK(out == "kept/modules-x_y.z@9");
    fold_into("", out);
    CHECK(out == "kept/modules-x_y.z@9");
}

TEST_CASE("which readings a path gets follows its bytes, wherever they stand in a segment",
          "[patterns][readings]") {
    // The bytes at the edges of the ranges the scan looks for ('@' and '[' around the
    // capitals, 0x7F and 0x80 around ASCII), in segments long and short, at every offset.
    RandomText text(12345, std::string("aZAz\\/@[`{\x7F") + "\x80\xC3\xA9\xFF", 4);
    Readings r;
    for (int round = 0; round < 4000; ++round) {
        const std::string path = "/" + text.word(39);
        const bool every = round % 5 == 0;
        CAPTURE(path, every);
        r.build(path, 0, every);
        REQUIRE(copy(r.raw()) == parts(path, '/'));
        const bool folds = every || needs_fold(path);
        const bool backslash = every || path.find('\\') != std::string::npos;
        REQUIRE((find(r, Reading::Folded) != nullptr) == folds);
        REQUIRE((find(r, Reading::Backslash) != nullptr) == backslash);
        REQUIRE((find(r, Reading::FoldedBackslash) != nullptr) == (folds && backslash));
        if (folds) {
            CHECK(copy(find(r, Reading::Folded)->segs) == folded_each(r.raw()));
        }
        // The folded reading alone covers the others only for ASCII with a capital and no
        // backslash, where it is the raw one lowered.
        const bool ascii = std::none_of(
            path.begin(), path.end(), [](char c) { return static_cast<unsigned char>(c) >= 0x80; });
        const bool lowered_only = !every && ascii && folds && !backslash;
        REQUIRE(r.covering().size() == (lowered_only ? 1 : r.all().size()));
        if (lowered_only) {
            CHECK(r.covering()[0].kind == Reading::Folded);
            std::string lowered = path;
            std::transform(lowered.begin(), lowered.end(), lowered.begin(), [](char c) {
                return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
            });
            CHECK(copy(r.covering()[0].segs) == parts(lowered, '/'));
        }
    }
}

TEST_CASE("the readings of a name below a directory are those of the whole path",
          "[patterns][readings]") {
    // Directories and names over the bytes that decide which readings there are (capitals,
    // backslashes, non-ASCII), either side of the last '/'; the name may be empty (a path
    // ending in '/'). One object for the directory, one reused below it, as the judge does.
    RandomText text(777, std::string("aZAz\\@[\x7F") + "\x80\xC3\xA9\xFF", 3);
    Readings dir;
    Readings whole;
    Readings below;
    for (int round = 0; round < 4000; ++round) {
        std::string dir_path;
        const unsigned depth = 1 + text.next() % 5;
        for (unsigned d = 0; d < depth; ++d) {
            dir_path += "/" + text.word(12);
        }
        const std::string name = text.word(16);
        const std::string path = dir_path + "/" + name;
        CAPTURE(path);
        dir.build(dir_path, 0, true);
        whole.build(path, 0);
        below.build_below(dir, name);
        check_same_readings(below, whole);
        CHECK(below.raw_strip() == 0);
        CHECK(copy(below.raw()) == copy(whole.raw()));
        REQUIRE(below.covering().size() == whole.covering().size());
        CHECK(below.covering().front().kind == whole.covering().front().kind);
    }
}

TEST_CASE("the readings of a directory below another are those of its whole path",
          "[patterns][readings]") {
    // A directory state carried down from the one above it (RuleTable::carry_down): the upper
    // directory's segments are taken rather than scanned when neither it nor the rest has
    // anything to fold or split, and the whole path is read otherwise. Either way the result is
    // build(path, 0, true)'s, and its views point into the lower path alone: the upper one's
    // storage and readings are overwritten before they are compared. A lower path that is not
    // below the upper one (a sibling sharing its prefix), or an upper path that is not the
    // storage the upper readings were built from, is read in full.
    RandomText text(4242, std::string("aZ\\\x80\xC3\xA9"), 40);
    Readings above;
    Readings whole;
    Readings below;
    for (int round = 0; round < 4000; ++round) {
        std::string above_path;
        const unsigned depth = 1 + text.next() % 4;
        for (unsigned d = 0; d < depth; ++d) {
            above_path += "/" + text.word(10);
        }
        std::string path = above_path;
        const unsigned more = text.next() % 3;
        for (unsigned d = 0; d < more; ++d) {
            path += "/" + text.word(10);
        }
        if (round % 7 == 0) {
            path += "x"; // a sibling sharing the prefix, not below it
        } else if (path == above_path) {
            path += "//y";
        }
        CAPTURE(above_path, path);
        std::string above_storage = above_path;
        above.build(above_storage, 0, true);
        whole.build(path, 0, true);
        // One round in five names a copy of the upper path, not the storage `above` was built
        // from: its segments are then not taken.
        const std::string other_copy = above_storage;
        below.build_dir_below(above, round % 5 == 1 ? other_copy : above_storage, path);
        std::fill(above_storage.begin(), above_storage.end(), '#');
        above.build("/overwritten/Q", 0, true);
        check_same_readings(below, whole);
        CHECK(copy(below.raw()) == parts(path, '/'));
        REQUIRE(below.covering().size() == whole.covering().size());
        CHECK(below.covering().front().kind == whole.covering().front().kind);
    }
}
