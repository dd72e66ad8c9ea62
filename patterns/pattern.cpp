// Pattern compilation and the other-tool-syntax warnings; see pattern.hpp.
// The warnings exist because silent no-op rules are the failure users of other guards report
// most (research/anchors-policy.md §8.4): a row that means something else here must say so.
#include "patterns/pattern.hpp"

#include "base/path.hpp"

#include <fmt/format.h>

namespace guardfs::patterns {

using base::ErrorCode;

namespace {

void add_syntax_warnings(std::string_view text, const std::vector<std::string_view>& segs,
                         std::vector<std::string>& warnings) {
    if (!text.empty() && text.front() == '/') {
        warnings.push_back(fmt::format(
            "a leading '/' does not anchor here: '{}' matches '{}' at any depth, not only at "
            "the root",
            text, fmt::join(segs, "/")));
    }
    std::vector<std::string_view> without_globstar;
    bool has_globstar = false;
    for (auto s : segs) {
        if (s == "**") {
            has_globstar = true;
        } else {
            without_globstar.push_back(s);
        }
    }
    if (has_globstar) {
        if (without_globstar.empty()) {
            warnings.push_back(fmt::format(
                "'**' is not a multi-directory wildcard here: it matches exactly one segment, "
                "so '{}' matches every path at least {} segment(s) deep",
                text, segs.size()));
        } else {
            warnings.push_back(fmt::format(
                "'**' is not a multi-directory wildcard here: it matches exactly one segment "
                "(any name), so '{}' matches '{}' only below some directory; patterns already "
                "match at any depth, so write '{}'",
                text, fmt::join(without_globstar, "/"), fmt::join(without_globstar, "/")));
        }
    }
    if (text.find('?') != std::string_view::npos) {
        warnings.push_back(fmt::format(
            "'?' is literal here, not a wildcard: '{}' matches only names containing a '?'", text));
    }
    const auto open = text.find('[');
    if (open != std::string_view::npos && text.find(']', open) != std::string_view::npos) {
        warnings.push_back(
            fmt::format("'[...]' is literal here, not a character class: '{}' matches only names "
                        "containing those brackets",
                        text));
    }
    if (text.find('{') != std::string_view::npos && text.find('}') != std::string_view::npos &&
        text.find(',') != std::string_view::npos) {
        warnings.push_back(fmt::format(
            "'{{a,b}}' is literal here, not alternation: '{}' matches only names containing "
            "the braces; write one row per alternative",
            text));
    }
    if (text.size() > 1 && text.back() == '/') {
        warnings.push_back(
            fmt::format("a trailing '/' is dropped: '{}' matches files and directories alike (and "
                        "everything below them)",
                        text));
    }
}

} // namespace

base::Result<CompiledPattern> compile_pattern(std::string_view text) {
    if (text.find('\0') != std::string_view::npos) {
        return base::fail(ErrorCode::PatternNul, "pattern contains a NUL byte");
    }
    const auto segs = base::split_segments(text);
    // Empty segments are dropped first, so '/~/.ssh' opens with '~' as '~/.ssh' does.
    if (!segs.empty() && segs.front().front() == '~') {
        return base::fail(ErrorCode::PatternTildeAnchored,
                          fmt::format("pattern '{}' opens with '~': home anchoring is not part "
                                      "of the syntax; write the segments alone (e.g. '.ssh'), "
                                      "which match at any depth",
                                      text));
    }
    if (segs.empty()) {
        return base::fail(
            ErrorCode::PatternEmpty,
            fmt::format("pattern '{}' has no segments and would guard nothing", text));
    }
    for (auto s : segs) {
        if (s == "." || s == "..") {
            return base::fail(ErrorCode::PatternDotSegment,
                              fmt::format("pattern '{}' has a '{}' segment, which never "
                                          "appears in a resolved path, so the row would match "
                                          "nothing",
                                          text, s));
        }
    }
    CompiledPattern out;
    out.text = std::string(text);
    out.segments.reserve(segs.size());
    for (auto s : segs) {
        out.segments.emplace_back(s);
    }
    add_syntax_warnings(text, segs, out.warnings);
    return out;
}

} // namespace guardfs::patterns
