#!/usr/bin/env bash
# End-to-end checks of the `dmlc` command as a user meets it: every
# subcommand's --help, the compile -> run -> inspect -> summary path on a
# reference model, and the user-facing errors with their messages.
#   test_cli.sh DMLC SHARED_DIR WORKDIR
set -uo pipefail
DMLC=$1 SHARED=$2 WORK=$3
mkdir -p "$WORK"
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAILED: $*" >&2; }
# expect_ok NAME CMD... / expect_err NAME SUBSTRING CMD...
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

for c in compile run opt inspect summary bench devices; do
  expect_ok "help-$c" "$DMLC" "$c" --help
  grep -q "usage: dmlc $c" <<<"$out" && ok || bad "help-$c has no usage line"
done
expect_ok help "$DMLC" --help
expect_err unknown-command "unknown command 'frobnicate'" "$DMLC" frobnicate

M=$SHARED/models/lenet5.onnx
expect_ok compile "$DMLC" compile "$M" -o "$WORK/lenet5.dmlpkg" --batch-bound 8
grep -q "arena" <<<"$out" && ok || bad "compile prints no arena size: $out"
expect_ok run "$DMLC" run "$WORK/lenet5.dmlpkg" --input "input=$SHARED/models/lenet5_io/input_0.npy" --output-dir "$WORK/out"
[ -f "$WORK/out/logits.npy" ] && ok || bad "run wrote no logits.npy"
expect_ok inspect "$DMLC" inspect "$WORK/lenet5.dmlpkg"
grep -q "batch <= 8" <<<"$out" && ok || bad "inspect does not show the bound: $out"
expect_ok summary "$DMLC" summary "$WORK/lenet5.dmlpkg"
grep -q "Total params: 61,706 (61.7K)" <<<"$out" && ok || bad "summary total: $out"
expect_ok summary-onnx "$DMLC" summary "$M"
grep -q "Trainable params: 61,706 (61.7K)" <<<"$out" && ok || bad "summary onnx: $out"

# Errors a user meets.
expect_err missing-model "cannot open" "$DMLC" compile "$WORK/nope.onnx" -o "$WORK/x.dmlpkg"
expect_err no-output "no output given" "$DMLC" compile "$M"
expect_err target-unknown "unknown target 'tpu'" "$DMLC" compile "$M" -o "$WORK/x.dmlpkg" --target tpu
# GPU targets (when this build has codegen/): kernels in the package, the
# plan printed, and a clear list of what a target cannot emit.
if "$DMLC" compile --help | grep -q "vulkan (SPIR-V kernels)" && \
   ! "$DMLC" compile "$M" -o "$WORK/x.dmlpkg" --target vulkan 2>&1 | grep -q "not implemented in this build"; then
  # an op no GPU target emits (Multinomial: scripts/gen_onnx_fixtures.py)
  MISSING=$(cd "$(dirname "$0")/../onnx/fixtures" && pwd)/gpu_missing_op.onnx
  expect_err target-missing-ops "Multinomial: 1 node" "$DMLC" compile "$MISSING" -o "$WORK/x.dmlpkg" --target vulkan
  grep -qF "target 'vulkan' cannot emit every op" <<<"$out" && ok || bad "missing-ops message: $out"
  F=$SHARED/models/fashion_mlp.onnx
  expect_ok compile-gpu "$DMLC" compile "$F" -o "$WORK/fm.dmlpkg" --target cpu,vulkan,metal --print-kernels
  grep -qF "kernel k0_gemm (gemm)" <<<"$out" && grep -qF "nodes: 1:Gemm(/net/net.1/Gemm) 2:Relu(/net/net.2/Relu)" <<<"$out" \
    && ok || bad "--print-kernels: $out"
  expect_ok inspect-gpu "$DMLC" inspect "$WORK/fm.dmlpkg"
  grep -q "kernels.spirv" <<<"$out" && grep -q "kernels.msl" <<<"$out" && ok || bad "inspect: no kernel sections: $out"
  expect_ok run-gpu-pkg-on-cpu "$DMLC" run "$WORK/fm.dmlpkg" --input "input=$SHARED/models/fashion_mlp_io/input_0.npy" --output-dir "$WORK/out2"
  # A missing Vulkan loader is a clear error, for devices and for sessions.
  expect_ok devices-no-loader env DMLC_VULKAN_LOADER=/nonexistent/libvulkan.so.1 "$DMLC" devices
  grep -qF "could not be opened" <<<"$out" && ok || bad "devices without a loader: $out"
  expect_err run-no-loader "the Vulkan loader '/nonexistent/libvulkan.so.1' could not be opened" \
    env DMLC_VULKAN_LOADER=/nonexistent/libvulkan.so.1 "$DMLC" run "$WORK/fm.dmlpkg" \
    --input "input=$SHARED/models/fashion_mlp_io/input_0.npy" --device vulkan
  if "$DMLC" devices | grep -q "^vulkan:0"; then
    expect_ok devices "$DMLC" devices
    grep -qF "[default for 'vulkan']" <<<"$out" && ok || bad "devices marks no default: $out"
    expect_ok run-vulkan "$DMLC" run "$WORK/fm.dmlpkg" --input "input=$SHARED/models/fashion_mlp_io/input_0.npy" --output-dir "$WORK/out3" --device vulkan
    cmp -s "$WORK/out3/logits.npy" "$WORK/out2/logits.npy" || ok # values compared in test_vulkan
    expect_ok bench-vulkan "$DMLC" bench "$WORK/fm.dmlpkg" --device vulkan --iterations 3 --warmup 1 --json
    grep -qF '"name": "k0_gemm", "nodes": "Gemm,Relu"' <<<"$out" && ok || bad "bench --json: $out"
    expect_err run-no-kernels "compile it with dmlc compile --target vulkan" "$DMLC" run "$WORK/lenet5.dmlpkg" \
      --input "input=$SHARED/models/lenet5_io/input_0.npy" --device vulkan
    expect_err bad-device "no Vulkan device 'vulkan:42'" "$DMLC" run "$WORK/fm.dmlpkg" \
      --input "input=$SHARED/models/fashion_mlp_io/input_0.npy" --device vulkan:42
  else
    echo "note: no Vulkan device here; the Vulkan run checks of this script were skipped"
  fi
  # cuda: PTX (clang-16) in kernels.cuda; the ops it lacks listed
  expect_err target-cuda-missing-ops "target 'cuda' cannot emit every op" "$DMLC" compile "$MISSING" -o "$WORK/x.dmlpkg" --target cuda
  expect_ok compile-cuda "$DMLC" compile "$F" -o "$WORK/fc.dmlpkg" --target cuda --cuda-arch ptx
  expect_ok inspect-cuda "$DMLC" inspect "$WORK/fc.dmlpkg"
  grep -q "kernels.cuda" <<<"$out" && ok || bad "inspect: no kernels.cuda: $out"
  expect_err cuda-arch-bad "bad --cuda-arch 'sm80'" "$DMLC" compile "$F" -o "$WORK/fc.dmlpkg" --target cuda --cuda-arch sm80
  expect_err cuda-arch-no-cuda "--cuda-arch needs --target cuda" "$DMLC" compile "$F" -o "$WORK/fc.dmlpkg" --cuda-arch ptx
