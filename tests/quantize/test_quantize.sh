#!/bin/sh
# `dmlc quantize` end to end on the small models of gen_models.py (checked
# in beside this script): the QDQ models (structure: check_qdq.py with a
# python that has onnx), the report, the package output, dmlc against ONNX
# Runtime on the QDQ model and ORT's quantize_static scales (with a python
# that has onnxruntime), each calibration method and source, the keep-f32
# rules, and every error path.
#   test_quantize.sh DMLC SOURCE_DIR
# A python with onnx / onnxruntime: $DMLC_QUANT_PYTHON, the venv of
# scripts/onnx_node_suite.sh, or python3; the parts that need them are
# skipped with a message where none has them.
set -u
DMLC=$1
SRC=$2
T=$SRC/tests/quantize
DIR=$(mktemp -d "${TMPDIR:-/tmp}/dmlc_quantize.XXXXXX")
trap 'rm -rf "$DIR"' EXIT
. "$(dirname "$0")/../sh_test_util.sh"

PY_ONNX="" PY_ORT=""
for p in ${DMLC_QUANT_PYTHON:-} "$SRC"/.cache/onnx-*/venv/bin/python python3; do
  command -v "$p" >/dev/null 2>&1 || continue
  [ -z "$PY_ONNX" ] && "$p" -c "import onnx, numpy" 2>/dev/null && PY_ONNX=$p
  [ -z "$PY_ORT" ] && "$p" -c "import onnx, numpy, onnxruntime" 2>/dev/null && PY_ORT=$p
done
[ -n "$PY_ONNX" ] || echo "SKIPPED: QDQ structure checks (no python with onnx and numpy)"
[ -n "$PY_ORT" ] || echo "SKIPPED: ONNX Runtime checks (no python with onnxruntime)"

Q="$DMLC quantize"
# --- the MLP: Gemm, Relu, Gemm(transB) ---
check "mlp" $Q "$T/tiny_mlp.onnx" -o "$DIR/mlp.onnx" --calib "$T/calib_mlp.npy" \
  --report "$DIR/mlp.json" >"$DIR/mlp.txt" 2>&1
check "mlp table fc1" has "^fc1  *Gemm  *8 ch  *[0-9.]*  int8$" "$DIR/mlp.txt"
check "mlp table relu1" has "^relu1  *Relu  *-  *[0-9.]*  int8$" "$DIR/mlp.txt"
check "mlp table fc2" has "^fc2  *Gemm  *4 ch  *[0-9.]*  int8$" "$DIR/mlp.txt"
check "mlp summary" has "over 64 calibration rows (minmax); 3 activations in QDQ; weights 688 -> 364 bytes" "$DIR/mlp.txt"
check "mlp report" has '"layers": \[' "$DIR/mlp.json"
check "mlp report fc1" has '{"name": "fc1", "op": "Gemm", "output": "h1", "quantized": true, "why_f32": null, "weight_channels": 8, "sqnr_db": ' "$DIR/mlp.json"
# int8 keeps the output within 30 dB of f32 on these models (measured 36.6)
sq=$(sed -n 's/.*"output": {"name": "y", "sqnr_db": \([0-9.]*\)}.*/\1/p' "$DIR/mlp.json")
check "mlp output SQNR $sq > 30 dB" awk "BEGIN { exit !(\"$sq\" + 0 > 30) }"
# the package: dmlc compiles and runs the QDQ model
check "mlp package" $Q "$T/tiny_mlp.onnx" -o "$DIR/mlp.dmlpkg" --calib "$T/calib_mlp.npy" >/dev/null 2>&1
check "mlp run" "$DMLC" run "$DIR/mlp.dmlpkg" --input "x=$T/calib_mlp.npy" --output-dir "$DIR/mlp_out" >/dev/null 2>&1
check "mlp run output" test -f "$DIR/mlp_out/y.npy"
# per tensor: one scale per weight
check "mlp per-tensor" $Q "$T/tiny_mlp.onnx" -o "$DIR/mlp_t.onnx" --calib "$T/calib_mlp.npy" --per-tensor >"$DIR/mlp_t.txt" 2>&1
check "mlp per-tensor table" has "^fc1  *Gemm  *tensor " "$DIR/mlp_t.txt"
# CSV with a label column (17 columns for 16 inputs: the last dropped)
check "csv" $Q "$T/tiny_mlp.onnx" -o "$DIR/csv.onnx" --calib "$T/calib_mlp.csv" >"$DIR/csv.txt" 2>&1
check "csv rows" has "over 16 calibration rows" "$DIR/csv.txt"
# NaN and +-inf rows: left out of the ranges (and of the SQNR sums)
check "edge values" $Q "$T/tiny_mlp.onnx" -o "$DIR/edge.onnx" --calib "$T/calib_edge.npy" >"$DIR/edge.txt" 2>&1
check "edge values rows" has "over 67 calibration rows" "$DIR/edge.txt"
check "edge values SQNR finite" has "^output 'y' SQNR  *[0-9][0-9.]* dB" "$DIR/edge.txt"
# a pair X.npy,Y.npy (dmlc train's --data form): the x rows
check "pair" $Q "$T/tiny_mlp.onnx" -o "$DIR/pair.onnx" --calib "$T/calib_mlp.npy,$T/calib_mlp.npy" >"$DIR/pair.txt" 2>&1
check "pair rows" has "over 64 calibration rows" "$DIR/pair.txt"
check "pair = x alone" cmp -s "$DIR/pair.onnx" "$DIR/mlp.onnx"
# --calib-rows
check "calib-rows" $Q "$T/tiny_mlp.onnx" -o "$DIR/r.onnx" --calib "$T/calib_mlp.npy" --calib-rows 10 --batch-size 3 >"$DIR/r.txt" 2>&1
check "calib-rows text" has "over 10 calibration rows" "$DIR/r.txt"
# the methods
for m in percentile percentile:99.9 entropy; do
  check "method $m" $Q "$T/tiny_cnn.onnx" -o "$DIR/m.onnx" --calib "$T/calib_cnn.npy" --method $m >"$DIR/m.txt" 2>&1
  check "method $m text" has "calibration rows (${m%%:*}" "$DIR/m.txt"
