// guardfs run [mount options] WORKSPACE -- COMMAND [ARGS...] (design §9, issue #7): COMMAND with
// its arguments, stdin, stdout, stderr and exit status passed through, in namespaces of its own
// where the guard is mounted over WORKSPACE, cannot be unmounted or gone around, and goes away
// when COMMAND ends (also when anything in the chain is killed). Every other process on the
// machine keeps seeing the plain directory.
#include "app/commands.hpp"
#include "app/run_sandbox.hpp"
#include "base/path.hpp"

#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace guardfs::app {

int cmd_run(const RunArgs& args) {
    if (args.command.empty()) {
        std::fprintf(stderr, "guardfs run: no COMMAND (guardfs run WORKSPACE -- COMMAND ...)\n");
        return kExitUsage;
    }
    fusefs::GuardSetup setup;
    if (const int rc = prepare_guard(args.mount, setup); rc != kExitOk) {
        return rc;
    }
    // The command runs in a PID namespace of its own: it may reach the approver socket, but
    // it must not answer its own questions.
    setup.approver_own_pid_namespace = true;
    CommandSpec spec;
    spec.argv = args.command;
    spec.cwd = base::current_dir();
    if (char* real = ::realpath(args.mount.workspace.c_str(), nullptr); real != nullptr) {
        spec.workspace_real = real;
        std::free(real); // NOLINT(cppcoreguidelines-no-malloc): realpath's own allocation
    }
    spec.outer_uid = ::geteuid();
    spec.outer_gid = ::getegid();
    spec.invoked_as_root = spec.outer_uid == 0;
    spec.umask = ::umask(022);
    ::umask(spec.umask);

    std::string why;
    if (enter_guard_namespaces(why) != 0) {
        if (!args.allow_unguarded) {
            std::fprintf(stderr,
                         "guardfs run: %s.\nRefusing to run %s unguarded; pass "
                         "--allow-unguarded to run it without the guard anyway.\n",
                         why.c_str(), spec.argv.front().c_str());
            return kExitRuntime;
        }
        std::fprintf(stderr,
                     "guardfs run: WARNING: %s; running %s WITHOUT the guard "
                     "(--allow-unguarded)\n",
                     why.c_str(), spec.argv.front().c_str());
        std::vector<char*> argv;
        for (const auto& a : spec.argv) {
            argv.push_back(const_cast<char*>(a.c_str()));
        }
        argv.push_back(nullptr);
        ::execvp(argv[0], argv.data());
        std::perror("guardfs run");
        return 127;
    }

    fusefs::MountOptions options;
    options.workspace = args.mount.workspace;
    options.mountpoint = args.mount.workspace; // in place: the command keeps its paths
    options.fuse_options = args.mount.fuse_options;
    options.foreground = true;
    options.quiet = true;
    options.own_signals = true;
    std::atomic<int> command_code{-1};
    std::thread waiter;
    options.after_mount = [&](fuse_session* se, const std::string& mountpoint) {
        // The command starts while this process is still single-threaded (it unshares).
        const pid_t pid = start_command(spec);
        if (pid < 0) {
            std::perror("guardfs run: fork");
            return kExitRuntime;
        }
        // The guard stays up until the command has ended, whatever signal it was sent.
        forward_signals_to(pid, &fusefs::request_reload);
        ::signal(SIGPIPE, SIG_IGN);
        waiter = std::thread([&command_code, pid, se, mountpoint] {
            int status = 0;
            while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
            }
            command_code = exit_code_of(status);
            stop_forwarding_signals();
            fusefs::stop_session(se, mountpoint);
        });
        return 0;
    };
    const int rc = fusefs::serve(options, std::move(setup));
    if (waiter.joinable()) {
        waiter.join();
    }
    if (command_code.load() >= 0) {
        return command_code.load();
    }
    return rc != 0 ? rc : kExitRuntime;
}

} // namespace guardfs::app
