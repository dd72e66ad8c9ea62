#!/usr/bin/env bash
# Enforces the module direction of style guide B.2: no FUSE outside fusefs/, yaml-cpp only through
# patterns/yaml_cpp.hpp (included by the policy and allow-file loaders), patterns and dataroot never include each other, and nothing below
# guard includes guard or fusefs. Prints each offending line and exits 1 if any.
set -u
cd "$(dirname "$0")/.." || exit 2
bad=0
check() { # $1 = description, rest = grep arguments
    local what=$1; shift
    local out
    out=$(grep -rnE "$@" 2>/dev/null)
    if [ -n "$out" ]; then
        echo "check-includes: $what"; echo "$out"; bad=1
    fi
}
check "FUSE included outside fusefs/" '#include *[<"](fuse_|fuse\.h|fuse3/|fuse_lowlevel)' base patterns dataroot guard app
check "yaml-cpp outside patterns/yaml_cpp.hpp" '#include *<yaml-cpp' base dataroot guard fusefs app \
    patterns --exclude=yaml_cpp.hpp
check "patterns/yaml_cpp.hpp outside the two YAML loaders" '#include *"patterns/yaml_cpp' base \
    dataroot guard fusefs app patterns --exclude=policy_yaml.cpp --exclude=answers_yaml.cpp
check "patterns includes dataroot" '#include *"dataroot/' patterns
check "dataroot includes patterns" '#include *"patterns/' dataroot
check "base includes a module" '#include *"(patterns|dataroot|guard|fusefs|app)/' base
check "patterns/dataroot include guard or fusefs" '#include *"(guard|fusefs)/' patterns dataroot
check "guard includes fusefs" '#include *"fusefs/' guard
exit $bad
