#!/usr/bin/env bash
# The trained-ONNX export against ONNX Runtime: trains fashion_mlp for one
# epoch with `dmlc train --export-onnx`, then for each saved input of
# ../shared/models/fashion_mlp_io runs the trained package with `dmlc run`
# and the exported model with ONNX Runtime (bench/tools/ort_compare.py),
# and compares the logits (tolerance 1e-5 absolute).
#   bash bench/tools/check_export_ort.sh [EPOCHS]
# Needs a build in build/, the Fashion-MNIST IDX files, and Python 3 with
# onnxruntime 1.31.1 + numpy 2.3.5 ($DMLC_BENCH_VENV or bench/.venv,
# as bench/run_cpu_bench.sh picks or creates it).
set -euo pipefail
cd "$(dirname "$0")/../.."
EPOCHS=${1:-1}
SHARED=${DMLC_SHARED_DIR:-$(pwd)/../shared}
DATA=${DATA:-/usr/share/datasets/fashion-mnist}
[ -x build/compiler/dmlc ] || { cmake -S . -B build >/dev/null && cmake --build build -j"$(nproc)" >/dev/null; }
VENV=${DMLC_BENCH_VENV:-bench/.venv}
if ! "$VENV/bin/python" -c 'import onnxruntime' 2>/dev/null; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet onnxruntime==1.31.1 numpy==2.3.5
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
build/compiler/dmlc train "$SHARED/models/fashion_mlp_untrained.onnx" --data "$DATA" \
  --epochs "$EPOCHS" --batch-size 32 --seed 0 --quiet -o "$out/t.dmlpkg" --export-onnx "$out/t.onnx"
fails=0
for k in 0 1 2; do
  x="$SHARED/models/fashion_mlp_io/input_$k.npy"
  build/compiler/dmlc run "$out/t.dmlpkg" --input "input=$x" --output-dir "$out/o$k" >/dev/null
  if r=$("$VENV/bin/python" bench/tools/ort_compare.py "$out/t.onnx" "$x" "$out/o$k/logits.npy" 1e-5); then
    echo "input_$k: $r"
  else
    echo "input_$k: MISMATCH $r"
    fails=$((fails + 1))
  fi
done
exit "$fails"
