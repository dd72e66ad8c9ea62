// guardfs approve --socket PATH (design §6): answer the guard's questions at a terminal.
// One question at a time, with the operation, the path, the rule and tier that asked and the
// process behind it; one key answers. Colours when the terminal supports them (NO_COLOR off).
#include "app/commands.hpp"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <string>

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <termios.h>
#include <unistd.h>

namespace guardfs::app {

namespace {

struct Style {
    bool on = false;

    [[nodiscard]] std::string c(const char* code, const std::string& s) const {
        return on ? std::string("\033[") + code + "m" + s + "\033[0m" : s;
    }
};

class RawTerminal {
public:
    RawTerminal() {
        if (::isatty(0) == 1 && ::tcgetattr(0, &saved_) == 0) {
            termios raw = saved_;
            raw.c_lflag &= ~static_cast<tcflag_t>(ICANON | ECHO);
            raw.c_cc[VMIN] = 1;
            raw.c_cc[VTIME] = 0;
            active_ = ::tcsetattr(0, TCSANOW, &raw) == 0;
        }
    }

    RawTerminal(const RawTerminal&) = delete;
    RawTerminal& operator=(const RawTerminal&) = delete;

    ~RawTerminal() {
        if (active_) {
            ::tcsetattr(0, TCSANOW, &saved_);
        }
    }

private:
    termios saved_{};
    bool active_ = false;
};

std::string field(const nlohmann::json& q, const char* key) {
    if (q.contains(key) && q[key].is_string()) {
        return q[key].get<std::string>();
    }
    if (q.contains(key) && q[key].is_number()) {
        return q[key].dump();
    }
    return "?";
}

void show(const Style& st, const nlohmann::json& q, std::size_t queued) {
    std::string out = "\n" + st.c("2", std::string(72, '-')) + "\n";
    out += " " + st.c("1;33", "guardfs asks") + "  " + st.c("1", field(q, "op"));
    if (queued > 0) {
        out += st.c("2", "   (" + std::to_string(queued) + " more waiting)");
    }
    out += "\n";
    out += "   path    " + st.c("1;36", field(q, "path")) + "\n";
    if (q.contains("paths") && q["paths"].is_array() && q["paths"].size() > 1) {
        for (std::size_t i = 1; i < q["paths"].size(); ++i) {
            out += "           " + q["paths"][i].get<std::string>() + "\n";
        }
    }
    out += "   rule    " + field(q, "rule") + "  " + st.c("2", "(" + field(q, "tier") + ")") + "\n";
    out += "   by      pid " + field(q, "pid") + "  uid " + field(q, "uid") + "  " +
           st.c("35", field(q, "command")) + "\n";
    out += "   " + st.c("32", "[a]") + " allow once   " + st.c("31", "[d]") + " deny once\n";
    out += "   always allow, for this mount:  " + st.c("32", "[p]") + " this path  " +
           st.c("32", "[f]") + " this folder  " + st.c("32", "[r]") + " this rule\n";
    out += "   always allow, and remember:    " + st.c("32", "[P]") + " this path  " +
           st.c("32", "[F]") + " this folder  " + st.c("32", "[R]") + " this rule\n";
    out += "   " + st.c("2", "[q] quit (questions then fail closed)") + "\n > ";
    std::fputs(out.c_str(), stdout);
    std::fflush(stdout);
}

// The answer for a key, or an empty object for a key that means nothing.
nlohmann::json answer_for(char key, const nlohmann::json& q, std::string& said) {
    nlohmann::json a;
    a["id"] = q["id"];
    const auto set = [&](const char* verdict, const char* remember, const char* scope,
                         const char* words) {
        a["verdict"] = verdict;
        a["remember"] = remember;
        a["scope"] = scope;
        said = words;
    };
    switch (key) {
    case 'a':
        set("allow", "once", "path", "allowed once");
        break;
    case 'd':
        set("deny", "once", "path", "denied");
        break;
    case 'p':
        set("allow", "mount", "path", "allowed: this path, for this mount");
        break;
    case 'f':
        set("allow", "mount", "dir", "allowed: this folder, for this mount");
        break;
    case 'r':
        set("allow", "mount", "rule", "allowed: this rule, for this mount");
        break;
    case 'P':
        set("allow", "persist", "path", "allowed: this path, remembered");
        break;
    case 'F':
        set("allow", "persist", "dir", "allowed: this folder, remembered");
        break;
    case 'R':
        set("allow", "persist", "rule", "allowed: this rule, remembered");
        break;
    default:
        return nlohmann::json::object();
    }
    return a;
}

} // namespace

int cmd_approve(const std::string& socket_path) {
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (fd < 0 || socket_path.size() >= sizeof addr.sun_path) {
        std::fprintf(stderr, "guardfs approve: bad socket path %s\n", socket_path.c_str());
        return kExitUsage;
    }
    std::memcpy(addr.sun_path, socket_path.c_str(), socket_path.size() + 1);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
        std::fprintf(stderr,
                     "guardfs approve: cannot connect to %s: %s (is guardfs mounted with "
                     "--approver-socket %s?)\n",
                     socket_path.c_str(), strerrordesc_np(errno), socket_path.c_str());
        return kExitRuntime;
    }
    const char* term = std::getenv("TERM");
    Style st;
    st.on = ::isatty(1) == 1 && std::getenv("NO_COLOR") == nullptr && term != nullptr &&
            std::string(term) != "dumb";
    RawTerminal raw;
    std::printf("guardfs approve: answering questions from %s (q to quit)\n", socket_path.c_str());
    std::fflush(stdout);
    std::deque<nlohmann::json> queue;
    std::string buf;
    bool prompting = false;
    for (;;) {
        if (!prompting && !queue.empty()) {
            show(st, queue.front(), queue.size() - 1);
            prompting = true;
        }
        pollfd fds[2] = {{fd, POLLIN, 0}, {0, POLLIN, 0}};
        if (::poll(fds, 2, -1) < 0) {
            if (errno == EINTR) {
                continue;
            }
            return kExitRuntime;
        }
        if (fds[0].revents != 0) {
            char chunk[4096];
            const ssize_t n = ::read(fd, chunk, sizeof chunk);
            if (n <= 0) {
                std::printf("\nguardfs approve: the guard went away\n");
                return kExitOk;
            }
            buf.append(chunk, static_cast<std::size_t>(n));
            for (auto nl = buf.find('\n'); nl != std::string::npos; nl = buf.find('\n')) {
                auto q = nlohmann::json::parse(buf.substr(0, nl), nullptr, false);
                buf.erase(0, nl + 1);
                if (q.is_object() && q.contains("error")) {
                    std::fprintf(stderr, "guardfs approve: %s\n", q["error"].dump().c_str());
                    return kExitRuntime;
                }
                if (q.is_object() && q.contains("id")) {
                    queue.push_back(std::move(q));
                }
            }
        }
        if (fds[1].revents != 0) {
            char key = 0;
            const ssize_t n = ::read(0, &key, 1);
            if (n <= 0 || key == 'q') {
                std::printf("\nguardfs approve: bye\n");
                return kExitOk;
            }
            if (!prompting || key == '\n' || key == '\r') {
                continue;
            }
            std::string said;
            const auto a = answer_for(key, queue.front(), said);
            if (a.empty()) {
                std::printf("\n   press a, d, p, f, r, P, F, R or q\n > ");
                std::fflush(stdout);
                continue;
            }
            const std::string line = a.dump() + "\n";
            if (::send(fd, line.data(), line.size(), MSG_NOSIGNAL) < 0) {
                std::printf("\nguardfs approve: the guard went away\n");
                return kExitRuntime;
            }
            std::printf("%c\n   %s\n", key,
                        st.c(a["verdict"] == "allow" ? "32" : "31", said).c_str());
            std::fflush(stdout);
            queue.pop_front();
            prompting = false;
        }
    }
}

} // namespace guardfs::app
