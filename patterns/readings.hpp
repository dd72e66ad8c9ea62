// The readings of a target path that deny/ask matching tries (design §2): the raw bytes, the
// folded reading (NFC, case folded) and, when a name holds a backslash, both again with `\` as
// a separator. Any reading that matches counts. Allow matching uses the raw reading alone.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace guardfs::patterns {

enum class Reading : unsigned char { Raw, Folded, Backslash, FoldedBackslash };

const char* to_string(Reading r) noexcept;

struct ReadingView {
    Reading kind;
    std::span<const std::string_view> segs;
    std::size_t strip; // leading segments inside the data root (see RuleTable)
};

// Holds the readings of one path. Reuse one object per thread: build() keeps its buffers.
class Readings {
public:
    // Splits path on '/', and builds the other readings only where they differ from the raw one
    // (all four in order, Raw, Folded, Backslash, FoldedBackslash, with `every_reading`).
    // strip_raw is the number of leading raw segments that lie inside a data root (0 for none).
    // The views returned below stay valid until the next build() or the object's destruction,
    // and only while `path`'s storage lives: raw segments, and folded ones that fold to
    // themselves, are views of it.
    void build(std::string_view path, std::size_t strip_raw, bool every_reading = false);

    // The same as build(dir_path + "/" + name, 0), where `dir` was built from dir_path with
    // every_reading and `name` holds no '/': the directory's segments are copied, not scanned
    // again, and only the name is read. The views point into `dir` and `name` as well, and
    // stay valid only while both do (and `dir` is not built again).
    void build_below(const Readings& dir, std::string_view name);

    // The same as build(path, 0, true), where `above` was built from above_path with
    // every_reading and path lies below it (above_path + "/" + more): when above_path has
    // nothing to fold or split, its segments are taken from `above` (as views of path, which
    // holds the same bytes), not scanned again. The views point into path alone. An `above`
    // whose segments are not views of above_path is not trusted: path is then read in full.
    void build_dir_below(const Readings& above, std::string_view above_path, std::string_view path);

    [[nodiscard]] std::span<const ReadingView> all() const noexcept { return views_; }

    // Readings that find every row all() finds: for a path of ASCII bytes with a capital and no
    // backslash, the folded reading alone (the raw one with A-Z lowered, segment for segment;
    // rows are matched in their raw and their folded spelling, and an ASCII run that matches
    // the one matches the other once lowered); otherwise all(). What they find may be reported
    // on another reading than all() would: use them to learn that nothing matches.
    [[nodiscard]] std::span<const ReadingView> covering() const noexcept;

    [[nodiscard]] std::span<const std::string_view> raw() const noexcept { return raw_; }

    [[nodiscard]] std::size_t raw_strip() const noexcept { return strip_raw_; }

private:
    static constexpr std::size_t kUsualSegments = 8;

    // Empties the readings for a new path, with room for its segments and every reading.
    void start();

    // Adds the Folded, Backslash and FoldedBackslash readings as the raw segments themselves
    // (a path with nothing to fold or split), after the Raw one.
    void share_raw_segments();

    std::vector<std::string_view> raw_;
    std::vector<std::string_view> folded_;
    std::vector<std::string_view> bs_raw_;
    std::vector<std::string_view> bs_folded_;
    std::string folded_buf_;
    std::vector<std::size_t> offsets_;
    std::vector<std::size_t> to_fold_; // raw segments with a capital or a non-ASCII byte
    std::vector<ReadingView> views_;
    std::size_t strip_raw_ = 0;
    bool any_fold_ = false;      // some segment needs folding (every_reading aside)
    bool any_backslash_ = false; // some segment holds a backslash (every_reading aside)
    bool any_high_ = false;      // some segment holds a byte of 0x80 or more
};

} // namespace guardfs::patterns
