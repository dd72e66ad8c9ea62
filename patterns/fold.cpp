// NFC + case folding through utf8proc; see fold.hpp. ASCII takes a fast path (its NFC is
// itself and its case fold is tolower), which is what almost every path is.
#include "patterns/fold.hpp"

#include <utf8proc.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace guardfs::patterns {

namespace {

// Lowers A-Z in the eight ASCII bytes (each below 0x80) at p: a capital's top bit, moved down
// to 0x20, is what lowering adds.
void lower_ascii_at(char* p) noexcept {
    std::uint64_t w = load_word(p, sizeof w);
    w |= (ascii_capitals(w) & kByteHighs) >> 2U;
    std::memcpy(p, &w, sizeof w);
}

void fold_valid_run(std::string_view run, std::string& out) {
    if (run.empty()) {
        return;
    }
    utf8proc_uint8_t* mapped = nullptr;
    const auto options =
        static_cast<utf8proc_option_t>(UTF8PROC_STABLE | UTF8PROC_COMPOSE | UTF8PROC_CASEFOLD);
    const utf8proc_ssize_t n =
        utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(run.data()),
                     static_cast<utf8proc_ssize_t>(run.size()), &mapped, options);
    if (n < 0 || mapped == nullptr) {
        // Cannot happen for a well-formed run; keep the bytes rather than drop them.
        out.append(run);
        return;
    }
    out.append(reinterpret_cast<const char*>(mapped), static_cast<std::size_t>(n));
    std::free(mapped); // NOLINT(cppcoreguidelines-no-malloc): utf8proc allocates with malloc
}

} // namespace

bool needs_fold(std::string_view s) noexcept {
    for (const char c : s) {
        const auto u = static_cast<unsigned char>(c);
        if (u >= 0x80 || (u >= 'A' && u <= 'Z')) {
            return true;
        }
    }
    return false;
}

bool is_ascii(std::string_view s) noexcept {
    std::uint64_t high = 0;
    std::size_t k = 0;
    for (; k + 8 <= s.size(); k += 8) {
        high |= load_word(s.data() + k, 8);
    }
    if (k < s.size()) {
        high |= load_word(s.data() + k, s.size() - k); // the last bytes, padded with zeros
    }
    return (high & kByteHighs) == 0;
}

void fold_into(std::string_view s, std::string& out) {
    if (is_ascii(s)) {
        const std::size_t at = out.size();
        out.append(s);
        char* dst = out.data() + at;
        const std::size_t n = s.size();
        std::size_t k = 0;
        for (; k + 8 <= n; k += 8) {
            lower_ascii_at(dst + k);
        }
        if (k < n && n >= 8) {
            lower_ascii_at(dst + n - 8); // the last eight bytes again: lowering is idempotent
        } else {
            for (; k < n; ++k) {
                const char c = dst[k];
                dst[k] = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
            }
        }
        return;
    }
    // Split into maximal well-formed runs; copy each ill-formed byte as it is.
    const auto* p = reinterpret_cast<const utf8proc_uint8_t*>(s.data());
    const auto n = static_cast<utf8proc_ssize_t>(s.size());
    utf8proc_ssize_t run_start = 0;
    utf8proc_ssize_t i = 0;
    while (i < n) {
        utf8proc_int32_t cp = 0;
        const utf8proc_ssize_t len = utf8proc_iterate(p + i, n - i, &cp);
        if (len > 0) {
            i += len;
            continue;
        }
        fold_valid_run(
            s.substr(static_cast<std::size_t>(run_start), static_cast<std::size_t>(i - run_start)),
            out);
        out += s[static_cast<std::size_t>(i)];
        ++i;
        run_start = i;
    }
    fold_valid_run(s.substr(static_cast<std::size_t>(run_start)), out);
}

bool folds_to(std::string_view s, std::string_view lower) {
    if (!is_ascii(s)) {
        return fold(s) == lower;
    }
    if (s.size() != lower.size()) {
        return false;
    }
    for (std::size_t i = 0; i < s.size(); ++i) {
        const char c = s[i];
        if (((c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c) != lower[i]) {
            return false;
        }
    }
    return true;
}

std::string fold(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    fold_into(s, out);
    return out;
}

} // namespace guardfs::patterns
