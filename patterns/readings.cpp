// Building the readings of a path; see readings.hpp.
#include "patterns/readings.hpp"

#include "patterns/fold.hpp"

#include <cassert>
#include <cstdint>
#include <cstring>
#include <functional>

namespace guardfs::patterns {

const char* to_string(Reading r) noexcept {
    switch (r) {
    case Reading::Raw:
        return "raw";
    case Reading::Folded:
        return "folded";
    case Reading::Backslash:
        return "backslash";
    case Reading::FoldedBackslash:
        return "folded-backslash";
    }
    return "raw";
}

namespace {

// Appends the non-empty parts of s between backslashes to out.
void append_backslash_parts(std::string_view s, std::vector<std::string_view>& out) {
    std::size_t k = 0;
    while (k <= s.size()) {
        const std::size_t e = std::min(s.find('\\', k), s.size());
        if (e > k) {
            out.push_back(s.substr(k, e - k));
        }
        k = e + 1;
    }
}

// Splits each segment of in at '\' into out (empty parts dropped); returns how many parts the
// first `strip` segments produced.
std::size_t split_backslash(std::span<const std::string_view> in, std::size_t strip,
                            std::vector<std::string_view>& out) {
    out.clear();
    std::size_t out_strip = 0;
    for (std::size_t i = 0; i < in.size(); ++i) {
        append_backslash_parts(in[i], out);
        if (i + 1 == strip) {
            out_strip = out.size();
        }
    }
    return out_strip;
}

struct SegmentBytes {
    bool fold = false;      // a capital A-Z or a byte of 0x80 or more
    bool backslash = false; // a '\\'
    bool high = false;      // a byte of 0x80 or more
};

// What the bytes of one segment hold, eight at a time (SWAR: a byte's top bit says it holds one).
SegmentBytes scan_segment(const unsigned char* s, std::size_t len) noexcept {
    std::uint64_t fold = 0;
    std::uint64_t backslash = 0;
    std::uint64_t high = 0;
    auto take = [&](std::uint64_t w) {
        // A byte of 0x80 or more folds, counted by w itself whatever the sums do around it.
        fold |= w | ascii_capitals(w);
        // A zero byte in w ^ '\\'...: (v - 1) & ~v has its top bit set in a zero byte (and
        // perhaps above one: only "any" is asked; a borrow out of a zero byte only ever follows
        // a real backslash, so the zero padding of the last bytes adds none).
        const std::uint64_t v = w ^ (kByteOnes * '\\');
        backslash |= (v - kByteOnes) & ~v;
        high |= w;
    };
    std::size_t k = 0;
    for (; k + 8 <= len; k += 8) {
        take(load_word(s + k, 8));
    }
    if (k < len) {
        take(load_word(s + k, len - k)); // the last bytes, padded with zeros
    }
    return SegmentBytes{(fold & kByteHighs) != 0, (backslash & kByteHighs) != 0,
                        (high & kByteHighs) != 0};
}

// Calls f(segment, what its bytes hold) for each non-empty run of path between '/', from byte
// `from` on, in order, until f returns false. Returns whether every call returned true.
template <typename F>
bool for_each_segment(std::string_view path, std::size_t from, F&& f) {
    const auto* p = reinterpret_cast<const unsigned char*>(path.data());
    const std::size_t n = path.size();
    std::size_t i = from;
    while (i < n) {
        while (i < n && p[i] == '/') {
            ++i;
        }
        const std::size_t start = i;
        const void* slash = i < n ? std::memchr(p + i, '/', n - i) : nullptr;
        i = slash != nullptr
                ? static_cast<std::size_t>(static_cast<const unsigned char*>(slash) - p)
                : n;
        if (i > start && !f(path.substr(start, i - start), scan_segment(p + start, i - start))) {
            return false;
        }
    }
    return true;
}

} // namespace

void Readings::start() {
    raw_.clear();
    views_.clear();
    to_fold_.clear();
    // A fresh object (a directory's state the first time it is used) grows once, not by
    // doubling from one: to the room doubling reaches for five to eight segments (so a state
    // takes no more memory than before), and to every reading.
    raw_.reserve(kUsualSegments);
    views_.reserve(4);
}

void Readings::share_raw_segments() {
    views_.push_back(ReadingView{Reading::Folded, raw_, strip_raw_});
    views_.push_back(ReadingView{Reading::Backslash, raw_, strip_raw_});
    views_.push_back(ReadingView{Reading::FoldedBackslash, raw_, strip_raw_});
}

void Readings::build(std::string_view path, std::size_t strip_raw, bool every_reading) {
    start();
    // One pass: the segments, and whether any needs folding or holds a backslash.
    bool any_fold = false;
    bool any_backslash = false;
    bool any_high = false;
    for_each_segment(path, 0, [&](std::string_view seg, const SegmentBytes& seen) {
        raw_.push_back(seg);
        if (seen.fold) {
            to_fold_.push_back(raw_.size() - 1);
        }
        any_fold = any_fold || seen.fold;
        any_backslash = any_backslash || seen.backslash;
        any_high = any_high || seen.high;
        return true;
    });
    strip_raw_ = std::min(strip_raw, raw_.size());
    views_.push_back(ReadingView{Reading::Raw, raw_, strip_raw_});
    any_fold_ = any_fold;
    any_backslash_ = any_backslash;
    any_high_ = any_high;
    if (every_reading && !any_fold && !any_backslash) {
        // Every reading is the raw one: the views share its segments (a directory's state is
        // made this way whenever DirMemo meets a new directory).
        share_raw_segments();
        return;
    }
    any_fold = any_fold || every_reading;
    any_backslash = any_backslash || every_reading;
    if (any_fold) {
        // A segment of ASCII bytes without capitals folds to itself: its view is the raw one.
        // Only the others are folded, into one buffer (views made once it stops growing).
        folded_.assign(raw_.begin(), raw_.end());
        folded_buf_.clear();
        offsets_.clear();
        for (const std::size_t k : to_fold_) {
            offsets_.push_back(folded_buf_.size());
            fold_into(raw_[k], folded_buf_);
        }
        offsets_.push_back(folded_buf_.size());
        for (std::size_t j = 0; j < to_fold_.size(); ++j) {
            folded_[to_fold_[j]] =
                std::string_view(folded_buf_).substr(offsets_[j], offsets_[j + 1] - offsets_[j]);
        }
        views_.push_back(ReadingView{Reading::Folded, folded_, strip_raw_});
    }
    if (any_backslash) {
        const std::size_t s1 = split_backslash(raw_, strip_raw_, bs_raw_);
        views_.push_back(ReadingView{Reading::Backslash, bs_raw_, s1});
        if (any_fold) {
            const std::size_t s2 = split_backslash(folded_, strip_raw_, bs_folded_);
            views_.push_back(ReadingView{Reading::FoldedBackslash, bs_folded_, s2});
        }
    }
}

void Readings::build_dir_below(const Readings& above, std::string_view above_path,
                               std::string_view path) {
    const bool below = path.size() > above_path.size() && path[above_path.size()] == '/' &&
                       path.substr(0, above_path.size()) == above_path;
    if (!below || above.any_fold_ || above.any_backslash_ || above.views_.size() != 4) {
        build(path, 0, true);
        return;
    }
    start();
    const char* const from = above_path.data();
    const std::less<const char*> before; // a total order, for pointers into any object
    for (const std::string_view seg : above.raw_) {
        if (before(seg.data(), from) || before(from + above_path.size(), seg.data() + seg.size())) {
            build(path, 0, true); // `above` was not built from above_path's storage
            return;
        }
        // A view of above_path: the same bytes stand at the same offset in path.
        raw_.push_back(path.substr(static_cast<std::size_t>(seg.data() - from), seg.size()));
    }
    const bool plain = for_each_segment(path, above_path.size(),
                                        [this](std::string_view seg, const SegmentBytes& seen) {
                                            if (seen.fold || seen.backslash) {
                                                return false;
                                            }
                                            raw_.push_back(seg);
                                            return true;
                                        });
    if (!plain) {
        build(path, 0, true); // the readings differ below: made in full
        return;
    }
    strip_raw_ = 0;
    any_fold_ = false;
    any_backslash_ = false;
    any_high_ = false; // a high byte is one to fold
    // Every reading is the raw one, as build() makes them for such a path.
    views_.push_back(ReadingView{Reading::Raw, raw_, 0});
    share_raw_segments();
}

std::span<const ReadingView> Readings::covering() const noexcept {
    // Folding an ASCII byte lowers A-Z and keeps every other byte: the folded reading is the raw
    // one lowered byte for byte, with the same segments, and without a backslash there are no
    // other readings.
    if (!any_high_ && !any_backslash_ && views_.size() == 2 && views_[1].kind == Reading::Folded) {
        return std::span<const ReadingView>(views_).subspan(1);
    }
    return views_;
}

void Readings::build_below(const Readings& dir, std::string_view name) {
    // A directory built with every_reading holds all four readings, in order; its flags say
    // which of them a path below it needs when the name needs none.
    assert(dir.views_.size() == 4);
    const auto dir_folded = dir.views_[1].segs; // the directory's readings, in Reading order
    const auto dir_bs_raw = dir.views_[2].segs; // (views, not members: they may share one)
    const auto dir_bs_folded = dir.views_[3].segs;
    views_.clear();
    strip_raw_ = 0;
    raw_.assign(dir.raw_.begin(), dir.raw_.end());
    SegmentBytes seen;
    if (!name.empty()) {
        seen = scan_segment(reinterpret_cast<const unsigned char*>(name.data()), name.size());
        raw_.push_back(name);
    }
    any_fold_ = dir.any_fold_ || seen.fold;
    any_backslash_ = dir.any_backslash_ || seen.backslash;
    any_high_ = dir.any_high_ || seen.high;
    views_.push_back(ReadingView{Reading::Raw, raw_, 0});
    std::string_view folded_name = name;
    if (seen.fold) {
        folded_buf_.clear();
        fold_into(name, folded_buf_);
        folded_name = folded_buf_;
    }
    if (any_fold_) {
        folded_.assign(dir_folded.begin(), dir_folded.end());
        if (!name.empty()) {
            folded_.push_back(folded_name);
        }
        views_.push_back(ReadingView{Reading::Folded, folded_, 0});
    }
    if (any_backslash_) {
        bs_raw_.assign(dir_bs_raw.begin(), dir_bs_raw.end());
        append_backslash_parts(name, bs_raw_);
        views_.push_back(ReadingView{Reading::Backslash, bs_raw_, 0});
        if (any_fold_) {
            bs_folded_.assign(dir_bs_folded.begin(), dir_bs_folded.end());
            append_backslash_parts(folded_name, bs_folded_);
            views_.push_back(ReadingView{Reading::FoldedBackslash, bs_folded_, 0});
        }
    }
}

} // namespace guardfs::patterns
