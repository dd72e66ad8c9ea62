// Building the readings of a path; see readings.hpp.
#include "patterns/readings.hpp"

#include "patterns/fold.hpp"

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

// Splits each segment of in at '\' into out (empty parts dropped); returns how many parts the
// first `strip` segments produced.
std::size_t split_backslash(std::span<const std::string_view> in, std::size_t strip,
                            std::vector<std::string_view>& out) {
    out.clear();
    std::size_t out_strip = 0;
    for (std::size_t i = 0; i < in.size(); ++i) {
        std::string_view s = in[i];
        std::size_t k = 0;
        while (k <= s.size()) {
            const std::size_t e = std::min(s.find('\\', k), s.size());
            if (e > k) {
                out.push_back(s.substr(k, e - k));
            }
            k = e + 1;
        }
        if (i + 1 == strip) {
            out_strip = out.size();
        }
    }
    return out_strip;
}

} // namespace

void Readings::build(std::string_view path, std::size_t strip_raw, bool every_reading) {
    raw_.clear();
    views_.clear();
    // One pass: the segments, and whether any needs folding or holds a backslash.
    bool any_fold = false;
    bool any_backslash = false;
    const auto* p = reinterpret_cast<const unsigned char*>(path.data());
    const std::size_t n = path.size();
    std::size_t i = 0;
    while (i < n) {
        while (i < n && p[i] == '/') {
            ++i;
        }
        const std::size_t start = i;
        unsigned folds = 0;
        unsigned backslash = 0;
        while (i < n && p[i] != '/') {
            const unsigned c = p[i];
            folds |= static_cast<unsigned>(c >= 0x80U) | static_cast<unsigned>(c - 'A' < 26U);
            backslash |= static_cast<unsigned>(c == '\\');
            ++i;
        }
        if (i > start) {
            raw_.push_back(path.substr(start, i - start));
            any_fold = any_fold || folds != 0;
            any_backslash = any_backslash || backslash != 0;
        }
    }
    strip_raw_ = std::min(strip_raw, raw_.size());
    views_.push_back(ReadingView{Reading::Raw, raw_, strip_raw_});
    any_fold = any_fold || every_reading;
    any_backslash = any_backslash || every_reading;
    if (any_fold) {
        folded_buf_.clear();
        offsets_.clear();
        for (const auto s : raw_) {
            offsets_.push_back(folded_buf_.size());
            fold_into(s, folded_buf_);
        }
        offsets_.push_back(folded_buf_.size());
        folded_.clear();
        for (std::size_t k = 0; k < raw_.size(); ++k) {
            folded_.push_back(
                std::string_view(folded_buf_).substr(offsets_[k], offsets_[k + 1] - offsets_[k]));
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

} // namespace guardfs::patterns
