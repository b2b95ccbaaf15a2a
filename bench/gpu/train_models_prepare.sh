#!/usr/bin/env bash
# Prepares, on this (build) machine, what bench/gpu/train_models.sh needs on
# the GPU machine: dmlc, clang-16 and bench/train/dml_train_bench packed into
# .gpu-tc/tc.tar.xz (scripts/gpu_toolchain.sh), which the device tool
# carries. The models and their weights are made there (they cannot
# travel).
#   bash bench/gpu/train_models_prepare.sh     (build/ configured as the README says)
#   run(command="bash bench/gpu/train_models.sh", carry=[".gpu-tc"], timeout_s=600)
# Environment: BUILD (build): the build folder.
set -euo pipefail
cd "$(dirname "$0")/../.."
B=${BUILD:-build}
[ -f "$B/CMakeCache.txt" ] || { echo "error: $B is not configured (README: cmake -S . -B $B)" >&2; exit 1; }
cmake --build "$B" -j"$(nproc)" --target dmlc dml_train_bench
[ "$B" = build ] || { echo "error: scripts/gpu_toolchain.sh packs build/: use BUILD=build" >&2; exit 1; }
bash scripts/gpu_toolchain.sh
tar tJf .gpu-tc/tc.tar.xz | grep -q 'tc/bin/dml_train_bench$' ||
  { echo "error: .gpu-tc/tc.tar.xz lacks dml_train_bench" >&2; exit 1; }
echo "prepared .gpu-tc/tc.tar.xz with dmlc, clang-16 and dml_train_bench:" \
  'run(command="bash bench/gpu/train_models.sh", carry=[".gpu-tc"], timeout_s=600)'
