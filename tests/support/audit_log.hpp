// Reading guardfs's audit log in a test.
#pragma once

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cstddef>
#include <fstream>
#include <string>
#include <vector>

namespace guardfs::test {

// Every line of an audit log, parsed (a line that is not one JSON object fails the test).
inline std::vector<nlohmann::json> audit_lines(const std::string& path) {
    std::vector<nlohmann::json> out;
    std::ifstream in(path, std::ios::binary);
    std::size_t number = 0;
    for (std::string line; std::getline(in, line);) {
        ++number;
        CAPTURE(number, line.substr(0, 300));
        nlohmann::json j;
        REQUIRE_NOTHROW(j = nlohmann::json::parse(line));
        REQUIRE(j.is_object());
        out.push_back(std::move(j));
    }
    return out;
}

} // namespace guardfs::test
