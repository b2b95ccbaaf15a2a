#!/usr/bin/env bash
# CPU latency: dmlc vs ONNX Runtime (Python onnxruntime, CPU execution
# provider), interleaved on the reference models at batch 1 and 32 with 1 and
# 2 threads each; bench/cpu_bench.py does the work and documents the method.
#   bash bench/run_cpu_bench.sh [cpu_bench.py flags, e.g. --rounds 9 --iterations 50]
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
exec "$VENV/bin/python" bench/cpu_bench.py "$@"
