// One compiled pattern segment (design §2): `*` matches any run of characters inside the
// segment and is the only metacharacter; every other byte, `?` `[` `]` `\` included, is literal.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace guardfs::patterns {

class SegmentGlob {
public:
    // Compiles one segment. Never fails: every byte sequence is a valid segment.
    explicit SegmentGlob(std::string_view text);

    // A segment whose every byte is literal, `*` included (a directory name, not a pattern).
    static SegmentGlob literal(std::string_view text);

    // The same kind of segment (glob or literal-only) over other text, e.g. its folded reading.
    [[nodiscard]] SegmentGlob with_text(std::string_view text) const;

    [[nodiscard]] bool matches(std::string_view seg) const noexcept;

    [[nodiscard]] bool is_literal() const noexcept { return chunks_.size() == 1; }

    [[nodiscard]] const std::string& text() const noexcept { return text_; }

    // The literal run before the first `*` (the whole text for a literal).
    [[nodiscard]] std::string_view prefix() const noexcept { return chunks_.front(); }

    // The literal run after the last `*` (the whole text for a literal).
    [[nodiscard]] std::string_view suffix() const noexcept { return chunks_.back(); }

    // The longest literal run (the first of equal length); every match contains it.
    [[nodiscard]] std::string_view longest_chunk() const noexcept;

private:
    SegmentGlob() = default;

    std::string text_;
    bool literal_only_ = false;
    std::vector<std::string> chunks_; // text_ split at each `*`; size 1 for a literal
};

} // namespace guardfs::patterns
