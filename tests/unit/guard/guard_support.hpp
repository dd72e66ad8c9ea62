// Building a judge from YAML text for the guard's unit tests.
#pragma once

#include "dataroot/fs_ops.hpp"
#include "guard/judge.hpp"
#include "patterns/policy.hpp"

#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

namespace guardfs::test {

inline base::Result<std::shared_ptr<const guard::CompiledPolicy>>
compile_yaml(const std::string& yaml, guard::CompileOptions options = {},
             const std::string& name = "test.yaml") {
    auto loaded = patterns::load_policy_text(yaml, name);
    if (!loaded) {
        FAIL(loaded.error().message);
    }
    if (options.start_dir.empty()) {
        options.start_dir = std::string(1, '/'); // (= "/" trips g++ 12's -Wrestrict, PR105329)
    }
    static dataroot::RealFs fs;
    return guard::compile_policy(loaded->policy, options, fs);
}

inline std::shared_ptr<const guard::CompiledPolicy> policy_of(const std::string& yaml,
                                                              guard::CompileOptions options = {}) {
    auto p = compile_yaml(yaml, std::move(options));
    if (!p) {
        FAIL(p.error().message);
    }
    return p.value();
}

inline guard::Target target(const std::string& path, guard::Role role = guard::Role::Only) {
    guard::Target t;
    t.views.push_back(guard::PathView{path, guard::View::Spelled});
    t.role = role;
    return t;
}

inline guard::Request request(guard::Op op, std::vector<guard::Target> targets) {
    guard::Request r;
    r.op = op;
    r.targets = std::move(targets);
    return r;
}

// The decision for a single-path write.
inline guard::Decision write_to(const guard::Judge& j, const std::string& path) {
    return j.decide(request(guard::Op::Write, {target(path)}));
}

} // namespace guardfs::test
