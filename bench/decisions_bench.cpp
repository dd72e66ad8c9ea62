// Decisions per second of the judge (issue #2): realistic write targets judged against no rules,
// the built-in recommended policy, and that policy plus 10, 100 and 1,000 extra patterns; and
// (issue #6) the decisions of an untar, of git add and of rm -rf, with the caches emptied before
// each or not.
// Run: build/bench/bench_decisions --benchmark_repetitions=5 --benchmark_report_aggregates_only
// Results and the exact command: bench/RESULTS.md.
#include "dataroot/fs_ops.hpp"
#include "guard/judge.hpp"
#include "patterns/policy.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>
#include <sys/mman.h>

namespace {

using namespace guardfs;

// A mix of what agents write all day (sources, build output, node_modules, git objects) and a
// few guarded paths, in a home-directory mount.
const std::array<const char*, 32> kPaths{
    "/home/dev/work/app/src/main.cpp",
    "/home/dev/work/app/src/net/http/client.cpp",
    "/home/dev/work/app/include/app/config.hpp",
    "/home/dev/work/app/build/CMakeFiles/app.dir/src/main.cpp.o",
    "/home/dev/work/app/build/compile_commands.json",
    "/home/dev/work/app/.git/objects/3f/9a8c1e0b5d7f2a4c6e8b0d2f4a6c8e0b2d4f6a",
    "/home/dev/work/app/.git/index.lock",
    "/home/dev/work/app/.git/refs/heads/feature/login",
    "/home/dev/work/web/node_modules/@babel/core/lib/transformation/index.js",
    "/home/dev/work/web/node_modules/.package-lock.json",
    "/home/dev/work/web/node_modules/react-dom/cjs/react-dom.development.js",
    "/home/dev/work/web/src/components/Button/Button.tsx",
    "/home/dev/work/web/dist/assets/index-4f2a9c.js",
    "/home/dev/work/py/venv/lib/python3.11/site-packages/requests/adapters.py",
    "/home/dev/work/py/src/pkg/__pycache__/module.cpython-311.pyc",
    "/home/dev/work/py/tests/test_api.py",
    "/home/dev/work/README.md",
    "/home/dev/work/docs/architecture/overview.md",
    "/home/dev/.cache/pip/http-v2/a/b/c/d/e/0123456789abcdef",
    "/home/dev/.local/share/app/state.json",
    "/home/dev/.ai-agent/memory/2026-11-30.md",
    "/home/dev/work/app/tmp/scratch.txt",
    "/home/dev/work/rust/target/debug/deps/libserde-0123.rlib",
    "/home/dev/work/rust/src/lib.rs",
    "/home/dev/work/go/pkg/mod/github.com/x/y@v1.2.3/z.go",
    "/home/dev/work/app/Makefile",
    "/home/dev/work/app/.env",                  // guarded (ask)
    "/home/dev/.ssh/authorized_keys",           // guarded (deny)
    "/home/dev/.bashrc",                        // guarded (deny)
    "/home/dev/work/app/.claude/settings.json", // guarded (deny)
    "/home/dev/work/app/.git/hooks/pre-commit", // guarded (git)
    "/home/dev/work/app/certs/server.pem",      // guarded (ask)
};

std::string extra_patterns(int n) {
    std::string yaml = "recommended: true\ndeny:\n";
    for (int i = 0; i < n; ++i) {
        std::string p;
        if (i % 100 == 99) {
            p = fmt::format("*tok{}*", i); // a '*' at both ends: the only kind tried one by one
        } else {
            switch (i % 10) {
            case 0:
            case 1:
            case 2:
            case 3:
                p = fmt::format("proj-secret-{}", i);
                break;
            case 4:
            case 5:
                p = fmt::format("tmp{}-*", i);
                break;
            case 6:
            case 7:
                p = fmt::format("*.x{}", i);
                break;
            case 8:
                p = fmt::format("conf{}/keys", i);
                break;
            default:
                p = fmt::format("build{}/*.key", i);
                break;
            }
        }
        yaml += fmt::format("  - \"{}\"\n", p);
    }
    return yaml;
}

std::shared_ptr<const guard::CompiledPolicy> compile(const std::string& yaml, bool builtin) {
    static dataroot::RealFs fs;
    patterns::Policy policy = patterns::Policy::builtin_default();
    if (!builtin) {
        auto loaded = patterns::load_policy_text(yaml, "bench.yaml");
        if (!loaded) {
            std::fprintf(stderr, "%s\n", loaded.error().message.c_str());
            std::abort();
        }
        policy = loaded->policy;
    }
    guard::CompileOptions o;
    o.start_dir = "/";
    auto p = guard::compile_policy(policy, o, fs);
    if (!p) {
        std::fprintf(stderr, "%s\n", p.error().message.c_str());
        std::abort();
    }
    return p.value();
}

// One judge per policy for the whole program: Google Benchmark calls a benchmark function
// several times, and a fresh policy each time would make the judge's per-thread policy copy
// free the previous one inside a measured decision.
guard::Judge& judge_for(const std::string& key,
                        const std::function<std::shared_ptr<const guard::CompiledPolicy>()>& make) {
    static dataroot::RealFs fs;
    static std::map<std::string, std::pair<std::shared_ptr<const guard::CompiledPolicy>,
                                           std::unique_ptr<guard::Judge>>>
        judges;
    auto& slot = judges[key];
    if (!slot.second) {
        slot.first = make();
        slot.second = std::make_unique<guard::Judge>(slot.first, fs);
    }
    return *slot.second;
}

void run(benchmark::State& state, guard::Judge& judge) {
    std::vector<guard::Request> requests;
    for (const char* p : kPaths) {
        guard::Request r;
        r.op = guard::Op::OpenWrite;
        guard::Target t;
        t.views.push_back(guard::PathView{p, guard::View::Spelled});
        r.targets.push_back(t);
        requests.push_back(r);
    }
    benchmark::DoNotOptimize(judge.decide(requests[0])); // warm the per-thread state
    std::size_t i = 0;
    for (auto _ : state) {
        benchmark::DoNotOptimize(judge.decide(requests[i]));
        i = (i + 1) % requests.size();
    }
    state.SetItemsProcessed(state.iterations());
}

void BM_NoRules(benchmark::State& state) {
    run(state,
        judge_for("none", [] { return compile("agent_config: false\ngit: false\n", false); }));
}

void BM_Recommended(benchmark::State& state) {
    run(state, judge_for("recommended", [] { return compile("", true); }));
}

void BM_RecommendedPlus(benchmark::State& state) {
    const int n = static_cast<int>(state.range(0));
    run(state,
        judge_for("plus" + std::to_string(n), [n] { return compile(extra_patterns(n), false); }));
}

// The decisions an untar asks, in its order: each directory (mkdir) and file (create) of a real
// source tree, under a workspace path. In the daemon a create's decision is the first on its
// name, made after the kernel and the untarring program have run on the same core; the warm loop
// above keeps the judge's code and data in the caches between decisions, so it understates that.
// BM_Untar and BM_GitAdd can empty the caches before each decision (run_stream's arguments) and
// time the decision alone.
constexpr const char* kTree = "/usr/share/cmake-3.25";
// Where fsbench puts its workspaces (its untar and git workloads' directories).
constexpr const char* kWorkspace = "/var/tmp/fsb/ws-guardfs-rec";

const std::vector<guard::Request>& untar_requests() {
    static const std::vector<guard::Request> requests = [] {
        std::vector<guard::Request> out;
        std::error_code ec;
        for (auto it = std::filesystem::recursive_directory_iterator(kTree, ec);
             !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
            guard::Request r;
            const bool dir = it->is_directory(ec);
            r.op = dir ? guard::Op::Mkdir : guard::Op::Create;
            guard::Target t;
            t.kind = dir ? guard::Kind::Directory : guard::Kind::File;
            t.views.push_back(
                guard::PathView{std::string(kWorkspace) + "/untar/cmake-3.25/" +
                                    std::filesystem::relative(it->path(), kTree, ec).string(),
                                guard::View::Spelled});
            r.targets.push_back(std::move(t));
            out.push_back(std::move(r));
        }
        return out;
    }();
    return requests;
}

// The decisions `git add` asks per object, for as many objects as the tree has files: a create
// of a temporary name in .git/objects/XX, a link of it to the object's name, and the temporary
// name's unlink. The link's existing name is walked here; in the daemon it carries the create's
// Decision::settled token (Target::settled) and is not, so this stream asks a little more of the
// judge than git add does.
const std::vector<guard::Request>& git_add_requests() {
    static const std::vector<guard::Request> requests = [] {
        std::vector<guard::Request> out;
        const std::string objects = std::string(kWorkspace) + "/git/.git/objects/";
        const std::size_t n = std::max<std::size_t>(untar_requests().size(), 1);
        std::uint64_t x = 0x9e3779b97f4a7c15ULL;
        auto next = [&x] {
            x ^= x << 13U;
            x ^= x >> 7U;
            x ^= x << 17U;
            return x;
        };
        auto file = [](std::string path, guard::Role role, bool exists) {
            guard::Target t;
            t.views.push_back(guard::PathView{std::move(path), guard::View::Spelled});
            t.kind = guard::Kind::File;
            t.role = role;
            t.exists = exists;
            return t;
        };
        auto request = [](guard::Op op, std::vector<guard::Target> targets) {
            guard::Request r;
            r.op = op;
            r.targets = std::move(targets);
            return r;
        };
        for (std::size_t i = 0; i < n; ++i) {
            const std::string dir = objects + fmt::format("{:02x}/", next() % 256);
            const std::string tmp = dir + fmt::format("tmp_obj_{:06X}", next() % 0x1000000);
            const std::string name =
                dir + fmt::format("{:016x}{:016x}{:06x}", next(), next(), next() % 0x1000000);
            out.push_back(request(guard::Op::Create, {file(tmp, guard::Role::Only, false)}));
            out.push_back(request(guard::Op::Link, {file(tmp, guard::Role::ExistingNames, true),
                                                    file(name, guard::Role::NewName, false)}));
            out.push_back(request(guard::Op::Unlink, {file(tmp, guard::Role::Only, true)}));
        }
        return out;
    }();
    return requests;
}

// The decisions `rm -rf` of the untarred tree asks, in its order (fts: a directory's files
// unlinked as they are met, the directory removed after its contents).
const std::vector<guard::Request>& rm_rf_requests() {
    static const std::vector<guard::Request> requests = [] {
        std::vector<guard::Request> out;
        auto request = [](guard::Op op, std::string path, guard::Kind kind) {
            guard::Request r;
            r.op = op;
            guard::Target t;
            t.kind = kind;
            t.exists = true;
            t.views.push_back(guard::PathView{std::move(path), guard::View::Spelled});
            r.targets.push_back(std::move(t));
            return r;
        };
        const std::string top = std::string(kWorkspace) + "/untar/cmake-3.25";
        std::function<void(const std::filesystem::path&, const std::string&)> walk =
            [&](const std::filesystem::path& dir, const std::string& at) {
                std::error_code ec;
                for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
                    const std::string path = at + "/" + e.path().filename().string();
                    if (e.is_directory(ec) && !e.is_symlink(ec)) {
                        walk(e.path(), path);
                    } else {
                        out.push_back(request(guard::Op::Unlink, path, guard::Kind::File));
                    }
                }
                out.push_back(request(guard::Op::Rmdir, at, guard::Kind::Directory));
            };
        if (std::filesystem::is_directory(kTree)) {
            walk(kTree, top);
        }
        return out;
    }();
    return requests;
}

