// Paths settled lately; see settled_paths.hpp.
#include "fusefs/settled_paths.hpp"

#include <functional>
#include <new>

namespace guardfs::fusefs {

std::size_t SettledPaths::way_of(const Set& set, std::uint64_t hash,
                                 std::string_view path) noexcept {
    for (std::size_t i = 0; i < kWays; ++i) {
        if (set.token[i] != 0 && set.hash[i] == hash && set.path[i] == path) {
            return i;
        }
    }
    return kWays;
}

void SettledPaths::remember(std::string_view path, std::uint64_t token) noexcept {
    if (token == 0) {
        return;
    }
    const std::uint64_t hash = std::hash<std::string_view>{}(path);
    Set& set = sets_[hash & (kSets - 1)];
    const std::lock_guard<std::mutex> lock(m_);
    std::size_t i = way_of(set, hash, path);
    if (i == kWays) {
        // A slot is emptied only when a path cannot be copied into it (below), so taking the
        // slots in turn fills an empty set from slot 0 and then gives up the oldest path first.
        i = set.oldest;
        set.oldest = (set.oldest + 1) % kWays;
        set.token[i] = 0;
        try {
            set.path[i].assign(path); // keeps its capacity: no allocation once a slot held one
        } catch (const std::bad_alloc&) {
            return; // not remembered: the path is walked again
        }
        set.hash[i] = hash;
    }
    set.token[i] = token;
}

std::uint64_t SettledPaths::find(std::string_view path) const noexcept {
    const std::uint64_t hash = std::hash<std::string_view>{}(path);
    const Set& set = sets_[hash & (kSets - 1)];
    const std::lock_guard<std::mutex> lock(m_);
    const std::size_t i = way_of(set, hash, path);
    return i == kWays ? 0 : set.token[i];
}

} // namespace guardfs::fusefs
