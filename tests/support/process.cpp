// Process helpers for tests; see process.hpp.
#include "support/process.hpp"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <stdexcept>
#include <thread>

#include <fcntl.h>
#include <poll.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace guardfs::test {

namespace {

std::vector<std::string> make_env(const std::map<std::string, std::string>& extra) {
    std::vector<std::string> out;
    for (char** e = environ; *e != nullptr; ++e) {
        const std::string kv(*e);
        const auto eq = kv.find('=');
        if (eq != std::string::npos && extra.count(kv.substr(0, eq)) != 0) {
            continue;
        }
        out.push_back(kv);
    }
    for (const auto& [k, v] : extra) {
        out.push_back(k + "=" + v);
    }
    return out;
}

std::vector<char*> c_array(std::vector<std::string>& v) {
    std::vector<char*> out;
    for (auto& s : v) {
        out.push_back(s.data());
    }
    out.push_back(nullptr);
    return out;
}

} // namespace

ProcessResult run(const std::vector<std::string>& argv, const RunOptions& options) {
    int in_pipe[2];
    int out_pipe[2];
    int err_pipe[2];
    if (::pipe2(in_pipe, O_CLOEXEC) != 0 || ::pipe2(out_pipe, O_CLOEXEC) != 0 ||
        ::pipe2(err_pipe, O_CLOEXEC) != 0) {
        throw std::runtime_error("pipe2 failed");
    }
    std::vector<std::string> args = argv;
    std::vector<std::string> env = make_env(options.env);
    auto c_args = c_array(args);
    auto c_env = c_array(env);
    const pid_t pid = ::fork();
    if (pid < 0) {
        throw std::runtime_error("fork failed");
    }
    if (pid == 0) {
        ::setpgid(0, 0);
        ::dup2(in_pipe[0], 0);
        ::dup2(out_pipe[1], 1);
        ::dup2(err_pipe[1], 2);
        if (!options.cwd.empty() && ::chdir(options.cwd.c_str()) != 0) {
            ::_exit(126);
        }
        ::execvpe(c_args[0], c_args.data(), c_env.data());
        ::_exit(127);
    }
    ::close(in_pipe[0]);
    ::close(out_pipe[1]);
    ::close(err_pipe[1]);
    // Feed stdin from a thread so a large input cannot deadlock against full output pipes.
    std::thread feeder([fd = in_pipe[1], text = options.stdin_text]() {
        std::size_t off = 0;
        ::signal(SIGPIPE, SIG_IGN);
        while (off < text.size()) {
            const ssize_t n = ::write(fd, text.data() + off, text.size() - off);
            if (n <= 0) {
                break;
            }
            off += static_cast<std::size_t>(n);
        }
        ::close(fd);
    });
    ProcessResult r;
    const auto deadline = std::chrono::steady_clock::now() + options.timeout;
    pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
    int open_fds = 2;
    char buf[65536];
    while (open_fds > 0) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) {
            r.timed_out = true;
            ::kill(-pid, SIGKILL);
            break;
        }
        if (::poll(fds, 2, static_cast<int>(left.count())) < 0 && errno != EINTR) {
            break;
        }
        for (int i = 0; i < 2; ++i) {
            if (fds[i].fd < 0 || fds[i].revents == 0) {
                continue;
            }
            const ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
            if (n <= 0) {
                ::close(fds[i].fd);
                fds[i].fd = -1;
                --open_fds;
                continue;
            }
            (i == 0 ? r.out : r.err).append(buf, static_cast<std::size_t>(n));
        }
    }
    for (auto& f : fds) {
        if (f.fd >= 0) {
            ::close(f.fd);
        }
    }
    int status = 0;
    if (!r.timed_out) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        if (!wait_for_exit(pid, std::max(left, std::chrono::milliseconds(100)), &status)) {
            r.timed_out = true;
            ::kill(-pid, SIGKILL);
        }
    }
    if (r.timed_out) {
        ::waitpid(pid, &status, 0);
    }
    feeder.join();
    if (!r.timed_out) {
        if (WIFEXITED(status)) {
            r.exit_code = WEXITSTATUS(status);
        } else if (WIFSIGNALED(status)) {
            r.signal = WTERMSIG(status);
        }
    }
    return r;
}

ProcessResult sh(const std::string& script, const RunOptions& options) {
    return run({"/bin/sh", "-c", script}, options);
}

pid_t spawn(const std::vector<std::string>& argv, const std::string& out_file,
            const std::string& err_file, const std::map<std::string, std::string>& env) {
    std::vector<std::string> args = argv;
    std::vector<std::string> e = make_env(env);
    auto c_args = c_array(args);
    auto c_env = c_array(e);
    const pid_t pid = ::fork();
    if (pid < 0) {
        throw std::runtime_error("fork failed");
    }
    if (pid == 0) {
        ::setpgid(0, 0);
        const int null_in = ::open("/dev/null", O_RDONLY);
        ::dup2(null_in, 0);
        const int o = ::open(out_file.empty() ? "/dev/null" : out_file.c_str(),
                             O_WRONLY | O_CREAT | O_TRUNC, 0644);
        const int e2 = ::open(err_file.empty() ? "/dev/null" : err_file.c_str(),
                              O_WRONLY | O_CREAT | O_TRUNC, 0644);
        ::dup2(o, 1);
        ::dup2(e2, 2);
        ::execvpe(c_args[0], c_args.data(), c_env.data());
        ::_exit(127);
    }
    return pid;
}

bool wait_for_exit(pid_t pid, std::chrono::milliseconds timeout, int* status) {
    // A pidfd becomes readable when the process ends: no polling loop, no sleeps.
    // (glibc 2.36's <sys/pidfd.h> lacks extern "C", so call the system call directly.)
    const int pfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
    if (pfd >= 0) {
        pollfd p{pfd, POLLIN, 0};
        int n = 0;
        do {
            n = ::poll(&p, 1, static_cast<int>(timeout.count()));
        } while (n < 0 && errno == EINTR);
        ::close(pfd);
        if (n == 0) {
            return false;
        }
    }
    int st = 0;
    const pid_t r = ::waitpid(pid, &st, 0);
    if (r == pid && status != nullptr) {
        *status = st;
    }
    return true;
}

} // namespace guardfs::test
