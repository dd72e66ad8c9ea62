// The decision pipeline; see arbiter.hpp.
#include "guard/arbiter.hpp"

namespace guardfs::guard {

Arbiter::Arbiter(Judge& judge) : judge_(judge) {}

Decision Arbiter::decide(const Request& request) noexcept {
    Decision d = judge_.decide(request);
    if (d.verdict == Verdict::Ask) {
        // No approver is configured: an ask is refused (fail closed, design §6).
        d.verdict = Verdict::Deny;
        try {
            d.reason = "ask refused: no approver answered (fail closed); " + d.reason;
        } catch (...) {
            // keep the verdict; the reason is only for people
        }
    }
    return d;
}

} // namespace guardfs::guard
