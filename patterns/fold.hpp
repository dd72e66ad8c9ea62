// The folded reading of a name (design §2): Unicode NFC with case folded, by utf8proc.
// Only the deny/ask side reads names this way; allow rules and the data root compare exact bytes.
#pragma once

#include <string>
#include <string_view>

namespace guardfs::patterns {

// True when fold(s) could differ from s: s has an ASCII capital or any non-ASCII byte.
bool needs_fold(std::string_view s) noexcept;

// True when every byte of s is below 0x80. Folding keeps such a string's length; folding any
// other may change it. Reads eight bytes at a time: it runs on every judged path.
bool is_ascii(std::string_view s) noexcept;

// Appends the folded reading of s to out. Well-formed UTF-8 runs are NFC-normalized and
// case-folded; bytes that are not well-formed UTF-8 are copied as they are, so a name with
// invalid UTF-8 is still judged (its valid parts folded, its raw bytes kept). Never fails.
void fold_into(std::string_view s, std::string& out);

std::string fold(std::string_view s);

// fold(s) == lower, where `lower` is lower-case ASCII; allocates only when s is not ASCII.
bool folds_to(std::string_view s, std::string_view lower);

} // namespace guardfs::patterns