// Pushes the judge out of the caches, as the kernel and the program do between two requests:
// executes code_kib KiB of nops (the instruction cache) and writes a byte of every line of
// data_kib KiB (the data caches).
class Evictor {
public:
    Evictor(std::size_t code_kib, std::size_t data_kib)
        : code_size_(std::max<std::size_t>(code_kib * 1024, 4096))
        , code_(::mmap(nullptr, code_size_, PROT_READ | PROT_WRITE | PROT_EXEC,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0))
        , data_(data_kib * 1024) {
        if (code_ == MAP_FAILED) {
            std::perror("mmap");
            std::abort();
        }
        auto* bytes = static_cast<unsigned char*>(code_);
        const std::size_t nops = code_kib * 1024 == 0 ? 0 : code_size_ - 1;
        std::memset(bytes, 0x90, nops); // nop ...
        bytes[nops] = 0xc3;             // ... ret
    }

    Evictor(const Evictor&) = delete;
    Evictor& operator=(const Evictor&) = delete;

    ~Evictor() { ::munmap(code_, code_size_); }

    void operator()() {
        reinterpret_cast<void (*)()>(code_)();
        for (std::size_t i = 0; i < data_.size(); i += 64) {
            data_[i] = static_cast<char>(data_[i] + 1);
        }
        benchmark::ClobberMemory();
    }

private:
    std::size_t code_size_;
    void* code_;
    std::vector<char> data_;
};

