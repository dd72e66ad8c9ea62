// Decisions per second of the judge (issue #2): realistic write targets judged against no rules,
// the built-in recommended policy, and that policy plus 10, 100 and 1,000 extra patterns.
// Run: build/bench/bench_decisions --benchmark_repetitions=5 --benchmark_report_aggregates_only
// Results and the exact command: bench/RESULTS.md.
#include "dataroot/fs_ops.hpp"
#include "guard/judge.hpp"
#include "patterns/policy.hpp"

#include <fmt/format.h>

#include <array>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

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

} // namespace

BENCHMARK(BM_NoRules);
BENCHMARK(BM_Recommended);
BENCHMARK(BM_RecommendedPlus)->Arg(10)->Arg(100)->Arg(1000);

BENCHMARK_MAIN();
