// guardfs audit FILE (design §7): the audit log for people, one decision per line:
// time, verdict, operation, path, rule and tier, process, reason. --deny-only keeps refusals.
#include "app/commands.hpp"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <string>

namespace guardfs::app {

namespace {

std::string str(const nlohmann::json& j, const char* key) {
    if (!j.contains(key) || j[key].is_null()) {
        return "-";
    }
    return j[key].is_string() ? j[key].get<std::string>() : j[key].dump();
}

} // namespace

int cmd_audit(const std::string& file, bool deny_only) {
    std::ifstream in(file);
    if (!in) {
        std::fprintf(stderr, "guardfs audit: cannot read %s\n", file.c_str());
        return kExitRuntime;
    }
    std::string line;
    std::size_t bad = 0;
    while (std::getline(in, line)) {
        const auto j = nlohmann::json::parse(line, nullptr, false);
        if (!j.is_object()) {
            ++bad;
            continue;
        }
        if (j.contains("event")) {
            if (!deny_only) {
                std::printf("%s  %-7s %s\n", str(j, "time").c_str(), str(j, "event").c_str(),
                            str(j, "message").c_str());
            }
            continue;
        }
        if (deny_only && str(j, "verdict") != "deny") {
            continue;
        }
        std::string path = "-";
        if (j.contains("paths") && j["paths"].is_array() && !j["paths"].empty()) {
            path = j["paths"][0].get<std::string>();
            for (std::size_t i = 1; i < j["paths"].size(); ++i) {
                path += " -> " + j["paths"][i].get<std::string>();
            }
        }
        std::string who = "-";
        if (j.contains("process") && j["process"].is_object()) {
            who = "pid " + str(j["process"], "pid") + " " + str(j["process"], "command");
        }
        std::printf("%s  %-5s %-11s %s  [%s, %s]  %s  (%s)\n", str(j, "time").c_str(),
                    str(j, "verdict").c_str(), str(j, "op").c_str(), path.c_str(),
                    str(j, "rule").c_str(), str(j, "tier").c_str(), who.c_str(),
                    str(j, "reason").c_str());
    }
    if (bad > 0) {
        std::fprintf(stderr, "guardfs audit: %zu line(s) were not JSON objects\n", bad);
    }
    return kExitOk;
}

} // namespace guardfs::app
