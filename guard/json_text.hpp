// JSON text for names that may hold any byte (design §7: the audit log must be safe for any byte
// in a file name). A name that is valid UTF-8 is a plain JSON string. One that is not is written
// with each invalid byte replaced by U+FFFD, and a sibling field "<key>_hex" carries every byte
// exactly, so that a reader can always recover the real name and the line always parses.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace guardfs::guard {

// "ab\xff" -> "6162ff".
std::string to_hex(std::string_view s);

// s with every byte that is not part of well-formed UTF-8 replaced by U+FFFD.
std::string utf8_or_replacement(std::string_view s);

// obj[key] = s (see above), plus obj[key + "_hex"] when s is not valid UTF-8.
void put_text(nlohmann::json& obj, const std::string& key, std::string_view s);

// obj[key] = [s...], plus obj[key + "_hex"] = [hex...] when any is not valid UTF-8.
void put_text_list(nlohmann::json& obj, const std::string& key,
                   const std::vector<std::string>& list);

} // namespace guardfs::guard
