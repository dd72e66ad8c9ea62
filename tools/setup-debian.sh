#!/usr/bin/env bash
# Installs what guardfs needs to build and test on Debian 12 (run as root, or through sudo).
# The list is the one .ci/run installs; keep them the same.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y --no-install-recommends \
    g++ make cmake pkg-config git ca-certificates \
    libfuse3-dev fuse3 liburing-dev libyaml-cpp-dev libfmt-dev catch2 libutf8proc-dev nlohmann-json3-dev \
    libcli11-dev libgit2-dev libbenchmark-dev \
    clang libclang-rt-14-dev clang-format \
    python3 attr coreutils util-linux procps tmux jq
