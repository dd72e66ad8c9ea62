// Segment glob matching; see glob.hpp. With `*` as the only metacharacter, matching the
// middle chunks leftmost-first is exact: a later placement can never succeed where the
// leftmost one failed.
#include "patterns/glob.hpp"

namespace guardfs::patterns {

SegmentGlob::SegmentGlob(std::string_view text) : text_(text) {
    std::size_t start = 0;
    for (;;) {
        const std::size_t star = text.find('*', start);
        if (star == std::string_view::npos) {
            chunks_.emplace_back(text.substr(start));
            break;
        }
        chunks_.emplace_back(text.substr(start, star - start));
        start = star + 1;
    }
}

SegmentGlob SegmentGlob::literal(std::string_view text) {
    SegmentGlob g;
    g.text_ = std::string(text);
    g.literal_only_ = true;
    g.chunks_.emplace_back(text);
    return g;
}

SegmentGlob SegmentGlob::with_text(std::string_view text) const {
    return literal_only_ ? literal(text) : SegmentGlob(text);
}

std::string_view SegmentGlob::longest_chunk() const noexcept {
    std::string_view best;
    for (const std::string& c : chunks_) {
        if (c.size() > best.size()) {
            best = c;
        }
    }
    return best;
}

bool SegmentGlob::matches(std::string_view seg) const noexcept {
    if (chunks_.size() == 1) {
        return seg == chunks_.front();
    }
    const std::string& first = chunks_.front();
    const std::string& last = chunks_.back();
    if (seg.size() < first.size() + last.size()) {
        return false;
    }
    if (seg.substr(0, first.size()) != first) {
        return false;
    }
    if (seg.substr(seg.size() - last.size()) != last) {
        return false;
    }
    std::string_view middle = seg.substr(first.size(), seg.size() - first.size() - last.size());
    for (std::size_t i = 1; i + 1 < chunks_.size(); ++i) {
        const std::size_t at = middle.find(chunks_[i]);
        if (at == std::string_view::npos) {
            return false;
        }
        middle.remove_prefix(at + chunks_[i].size());
    }
    return true;
}

} // namespace guardfs::patterns
