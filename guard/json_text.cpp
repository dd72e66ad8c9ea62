// JSON text for arbitrary bytes; see json_text.hpp.
#include "guard/json_text.hpp"

#include "base/path.hpp"

namespace guardfs::guard {

std::string to_hex(std::string_view s) {
    static constexpr char kDigits[] = "0123456789abcdef";
    std::string out;
    out.reserve(s.size() * 2);
    for (const char c : s) {
        const auto u = static_cast<unsigned char>(c);
        out += kDigits[u >> 4U];
        out += kDigits[u & 0xFU];
    }
    return out;
}

std::string utf8_or_replacement(std::string_view s) {
    if (base::is_valid_utf8(s)) {
        return std::string(s);
    }
    std::string out;
    std::size_t i = 0;
    while (i < s.size()) {
        // Find the longest valid sequence starting at i (1..4 bytes).
        std::size_t len = 0;
        for (std::size_t n = 1; n <= 4 && i + n <= s.size(); ++n) {
            if (base::is_valid_utf8(s.substr(i, n))) {
                len = n;
                break;
            }
        }
        if (len == 0) {
            out += "\xEF\xBF\xBD";
            ++i;
        } else {
            out.append(s.substr(i, len));
            i += len;
        }
    }
    return out;
}

void put_text(nlohmann::json& obj, const std::string& key, std::string_view s) {
    if (base::is_valid_utf8(s)) {
        obj[key] = std::string(s);
        return;
    }
    obj[key] = utf8_or_replacement(s);
    obj[key + "_hex"] = to_hex(s);
}

void put_text_list(nlohmann::json& obj, const std::string& key,
                   const std::vector<std::string>& list) {
    bool all_valid = true;
    auto arr = nlohmann::json::array();
    for (const auto& s : list) {
        all_valid = all_valid && base::is_valid_utf8(s);
        arr.push_back(utf8_or_replacement(s));
    }
    obj[key] = std::move(arr);
    if (!all_valid) {
        auto hex = nlohmann::json::array();
        for (const auto& s : list) {
            hex.push_back(to_hex(s));
        }
        obj[key + "_hex"] = std::move(hex);
    }
}

} // namespace guardfs::guard
