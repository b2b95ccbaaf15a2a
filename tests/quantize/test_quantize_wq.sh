#!/bin/sh
# `dmlc quantize --weight-only int8|int4` on the models of gen_wq_models.py
# (checked in beside this script): the table, sizes, the ONNX written
# (check_wq.py with a python that has onnx / onnxruntime: the packed values
# and scales exactly as specified, ONNX Runtime's output equal to the f32
# model with the dequantized weights, cosine to f32), the move to opset 21,
# and every error path.
#   test_quantize_wq.sh DMLC SOURCE_DIR
# A python with onnx and onnxruntime: $DMLC_QUANT_PYTHON, the venv of
# scripts/onnx_node_suite.sh, or python3; skipped with a message otherwise.
set -u
DMLC=$1
SRC=$2
T=$SRC/tests/quantize
DIR=$(mktemp -d "${TMPDIR:-/tmp}/dmlc_quantize_wq.XXXXXX")
trap 'rm -rf "$DIR"' EXIT
. "$(dirname "$0")/../sh_test_util.sh"

PY_ORT=""
for p in ${DMLC_QUANT_PYTHON:-} "$SRC"/.cache/onnx-*/venv/bin/python python3; do
  command -v "$p" >/dev/null 2>&1 || continue
  "$p" -c "import onnx, numpy, onnxruntime" 2>/dev/null && PY_ORT=$p && break
done
[ -n "$PY_ORT" ] || echo "SKIPPED: ONNX Runtime checks (no python with onnx, onnxruntime)"

Q="$DMLC quantize"
for spec in "int8 32" "int8 16" "int4 32" "int4 64"; do
  set -- $spec
  b=$1 g=$2 o="$DIR/m_$1_$2.onnx"
  check "$b g$g" $Q "$T/wq_model.onnx" --weight-only "$b" --group-size "$g" -o "$o" >"$o.txt" 2>&1
  check "$b g$g mm1" has "^mm1  *MatMul  *40x24  *[0-9.]*  $b g$g$" "$o.txt"
  check "$b g$g fc2 (transB)" has "^fc2  *Gemm  *24x16  *[0-9.]*  $b g$g$" "$o.txt"
  check "$b g$g shared weight" has "^mm3b  *MatMul  *16x16  *[0-9.]*  $b g$g$" "$o.txt"
  check "$b g$g opset" has "; opset 13 -> 21$" "$o.txt"
  if [ -n "$PY_ORT" ]; then
    # int8 keeps the cosine >= 0.99 here; int4 on this model's 1e30 column
    # does not (measured min 0.17): its semantics are checked exactly
    mc=0.99
    [ "$b" = int4 ] && mc=-1
    check "$b g$g check_wq.py" "$PY_ORT" "$T/check_wq.py" "$T/wq_model.onnx" "$o" \
      "${b#int}" "$g" --rows 40 --min-cos $mc
  fi
done
# sizes: 6912 bytes of f32 weights (W3 once); int8 g32: 1728 values + 4-byte
# scales (W1 2x24, W2 16x1, W3 1x16, W4 1x8 = 88); int4: half the values
check "int8 bytes" has "weights 6912 -> 2080 bytes" "$DIR/m_int8_32.onnx.txt"
check "int4 bytes" has "weights 6912 -> 1216 bytes" "$DIR/m_int4_32.onnx.txt"
# --exclude: the node stays f32
check "exclude" $Q "$T/wq_model.onnx" --weight-only int8 --exclude fc4,mm1 -o "$DIR/ex.onnx" >"$DIR/ex.txt" 2>&1
check "exclude fc4" has "^fc4  *Gemm  *16x8  *-  f32 (--exclude)$" "$DIR/ex.txt"
check "exclude mm1" has "^mm1  *MatMul  *40x24  *-  f32 (--exclude)$" "$DIR/ex.txt"
# NaN in a weight: left f32, said so; nothing else to quantize -> error
check "nan weight" sh -c "$Q '$T/wq_nan.onnx' --weight-only int8 -o '$DIR/nan.onnx' >'$DIR/nan.txt' 2>&1; test \$? -eq 1"
check "nan weight message" has "the model has no MatMul / Gemm weight to quantize (1 with a constant weight, none quantized)" "$DIR/nan.txt"

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
  "$T/already_qdq.onnx" --weight-only int8
err "no weights" 1 "error: quantize: the model has no MatMul / Gemm weight to quantize (0 with a constant weight" \
  "$T/wq_no_weights.onnx" --weight-only int4
err "DFT-17" 1 "error: quantize: node 'dft' (DFT-17) changed meaning by opset 21" \
  "$T/wq_dft.onnx" --weight-only int8
err "exclude unknown" 1 "error: quantize: --exclude 'nope' names no node of the model" \
  "$T/wq_model.onnx" --weight-only int8 --exclude nope
err "bad bits" 2 "bad --weight-only 'int2' (int8 or int4)" "$T/wq_model.onnx" --weight-only int2
err "bad group" 2 "bad --group-size '1' (2..1048576)" "$T/wq_model.onnx" --weight-only int8 --group-size 1
err "group without weight-only" 2 "--group-size and --exclude go with --weight-only" \
  "$T/wq_model.onnx" --group-size 32
err "calib with weight-only" 2 "--weight-only takes no --calib data" \
  "$T/wq_model.onnx" --weight-only int8 --calib "$T/calib_mlp.npy"
# a package: not done yet (no kernel), said so
$Q "$T/wq_model.onnx" --weight-only int8 -o "$DIR/e.dmlpkg" >"$DIR/e.txt" 2>&1
check "package output: exit 1" test $? -eq 1
check "package output: message" has "weight-only packages are not implemented yet" "$DIR/e.txt"
check "package output: nothing written" test ! -e "$DIR/e.dmlpkg"

[ "$fails" -eq 0 ] && echo "test_quantize_wq: all passed"
exit "$fails"
