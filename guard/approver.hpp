// The approver (design §6): a long-lived program speaking JSON lines on its stdin/stdout, or a
// client of a Unix socket (`guardfs approve --socket PATH`). A question waits on its own thread
// only; answers may come in any order and are matched by id. An unparsable line, an unknown id
// or a missing verdict is logged and ignored. No answer in time, no approver, or an approver that
// died: the question fails with the reason (the arbiter then denies). A co-process that died is
// started again for the next question.
#pragma once

#include "guard/request.hpp"
#include "patterns/answers_yaml.hpp"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace guardfs::guard {

enum class Remember : unsigned char { Once, Mount, Persist };

const char* to_string(Remember r) noexcept;

struct Question {
    std::uint64_t id = 0;
    Op op = Op::Write;
    std::vector<std::string> paths;
    std::string path; // the path that asked
    std::string rule;
    Tier tier = Tier::None;
    std::string reason;
    Caller caller;
    std::string command; // the requesting process's command line
};

// The JSON line for a question (design §6), without the trailing newline.
std::string question_json(const Question& q);

struct Answer {
    bool answered = false;
    Verdict verdict = Verdict::Deny;
    Remember remember = Remember::Once;
    patterns::AnswerScope scope = patterns::AnswerScope::Path;
    std::string failure; // when not answered: why ("timeout", "no approver connected", ...)
};

// Parses one answer line. On success sets id and answer; otherwise returns false with why.
bool parse_answer(std::string_view line, std::uint64_t& id, Answer& answer, std::string& why);

// The approver's messages: its starts and connections (`trouble` false), and what went wrong
// with it (`trouble`: an unusable line, an exit, a refused connection), which design §6 wants
// logged where a daemon in the background can be heard (the audit log).
using LogFn = std::function<void(const std::string& message, bool trouble)>;

class Approver {
public:
    virtual ~Approver() = default;

    // Sets up what must exist before the mount is reported ready (a socket to listen on), in
    // the process that mounts, before it forks into the background. "" or why it could not.
    virtual std::string prepare() { return {}; }

    // Starts the transport's threads (after the daemon has forked into the background).
    virtual void start() = 0;

    // Stops them; questions still waiting fail with "approver stopped".
    virtual void stop() = 0;

    // Sends the question and waits up to `timeout` for its answer. Thread-safe; blocks only the
    // calling thread. Never throws.
    virtual Answer ask(const Question& q, std::chrono::milliseconds timeout) noexcept = 0;

    // How many questions were sent to the approver so far (for tests and the audit).
    [[nodiscard]] virtual std::uint64_t questions_sent() const noexcept = 0;
};

// A co-process: argv run with cwd as its working directory and `umask` (the one guardfs started
// with: the daemon itself serves with 0; 022 when that was 0 too); stderr is the daemon's.
std::unique_ptr<Approver> make_process_approver(std::vector<std::string> argv, std::string cwd,
                                                LogFn log, mode_t umask);

// A Unix socket at path (created 0600; only the daemon's own user, or root, may answer). With
// own_pid_namespace_only, a peer must also be in the daemon's PID namespace: `guardfs run`
// puts the guarded command in a namespace of its own, so it cannot answer its own questions.
std::unique_ptr<Approver> make_socket_approver(std::string path, LogFn log,
                                               bool own_pid_namespace_only);

} // namespace guardfs::guard