done
# keep-f32 by name; by rule (200 dB: every layer, one at a time; 1 dB: none)
check "keep-f32" $Q "$T/tiny_mlp.onnx" -o "$DIR/k.onnx" --calib "$T/calib_mlp.npy" --keep-f32 fc2 >"$DIR/k.txt" 2>&1
check "keep-f32 table" has "^fc2  *Gemm  *4 ch  *[0-9.]*  f32 (--keep-f32)$" "$DIR/k.txt"
check "keep-f32 sqnr rule" $Q "$T/tiny_mlp.onnx" -o "$DIR/k2.onnx" --calib "$T/calib_mlp.npy" --keep-f32-below-sqnr 200 >"$DIR/k2.txt" 2>&1
check "keep-f32 sqnr rule all" test "$(grep -c 'f32 (SQNR below --keep-f32-below-sqnr)' "$DIR/k2.txt")" -eq 3
check "keep-f32 sqnr rule exact" has "output 'y' SQNR       inf dB" "$DIR/k2.txt"
check "keep-f32 sqnr rule none" $Q "$T/tiny_mlp.onnx" -o "$DIR/k3.onnx" --calib "$T/calib_mlp.npy" --keep-f32-below-sqnr 1 >"$DIR/k3.txt" 2>&1
check "keep-f32 sqnr rule none text" test "$(grep -c '  int8$' "$DIR/k3.txt")" -eq 3
# --- the CNN: Conv, Relu, MaxPool, Flatten, MatMul, Add of a constant ---
check "cnn" $Q "$T/tiny_cnn.onnx" -o "$DIR/cnn.onnx" --calib "$T/calib_cnn.npy" \
  --report "$DIR/cnn.json" >"$DIR/cnn.txt" 2>&1
check "cnn table conv" has "^conv  *Conv  *4 ch " "$DIR/cnn.txt"
check "cnn table matmul" has "^fc  *MatMul  *3 ch " "$DIR/cnn.txt"
check "cnn table add" has "^fc_bias  *Add  *-  *[0-9.]*  f32 (a constant operand)$" "$DIR/cnn.txt"
check "cnn package" $Q "$T/tiny_cnn.onnx" -o "$DIR/cnn.dmlpkg" --calib "$T/calib_cnn.npy" >/dev/null 2>&1
check "cnn run" "$DMLC" run "$DIR/cnn.dmlpkg" --input "x=$T/calib_cnn.npy" --output-dir "$DIR/cnn_out" >/dev/null 2>&1

if [ -n "$PY_ONNX" ]; then
  check "mlp structure" "$PY_ONNX" "$T/check_qdq.py" structure "$T/tiny_mlp.onnx" "$DIR/mlp.onnx" ""
  check "cnn structure" "$PY_ONNX" "$T/check_qdq.py" structure "$T/tiny_cnn.onnx" "$DIR/cnn.onnx" ""
  check "edge values: the scales of the finite rows" "$PY_ONNX" -c "
