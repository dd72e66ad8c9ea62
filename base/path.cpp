// Lexical path helpers; see path.hpp.
#include "base/path.hpp"

#include <algorithm>
#include <cstdlib>

#include <unistd.h>

namespace guardfs::base {

void append_segments(std::string_view p, std::vector<std::string_view>& out) {
    std::size_t i = 0;
    while (i < p.size()) {
        while (i < p.size() && p[i] == '/') {
            ++i;
        }
        std::size_t j = i;
        while (j < p.size() && p[j] != '/') {
            ++j;
        }
        if (j > i) {
            out.push_back(p.substr(i, j - i));
        }
        i = j;
    }
}

std::vector<std::string_view> split_segments(std::string_view p) {
    std::vector<std::string_view> out;
    append_segments(p, out);
    return out;
}

std::string join_absolute(const std::vector<std::string_view>& segs) {
    if (segs.empty()) {
        return "/";
    }
    std::string out;
    for (auto s : segs) {
        out += '/';
        out += s;
    }
    return out;
}

std::string lexical_absolute(std::string_view p, std::string_view base) {
    std::vector<std::string_view> segs;
    std::vector<std::string_view> in;
    if (p.empty() || p[0] != '/') {
        append_segments(base, in);
    }
    append_segments(p, in);
    for (auto s : in) {
        if (s == ".") {
            continue;
        }
        if (s == "..") {
            if (!segs.empty()) {
                segs.pop_back();
            }
            continue;
        }
        segs.push_back(s);
    }
    return join_absolute(segs);
}

bool has_dotdot_segment(std::string_view p) {
    std::vector<std::string_view> segs;
    append_segments(p, segs);
    return std::find(segs.begin(), segs.end(), std::string_view("..")) != segs.end();
}

bool is_valid_utf8(std::string_view s) noexcept {
    const auto* p = reinterpret_cast<const unsigned char*>(s.data());
    const std::size_t n = s.size();
    std::size_t i = 0;
    while (i < n) {
        const unsigned char c = p[i];
        if (c < 0x80) {
            ++i;
            continue;
        }
        std::size_t len = 0;
        unsigned lo = 0x80;
        unsigned hi = 0xBF;
        if (c >= 0xC2 && c <= 0xDF) {
            len = 2;
        } else if (c >= 0xE0 && c <= 0xEF) {
            len = 3;
            if (c == 0xE0) {
                lo = 0xA0;
            } else if (c == 0xED) {
                hi = 0x9F;
            }
        } else if (c >= 0xF0 && c <= 0xF4) {
            len = 4;
            if (c == 0xF0) {
                lo = 0x90;
            } else if (c == 0xF4) {
                hi = 0x8F;
            }
        } else {
            return false;
        }
        if (i + len > n) {
            return false;
        }
        if (p[i + 1] < lo || p[i + 1] > hi) {
            return false;
        }
        for (std::size_t k = 2; k < len; ++k) {
            if (p[i + k] < 0x80 || p[i + k] > 0xBF) {
                return false;
            }
        }
        i += len;
    }
    return true;
}

std::string current_dir() {
    std::string buf(4096, '\0');
    if (::getcwd(buf.data(), buf.size()) == nullptr) {
        return {};
    }
    buf.resize(std::char_traits<char>::length(buf.c_str()));
    return buf;
}

std::string home_dir() {
    const char* h = std::getenv("HOME"); // NOLINT(concurrency-mt-unsafe): read at start-up
    return h != nullptr ? std::string(h) : std::string();
}

} // namespace guardfs::base
