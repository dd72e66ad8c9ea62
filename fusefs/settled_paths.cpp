// Paths settled lately; see settled_paths.hpp.
#include "fusefs/settled_paths.hpp"

#include <functional>
#include <new>

namespace guardfs::fusefs {

std::size_t SettledPaths::slot_of(std::string_view path) noexcept {
    return std::hash<std::string_view>{}(path) % kSlots;
}

void SettledPaths::remember(std::string_view path, std::uint64_t token) noexcept {
    if (token == 0) {
        return;
    }
    Slot& s = slots_[slot_of(path)];
    const std::lock_guard<std::mutex> lock(m_);
    s.token = 0;
    try {
        s.path.assign(path); // keeps its capacity: no allocation once the slot held a path
    } catch (const std::bad_alloc&) {
        return; // not remembered: the path is walked again
    }
    s.token = token;
}

std::uint64_t SettledPaths::find(std::string_view path) const noexcept {
    const Slot& s = slots_[slot_of(path)];
    const std::lock_guard<std::mutex> lock(m_);
    return s.token != 0 && s.path == path ? s.token : 0;
}

} // namespace guardfs::fusefs
