// Git config by content; see git_config.hpp. The list of dangerous keys follows git-config(1):
// every key whose value git runs as a command, hands to a shell, or opens as another file.
#include "guard/git_config.hpp"

#include "guard/git_tier.hpp"
#include "patterns/readings.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <thread>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

namespace guardfs::guard {

namespace {

// section.variable (no subsection)
constexpr std::string_view kExact[] = {
    "core.hookspath",
    "core.fsmonitor",
    "core.sshcommand",
    "core.editor",
    "core.pager",
    "core.askpass",
    "core.gitproxy",
    "core.attributesfile",
    "core.excludesfile",
    "core.alternaterefscommand",
    "sequence.editor",
    "diff.external",
    "diff.tool",
    "merge.tool",
    "credential.helper",
    "gpg.program",
    "include.path",
    "interactive.difffilter",
    "uploadpack.packobjectshook",
    "sendemail.smtpserver",
    "sendemail.tocmd",
    "sendemail.cccmd",
    "sendemail.aliasesfile",
    "sendemail.headercmd",
    "sendemail.sendmailcmd",
    "imap.tunnel",
    "instaweb.httpd",
    "gui.editor",
    "web.browser",
    "commit.template",
    "blame.ignorerevsfile",
    "mailmap.file",
    "mailmap.blob",
    "http.cookiefile",
    "man.viewer",
    "protocol.allow",
};

// section.<any subsection>.variable
constexpr std::pair<std::string_view, std::string_view> kWithSubsection[] = {
    {"diff", "textconv"},
    {"diff", "command"},
    {"merge", "driver"},
    {"filter", "clean"},
    {"filter", "smudge"},
    {"filter", "process"},
    {"credential", "helper"},
    {"remote", "uploadpack"},
    {"remote", "receivepack"},
    {"includeif", "path"},
    {"gpg", "program"},
    {"gpg", "defaultkeycommand"},
    {"gpg", "allowedsignersfile"},
    {"difftool", "cmd"},
    {"difftool", "path"},
    {"mergetool", "cmd"},
    {"mergetool", "path"},
    {"browser", "cmd"},
    {"browser", "path"},
    {"man", "cmd"},
    {"man", "path"},
    {"guitool", "cmd"},
    {"trailer", "command"},
    {"trailer", "cmd"},
    {"hook", "command"},
    {"tar", "command"},          // git archive --format=<name> pipes through it
    {"sendemail", "smtpserver"}, // sendemail.<identity>.*
    {"sendemail", "tocmd"},
    {"sendemail", "cccmd"},
    {"sendemail", "headercmd"},
    {"sendemail", "sendmailcmd"},
    {"sendemail", "aliasesfile"},
};

struct Key {
    std::string_view section;
    std::string_view subsection; // "" when none
    std::string_view variable;
    bool has_subsection = false;
};

Key split(std::string_view key) {
    Key k;
    const auto first = key.find('.');
    const auto last = key.rfind('.');
    if (first == std::string_view::npos) {
        k.section = key;
        return k;
    }
    k.section = key.substr(0, first);
    k.variable = key.substr(last + 1);
    if (last > first) {
        k.subsection = key.substr(first + 1, last - first - 1);
        k.has_subsection = true;
    }
    return k;
}

// Runs `git config --no-includes -f - --list -z` with text on stdin; its stdout, or nullopt.
std::optional<std::string> run_git_config(std::string_view text) {
    int in[2];
    int out[2];
    if (::pipe2(in, O_CLOEXEC) != 0) {
        return std::nullopt;
    }
    if (::pipe2(out, O_CLOEXEC) != 0) {
        ::close(in[0]);
        ::close(in[1]);
        return std::nullopt;
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, in[0], 0);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    std::array<const char*, 8> argv{"git",    "config", "--no-includes", "-f", "-",
                                    "--list", "-z",     nullptr};
    // Nothing but the given text: no system or global config, no environment overrides.
    std::array<const char*, 6> envp{"GIT_CONFIG_NOSYSTEM=1",
                                    "GIT_CONFIG_GLOBAL=/dev/null",
                                    "HOME=/nonexistent",
                                    "PATH=/usr/bin:/bin",
                                    "LC_ALL=C",
                                    nullptr};
    pid_t pid = -1;
    const int rc = ::posix_spawnp(&pid, "git", &fa, nullptr, const_cast<char* const*>(argv.data()),
                                  const_cast<char* const*>(envp.data()));
    posix_spawn_file_actions_destroy(&fa);
    ::close(in[0]);
    ::close(out[1]);
    if (rc != 0) {
        ::close(in[1]);
        ::close(out[0]);
        return std::nullopt;
    }
    // Write the text from a thread so a large output cannot deadlock against a full input pipe.
    std::thread feeder([fd = in[1], text] {
        std::string_view rest = text;
        while (!rest.empty()) {
            const ssize_t n = ::write(fd, rest.data(), rest.size());
            if (n <= 0) {
                break;
            }
            rest.remove_prefix(static_cast<std::size_t>(n));
        }
        ::close(fd);
    });
    std::string result;
    bool ok = true;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    std::array<char, 65536> buf{};
    for (;;) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        pollfd p{out[0], POLLIN, 0};
        if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) <= 0) {
            ok = false;
            break;
        }
        const ssize_t n = ::read(out[0], buf.data(), buf.size());
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            break;
        }
        result.append(buf.data(), static_cast<std::size_t>(n));
        if (result.size() > 4 * kMaxGitConfigBytes) {
            ok = false;
            break;
        }
    }
    ::close(out[0]);
    if (!ok) {
        ::kill(pid, SIGKILL);
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    feeder.join();
    if (!ok || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        return std::nullopt;
    }
    return result;
}

} // namespace

