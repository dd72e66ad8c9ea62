// SettledPaths (fusefs/settled_paths.hpp): a token comes back only for the very path it was
// remembered for, whatever else shares its slot.
#include "fusefs/settled_paths.hpp"

#include <catch2/catch.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

using guardfs::fusefs::SettledPaths;

namespace {

// A token that names its path, so a token found for another path shows.
std::uint64_t token_of(const std::string& path) {
    return (std::hash<std::string>{}(path) | 1U);
}

} // namespace

TEST_CASE("a settled path is found by its exact bytes only", "[settled-paths]") {
    SettledPaths s;
    CHECK(s.find("/ws/a/x") == 0);
    s.remember("/ws/a/x", 7);
    CHECK(s.find("/ws/a/x") == 7);
    for (const char* other : {"/ws/a/x/", "/ws/a/X", "/ws/a/x2", "/ws/a", "/ws/b/x", "x", "",
                              "/ws/a/x\\", "/ws//a/x"}) {
        CAPTURE(other);
        CHECK(s.find(other) == 0);
    }
    s.remember("/ws/a/x", 9); // a later token for the same path
    CHECK(s.find("/ws/a/x") == 9);
}

TEST_CASE("a zero token is not remembered and forgets nothing", "[settled-paths]") {
    SettledPaths s;
    s.remember("/ws/y", 0);
    CHECK(s.find("/ws/y") == 0);
    s.remember("/ws/y", 3);
    s.remember("/ws/y", 0);
    CHECK(s.find("/ws/y") == 3);
}

TEST_CASE("paths sharing slots never find each other's tokens", "[settled-paths]") {
    SettledPaths s;
    std::mt19937 rng(12345);
    std::map<std::string, std::uint64_t> remembered;
    std::vector<std::string> paths;
    for (int i = 0; i < 20 * static_cast<int>(SettledPaths::kSlots); ++i) {
        paths.push_back("/ws/.git/objects/" + std::to_string(rng() % 256) + "/tmp_obj_" +
                        std::to_string(rng() % 5000));
    }
    std::string last;
    for (int round = 0; round < 4; ++round) {
        for (const std::string& p : paths) {
            if (rng() % 3 == 0) {
                s.remember(p, token_of(p));
                remembered[p] = token_of(p);
                last = p;
            }
            const std::uint64_t found = s.find(p);
            const auto it = remembered.find(p);
            CAPTURE(p);
            CHECK((found == 0 || (it != remembered.end() && found == it->second)));
        }
        CHECK(s.find(last) == token_of(last)); // the newest is always held
    }
    // Some were held (a slot keeps its newest path), and not every path ever remembered.
    std::size_t held = 0;
    for (const auto& [p, t] : remembered) {
        held += s.find(p) != 0 ? 1U : 0U;
    }
    CHECK(held > 0);
    CHECK(held <= SettledPaths::kSlots);
}

TEST_CASE("threads remembering and finding at once see only a path's own token",
          "[settled-paths]") {
    SettledPaths s;
    std::vector<std::string> paths;
    for (int i = 0; i < 2000; ++i) {
        paths.push_back("/ws/dir" + std::to_string(i % 37) + "/name" + std::to_string(i));
    }
    std::vector<int> wrong(4, 0);
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&, t] {
            for (int round = 0; round < 20; ++round) {
                for (std::size_t i = static_cast<std::size_t>(t); i < paths.size(); i += 2) {
                    s.remember(paths[i], token_of(paths[i]));
                    const std::string& q =
                        paths[(i * 7 + static_cast<std::size_t>(round)) % paths.size()];
                    const std::uint64_t found = s.find(q);
                    wrong[static_cast<std::size_t>(t)] +=
                        found != 0 && found != token_of(q) ? 1 : 0;
                }
            }
        });
    }
    for (std::thread& th : threads) {
        th.join();
    }
    CHECK(wrong == std::vector<int>(4, 0));
}
