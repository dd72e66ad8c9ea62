// The whole decision for one operation (design §6, §7): the judge's verdict, then for an ask the
// remembered answers and the approver, then the audit line. No FUSE: the FUSE layer fills in the
// caller and maps the final verdict to an errno. Never throws; any failure is a deny.
#pragma once

#include "guard/judge.hpp"
#include "guard/request.hpp"

#include <cerrno>
#include <memory>

namespace guardfs::guard {

class Arbiter {
public:
    explicit Arbiter(Judge& judge);

    // The final verdict: Allow or Deny (an ask is resolved here: with no approver it is a deny,
    // recorded as such in the decision's reason).
    [[nodiscard]] Decision decide(const Request& request) noexcept;

    [[nodiscard]] Judge& judge() noexcept { return judge_; }

private:
    Judge& judge_;
};

// The errno a refused operation fails with: EACCES for every refusal (design §2).
inline int to_errno(const Decision& d) noexcept {
    return d.allowed() ? 0 : EACCES;
}

} // namespace guardfs::guard