std::optional<std::multimap<std::string, std::string>> parse_git_config(std::string_view text) {
    if (text.size() > kMaxGitConfigBytes) {
        return std::nullopt;
    }
    std::multimap<std::string, std::string> out;
    if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) {
        return out;
    }
    const auto listed = run_git_config(text);
    if (!listed) {
        return std::nullopt;
    }
    std::string_view rest = *listed;
    while (!rest.empty()) {
        const auto end = rest.find('\0');
        const std::string_view entry = rest.substr(0, end);
        const auto nl = entry.find('\n');
        if (nl == std::string_view::npos) {
            out.emplace(std::string(entry), std::string()); // a key with no value (boolean)
        } else {
            out.emplace(std::string(entry.substr(0, nl)), std::string(entry.substr(nl + 1)));
        }
        if (end == std::string_view::npos) {
            break;
        }
        rest.remove_prefix(end + 1);
    }
    return out;
}

bool is_dangerous_git_key(std::string_view key, std::string_view value) {
    const Key k = split(key);
    if (k.section == "alias") {
        // Every alias: one without `!` still runs git with any option, and options run programs
        // (`-c core.fsmonitor=...`, `--exec-path=`, `fetch --upload-pack=`, `grep -O...`).
        return true;
    }
    if (k.section == "submodule" && k.variable == "update") {
        return !value.empty() && value.front() == '!';
    }
    if (k.section == "pager") {
        return true; // pager.<command>: a program to page through
    }
    if (k.section == "protocol" && k.variable == "allow") {
        return true; // protocol.allow and protocol.<name>.allow can enable ext:: (commands)
    }
    if (!k.has_subsection) {
        return std::find(std::begin(kExact), std::end(kExact), key) != std::end(kExact);
    }
    for (const auto& [section, variable] : kWithSubsection) {
        if (k.section == section && k.variable == variable) {
            return true;
        }
    }
    return false;
}

