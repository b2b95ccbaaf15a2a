#!/usr/bin/env bash
# CPU latency: dmlc vs ONNX Runtime (Python onnxruntime, CPU execution
# provider), interleaved on the reference models at batch 1 and 32 with 1 and
# 2 threads each; bench/cpu_bench.py does the work and documents the method.
#   bash bench/run_cpu_bench.sh [cpu_bench.py flags, e.g. --rounds 9 --iterations 50]
#   bash bench/run_cpu_bench.sh --int8 [flags]   # int8: QDQ forms of lenet5, resnet_small,
#       mobilenet_tiny (quantize_static, cached in .cache/bench-models, made with
#       $DMLC_QDQ_PYTHON, default .cache/onnx-1.23.2/venv/bin/python: onnx + onnxruntime) beside
#       their f32 originals: dmlc int8 vs ORT int8 vs dmlc f32 (cpu_bench.py's doc)
# Needs a build in build/ (dmlc and dml_bench; built here if missing) and
# Python 3 with onnxruntime 1.31.1 + numpy 2.3.5: the venv $DMLC_BENCH_VENV
# if set, else bench/.venv (created with `python3 -m venv` and pinned
# `pip install` when it lacks exactly those).
set -euo pipefail
cd "$(dirname "$0")/.."
ORT_VERSION=1.31.1
NUMPY_VERSION=2.3.5
ok_venv() {
  [ -x "$1/bin/python" ] && "$1/bin/python" -c "
import numpy, onnxruntime, sys
sys.exit(0 if (onnxruntime.__version__, numpy.__version__) == ('$ORT_VERSION', '$NUMPY_VERSION') else 1)" 2>/dev/null
}
VENV=${DMLC_BENCH_VENV:-bench/.venv}
if ! ok_venv "$VENV"; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet "onnxruntime==$ORT_VERSION" "numpy==$NUMPY_VERSION"
fi
if [ ! -x build/compiler/dmlc ] || [ ! -x build/bench/dml_bench ]; then
  cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build build -j"$(nproc)" --target dmlc dml_bench >/dev/null
fi
if [ "${1:-}" = "--int8" ]; then
  shift
  QDIR=.cache/bench-models
  QPY=${DMLC_QDQ_PYTHON:-.cache/onnx-1.23.2/venv/bin/python}
  if [ ! -f "$QDIR/mobilenet_tiny_qdq.onnx" ]; then
    "$QPY" -c "import onnx, onnxruntime.quantization" 2>/dev/null || {
      echo "error: run_cpu_bench.sh --int8: $QPY lacks onnx/onnxruntime (set DMLC_QDQ_PYTHON)" >&2
      exit 2
    }
    mkdir -p "$QDIR"
    "$QPY" bench/make_cpu_models.py "$QDIR" --qdq ../shared/models \
      lenet5,resnet_small,mobilenet_tiny 2>/dev/null
  fi
  exec "$VENV/bin/python" bench/cpu_bench.py --model-dir "$QDIR" \
    --models lenet5_qdq,resnet_small_qdq,mobilenet_tiny_qdq "$@"
fi
exec "$VENV/bin/python" bench/cpu_bench.py "$@"
