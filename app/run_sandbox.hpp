// The namespaces of `guardfs run` (design §9, issue #7).
//
//   guardfs run (P)        a private mount namespace (and, for an ordinary user, a user
//                          namespace in which it is root): the guard is mounted over WORKSPACE
//                          here, invisible to every other process on the machine.
//     command setup (C)    a new user, mount and PID namespace: the guard mount is copied in
//                          *locked* (owned by a less privileged user namespace), so it cannot be
//                          unmounted, and no bind can reveal what is under it.
//       init (pid 1)       reaps, forwards signals, and ends the whole PID namespace when the
//                          command ends.
//         COMMAND          no capabilities that reach around the mount, no new privileges, and a
//                          seccomp filter against new namespaces and every mount call.
//
// Every process of the chain dies with its parent (PR_SET_PDEATHSIG): if guardfs run is
// killed, the command and everything it started die, and the mount namespace with the guard
// goes with them.
#pragma once

#include <string>
#include <vector>

#include <sys/types.h>

namespace guardfs::app {

// Enters P's namespaces. For root: a private mount namespace. For anyone else: a user namespace
// mapping the caller to root, and a private mount namespace in it. Must be called while the
// process is single-threaded. Returns 0, or an errno with `why` filled.
int enter_guard_namespaces(std::string& why);

struct CommandSpec {
    std::vector<std::string> argv;
    std::string cwd; // re-resolved inside: it must lead through the guard
    // The workspace's real path: standard input, output or error open on a file below it is
    // opened again through the guard.
    std::string workspace_real;
    uid_t outer_uid = 0; // the invoking user's ids, as the command should see them
    gid_t outer_gid = 0;
    bool invoked_as_root = false;
    mode_t umask = 022; // the caller's (the daemon itself runs with 0)
};

// Forks the command's chain. The fork's child never returns. In the parent returns its pid, or
// -1 (errno set).
pid_t start_command(const CommandSpec& spec);

// The exit code for a wait status: the code, or 128 + the signal (the shell's convention).
int exit_code_of(int status);

// Forwards to `pid` the signals a supervisor sends: SIGTERM, SIGHUP, SIGUSR1, SIGUSR2,
// SIGWINCH, SIGCONT, and SIGINT and SIGQUIT when a process sent them (from the terminal they
// reach the command already). With `on_hangup`, a SIGHUP a process sent calls it instead (the
// guard's reload, in the process that serves it). stop_forwarding_signals() ends it (the
// command has been reaped: its pid may be reused).
void forward_signals_to(pid_t pid, void (*on_hangup)() noexcept = nullptr);
void stop_forwarding_signals();

} // namespace guardfs::app
