// The deny > ask > allow fold (design §2), exhaustively.
#include "patterns/rule.hpp"

#include <catch2/catch.hpp>

using guardfs::patterns::fold;
using guardfs::patterns::Verdict;

TEST_CASE("the fold keeps the stronger verdict, for all nine pairs", "[guard][fold]") {
    auto [a, b, expected] = GENERATE(table<Verdict, Verdict, Verdict>({
        {Verdict::Allow, Verdict::Allow, Verdict::Allow},
        {Verdict::Allow, Verdict::Ask, Verdict::Ask},
        {Verdict::Allow, Verdict::Deny, Verdict::Deny},
        {Verdict::Ask, Verdict::Allow, Verdict::Ask},
        {Verdict::Ask, Verdict::Ask, Verdict::Ask},
        {Verdict::Ask, Verdict::Deny, Verdict::Deny},
        {Verdict::Deny, Verdict::Allow, Verdict::Deny},
        {Verdict::Deny, Verdict::Ask, Verdict::Deny},
        {Verdict::Deny, Verdict::Deny, Verdict::Deny},
    }));
    CHECK(fold(a, b) == expected);
}
