#!/bin/sh
# MatMulWQ on the GPU targets (codegen/schedule_wq.c): `dmlc quantize
# --weight-only` models compiled with --target cpu,vulkan (and cuda) keep
# MatMulWQ (wq-fuse runs for GPU packages too) and the device runs it: no
# CPU fall-back (--no-cpu-fallback). On lavapipe `dmlc check` compares each
# kernel and the whole run against the CPU's MatMulWQ at M = 1, 3 and 130
# rows (the batch bound: check's first iteration runs at it) for int8 g32,
# int4 g8 / g16 / g32 / g64 (a group longer than K) on wq_gpu_model.onnx
# (gen_wq_gpu_model.py: K = 37 and 45, N = 45 and 3, odd counts of
# nibbles, a zero column), on
# wq_model.onnx (denormal and 1e30 columns, -0, ties, Gemm transB, a shared
# weight) and on wq_user_4bit.onnx (uint4 with zero points, int8 with zero
# points; its block along N stays a DequantizeLinear, on the host). CUDA:
# the same packages compile to PTX with clang-16 (--cuda-arch ptx), every
# node on the device. A MatMulWQ kernel made wrong on purpose
# (DMLC_VULKAN_TEST_CORRUPT_KERNEL) fails the check. Exit 77 (skipped)
# without a Vulkan device.
#   test_quantize_wq_gpu.sh DMLC SOURCE_DIR
set -u
DMLC=$1
SRC=$2
T=$SRC/tests/quantize
DIR=$(mktemp -d "${TMPDIR:-/tmp}/dmlc_quantize_wq_gpu.XXXXXX")
trap 'rm -rf "$DIR"' EXIT
. "$(dirname "$0")/../sh_test_util.sh"
if ! "$DMLC" devices 2>/dev/null | grep -q "^vulkan:0"; then
  echo "no Vulkan device: skipped (dmlc devices lists none)"
  exit 77
fi

# check_pkg NAME PKG: dmlc check passes, MatMulWQ among its kernels
check_pkg() {
  "$DMLC" check "$2" --device vulkan --iterations 2 --seed 5 >"$2.check" 2>&1
  rc=$?
  check "$1 check rc=$rc" test "$rc" -eq 0
  check "$1 check passed" has "^passed: " "$2.check"
  check "$1 MatMulWQ kernel checked" has "MatMulWQ" "$2.check"
  if grep -q FAIL "$2.check"; then
    echo "FAILED: $1 check"
    sed 's/^/    /' "$2.check"
    fails=$((fails + 1))
  fi
}

for spec in "wq_gpu_model int8 32" "wq_gpu_model int4 8" "wq_gpu_model int4 16" \
            "wq_gpu_model int4 32" "wq_gpu_model int4 64" "wq_model int8 32" \
            "wq_model int4 16"; do
  set -- $spec
  m=$1 b=$2 g=$3
  o="$DIR/${m}_${b}_$g.onnx"
  check "$m $b g$g quantize" $DMLC quantize "$T/$m.onnx" --weight-only "$b" --group-size "$g" \
    -o "$o" >"$o.txt" 2>&1
  for bound in 1 3 130; do
    p="$DIR/${m}_${b}_${g}_b$bound.dmlpkg"
    check "$m $b g$g vulkan compile (bound $bound)" "$DMLC" compile "$o" -o "$p" \
      --target cpu,vulkan --no-cpu-fallback --batch-bound "$bound" >"$p.txt" 2>&1 ||
      sed 's/^/    /' "$p.txt"
    "$DMLC" summary "$p" >"$p.sum" 2>&1
    check "$m $b g$g MatMulWQ nodes" has "(MatMulWQ)" "$p.sum"
    check "$m $b g$g no DequantizeLinear" sh -c "! grep -q '(DequantizeLinear)' '$p.sum'"
    check_pkg "$m $b g$g bound $bound" "$p"
  done
  c="$DIR/${m}_${b}_${g}_cuda.dmlpkg"
  if command -v clang-16 >/dev/null 2>&1; then
    check "$m $b g$g cuda compile (PTX, no fall-back)" "$DMLC" compile "$o" -o "$c" \
      --target cuda --cuda-arch ptx --no-cpu-fallback >"$c.txt" 2>&1 || sed 's/^/    /' "$c.txt"
  else
    echo "SKIPPED: cuda compile (no clang-16)"
  fi
done

# the check can fail: a wrong MatMulWQ kernel (k0, made wrong on purpose by
# the Vulkan backend's testing aid) is reported, exit 1
p="$DIR/wq_gpu_model_int4_16_b3.dmlpkg"
DMLC_VULKAN_TEST_CORRUPT_KERNEL=k0_gemm "$DMLC" check "$p" --device vulkan --iterations 1 \
  >"$p.corrupt" 2>&1
rc=$?
check "corrupt MatMulWQ kernel fails the check (rc=$rc)" test "$rc" -eq 1
check "corrupt MatMulWQ kernel named" has "^k0_gemm .*FAIL .*MatMulWQ" "$p.corrupt"

# a user's blocked QDQ model: uint4 and int8 zero points on the device; the
# DequantizeLinear blocked along N runs on the host (the CPU fall-back)
p="$DIR/user4.dmlpkg"
check "user 4-bit vulkan compile" "$DMLC" compile "$T/wq_user_4bit.onnx" -o "$p" \
  --target cpu,vulkan --batch-bound 7 >"$p.txt" 2>&1 || sed 's/^/    /' "$p.txt"
check_pkg "user 4-bit" "$p"

[ "$fails" -eq 0 ] && echo "all passed" || echo "$fails failed"
[ "$fails" -eq 0 ]