namespace {

bool is_key_char(char c) noexcept {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-';
}

char lower(char c) noexcept {
    return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

} // namespace

std::optional<std::vector<std::string>> plain_git_config_keys(std::string_view text) {
    if (text.size() > kMaxGitConfigBytes) {
        return std::nullopt;
    }
    for (const char c : text) {
        const auto u = static_cast<unsigned char>(c);
        if ((u < 0x20 && c != '\t' && c != '\n') || u >= 0x7f || c == '\\' || c == '#' ||
            c == ';') {
            return std::nullopt; // an escape, a comment, or bytes git may read otherwise
        }
    }
    std::vector<std::string> keys;
    std::string section;
    auto blank = [](std::string_view s) {
        return s.find_first_not_of(" \t") == s.npos;
    };
    while (!text.empty()) {
        const std::size_t nl = text.find('\n');
        std::string_view line = text.substr(0, nl);
        text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
        const std::size_t start = line.find_first_not_of(" \t");
        if (start == std::string_view::npos) {
            continue;
        }
        line.remove_prefix(start);
        std::size_t i = 0;
        if (line[0] == '[') {
            // [section] or [section "subsection"]: key characters only in the section (no
            // old-style "a.b"); one space, then a quoted subsection of printable ASCII without
            // tab, quote or backslash, not empty, kept as written; nothing after the header.
            section.clear();
            for (i = 1; i < line.size() && is_key_char(line[i]); ++i) {
                section += lower(line[i]);
            }
            if (section.empty()) {
                return std::nullopt;
            }
            if (line.substr(i, 2) == " \"") {
                const std::size_t close = line.find('"', i + 2);
                if (close == std::string_view::npos || close == i + 2) {
                    return std::nullopt;
                }
                const std::string_view sub = line.substr(i + 2, close - i - 2);
                if (sub.find('\t') != std::string_view::npos) {
                    return std::nullopt;
                }
                section += '.';
                section += sub;
                i = close + 1;
            }
            if (i == line.size() || line[i] != ']' || !blank(line.substr(i + 1))) {
                return std::nullopt;
            }
            continue;
        }
        // name [= value]: a name begins with a letter; the value holds nothing git would unquote
        if (section.empty() || !std::isalpha(static_cast<unsigned char>(line[0])) ||
            line.find('"') != std::string_view::npos) {
            return std::nullopt;
        }
        std::string key = section + '.';
        for (; i < line.size() && is_key_char(line[i]); ++i) {
            key += lower(line[i]);
        }
        const std::size_t after = line.find_first_not_of(" \t", i);
        if (after != std::string_view::npos && line[after] != '=') {
            return std::nullopt;
        }
        keys.push_back(std::move(key));
    }
    return keys;
}

std::optional<std::string> judge_git_config_change(const GitConfigChange& change) noexcept {
    try {
        // The plainest configs are read here rather than by starting git twice (git init
        // writes four in a row): a proposed text none of whose keys is dangerous, whatever its
        // value, adds or changes nothing dangerous, beside a current text git reads too.
        if (const auto keys = plain_git_config_keys(change.proposed)) {
            const bool harmless = std::none_of(keys->begin(), keys->end(), [](const auto& k) {
                // "!": submodule.*.update counts, whatever its value
                return is_dangerous_git_key(k, "!");
            });
            if (harmless && (!change.current || plain_git_config_keys(*change.current))) {
                return std::string();
            }
        }
        return judge_git_config_change_with_git(change);
    } catch (...) {
        return std::nullopt;
    }
}

std::optional<std::string>
judge_git_config_change_with_git(const GitConfigChange& change) noexcept {
    try {
        const auto proposed = parse_git_config(change.proposed);
        if (!proposed) {
            return std::nullopt;
        }
        std::multimap<std::string, std::string> current;
        if (change.current) {
            auto parsed = parse_git_config(*change.current);
            if (!parsed) {
                return std::nullopt; // cannot tell what changes: judged by the row
            }
            current = std::move(*parsed);
        }
        for (const auto& [key, value] : *proposed) {
            if (!is_dangerous_git_key(key, value)) {
                continue;
            }
            const auto [lo, hi] = current.equal_range(key);
            const std::string& wanted = value; // clang 14 cannot capture a structured binding
            const bool present =
                std::any_of(lo, hi, [&](const auto& kv) { return kv.second == wanted; });
            if (!present) {
                return key; // added or changed
            }
        }
        return std::string();
    } catch (...) {
        return std::nullopt;
    }
}

bool is_git_config_path(std::string_view path) {
    patterns::Readings r;
    r.build(path, 0);
    Target t;
    t.role = Role::RenameDestination;
    for (const auto& v : r.all()) {
        const GitMatch m = match_git(v.segs, 0, t, Op::Rename);
        if (m.surface == GitSurface::Config || m.surface == GitSurface::ConfigWorktree) {
            return true;
        }
    }
    return false;
}

} // namespace guardfs::guard
