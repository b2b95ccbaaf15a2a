#!/bin/sh
# The QAT rows of docs/quantize.md's Fashion-MNIST table: for a model of
# ../shared/models, the f32 and int8 PTQ (minmax) test accuracy, then the same
# fine-tuning from the f32 weights with and without --qat (EPOCHS epochs of
# Adam at LR, batch 32, seed 0, no validation split), each evaluated by
# `dmlc eval` on the 10,000 test images; the QAT run's exported QDQ model is
# evaluated by dmlc and (with PY set to a python that has onnxruntime) by
# ONNX Runtime (ort_accuracy.py). Not a CTest test (minutes per model).
#   qat_fashion.sh DMLC MODEL.onnx DATASET_DIR [EPOCHS [LR [EXTRA_DATA_FLAGS]]]
set -eu
DMLC=$1 MODEL=$2 F=$3 EPOCHS=${4:-1} LR=${5:-1e-4}
EXTRA=${6:-}
DIR=$(mktemp -d "${TMPDIR:-/tmp}/dmlc_qat_fashion.XXXXXX")
trap 'rm -rf "$DIR"' EXIT
T=$(dirname "$0")
acc() { "$DMLC" eval "$1" --data "$F" $EXTRA | sed -n 's/.*accuracy [0-9.]* (\([0-9.]*\)%).*/\1/p'; }
"$DMLC" compile "$MODEL" -o "$DIR/f32.dmlpkg" >/dev/null
"$DMLC" quantize "$MODEL" --calib "$F" -o "$DIR/ptq.dmlpkg" $EXTRA >/dev/null 2>&1
echo "f32 $(acc "$DIR/f32.dmlpkg")%  ptq-minmax $(acc "$DIR/ptq.dmlpkg")%"
"$DMLC" train "$MODEL" --data "$F" $EXTRA --validate-on none --epochs "$EPOCHS" --lr "$LR" \
  --quiet -o "$DIR/ft.dmlpkg" >/dev/null
echo "f32 fine-tuned ($EPOCHS epochs, lr $LR) $(acc "$DIR/ft.dmlpkg")%"
"$DMLC" train "$MODEL" --qat --data "$F" $EXTRA --validate-on none --epochs "$EPOCHS" --lr "$LR" \
  --quiet -o "$DIR/qat.dmlpkg" --export-onnx "$DIR/qat_int8.onnx" | grep -v "^peak"
"$DMLC" compile "$DIR/qat_int8.onnx" -o "$DIR/qat_int8.dmlpkg" >/dev/null
echo "qat fake-quant package $(acc "$DIR/qat.dmlpkg")%  exported QDQ (dmlc) $(acc "$DIR/qat_int8.dmlpkg")%"
if [ -n "${PY:-}" ]; then "$PY" "$T/ort_accuracy.py" "$F" "$DIR/qat_int8.onnx"; fi
if [ -n "${KEEP:-}" ]; then cp "$DIR/qat_int8.onnx" "$DIR/qat.dmlpkg" "$KEEP"/; fi
