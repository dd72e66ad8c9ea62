// Compiling one pattern of the segment-glob language (design §2).
// A pattern is a '/'-separated run of segments; empty segments are dropped; `*` is the only
// metacharacter. Errors: zero segments, a leading `~`, a NUL byte, a `.` or `..` segment
// (each would make the row match nothing). Rows that look like another tool's syntax load,
// with a warning saying what they will match here.
#pragma once

#include "base/result.hpp"
#include "patterns/glob.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace guardfs::patterns {

struct CompiledPattern {
    std::string text;                  // as written
    std::vector<SegmentGlob> segments; // at least one
    std::vector<std::string> warnings; // human sentences, without location
};

// On failure returns an Error whose code says which rule was broken; nothing is compiled.
base::Result<CompiledPattern> compile_pattern(std::string_view text);

} // namespace guardfs::patterns
