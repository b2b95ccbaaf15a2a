#!/bin/sh
# `dmlc train --qat` end to end (docs/quantize.md, "Quantization-aware
# training") on tiny_mlp.onnx with the data of gen_qat_data.py: the loss
# falls over 5 epochs, the input's range is the moving average of its
# batches, the exported QDQ model is run by dmlc and by ONNX
# Runtime with the same outputs (check_qat.py, where a python with
# onnxruntime is found), and the errors: a model already quantized (QDQ, or
# the exported QAT model itself), a package given as the model, a GPU device.
#   test_qat.sh DMLC SOURCE_DIR
set -u
DMLC=$1
SRC=$2
T=$SRC/tests/quantize
DIR=$(mktemp -d "${TMPDIR:-/tmp}/dmlc_qat.XXXXXX")
trap 'rm -rf "$DIR"' EXIT
. "$(dirname "$0")/../sh_test_util.sh"

PY_ORT=""
for p in ${DMLC_QUANT_PYTHON:-} "$SRC"/.cache/onnx-*/venv/bin/python python3; do
  command -v "$p" >/dev/null 2>&1 || continue
  "$p" -c "import onnx, numpy, onnxruntime" 2>/dev/null && PY_ORT=$p && break
done
[ -n "$PY_ORT" ] || echo "SKIPPED: ONNX Runtime checks (no python with onnxruntime)"

DATA="$T/qat_x.npy,$T/qat_y.npy"
check "qat train" "$DMLC" train "$T/tiny_mlp.onnx" --qat --data "$DATA" --epochs 5 --lr 1e-2 \
  --validation-split 0 -o "$DIR/t.dmlpkg" --export-onnx "$DIR/q.onnx" \
  --history "$DIR/h.csv" >"$DIR/train.txt" 2>&1
check "qat insertion line" has "qat: 3 of 3 layers fake-quantized, 3 activations" "$DIR/train.txt"
check "qat export line" has "int8 QDQ: 4 trained initializers, 3 trained activation ranges" "$DIR/train.txt"
# the loss falls: the last epoch's below 80% of the first's (measured 0.665 / 1.409)
first=$(awk -F, 'NR == 2 { print $2 }' "$DIR/h.csv")
last=$(awk -F, 'NR == 6 { print $2 }' "$DIR/h.csv")
check "qat loss falls ($first -> $last)" awk "BEGIN { exit !(\"$last\" + 0 < 0.8 * (\"$first\" + 0)) }"
# the package's forward runs FakeQuantize; the QDQ model compiles and runs
check "qat forward" "$DMLC" run "$DIR/t.dmlpkg" --input "x=$T/qat_x.npy" --output-dir "$DIR/fake" >/dev/null 2>&1
check "qdq compile" "$DMLC" compile "$DIR/q.onnx" -o "$DIR/q.dmlpkg" >/dev/null 2>&1
check "qdq run" "$DMLC" run "$DIR/q.dmlpkg" --input "x=$T/qat_x.npy" --output-dir "$DIR/qdq" >/dev/null 2>&1
if [ -n "$PY_ORT" ]; then
  check "qdq against onnxruntime" "$PY_ORT" "$T/check_qat.py" "$DIR/q.onnx" "$T/qat_x.npy" \
    "$DIR/qdq/y.npy" "$DIR/fake/y.npy"
fi
# the activation range follows the batches as a moving average (checkpoint's state)
check "qat ema run" "$DMLC" train "$T/tiny_mlp.onnx" --qat --data "$DATA" --epochs 1 --batch-size 64 \
  --no-shuffle --validation-split 0 --checkpoint-every 1 --checkpoint-dir "$DIR/ck" \
  -o "$DIR/e1.dmlpkg" >/dev/null 2>&1
if [ -n "$PY_ORT" ]; then
  check "qat ema range" "$PY_ORT" "$T/check_qat.py" ema "$DIR/ck/epoch-0001.safetensors" \
    "$T/qat_x.npy" 64
fi
# errors
err() { # err DESCRIPTION TEXT ARGS...: dmlc train fails (exit 1) saying TEXT
  d=$1 txt=$2
  shift 2
  "$DMLC" train "$@" >"$DIR/err.txt" 2>&1
  rc=$?
  check "$d exits 1 (got $rc)" test "$rc" -eq 1
  check "$d text" has "$txt" "$DIR/err.txt"
}
err "already QDQ" "the model is already quantized: node 'q' is QuantizeLinear" \
  "$T/already_qdq.onnx" --qat --data "$DATA" -o "$DIR/e.dmlpkg"
err "the QAT export again" "already quantized: node 'x_QuantizeLinear' is QuantizeLinear" \
  "$DIR/q.onnx" --qat --data "$DATA" -o "$DIR/e.dmlpkg"
err "a package" "--qat: '$DIR/t.dmlpkg' is a package; quantization-aware training starts from the f32 ONNX model" \
  "$DIR/t.dmlpkg" --qat --data "$DATA" -o "$DIR/e.dmlpkg"
err "a GPU device" "--qat trains on the CPU only (--device vulkan)" \
  "$T/tiny_mlp.onnx" --qat --device vulkan --data "$DATA" -o "$DIR/e.dmlpkg"
# a QAT checkpoint resumes with --qat (its ranges are state), not without
check "qat resume" "$DMLC" train "$T/tiny_mlp.onnx" --qat --data "$DATA" --epochs 2 --batch-size 64 \
  --no-shuffle --validation-split 0 --resume "$DIR/ck/epoch-0001.safetensors" \
  -o "$DIR/e2.dmlpkg" >/dev/null 2>&1
err "resume without --qat" "the checkpoint holds 21 tensors, the package 18 globals" \
  "$T/tiny_mlp.onnx" --data "$DATA" --epochs 2 --batch-size 64 --no-shuffle \
  --validation-split 0 --resume "$DIR/ck/epoch-0001.safetensors" -o "$DIR/e.dmlpkg"
[ "$fails" -eq 0 ] && echo "test_qat: all checks passed"
exit "$fails"
