#!/usr/bin/env bash
# dmlc's CPU against ONNX Runtime on random graphs (docs/kernels.md "Random
# graphs"): `dml_graphgen --onnx-dir --ort` exports seeds SEEDS as ONNX with
# the CPU's inputs and outputs and runs graphgen_ort.py on them, and the
# saved graphs of REPLAY_DIR the same way; every graph must agree (1e-4
# norm-wise). Then two graphs are exported alone, one
# output of the second changed by 2e-3 of its largest magnitude, and the
# script must report that graph (and only it) as a mismatch.
# usage: test_graphgen_ort.sh GRAPHGEN PYTHON SCRIPT WORK SEEDS REPLAY_DIR
# Exit 77 (skipped) when PYTHON lacks onnx or onnxruntime (the venv of
# scripts/onnx_node_suite.sh, which scripts/test.sh makes, has both).
set -uo pipefail
gen=$1 py=$2 script=$3 work=$4 seeds=$5 replay=$6
if [ ! -x "$py" ] || ! "$py" -c 'import numpy, onnx, onnxruntime' 2>/dev/null; then
  echo "SKIP: no Python with numpy, onnx and onnxruntime at $py (the venv of" \
    "scripts/onnx_node_suite.sh; scripts/test.sh makes it)"
  exit 77
fi
rm -rf "$work"
mkdir -p "$work"
if ! "$gen" --onnx-dir "$work/run" --seeds "$seeds" --ort "'$py' '$script'" \
  --replay-dir "$replay"; then
  echo "FAIL: dml_graphgen --ort (the shrunk graphs are above; their ONNX under $work/run)"
  exit 1
fi
# the comparison can fail: a changed CPU output is reported with its graph
if ! "$gen" --onnx-dir "$work/changed" --seeds 0:2 >/dev/null; then
  echo "FAIL: dml_graphgen --onnx-dir"
  exit 1
fi
"$py" - "$work/changed/graphgen_1.r0.o0.npy" <<'PY' || exit 1
import sys
import numpy as np
a = np.load(sys.argv[1])
fin = np.flatnonzero(np.isfinite(a))
a.flat[fin[len(fin) // 2]] += 2e-3 * max(1.0, float(np.abs(a.flat[fin]).max()))
np.save(sys.argv[1], a)
PY
out=$("$py" "$script" "$work/changed")
rc=$?
echo "$out"
if [ $rc -ne 1 ] || ! grep -q '^graphgen_0: pass' <<<"$out" ||
  ! grep -q '^graphgen_1: FAIL: mismatch: output 0 at batch 1: error 0.002' <<<"$out"; then
  echo "FAIL: the changed output of graphgen_1 was not reported as a mismatch (exit $rc)"
  exit 1
fi
echo "graphgen_ort: ok"
