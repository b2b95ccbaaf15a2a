#!/usr/bin/env bash
# Training throughput: one epoch of fashion_mlp on Fashion-MNIST (60,000
# rows, Adam 1e-3, cross-entropy, batch 32, shuffled), dmlc vs PyTorch on
# the CPU, side by side, with the same number of threads.
#   bash bench/train_bench.sh [threads (default 2)] [runs (default 3)]
# Needs a build in build/ and Debian's python3-torch (/usr/bin/python3).
# Prints samples/s of each run and the ratio of the medians (dmlc / PyTorch;
# above 1: dmlc is faster). dmlc's figure is its own epoch line (training
# steps only; compile and data loading excluded, as for PyTorch).
set -euo pipefail
cd "$(dirname "$0")/.."
THREADS=${1:-2}
RUNS=${2:-3}
SHARED=${DMLC_SHARED_DIR:-$(pwd)/../shared}
DATA=${DATA:-/usr/share/datasets/fashion-mnist}
PY=${PYTHON:-/usr/bin/python3}
[ -x build/compiler/dmlc ] || { cmake -S . -B build >/dev/null && cmake --build build -j"$(nproc)" >/dev/null; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
d=() p=()
for r in $(seq "$RUNS"); do
  build/compiler/dmlc train "$SHARED/models/fashion_mlp_untrained.onnx" --data "$DATA" \
    --loss cross_entropy --optimizer adam --lr 1e-3 --epochs 1 --batch-size 32 --seed "$r" --validate-on test \
    --threads "$THREADS" -o "$out/t.dmlpkg" >"$out/dmlc.txt"
  ds=$(sed -n 's/^epoch 1\/1 .* \([0-9]*\) samples\/s$/\1/p' "$out/dmlc.txt")
  pj=$("$PY" bench/train_torch.py "$DATA" "$THREADS")
  ps=$(echo "$pj" | sed 's/.*"samples_per_s": \([0-9.]*\).*/\1/')
  printf 'run %d: dmlc %8.0f samples/s   pytorch %8.0f samples/s\n' "$r" "$ds" "$ps"
  d+=("$ds") p+=("$ps")
done
med() { printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
dm=$(med "${d[@]}") pm=$(med "${p[@]}")
printf 'median: dmlc %.0f samples/s, pytorch %.0f samples/s, ratio %.2f (dmlc / pytorch), %s threads each\n' \
  "$dm" "$pm" "$(awk -v a="$dm" -v b="$pm" 'BEGIN { print a / b }')" "$THREADS"
