// Lexical path helpers shared by every module: segment splitting and normalization.
// Nothing here touches the filesystem.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace guardfs::base {

// The non-empty '/'-separated segments of p, in order ("//a///b/" gives {"a","b"}).
std::vector<std::string_view> split_segments(std::string_view p);

// Appends the segments of p to out (no allocation when out has capacity).
void append_segments(std::string_view p, std::vector<std::string_view>& out);

// An absolute path for p: p itself when it begins with '/', else base + '/' + p.
// "." segments are removed and ".." pops one segment (never above "/"). Lexical only:
// symbolic links are not consulted. The result has no trailing '/' except for "/".
std::string lexical_absolute(std::string_view p, std::string_view base);

// True when p has a ".." segment. Such a path names what the kernel's resolution gives (a ".."
// after a symbolic link climbs out of the link's target), which lexical_absolute may not.
bool has_dotdot_segment(std::string_view p);

// "/" + segments joined with "/"; "/" for none.
std::string join_absolute(const std::vector<std::string_view>& segs);

// True when s is well-formed UTF-8 (no overlong forms, no surrogates).
bool is_valid_utf8(std::string_view s) noexcept;

// The current working directory, or "" when it cannot be read.
std::string current_dir();

// $HOME, or "" when unset.
std::string home_dir();

} // namespace guardfs::base
