#!/usr/bin/env bash
# CPU latency: dmlc vs ONNX Runtime (onnxruntime-node, CPU, 2 threads), side
# by side on the reference models at batch 1 and 64, on the same saved inputs.
#   bash bench/run_cpu_bench.sh [iterations]
# Needs a build in build/ (bash scripts/test.sh or cmake) and npm.
set -euo pipefail
cd "$(dirname "$0")/.."
ITER=${1:-200}
THREADS=${THREADS:-2}
SHARED=${DMLC_SHARED_DIR:-$(pwd)/../shared}
[ -x build/compiler/dmlc ] || { cmake -S . -B build >/dev/null && cmake --build build -j"$(nproc)" >/dev/null; }
if [ ! -d bench/node_modules/onnxruntime-node ]; then
  (cd bench && ONNXRUNTIME_NODE_INSTALL=skip npm install --no-audit --no-fund >/dev/null)
fi
out=$(mktemp -d)
printf '%-14s %5s %12s %12s %8s\n' model batch dmlc_ms ort_ms ratio
for model in fashion_mlp lenet5 resnet_small; do
  build/compiler/dmlc compile "$SHARED/models/$model.onnx" -o "$out/$model.dmlpkg" >/dev/null
  for pair in "1 input_0.npy" "64 input_1.npy"; do
    set -- $pair
    batch=$1 npy="$SHARED/models/${model}_io/$2"
    d=$(build/bench/dml_bench "$out/$model.dmlpkg" "$npy" --iterations "$ITER" --threads "$THREADS")
    o=$(node bench/ort_bench.js "$SHARED/models/$model.onnx" "$npy" "$ITER" 20 "$THREADS")
    dm=$(echo "$d" | sed 's/.*"median_ms":\([0-9.]*\).*/\1/')
    om=$(echo "$o" | sed 's/.*"median_ms":\([0-9.]*\).*/\1/')
    ratio=$(awk -v a="$dm" -v b="$om" 'BEGIN { printf "%.2f", a / b }')
    printf '%-14s %5s %12.4f %12.4f %8s\n' "$model" "$batch" "$dm" "$om" "$ratio"
  done
done
echo "median of $ITER runs each; ratio = dmlc / onnxruntime (lower is better for dmlc); $THREADS threads each"
rm -rf "$out"
