// The audit log; see audit.hpp.
#include "guard/audit.hpp"

#include "guard/json_text.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <ctime>

#include <unistd.h>

namespace guardfs::guard {

std::string iso_time_now() {
    const auto now = std::chrono::system_clock::now();
    const std::time_t t = std::chrono::system_clock::to_time_t(now);
    const auto ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() %
        1000;
    std::tm tm{};
    ::gmtime_r(&t, &tm);
    return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", tm.tm_year + 1900,
                       tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ms);
}

std::string audit_json(const AuditEvent& e) {
    nlohmann::json j;
    j["time"] = iso_time_now();
    const Request& r = *e.request;
    const Decision& d = *e.decision;
    // design §7 names the field "operation"; "op" is the same value under the name the
    // approver's questions use (§6), so one jq filter reads both.
    j["operation"] = to_string(r.op);
    j["op"] = to_string(r.op);
    std::vector<std::string> paths;
    for (const auto& t : r.targets) {
        if (!t.views.empty()) {
            paths.push_back(t.views.front().path);
        }
    }
    put_text_list(j, "paths", paths);
    j["verdict"] = patterns::to_string(d.verdict);
    j["judged"] = patterns::to_string(e.judged);
    if (d.rule.empty()) {
        j["rule"] = nullptr;
    } else {
        put_text(j, "rule", d.rule);
    }
    j["tier"] = patterns::to_string(d.tier);
    j["view"] = to_string(d.view);
    j["reading"] = patterns::to_string(d.reading);
    if (d.path.empty()) {
        j["decided_path"] = nullptr;
    } else {
        put_text(j, "decided_path", d.path);
    }
    if (d.exempt_root.empty()) {
        j["exemption"] = nullptr;
    } else {
        put_text(j, "exemption", d.exempt_root);
    }
    nlohmann::json proc;
    proc["pid"] = r.caller.pid;
    proc["uid"] = r.caller.uid;
    proc["gid"] = r.caller.gid;
    put_text(proc, "command", e.command);
    j["process"] = std::move(proc);
    if (e.answer_source.empty()) {
        j["answer"] = nullptr;
    } else {
        nlohmann::json a;
        a["source"] = e.answer_source;
        if (e.answer != nullptr && e.answer->answered) {
            a["verdict"] = patterns::to_string(e.answer->verdict);
            a["remember"] = to_string(e.answer->remember);
            a["scope"] = patterns::to_string(e.answer->scope);
        }
        j["answer"] = std::move(a);
    }
    j["latency"] = e.latency.count(); // microseconds, from the request to its final verdict
    j["reason"] = utf8_or_replacement(d.reason);
    return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

AuditLog::~AuditLog() {
    if (fd_ >= 0) {
        ::close(fd_);
    }
}

void AuditLog::append(const std::string& line) noexcept {
    std::lock_guard<std::mutex> lock(mu_);
    std::string_view rest = line;
    while (!rest.empty()) {
        const ssize_t n = ::write(fd_, rest.data(), rest.size());
        if (n <= 0) {
            return;
        }
        rest.remove_prefix(static_cast<std::size_t>(n));
    }
}

void AuditLog::write(const AuditEvent& e) noexcept {
    if (fd_ < 0) {
        return;
    }
    try {
        append(audit_json(e) + "\n");
    } catch (...) {
        // the decision stands; a lost audit line is all that fails
    }
}

void AuditLog::note(std::string_view event, std::string_view message) noexcept {
    if (fd_ < 0) {
        return;
    }
    try {
        nlohmann::json j;
        j["time"] = iso_time_now();
        j["event"] = std::string(event);
        j["message"] = utf8_or_replacement(message);
        append(j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
    } catch (...) {
        // as above
    }
}

} // namespace guardfs::guard
