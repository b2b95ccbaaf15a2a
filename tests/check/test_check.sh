#!/usr/bin/env bash
# `dmlc check` on lavapipe (the default Vulkan device in CI): it passes on
# the reference models and the op packages of this folder (compiled with
# --target cpu,vulkan), and it FAILS, exit 1 naming the kernel, when one
# kernel's result is made wrong on purpose (DMLC_VULKAN_TEST_CORRUPT_KERNEL,
# the Vulkan backend's testing aid), so the check is shown able to fail.
# Exit 77 (skipped) without a Vulkan device.
#   test_check.sh DMLC SHARED_DIR SOURCE_DIR WORKDIR
set -uo pipefail
DMLC=$1 SHARED=$2 SRC=$3 WORK=$4
mkdir -p "$WORK"
if ! "$DMLC" devices 2>/dev/null | grep -q "^vulkan:0"; then
  echo "no Vulkan device: skipped (dmlc devices lists none)"
  exit 77
fi
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAILED: $*" >&2; }

pkgs=()
for m in "$SHARED"/models/fashion_mlp.onnx "$SHARED"/models/lenet5.onnx \
         "$SHARED"/models/resnet_small.onnx "$SRC"/tests/check/elementwise.onnx \
         "$SRC"/tests/check/reduce.onnx "$SRC"/tests/check/move.onnx; do
  p=$WORK/$(basename "$m" .onnx).dmlpkg
  # batch bound 4: the first iteration runs at the bound, on lavapipe
  if out=$("$DMLC" compile "$m" -o "$p" --target cpu,vulkan --batch-bound 4 2>&1); then
    ok; pkgs+=("$p")
  else
    bad "compile $m: $out"
  fi
done

# Passes: exit 0, every kernel "ok", the summary line.
for p in "${pkgs[@]}"; do
  out=$("$DMLC" check "$p" --device vulkan --iterations 2 --seed 7 2>&1); rc=$?
  if [ $rc -eq 0 ] && grep -q "^passed: " <<<"$out" && ! grep -q "FAIL" <<<"$out"; then ok
  else bad "check $(basename "$p") (rc=$rc): $out"; fi
  echo "$out" | tail -n 2
done

# A wrong kernel fails the check: exit 1, the kernel named as failed.
P=$WORK/lenet5.dmlpkg
for k in k1_pool k4_gemm; do
  out=$(DMLC_VULKAN_TEST_CORRUPT_KERNEL=$k "$DMLC" check "$P" --device vulkan --iterations 1 2>&1); rc=$?
  if [ $rc -eq 1 ] && grep -qE "^$k +[a-z]+ .* FAIL " <<<"$out" && grep -q "^FAILED: .* $k" <<<"$out"; then ok
  else bad "corrupt $k (rc=$rc): $out"; fi
done
# ... and in --json: passed false, the kernel's entry failed with the
# element and both values.
out=$(DMLC_VULKAN_TEST_CORRUPT_KERNEL=k4_gemm "$DMLC" check "$P" --device vulkan --iterations 1 --json 2>&1); rc=$?
if [ $rc -eq 1 ] && grep -q '"passed": false, "n_failed": [12]' <<<"$out" &&
   grep -qE '\{"name": "k4_gemm", [^}]*"passed": false, [^}]*"device_value": 123\.456' <<<"$out"; then ok
else bad "corrupt --json (rc=$rc): $out"; fi
# --json of a passing check: passed true, one entry per kernel + end-to-end.
out=$("$DMLC" check "$WORK/fashion_mlp.dmlpkg" --device vulkan --iterations 1 --json 2>&1); rc=$?
if [ $rc -eq 0 ] && grep -q '"passed": true, "n_failed": 0' <<<"$out" &&
   [ "$(grep -o '"name": ' <<<"$out" | wc -l)" -eq 4 ] && grep -q '"name": "end-to-end"' <<<"$out"; then ok
else bad "json (rc=$rc): $out"; fi
# The same seed gives the same report.
a=$("$DMLC" check "$P" --device vulkan --iterations 1 --seed 3 --json)
b=$("$DMLC" check "$P" --device vulkan --iterations 1 --seed 3 --json)
[ "$a" = "$b" ] && ok || bad "seed 3 gave two reports"

# Given inputs (--input): the end-to-end runs use them.
out=$("$DMLC" check "$P" --device vulkan --iterations 1 --input "input=$SHARED/models/lenet5_io/input_0.npy" 2>&1); rc=$?
[ $rc -eq 0 ] && grep -q "^passed: 8 of 8" <<<"$out" && ok || bad "--input (rc=$rc): $out"
out=$("$DMLC" check "$P" --device vulkan --input "bogus=$SHARED/models/lenet5_io/input_0.npy" 2>&1); rc=$?
[ $rc -eq 1 ] && grep -qF "the model has no input named 'bogus'" <<<"$out" && ok || bad "--input bogus (rc=$rc): $out"

# Errors: usage (exit 2, one line pointing at --help), the CPU, no kernels.
for args in "check" "check $P" "check $P --device vulkan --iterations 0" "check $P --device vulkan --seed x" "check $P --device vulkan --bogus" "check $P --device vulkan --input x"; do
  # shellcheck disable=SC2086
  out=$("$DMLC" $args 2>&1); rc=$?
  [ $rc -eq 2 ] && grep -qF "see 'dmlc check --help'" <<<"$out" && ok || bad "usage '$args' (rc=$rc): $out"
done
out=$("$DMLC" check "$P" --device cpu 2>&1); rc=$?
[ $rc -eq 1 ] && grep -qF "the cpu is the reference itself" <<<"$out" && ok || bad "cpu (rc=$rc): $out"
"$DMLC" compile "$SHARED/models/fashion_mlp.onnx" -o "$WORK/cpu_only.dmlpkg" >/dev/null 2>&1
out=$("$DMLC" check "$WORK/cpu_only.dmlpkg" --device vulkan 2>&1); rc=$?
[ $rc -eq 1 ] && grep -qF -- "--target vulkan" <<<"$out" && ok || bad "no kernels (rc=$rc): $out"
out=$("$DMLC" check "$WORK/missing.dmlpkg" --device vulkan 2>&1); rc=$?
[ $rc -eq 1 ] && grep -q "missing.dmlpkg" <<<"$out" && ok || bad "missing file (rc=$rc): $out"
"$DMLC" check --help | grep -q "^usage: dmlc check PKG --device D" && ok || bad "check --help"

echo "test_check: $pass passed, $fail failed"
[ $fail -eq 0 ]