// fsbench's recommended policy plus 1,000 rows (bench/fs/fsbench.py, write_plus1000): six
// shapes in turn, none of which matches a workload.
std::string fsbench_plus1000() {
    std::string yaml = "version: 1\nrecommended: true\ndeny:\n";
    for (std::size_t i = 0; i < 1000; ++i) {
        static constexpr std::array<const char*, 6> kShapes{
            "proj-secret-{}", "tmp{}-*", "*.x{}", "conf{}/keys", "build{}/*.key", "*zqtok{}*"};
        yaml += fmt::format("  - \"{}\"\n", fmt::format(fmt::runtime(kShapes[i % 6]), i));
    }
    return yaml;
}

// 0: the empty policy, 1: the recommended one, 2: fsbench's recommended + 1,000 rows.
guard::Judge& stream_judge(std::int64_t which) {
    if (which == 0) {
        return judge_for("empty", [] {
            return compile("recommended: false\nagent_config: false\ngit: false\n", false);
        });
    }
    if (which == 2) {
        return judge_for("fsbench-plus1000", [] { return compile(fsbench_plus1000(), false); });
    }
    return judge_for("recommended", [] { return compile("", true); });
}

// Decides `requests` in turn. Args: policy (stream_judge), KiB of code to execute and
// KiB of data to write before each decision (0 and 0: the caches stay warm). The time is the
// decision's alone.
void run_stream(benchmark::State& state, const std::vector<guard::Request>& requests) {
    if (requests.empty()) {
        state.SkipWithError("no source tree at /usr/share/cmake-3.25");
        return;
    }
    guard::Judge& judge = stream_judge(state.range(0));
    Evictor evict(static_cast<std::size_t>(state.range(1)),
                  static_cast<std::size_t>(state.range(2)));
    const bool cold = state.range(1) != 0 || state.range(2) != 0;
    std::size_t i = 0;
    for (auto _ : state) {
        if (cold) {
            evict();
        }
        // The daemon builds a request just before it asks: the copy is warm, the judge is not.
        const guard::Request request = requests[i];
        const auto start = std::chrono::steady_clock::now();
        benchmark::DoNotOptimize(judge.decide(request));
        const auto end = std::chrono::steady_clock::now();
        state.SetIterationTime(std::chrono::duration<double>(end - start).count());
        i = (i + 1) % requests.size();
    }
    state.SetItemsProcessed(state.iterations());
}

