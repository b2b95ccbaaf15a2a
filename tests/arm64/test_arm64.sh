#!/usr/bin/env bash
# The reference models on arm64: compiled on the host (--target cpu) by the
# host's dmlc, run by the cross-built runtime-only dmlc under qemu-aarch64,
# compared with PyTorch's saved outputs (../shared/models/*_io) within
# 1e-4 max abs difference, as tests/models/test_models.c does on the host.
#   bash tests/arm64/test_arm64.sh HOST_BUILD ARM64_BUILD
# (scripts/test.sh; docs/embedding.md). Needs qemu-user and
# gcc-aarch64-linux-gnu's libraries in /usr/aarch64-linux-gnu.
set -euo pipefail
host=$(cd "$1" && pwd)
cross=$(cd "$2" && pwd)
src=$(cd "$(dirname "$0")/../.." && pwd)
models=$src/../shared/models
tol=1e-4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
qemu=(qemu-aarch64 -L /usr/aarch64-linux-gnu)
dmlc_arm=$cross/compiler/dmlc
readelf -h "$dmlc_arm" | grep -q 'Machine:.*AArch64' || fail "$dmlc_arm is not an AArch64 program"
[ -d "$models" ] || fail "$models missing (the reference models, shared/)"

# npy_check GOT WANT: same dtype (<f4) and shape, max |got - want| <= tol,
# NaN only where NaN is expected.
npy_header() { head -c $((10 + $(od -An -t u2 -j8 -N2 "$1" | tr -d ' '))) "$1" | tail -c +11; }
npy_floats() {
  od -An -v -t f4 -w4 -j $((10 + $(od -An -t u2 -j8 -N2 "$1" | tr -d ' '))) "$1"
}
npy_check() {
  local hg hw
  hg=$(npy_header "$1" | grep -o "'descr': '[^']*'.*'shape': ([^)]*)")
  hw=$(npy_header "$2" | grep -o "'descr': '[^']*'.*'shape': ([^)]*)")
  [ "$hg" = "$hw" ] || fail "$1: header $hg, expected $hw"
  grep -q "'<f4'" <<<"$hg" || fail "$2: not float32"
  paste <(npy_floats "$1") <(npy_floats "$2") | awk -v tol="$tol" '
    { n++; g = $1; w = $2
      if (w ~ /nan/) { if (g !~ /nan/) bad++; next }
      if (g ~ /nan|inf/ || w ~ /inf/) { if (g != w) bad++; next }
      d = g - w; if (d < 0) d = -d
      if (!(d <= tol)) bad++
      if (d > max) max = d }
    END { printf "%d values, max abs diff %.3g\n", n, max; exit (bad > 0 || n == 0) }'
}

for m in fashion_mlp lenet5 resnet_small; do
  "$host/compiler/dmlc" compile "$models/$m.onnx" --target cpu -o "$tmp/$m.dmlpkg" >/dev/null
  for k in 0 1 2; do
    out=$tmp/$m-$k
    "${qemu[@]}" "$dmlc_arm" run "$tmp/$m.dmlpkg" --input "$models/${m}_io/input_$k.npy" \
      --output-dir "$out" >/dev/null
    res=$(npy_check "$out/logits.npy" "$models/${m}_io/output_$k.npy") ||
      fail "$m pair $k on arm64: $res"
    echo "arm64 $m pair $k: $res"
  done
done

# The QDQ model (tests/models/qdq: ONNX Runtime's quantize_static): the int8
# kernels (the sdot path where qemu's CPU has the dot product, else C) within
# one quantization step of the output (qdq_cnn_io/step.npy) of ORT's outputs.
q=$src/tests/models/qdq
"$host/compiler/dmlc" compile "$q/qdq_cnn.onnx" --target cpu -o "$tmp/qdq_cnn.dmlpkg" >/dev/null
tol=$(npy_floats "$q/qdq_cnn_io/step.npy" | awk '{ printf "%.9g", $1 * 1.0001 }')
for k in 0 1; do
  out=$tmp/qdq-$k
  "${qemu[@]}" "$dmlc_arm" run "$tmp/qdq_cnn.dmlpkg" --input "$q/qdq_cnn_io/input_$k.npy" \
    --output-dir "$out" >/dev/null
  res=$(npy_check "$out/logits.npy" "$q/qdq_cnn_io/output_$k.npy") ||
    fail "qdq_cnn pair $k on arm64: $res"
  echo "arm64 qdq_cnn pair $k (int8, tol one step $tol): $res"
done

# Weight-only int4 (MatMulWQ, docs/quantize.md; arm64 runs its NEON kernel,
# the host its AVX-512 / AVX2 one): fashion_mlp quantized by dmlc quantize
# --weight-only int4, run here and on arm64: the same logits within f32
# summation rounding (1e-4 abs; measured 0).
tol=1e-4
"$host/compiler/dmlc" quantize "$models/fashion_mlp.onnx" --weight-only int4 \
  -o "$tmp/mlp_w4.dmlpkg" >/dev/null
"$host/compiler/dmlc" summary "$tmp/mlp_w4.dmlpkg" | grep -q '(MatMulWQ)' ||
  fail "fashion_mlp int4: no MatMulWQ node in the package"
for k in 0 1; do
  in=$models/fashion_mlp_io/input_$k.npy
  "$host/compiler/dmlc" run "$tmp/mlp_w4.dmlpkg" --input "$in" --output-dir "$tmp/w4h-$k" >/dev/null
  "${qemu[@]}" "$dmlc_arm" run "$tmp/mlp_w4.dmlpkg" --input "$in" --output-dir "$tmp/w4a-$k" >/dev/null
  res=$(npy_check "$tmp/w4a-$k/logits.npy" "$tmp/w4h-$k/logits.npy") ||
    fail "fashion_mlp int4 weight-only pair $k on arm64: $res"
  echo "arm64 fashion_mlp int4 weight-only pair $k (vs the host): $res"
done
