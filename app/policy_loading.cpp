// Policy loading for commands; see policy_loading.hpp.
#include "app/policy_loading.hpp"

#include "base/path.hpp"

#include <cstdio>
#include <cstdlib>

namespace guardfs::app {

std::string expand_path(const std::string& path) {
    const std::string start = base::current_dir();
    if (path == "~" || path.rfind("~/", 0) == 0) {
        const std::string home = base::home_dir();
        if (!home.empty()) {
            return base::lexical_absolute(home + path.substr(1), "/");
        }
    }
    return base::lexical_absolute(path, start);
}

base::Result<PolicySource> load_policy_source(const PolicyChoice& choice, bool print_warnings) {
    PolicySource out;
    out.policy = patterns::Policy::builtin_default();
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
        out.policy = std::move(loaded->policy);
        // Keep the path absolute: self-protection compares it with judged paths.
        out.policy.source = base::lexical_absolute(choice.policy_path, start);
    }
    out.options.cli_data_roots = choice.data_roots;
    // NOLINTNEXTLINE(concurrency-mt-unsafe): read once at start-up, before any thread exists
    if (const char* env = std::getenv("AGENT_DATA_DIR"); env != nullptr) {
        out.options.env_data_root = std::string(env);
    }
    out.options.start_dir = start;
    out.options.home = base::home_dir();
    out.options.self_paths = choice.self_paths;
    return out;
}

base::Result<std::shared_ptr<const guard::CompiledPolicy>>
load_policy(const PolicyChoice& choice, dataroot::FsOps& fs, bool print_warnings) {
    auto source = load_policy_source(choice, print_warnings);
    if (!source) {
        return base::Unexpected{source.error()};
    }
    return guard::compile_policy(source->policy, source->options, fs);
}

} // namespace guardfs::app