void BM_Untar(benchmark::State& state) {
    run_stream(state, untar_requests());
}

void BM_GitAdd(benchmark::State& state) {
    run_stream(state, git_add_requests());
}

void BM_RmRf(benchmark::State& state) {
    run_stream(state, rm_rf_requests());
}

} // namespace

BENCHMARK(BM_NoRules);
BENCHMARK(BM_Recommended);
BENCHMARK(BM_RecommendedPlus)->Arg(10)->Arg(100)->Arg(1000);
BENCHMARK(BM_Untar)->ArgsProduct({{0, 1}, {0, 256}, {0, 2048}})->UseManualTime()->Iterations(30000);
BENCHMARK(BM_GitAdd)
    ->ArgsProduct({{0, 1}, {0, 256}, {0, 2048}})
    ->UseManualTime()
    ->Iterations(30000);

// One pass over the tree (3,193 entries): the benchmarks before change the policy, which empties
// the thread's directory states, so each directory's first decision finds none, as in a daemon
// mounted afresh. The daemon's rm -rf skips most walks on settled tokens; this times the walks.
BENCHMARK(BM_RmRf)
    ->ArgsProduct({{0, 1, 2}, {0, 256}, {0, 2048}})
    ->UseManualTime()
    ->Iterations(3192);

BENCHMARK_MAIN();
