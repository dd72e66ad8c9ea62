// Running a program from a test: argv, optional stdin, extra environment, a timeout; captures
// stdout, stderr and the exit status. A program still running at the timeout is killed (its whole
// process group) and reported as timed out, so a hung command never hangs the suite.
#pragma once

#include <chrono>
#include <csignal>
#include <map>
#include <string>
#include <vector>

#include <sys/types.h>

namespace guardfs::test {

struct ProcessResult {
    int exit_code = -1; // the exit status, or -1 when killed by a signal or timed out
    int signal = 0;     // the signal that ended it, if any
    bool timed_out = false;
    std::string out;
    std::string err;

    [[nodiscard]] bool ok() const { return exit_code == 0; }
};

struct RunOptions {
    std::string stdin_text;
    std::map<std::string, std::string> env; // added to (or replacing in) the current environment
    std::string cwd;                        // empty: the current directory
    std::chrono::milliseconds timeout{std::chrono::seconds(60)};
};

ProcessResult run(const std::vector<std::string>& argv, const RunOptions& options = {});

// run({"/bin/sh", "-c", script}, options)
ProcessResult sh(const std::string& script, const RunOptions& options = {});

// Starts a program in the background (its own process group) and returns its pid; stdout and
// stderr go to the given files (or /dev/null when empty).
pid_t spawn(const std::vector<std::string>& argv, const std::string& out_file = {},
            const std::string& err_file = {}, const std::map<std::string, std::string>& env = {});

// Waits for pid for at most `timeout`; returns true with its status when it ended.
bool wait_for_exit(pid_t pid, std::chrono::milliseconds timeout, int* status = nullptr);

// A background process a test spawned; killed (its group) and reaped if still running.
struct Child {
    pid_t pid = -1;

    explicit Child(pid_t p) : pid(p) {}

    Child(const Child&) = delete;
    Child& operator=(const Child&) = delete;

    ~Child() {
        if (pid > 0 && !wait_for_exit(pid, std::chrono::milliseconds(0))) {
            ::kill(-pid, SIGKILL);
            wait_for_exit(pid, std::chrono::seconds(10));
        }
    }

    // Waits at most `limit`; true (and reaped) when it ended.
    bool wait(std::chrono::milliseconds limit, int* status = nullptr) {
        if (pid > 0 && wait_for_exit(pid, limit, status)) {
            pid = -1;
            return true;
        }
        return pid <= 0;
    }
};

} // namespace guardfs::test
