#!/bin/sh
# int8 post-training quantization keeps the Fashion-MNIST test accuracy of
# the reference models (../shared/models, docs/quantize.md): fashion_mlp and
# lenet5 quantized with 1000 training images as calibration rows, then f32
# and int8 packages evaluated by `dmlc eval` on the 10,000 test images.
# Expected: the figures measured when this test was written (f32 86.95% /
# 82.55% exactly: the models' README; int8 minmax 86.95% / 82.51%, entropy
# 86.95% / 82.54%, within 0.05 point: 5 images near a decision boundary may
# flip with another CPU's summation order) and int8 within 0.5 point of f32
# (issue 19's bound).
#   test_quantize_fashion.sh DMLC SHARED_DIR DATASET_DIR
set -u
DMLC=$1
S=$2/models
F=$3
DIR=$(mktemp -d "${TMPDIR:-/tmp}/dmlc_quantize_fashion.XXXXXX")
trap 'rm -rf "$DIR"' EXIT
. "$(dirname "$0")/../sh_test_util.sh"

acc() { # acc PKG: the accuracy in percent
  "$DMLC" eval "$1" --data "$F" | sed -n 's/.*accuracy [0-9.]* (\([0-9.]*\)%).*/\1/p'
}
for case in "fashion_mlp 86.95 minmax 86.95" "fashion_mlp 86.95 entropy 86.95" \
  "lenet5 82.55 minmax 82.51" "lenet5 82.55 entropy 82.54"; do
  set -- $case
  m=$1 want_f32=$2 method=$3 want_q=$4
  check "$m compile" "$DMLC" compile "$S/$m.onnx" -o "$DIR/$m.dmlpkg" >/dev/null
  check "$m $method quantize" "$DMLC" quantize "$S/$m.onnx" --calib "$F" --method "$method" \
    -o "$DIR/${m}_$method.dmlpkg" >"$DIR/q.txt" 2>&1
  f=$(acc "$DIR/$m.dmlpkg")
  q=$(acc "$DIR/${m}_$method.dmlpkg")
  check "$m f32 accuracy $f% = $want_f32%" test "$f" = "$want_f32"
  check "$m $method int8 accuracy $q% = $want_q% +- 0.05" \
    awk "BEGIN { d = \"$q\" - \"$want_q\"; exit !(\"$q\" != \"\" && d <= 0.05 && d >= -0.05) }"
  check "$m $method int8 within 0.5 point of f32 ($q vs $f)" \
    awk "BEGIN { d = \"$f\" - \"$q\"; exit !(\"$q\" != \"\" && d < 0.5 && d > -0.5) }"
  echo "$m: f32 $f%, int8 ($method) $q%"
done
[ "$fails" -eq 0 ] && echo "test_quantize_fashion: all passed"
exit "$fails"
