#!/usr/bin/env bash
# Prepares, on this (build) machine, what scripts/gpu_check.sh runs on a GPU
# machine that has no Debian packages: the CUDA test and benchmark packages
# (compiled here with clang-16, and ptxas when present) and the reference
# models' saved inputs/outputs, in .gpu-cuda/ at the repository root (ignored by
# git through .git/info/exclude; carried to the GPU machine).
#   bash scripts/gpu_prepare.sh        (after building build/ as the README says)
set -euo pipefail
cd "$(dirname "$0")/.."
grep -qx '/.gpu-cuda/' .git/info/exclude 2>/dev/null || echo '/.gpu-cuda/' >> .git/info/exclude
SHARED=${DMLC_SHARED_DIR:-$PWD/../shared}
cmake --build build -j2 --target gen_cuda_packages >/dev/null
rm -rf .gpu-cuda # (bench/gpu/prepare.sh owns .gpu/)
mkdir -p .gpu-cuda/pkgs .gpu-cuda/models
DMLC_SHARED_DIR=$SHARED build/tests/cuda/gen_cuda_packages .gpu-cuda/pkgs
for m in fashion_mlp lenet5 resnet_small; do
  cp "$SHARED/models/$m.onnx" .gpu-cuda/models/
  cp -r "$SHARED/models/${m}_io" .gpu-cuda/models/
done
# The edge cases of issues 15 and 23 end to end (tests/cuda/edge_cases.py;
# needs onnx: the venv scripts/onnx_node_suite.sh makes)
PY=${PYTHON:-$(bash scripts/onnx_node_suite.sh >/dev/null && echo .cache/onnx-1.23.2/venv/bin/python)}
"$PY" tests/cuda/edge_cases.py prepare .gpu-cuda/edges --dmlc build/compiler/dmlc
du -sh .gpu-cuda
echo "prepared .gpu-cuda/: run scripts/gpu_check.sh on the GPU machine with .gpu-cuda carried"
