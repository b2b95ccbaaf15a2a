#!/usr/bin/env bash
# The split random-graph run (scripts/gpu_prepare.sh + scripts/gpu_check.sh)
# on one machine: `dml_graphgen --pack` compiles seeds SEEDS for cpu,TARGET
# and saves the CPU's outputs, dml_graphs_check runs the packages on DEVICE
# against them (and the CPU); every packed graph must agree. Then one saved
# output is changed (its last element set to FLT_MAX) and the checker must
# fail naming that graph's seed.
# usage: test_graphs_pack.sh GRAPHGEN GRAPHS_CHECK WORK TARGET DEVICE SEEDS
# Exit 77 (skipped) when DEVICE is absent.
set -uo pipefail
gen=$1 chk=$2 work=$3 target=$4 device=$5 seeds=$6
rm -rf "$work"
mkdir -p "$work/pkgs"
if ! "$gen" --pack "$work/pkgs" --target "$target" --seeds "$seeds"; then
  echo "FAIL: dml_graphgen --pack"
  cat "$work/pkgs/graphs.txt"
  exit 1
fi
n=$(grep -c '^[0-9]* packed ' "$work/pkgs/graphs.txt")
if [ "$n" -lt 3 ]; then
  echo "FAIL: only $n graphs packed"
  cat "$work/pkgs/graphs.txt"
  exit 1
fi
"$chk" "$work/pkgs" --device "$device" --json "$work/check.json"
rc=$?
[ $rc -eq 77 ] && exit 77
if [ $rc -ne 0 ] || ! grep -q "\"agree\": $n," "$work/check.json"; then
  echo "FAIL: dml_graphs_check (exit $rc) did not find all $n graphs agreeing"
  cat "$work/check.json"
  exit 1
fi
# the largest first output of a first run, its last f32 element -> FLT_MAX
f=$(ls -S "$work"/pkgs/graphgen_*.r0.o0.npy | head -1)
seed=$(basename "$f" | sed 's/graphgen_\([0-9]*\)\..*/\1/')
size=$(stat -c %s "$f")
printf '\377\377\177\177' | dd of="$f" bs=1 seek=$((size - 4)) conv=notrunc status=none
"$chk" "$work/pkgs" --device "$device" --json "$work/bad.json" >"$work/bad.log"
rc=$?
if [ $rc -ne 1 ] || ! grep -q "\"seed\": $seed," "$work/bad.json" ||
  ! grep -q "^seed $seed: FAIL: mismatch: output 0 at batch 1" "$work/bad.log"; then
  echo "FAIL: a changed saved output of seed $seed was not reported (exit $rc)"
  cat "$work/bad.log"
  exit 1
fi
echo "ok: $n graphs agree on $device; the changed output of seed $seed was found"