fi
expect_ok bench-cpu "$DMLC" bench "$WORK/lenet5.dmlpkg" --iterations 3 --warmup 1
grep -q "end to end: min" <<<"$out" && ok || bad "bench on cpu: $out"
expect_err bench-bad-iterations "--iterations needs a positive integer" "$DMLC" bench "$WORK/lenet5.dmlpkg" --iterations 0
expect_err bad-bound "--batch-bound needs a positive integer" "$DMLC" compile "$M" -o "$WORK/x.dmlpkg" --batch-bound 0
expect_err bad-dyn-bound "--dynamic-dim-bound needs a positive integer" "$DMLC" compile "$M" -o "$WORK/x.dmlpkg" --dynamic-dim-bound 0
expect_err bad-dyn-max "--dynamic-max-elements needs a positive integer" "$DMLC" compile "$M" -o "$WORK/x.dmlpkg" --dynamic-max-elements=x
# A Reshape whose shape is a graph input compiles without --bind: its dims
# are data-dependent symbols bounded by the input's element count (6).
R=$(dirname "$0")/../conformance/fixtures/reshape_input.onnx
expect_ok compile-dyn-shape "$DMLC" compile "$R" -o "$WORK/reshape.dmlpkg" --dynamic-dim-bound 16 --dynamic-max-elements 100
expect_ok inspect-dyn-shape "$DMLC" inspect "$WORK/reshape.dmlpkg"
grep -q "Reshape_2.d0 <= 6" <<<"$out" && ok || bad "inspect shows no data-dependent symbol: $out"
expect_err batch-over-bound "bound 8" "$DMLC" run "$WORK/lenet5.dmlpkg" --input "input=$SHARED/models/lenet5_io/input_1.npy" --output-dir "$WORK/out"
head -c 100 "$WORK/lenet5.dmlpkg" > "$WORK/trunc.dmlpkg"
expect_err truncated-pkg "error: " "$DMLC" run "$WORK/trunc.dmlpkg" --input "input=$SHARED/models/lenet5_io/input_0.npy"
expect_err not-npy "error: " "$DMLC" run "$WORK/lenet5.dmlpkg" --input "input=$M"
expect_err wrong-input-name "nosuch" "$DMLC" run "$WORK/lenet5.dmlpkg" --input "nosuch=$SHARED/models/lenet5_io/input_0.npy"
expect_err wrong-shape "input" "$DMLC" run "$WORK/lenet5.dmlpkg" --input "input=$SHARED/models/fashion_mlp_io/input_0.npy"
# A compile that fails leaves an existing package untouched.
cp "$WORK/lenet5.dmlpkg" "$WORK/keep.dmlpkg"
expect_err atomic "cannot open" "$DMLC" compile "$WORK/nope.onnx" -o "$WORK/keep.dmlpkg"
cmp -s "$WORK/lenet5.dmlpkg" "$WORK/keep.dmlpkg" && ok || bad "failed compile changed the existing package"

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
