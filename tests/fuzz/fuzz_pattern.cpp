// libFuzzer target: the pattern compiler, the trie and the readings. The input is split at the
// first NUL-free newline into patterns (one per line) and, after a line "--", paths to match.
// Any crash, sanitizer report or hang is a finding.
#include "patterns/rule_table.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace guardfs::patterns;
    const std::string_view in(reinterpret_cast<const char*>(data), size);
    std::vector<RuleSpec> specs;
    std::vector<std::string> paths;
    bool in_paths = false;
    std::size_t start = 0;
    std::uint32_t n = 0;
    while (start <= in.size()) {
        std::size_t end = in.find('\n', start);
        if (end == std::string_view::npos) {
            end = in.size();
        }
        const std::string_view line = in.substr(start, end - start);
        start = end + 1;
        if (line == "--") {
            in_paths = true;
            continue;
        }
        if (in_paths) {
            paths.emplace_back(line);
            continue;
        }
        auto compiled = compile_pattern(line);
        if (!compiled) {
            continue;
        }
        Rule r;
        r.pattern = std::string(line);
        r.verdict = static_cast<Verdict>(n++ % 3);
        specs.push_back(RuleSpec{r, std::move(compiled.value())});
    }
    const RuleTable t = RuleTable::build(std::move(specs), {{".claude", {"/srv/c"}}});
    Readings r;
    for (const auto& p : paths) {
        for (std::size_t strip = 0; strip < 3; ++strip) {
            r.build(p, strip);
            (void)t.match_guard(r);
            (void)t.match_guard_partial(r);
            (void)t.match_allow(r);
        }
    }
    return 0;
}