import sys, onnx
from onnx import numpy_helper as nh
a, b = [{i.name: nh.to_array(i) for i in onnx.load(p).graph.initializer} for p in sys.argv[1:]]
names = ['x_scale', 'x_zero_point', 'h1_scale', 'h1_zero_point', 'r1_scale', 'r1_zero_point']
sys.exit(any(a[n] != b[n] for n in names))" "$DIR/mlp.onnx" "$DIR/edge.onnx"
  check "keep-f32 structure" "$PY_ONNX" "$T/check_qdq.py" structure "$T/tiny_mlp.onnx" "$DIR/k.onnx" fc2
fi
if [ -n "$PY_ORT" ]; then
  check "mlp ort" "$PY_ORT" "$T/check_qdq.py" ort "$T/tiny_mlp.onnx" "$DIR/mlp.onnx" \
    "$T/calib_mlp.npy" "$DIR/mlp.json" "$DIR/mlp_out/y.npy"
  check "cnn ort" "$PY_ORT" "$T/check_qdq.py" ort "$T/tiny_cnn.onnx" "$DIR/cnn.onnx" \
    "$T/calib_cnn.npy" "$DIR/cnn.json" "$DIR/cnn_out/y.npy"
fi

# --- errors: exit 1 with op "quantize" and the reason; usage errors exit 2 ---
err() { # err DESCRIPTION EXPECTED_RC TEXT ARGS...
  d=$1 rc=$2 text=$3
  shift 3
  $Q "$@" -o "$DIR/e.onnx" >"$DIR/e.txt" 2>&1
  got=$?
  check "$d: exit $rc (got $got)" test $got -eq $rc
  check "$d: message" has "$text" "$DIR/e.txt"
  check "$d: nothing written" test ! -e "$DIR/e.onnx"
}
err "already quantized" 1 "error: quantize: the model is already quantized: node 'q' is QuantizeLinear" \
  "$T/already_qdq.onnx" --calib "$T/calib_mlp.npy"
err "wrong dtype" 1 "error: quantize: calibration data '.*calib_i64.npy' is i64; need f32" \
  "$T/tiny_mlp.onnx" --calib "$T/calib_i64.npy"
err "empty" 1 "error: quantize: calibration data '.*calib_empty.npy' is empty (0 rows)" \
  "$T/tiny_mlp.onnx" --calib "$T/calib_empty.npy"
err "wrong shape" 1 "error: quantize: calibration rows of shape \[8,15\] (15 values each) do not fit the model's input 'x' f32\[batch,16\] (16 values a row)" \
  "$T/tiny_mlp.onnx" --calib "$T/calib_short.npy"
err "cnn rows of the mlp" 1 "do not fit the model's input 'x' f32\[batch,1,8,8\] (64 values a row)" \
  "$T/tiny_cnn.onnx" --calib "$T/calib_mlp.npy"
err "unsupported method" 2 "error: dmlc quantize: unsupported --method 'kl' (minmax, percentile\[:P\], entropy; gptq with --weight-only)" \
  "$T/tiny_mlp.onnx" --calib "$T/calib_mlp.npy" --method kl
err "bad percentile" 2 "bad percentile in 'percentile:40'" \
  "$T/tiny_mlp.onnx" --calib "$T/calib_mlp.npy" --method percentile:40
err "opset 11 per channel" 1 "error: quantize: per-channel weights need opset >= 13" \
  "$T/tiny_mlp_opset11.onnx" --calib "$T/calib_mlp.npy"
err "keep-f32 unknown" 1 "error: quantize: --keep-f32 'nope' names no node" \
  "$T/tiny_mlp.onnx" --calib "$T/calib_mlp.npy" --keep-f32 nope
err "name clash" 1 "error: quantize: the model already has a tensor named 'h1_scale', a name the QDQ model gives to the quantization of 'h1'" \
  "$T/name_clash.onnx" --calib "$T/calib_mlp.npy"
err "package as model" 1 "error: quantize: '.*mlp.dmlpkg' is a package; dmlc quantize reads the ONNX model" \
  "$DIR/mlp.dmlpkg" --calib "$T/calib_mlp.npy"
mkdir -p "$DIR/images"
err "image folder" 1 "folders of images are not supported" "$T/tiny_mlp.onnx" --calib "$DIR/images"
err "missing calibration" 1 "error: quantize: calibration data '.*nothing.npy' not found" \
  "$T/tiny_mlp.onnx" --calib "$DIR/nothing.npy"
err "no calib flag" 2 "give a model, -o OUT and --calib DATA" "$T/tiny_mlp.onnx"
# opset 11 per tensor works
check "opset 11 per tensor" $Q "$T/tiny_mlp_opset11.onnx" -o "$DIR/o11.onnx" --calib "$T/calib_mlp.npy" --per-tensor >/dev/null 2>&1
check "help" sh -c "$Q --help | grep -q 'usage: dmlc quantize MODEL.onnx'"

[ "$fails" -eq 0 ] && echo "test_quantize: all passed"
exit "$fails"
