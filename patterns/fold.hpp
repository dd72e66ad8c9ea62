// The folded reading of a name (design §2): Unicode NFC with case folded, by utf8proc.
// Only the deny/ask side reads names this way; allow rules and the data root compare exact bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace guardfs::patterns {

// Eight bytes at a time (SWAR), shared by folding and by the scan of a path's segments:

inline constexpr std::uint64_t kByteOnes = 0x0101010101010101ULL;  // 0x01 in each byte
inline constexpr std::uint64_t kByteHighs = 0x8080808080808080ULL; // each byte's top bit

// The n bytes at p (n at most 8) as a word, the rest zero: a zero byte is no capital, no
// backslash and not high, so padding a name's last bytes with zeros adds nothing to a scan.
inline std::uint64_t load_word(const void* p, std::size_t n) noexcept {
    std::uint64_t w = 0;
    std::memcpy(&w, p, n);
    return w;
}

// In the top bit of each byte of w: whether it is an ASCII capital A-Z, for bytes below 0x80
// (the other bits mean nothing; mask with kByteHighs). For such a byte b, b + (0x80 - 'A')
// has its top bit set iff b >= 'A', and b + (0x80 - 'Z' - 1) iff b > 'Z'; no sum carries into
// the next byte. (Around a byte of 0x80 or more the sums may carry; callers count such a byte
// by itself.)
inline std::uint64_t ascii_capitals(std::uint64_t w) noexcept {
    return (w + (0x80 - 'A') * kByteOnes) & ~(w + (0x80 - 'Z' - 1) * kByteOnes);
}

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
