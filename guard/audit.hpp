// The audit log (design §7): one JSON object per line for every deny and ask (and every allow
// with `audit.all`): time, operation, paths, verdict, rule, tier, view, exemption, process,
// answer, latency. Safe for any byte in a name (docs/decisions/006): a line always parses.
#pragma once

#include "guard/approver.hpp"
#include "guard/request.hpp"

#include <chrono>
#include <mutex>
#include <string>
#include <string_view>

namespace guardfs::guard {

struct AuditEvent {
    const Request* request = nullptr;
    const Decision* decision = nullptr; // the final decision
    Verdict judged = Verdict::Allow;    // the judge's verdict, before any answer
    std::string command;                // the process's command line ("" when not read)
    std::string answer_source;          // "", "approver", "remembered", or why none came
    const Answer* answer = nullptr;     // the approver's answer, when there was one
    std::chrono::microseconds latency{0};
};

// The JSON line for an event, without the newline.
std::string audit_json(const AuditEvent& e);

class AuditLog {
public:
    // fd opened for appending (owned; closed by the destructor); -1 for no log.
    AuditLog(int fd, bool all) noexcept : fd_(fd), all_(all) {}

    AuditLog(const AuditLog&) = delete;
    AuditLog& operator=(const AuditLog&) = delete;

    ~AuditLog();

    [[nodiscard]] bool enabled() const noexcept { return fd_ >= 0; }

    // Does this outcome get a line? Every deny and ask; allows only with `all`.
    [[nodiscard]] bool wants(Verdict judged, Verdict final) const noexcept {
        return fd_ >= 0 && (all_ || judged != Verdict::Allow || final != Verdict::Allow);
    }

    void set_all(bool all) noexcept { all_ = all; }

    // Appends one line. Never throws; a failed write is dropped (the decision stands).
    void write(const AuditEvent& e) noexcept;

    // Appends a line about the daemon itself: only a failed reload, which must say why even when
    // the daemon runs in the background with no stderr (design §7). Everything else the daemon
    // has to say goes to stderr, so that every other line is a decision.
    void note(std::string_view event, std::string_view message) noexcept;

private:
    void append(const std::string& line) noexcept;

    int fd_;
    bool all_;
    std::mutex mu_; // one line at a time
};

// The current time as ISO 8601 UTC with milliseconds, e.g. "2026-11-30T20:54:01.123Z".
std::string iso_time_now();

} // namespace guardfs::guard
