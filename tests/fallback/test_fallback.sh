#!/usr/bin/env bash
# The CPU fall-back (docs/kernels.md "CPU fall-back"), as a user meets it:
# a model with an op the GPU targets lack (LpNormalization) between GPU ops
# and one with string tensors in the middle compile for --target cpu,vulkan
# with one note each, `dmlc inspect` lists what runs on the host and why, a
# Vulkan run (lavapipe in CI) gives the CPU plan's results bit for bit (the
# GPU ops here are exactly rounded: Mul, Add, Relu, Cast), and
# --no-cpu-fallback gives the old error.
#   test_fallback.sh DMLC WORKDIR      (models: gen_fallback_models.py)
set -uo pipefail
DMLC=$1 WORK=$2
HERE=$(cd "$(dirname "$0")" && pwd)
rm -rf "$WORK" && mkdir -p "$WORK"
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAILED: $*" >&2; }
expect_ok() {
  local name=$1; shift
  if out=$("$@" 2>&1); then ok; else bad "$name: exit $?: $out"; fi
}
expect_err() {
  local name=$1 want=$2; shift 2
  out=$("$@" 2>&1)
  local rc=$?
  if [ $rc -ne 0 ] && grep -qF -- "$want" <<<"$out"; then ok; else bad "$name: rc=$rc, wanted '$want' in: $out"; fi
}
has() { grep -qF -- "$2" <<<"$out" && ok || bad "$1: wanted '$2' in: $out"; }

help=$("$DMLC" compile --help)
if ! grep -q "vulkan (SPIR-V kernels)" <<<"$help" ||
   "$DMLC" compile "$HERE/lp_mid.onnx" -o "$WORK/x.dmlpkg" --target vulkan 2>&1 | grep -q "not implemented in this build"; then
  echo "skipped: this build has no GPU code generation"
  exit 77
fi
VK=0
"$DMLC" devices 2>/dev/null | grep -q "^vulkan:0" && VK=1

for m in lp str; do
  if [ $m = lp ]; then model=$HERE/lp_mid.onnx op="LpNormalization: 1 node" strict="target 'vulkan' cannot emit every op"
  else model=$HERE/string_mid.onnx op="string value" strict="target 'vulkan' cannot run string tensors"; fi
  # strict: the old error, naming what the target lacks
  expect_err "$m-strict" "$strict" "$DMLC" compile "$model" -o "$WORK/$m.dmlpkg" --target cpu,vulkan --no-cpu-fallback
  has "$m-strict-names" "$op"
  [ ! -e "$WORK/$m.dmlpkg" ] && ok || bad "$m-strict wrote a package"
  # default: compiles, one note on stderr naming the op
  expect_ok "$m-compile" "$DMLC" compile "$model" -o "$WORK/$m.dmlpkg" --target cpu,vulkan,metal
  has "$m-note" "note: target 'vulkan' cannot emit function 'forward', which runs on the host"
  has "$m-note-op" "$op"
  [ "$(grep -c "^note: target 'vulkan'" <<<"$out")" = 1 ] && ok || bad "$m-note: not one note: $out"
  expect_ok "$m-inspect" "$DMLC" inspect "$WORK/$m.dmlpkg"
  has "$m-inspect-host" "vulkan: 'forward' runs on the host"
  has "$m-inspect-metal" "metal: 'forward' runs on the host"
  has "$m-inspect-section" "placement"
  expect_ok "$m-inspect-json" "$DMLC" inspect "$WORK/$m.dmlpkg" --json
  has "$m-json" '"host_functions": [{"target": "vulkan", "function": "forward", "why": '
  # the CPU plan's results, and the Vulkan session's
  x=$HERE/x_$m.npy
  expect_ok "$m-run-cpu" "$DMLC" run "$WORK/$m.dmlpkg" --input "x=$x" --output-dir "$WORK/$m-cpu"
  if [ $VK = 1 ]; then
    expect_ok "$m-run-vulkan" "$DMLC" run "$WORK/$m.dmlpkg" --input "x=$x" --output-dir "$WORK/$m-vk" --device vulkan
    has "$m-run-note" "note: function 'forward' runs on the host (CPU kernels)"
    cmp -s "$WORK/$m-cpu/y.npy" "$WORK/$m-vk/y.npy" && ok || bad "$m: vulkan and cpu results differ"
  fi
done
# the cuda target falls back the same way (PTX through clang-16)
if "$DMLC" compile "$HERE/lp_mid.onnx" -o "$WORK/c.dmlpkg" --target cuda --cuda-arch ptx > "$WORK/c.log" 2>&1; then
  out=$(cat "$WORK/c.log")
  has cuda-note "note: target 'cuda' cannot emit function 'forward'"
  expect_err cuda-strict "target 'cuda' cannot emit every op" "$DMLC" compile "$HERE/lp_mid.onnx" \
    -o "$WORK/c2.dmlpkg" --target cuda --cuda-arch ptx --no-cpu-fallback
elif grep -q "clang" "$WORK/c.log"; then
  echo "note: no clang-16 for the cuda target: its checks were skipped"
else
  bad "cuda compile: $(cat "$WORK/c.log")"
fi
[ $VK = 1 ] || echo "note: no Vulkan device here: the Vulkan runs were skipped"
echo "test_fallback: $pass passed, $fail failed"
[ $fail = 0 ]
