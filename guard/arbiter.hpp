// The whole decision for one operation (design §6, §7): the judge's verdict (remembered answers
// included), then for an ask the approver, then the audit line. No FUSE: the FUSE layer fills in
// the caller and maps the final verdict to an errno. decide() never throws; any failure, no
// approver, no answer in time, an approver that died: deny, with the reason recorded.
#pragma once

#include "guard/answers.hpp"
#include "guard/approver.hpp"
#include "guard/audit.hpp"
#include "guard/host_files.hpp"
#include "guard/judge.hpp"
#include "guard/request.hpp"

#include <atomic>
#include <cerrno>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace guardfs::guard {

struct ArbiterConfig {
    std::chrono::milliseconds timeout{60000}; // --ask-timeout
    std::size_t max_waiting = 32;             // questions waiting at once; beyond: deny "busy"
    std::string allow_file;                   // where persisted answers go ("" for none)
};

class Arbiter {
public:
    Arbiter(Judge& judge, ArbiterConfig config);

    Arbiter(const Arbiter&) = delete;
    Arbiter& operator=(const Arbiter&) = delete;

    ~Arbiter();

    // Wiring, before start(). The approver is owned; the others must outlive the arbiter.
    void set_approver(std::unique_ptr<Approver> approver);

    void set_audit(AuditLog* audit) noexcept { audit_ = audit; }

    void set_answers(AnswerStore* answers, HostFiles* files) noexcept;

    // Called on the deciding thread just before it may wait for an answer (an ask), so that
    // the FUSE layer can see to the requests queued behind it (fusefs/ring_loop.hpp).
    using WaitHook = void (*)() noexcept;

    void set_wait_hook(WaitHook hook) noexcept { wait_hook_ = hook; }

    // Sets up the approver's transport before the mount is reported ready (Approver::prepare):
    // "" or why it could not, which stops the mount.
    [[nodiscard]] std::string prepare();

    // Holds off persisting answers (each persist writes the whole list) while the caller reads
    // the allow file and replaces the persisted answers with it (a reload).
    [[nodiscard]] std::unique_lock<std::mutex> hold_persisting() {
        return std::unique_lock<std::mutex>(persist_mu_);
    }

    // Starts the approver's threads (call after the daemon has forked into the background).
    void start();

    // Stops them; later asks are denied.
    void stop();

    // The final verdict: Allow or Deny.
    [[nodiscard]] Decision decide(const Request& request) noexcept;

    [[nodiscard]] Judge& judge() noexcept { return judge_; }

    [[nodiscard]] Approver* approver() noexcept { return approver_.get(); }

    [[nodiscard]] AuditLog* audit() noexcept { return audit_; }

private:
    struct InFlight {
        std::mutex m;
        std::condition_variable cv;
        bool done = false;
        Answer answer;
    };

    Decision resolve_ask(const Request& request, Decision d, std::string& command,
                         std::string& source, Answer& answer);
    Answer ask_once(const Question& q, const std::string& key);
    void remember(const Request& request, const Decision& d, const Answer& a);

    Judge& judge_;
    ArbiterConfig config_;
    std::unique_ptr<Approver> approver_;
    AuditLog* audit_ = nullptr;
    WaitHook wait_hook_ = nullptr;
    AnswerStore* answers_ = nullptr;
    HostFiles* files_ = nullptr;
    std::atomic<std::uint64_t> next_id_{1};
    std::atomic<std::size_t> waiting_{0};
    std::mutex inflight_mu_;
    std::map<std::string, std::shared_ptr<InFlight>> inflight_; // protected by inflight_mu_
    std::mutex persist_mu_; // serialises writes of the allow file
};

// The errno a refused operation fails with: EACCES for every refusal (design §2).
inline int to_errno(const Decision& d) noexcept {
    return d.allowed() ? 0 : EACCES;
}

// The command line of a process, arguments joined by spaces ("" if it cannot be read).
std::string command_line(pid_t pid);

} // namespace guardfs::guard
