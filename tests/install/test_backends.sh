#!/usr/bin/env bash
# The runtime built without its GPU backends (docs/embedding.md "Backends"):
# a runtime-only build configured with -DDMLC_WITH_VULKAN=OFF
# -DDMLC_WITH_CUDA=OFF (scripts/test.sh builds it) runs a package on the CPU
# with the same bytes as the full build, refuses vulkan and cuda saying why,
# lists only the CPU as built, and holds no Vulkan or CUDA code.
#   bash tests/install/test_backends.sh FULL_BUILD CPU_ONLY_BUILD
set -euo pipefail
full=$(cd "$1" && pwd)
cpu=$(cd "$2" && pwd)
src=$(cd "$(dirname "$0")/../.." && pwd)
models=$src/../shared/models
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
dmlc_cpu=$cpu/compiler/dmlc
lib=$(ls "$cpu"/libdmlc_runtime.so.*.*.* | head -n1)

"$dmlc_cpu" version | grep -qx 'devices: cpu (`dmlc devices` lists those present)' ||
  fail "dmlc version: $("$dmlc_cpu" version | grep devices)"
"$dmlc_cpu" devices >"$tmp/devices.txt"
for want in "this build has no Vulkan backend (configured with -DDMLC_WITH_VULKAN=OFF)" \
  "this build has no CUDA backend (configured with -DDMLC_WITH_CUDA=OFF)"; do
  grep -qF "$want" "$tmp/devices.txt" || fail "dmlc devices lacks '$want': $(cat "$tmp/devices.txt")"
done
# No backend code: the Vulkan loader's and CUDA driver's entry point names
# are strings of rt_vulkan.c and rt_cuda.c only.
for sym in vkCreateInstance cuInit; do
  if grep -qa "$sym" "$lib"; then fail "$lib holds $sym"; fi
done

"$full/compiler/dmlc" compile "$models/fashion_mlp.onnx" --target cpu -o "$tmp/m.dmlpkg" >/dev/null
x=$models/fashion_mlp_io/input_0.npy
"$full/compiler/dmlc" run "$tmp/m.dmlpkg" --input "input=$x" --output-dir "$tmp/full" >/dev/null
"$dmlc_cpu" run "$tmp/m.dmlpkg" --input "input=$x" --output-dir "$tmp/cpu" >/dev/null
cmp "$tmp/full/logits.npy" "$tmp/cpu/logits.npy" || fail "CPU-only run differs from the full build's"
for dev in vulkan cuda:0; do
  kind=${dev%%:*}
  opt=$( [ "$kind" = vulkan ] && echo DMLC_WITH_VULKAN || echo DMLC_WITH_CUDA)
  if "$dmlc_cpu" run "$tmp/m.dmlpkg" --input "input=$x" --device "$dev" >"$tmp/out.txt" 2>&1; then
    fail "--device $dev ran in a CPU-only build"
  fi
  grep -qF "device '$dev' is not available in this build" "$tmp/out.txt" &&
    grep -qF -- "-D$opt=OFF" "$tmp/out.txt" &&
    grep -qF "devices of this build: cpu" "$tmp/out.txt" ||
    fail "--device $dev: $(cat "$tmp/out.txt")"
done
size=$(cp "$lib" "$tmp/rt.so" && strip --strip-unneeded "$tmp/rt.so" && stat -c %s "$tmp/rt.so")
echo "CPU-only runtime: fashion_mlp bit-equal to the full build; vulkan and cuda refused;" \
  "stripped $(basename "$lib") $size bytes"
