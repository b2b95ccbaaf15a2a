#!/usr/bin/env bash
# The README's test command: set-up, build, and every test through ctest.
#   bash scripts/test.sh            (build dir: build/)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build build -j"$(nproc)"
ctest --test-dir build --output-on-failure -j"$(nproc)"
