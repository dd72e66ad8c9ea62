// libFuzzer target: strict YAML policy loading, and compiling what loads. Any crash, sanitizer
// report or hang is a finding.
#include "dataroot/fs_ops.hpp"
#include "guard/compiled_policy.hpp"
#include "patterns/policy.hpp"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace guardfs;
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    auto loaded = patterns::load_policy_text(text, "fuzz.yaml");
    if (!loaded) {
        return 0;
    }
    // Keep the filesystem out of it: no data roots, no agent_config_dirs lookups of real paths
    // beyond what the policy names (they fail cleanly when missing).
    loaded->policy.data_root.clear();
    dataroot::RealFs fs;
    guard::CompileOptions options;
    options.start_dir = "/nonexistent";
    (void)guard::compile_policy(loaded->policy, options, fs);
    return 0;
}
