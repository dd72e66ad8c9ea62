// Policy loading for commands; see policy_loading.hpp.
#include "app/policy_loading.hpp"

#include "base/path.hpp"
#include "patterns/policy.hpp"

#include <cstdio>
#include <cstdlib>

namespace guardfs::app {

base::Result<std::shared_ptr<const guard::CompiledPolicy>>
load_policy(const PolicyChoice& choice, dataroot::FsOps& fs, bool print_warnings) {
    patterns::Policy policy = patterns::Policy::builtin_default();
    const std::string start = base::current_dir();
    if (!choice.policy_path.empty()) {
        auto loaded = patterns::load_policy_file(choice.policy_path);
        if (!loaded) {
            return base::Unexpected{loaded.error()};
        }
        if (print_warnings) {
            for (const auto& w : loaded->warnings) {
                std::fprintf(stderr, "%s\n", w.to_string().c_str());
            }
        }
        policy = std::move(loaded->policy);
        // Keep the path absolute: self-protection compares it with judged paths.
        policy.source = base::lexical_absolute(choice.policy_path, start);
    }
    guard::CompileOptions options;
    options.cli_data_roots = choice.data_roots;
    // NOLINTNEXTLINE(concurrency-mt-unsafe): read once at start-up, before any thread exists
    if (const char* env = std::getenv("AGENT_DATA_DIR"); env != nullptr) {
        options.env_data_root = std::string(env);
    }
    options.start_dir = start;
    options.home = base::home_dir();
    options.self_paths = choice.self_paths;
    return guard::compile_policy(policy, options, fs);
}

} // namespace guardfs::app
