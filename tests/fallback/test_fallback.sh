#!/usr/bin/env bash
# The CPU fall-back (docs/kernels.md "CPU fall-back"), as a user meets it:
# a model with an op the GPU targets lack (LpNormalization) between GPU ops
# and one with string tensors in the middle compile for --target
# cpu,vulkan,metal with one note per target, per segment (the odd nodes in
# a host entry between device kernels, --print-kernels shows it), `dmlc
# inspect` lists what runs on the host and why, a Vulkan run (lavapipe in
# CI) gives the CPU plan's results bit for bit (the GPU ops here are
# exactly rounded: Mul, Add, Relu; NaN, inf, -0, denormals in the input),
# and --no-cpu-fallback gives the old error. A model with an If between
# device kernels reads cond on the host, runs the taken branch's kernels on
# the device (dmlc run's region line and dmlc bench's "regions" name them)
# and the kernels after it at the dims its branch decided; a branch the
# device cannot run whole has host entries of its own, or runs on the CPU
# with a note; one whose branches differ in rank (the nodes after the If
# copied into the branches) gives ONNX Runtime's result. A model with no
# node for the device runs wholly on the host, which `dmlc run` notes.
# String inputs and outputs of
# a function with a device segment between two host entries come back as
# the CPU plan's and ONNX Runtime's (issue 23). A Loop with a `while`
# condition and a trip count computed from the input runs between device
# kernels as ONNX Runtime does, its body's kernels on the device once per
# iteration; --no-cpu-fallback refuses it.
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

for m in lp str f8; do
  if [ $m = lp ]; then model=$HERE/lp_mid.onnx op="LpNormalization: 1 node" strict="target 'vulkan' cannot emit every op" where="1 of 4 nodes on the host" hk=k1_host
  elif [ $m = f8 ]; then model=$HERE/f8_mid.onnx op="node 'to_f8' (Cast) writes f8e4m3fn value 'q'" strict="target 'vulkan' cannot run float8 tensors" where="2 of 3 nodes on the host" hk=k0_host
  else model=$HERE/string_mid.onnx op="string value" strict="target 'vulkan' cannot run string tensors" where="3 of 4 nodes on the host" hk=k0_host; fi
  # strict: the old error, naming what the target lacks
  expect_err "$m-strict" "$strict" "$DMLC" compile "$model" -o "$WORK/$m.dmlpkg" --target cpu,vulkan --no-cpu-fallback
  has "$m-strict-names" "$op"
  [ ! -e "$WORK/$m.dmlpkg" ] && ok || bad "$m-strict wrote a package"
  # default: compiles, one note per target on stderr naming the op, the
  # host entry between the device's kernels
  expect_ok "$m-compile" "$DMLC" compile "$model" -o "$WORK/$m.dmlpkg" --target cpu,vulkan,metal --print-kernels
  has "$m-note" "note: CPU fall-back: target 'vulkan', function 'forward': $where, the rest on the device"
  has "$m-note-op" "$op"
  [ "$(grep -c "^note: CPU fall-back: target 'vulkan'" <<<"$out")" = 1 ] && ok || bad "$m-note: not one note: $out"
  [ "$(grep -c "^note: CPU fall-back: target 'metal'" <<<"$out")" = 1 ] && ok || bad "$m-note: no metal note: $out"
  grep -q "^kernel $hk (host)" <<<"$out" && ok || bad "$m: no host entry $hk in --print-kernels: $out"
  expect_ok "$m-inspect" "$DMLC" inspect "$WORK/$m.dmlpkg"
  has "$m-inspect-host" "vulkan, function 'forward': $where"
  has "$m-inspect-metal" "metal, function 'forward': $where"
  has "$m-inspect-section" "placement"
  expect_ok "$m-inspect-json" "$DMLC" inspect "$WORK/$m.dmlpkg" --json
  has "$m-json" '"host_functions": [{"target": "vulkan", "function": "forward", "why": "'"$where"
  # the CPU plan's results, and the Vulkan session's
  x=$HERE/x_$m.npy
  expect_ok "$m-run-cpu" "$DMLC" run "$WORK/$m.dmlpkg" --input "x=$x" --output-dir "$WORK/$m-cpu"
  # float8: ml_dtypes' result (gen_fallback_models.py), bit for bit
  if [ $m = f8 ]; then cmp -s "$WORK/$m-cpu/y.npy" "$HERE/y_f8.npy" && ok || bad "f8: y differs from y_f8.npy"; fi
  if [ $VK = 1 ]; then
    expect_ok "$m-run-vulkan" "$DMLC" run "$WORK/$m.dmlpkg" --input "x=$x" --output-dir "$WORK/$m-vk" --device vulkan
    grep -q "^note:" <<<"$out" && bad "$m: a whole-function note for a per-segment run: $out" || ok
    cmp -s "$WORK/$m-cpu/y.npy" "$WORK/$m-vk/y.npy" && ok || bad "$m: vulkan and cpu results differ"
    # and again: cached command buffers, the same bytes
    expect_ok "$m-bench-vulkan" "$DMLC" bench "$WORK/$m.dmlpkg" --device vulkan --iterations 3 --warmup 1 --json
    has "$m-bench-host" "\"name\": \"$hk\""
  fi
done
# run-time sizes (a symbolic batch), a view of a host result read by the
# device, a host result returned: every output bit for bit, two batches
expect_ok views-compile "$DMLC" compile "$HERE/lp_views.onnx" -o "$WORK/views.dmlpkg" --target cpu,vulkan
has views-note "1 of 5 nodes on the host"
has views-node-names "host nodes: 1 'lpnorm' (LpNormalization)"
for xv in x_lp x_views; do
  expect_ok "views-cpu-$xv" "$DMLC" run "$WORK/views.dmlpkg" --input "x=$HERE/$xv.npy" --output-dir "$WORK/views-cpu-$xv"
  if [ $VK = 1 ]; then
    expect_ok "views-vk-$xv" "$DMLC" run "$WORK/views.dmlpkg" --input "x=$HERE/$xv.npy" --output-dir "$WORK/views-vk-$xv" --device vulkan
    for o in y n z; do
      cmp -s "$WORK/views-cpu-$xv/$o.npy" "$WORK/views-vk-$xv/$o.npy" && ok || bad "views $xv: output $o differs"
    done
  fi
done
# dmlc check: each device kernel against the CPU, the host entry skipped,
# the function end to end
if [ $VK = 1 ]; then
  expect_ok views-check "$DMLC" check "$WORK/views.dmlpkg" --device vulkan --iterations 2
  has views-check-host "host nodes (the CPU fall-back): the CPU kernels"
  has views-check-e2e "end-to-end"
fi
# run-time control flow between device kernels: the host reads cond and
# runs the taken branch's kernels on the device (the run's region line names
# the device and the branch's kernels), the kernels after it at the dims the
# branch taken decided; both branches bit for bit as the CPU plan
expect_ok ctrl-compile "$DMLC" compile "$HERE/ctrl_mid.onnx" -o "$WORK/ctrl.dmlpkg" --target cpu,vulkan --print-kernels
has ctrl-note "function 'forward': 1 of 7 nodes on the host, the rest on the device"
has ctrl-node "host nodes: 3 'choose' (If)"
grep -q "^kernel k2_host (host)" <<<"$out" && ok || bad "ctrl: no host entry k2_host: $out"
for b in then else; do
  expect_ok "ctrl-cpu-$b" "$DMLC" run "$WORK/ctrl.dmlpkg" --input "x=$HERE/x_ctrl_$b.npy" --output-dir "$WORK/ctrl-cpu-$b"
  if [ $VK = 1 ]; then
    expect_ok "ctrl-vk-$b" "$DMLC" run "$WORK/ctrl.dmlpkg" --input "x=$HERE/x_ctrl_$b.npy" --output-dir "$WORK/ctrl-vk-$b" --device vulkan
    grep -q "^note:" <<<"$out" && bad "ctrl $b: a whole-function note for a per-segment run: $out" || ok
    [ $b = then ] && k=k0_elementwise || k=k0_move
    has "ctrl-vk-$b-region" "region: node 'choose' (If) $b, function 'choose.$b', on vulkan:"
    has "ctrl-vk-$b-kernels" ": 1 run(s) in the last run, kernels: $k"
    [ "$(grep -c "^region:" <<<"$out")" = 1 ] && ok || bad "ctrl $b: not one region line: $out"
    for o in y z; do
      cmp -s "$WORK/ctrl-cpu-$b/$o.npy" "$WORK/ctrl-vk-$b/$o.npy" && ok || bad "ctrl $b: output $o differs"
    done
  fi
done
# an If whose branches differ in rank (f32[N,8] or f32[8]) between device
# kernels: the nodes after it (Add, Reshape, Neg) are copied into both
# branches at import (tail duplication), so the If on the host gives y;
# y as ONNX Runtime's and the same on the device as on the CPU plan
expect_ok rank-compile "$DMLC" compile "$HERE/rank_mid.onnx" -o "$WORK/rank.dmlpkg" --target cpu,vulkan --print-kernels
has rank-note "function 'forward': 1 of 5 nodes on the host, the rest on the device"
has rank-node "host nodes: 3 'choose' (If)"
for b in then else; do
  expect_ok "rank-cpu-$b" "$DMLC" run "$WORK/rank.dmlpkg" --input "x=$HERE/x_ctrl_$b.npy" --output-dir "$WORK/rank-cpu-$b"
  cmp -s "$HERE/rank_ort_y_$b.npy" "$WORK/rank-cpu-$b/y.npy" && ok || bad "rank $b: y differs from ONNX Runtime's"
  if [ $VK = 1 ]; then
    expect_ok "rank-vk-$b" "$DMLC" run "$WORK/rank.dmlpkg" --input "x=$HERE/x_ctrl_$b.npy" --output-dir "$WORK/rank-vk-$b" --device vulkan
    for o in y z; do
      cmp -s "$WORK/rank-cpu-$b/$o.npy" "$WORK/rank-vk-$b/$o.npy" && ok || bad "rank $b: output $o differs"
    done
  fi
done
expect_err rank-strict "node 'choose' (If)" "$DMLC" compile "$HERE/rank_mid.onnx" -o "$WORK/r2.dmlpkg" --target cpu,vulkan --no-cpu-fallback
# a Loop between device kernels, its trip count an input
expect_ok loop-compile "$DMLC" compile "$HERE/loop_mid.onnx" -o "$WORK/loop.dmlpkg" --target cpu,vulkan
has loop-node "host nodes: 3 'repeat' (Loop)"
expect_ok loop-cpu "$DMLC" run "$WORK/loop.dmlpkg" --input "x=$HERE/x_ctrl_else.npy" --input "trip=$HERE/trip3.npy" --output-dir "$WORK/loop-cpu"
if [ $VK = 1 ]; then
  expect_ok loop-vk "$DMLC" run "$WORK/loop.dmlpkg" --input "x=$HERE/x_ctrl_else.npy" --input "trip=$HERE/trip3.npy" --output-dir "$WORK/loop-vk" --device vulkan
  cmp -s "$WORK/loop-cpu/y.npy" "$WORK/loop-vk/y.npy" && ok || bad "loop: vulkan and cpu results differ"
  has loop-vk-region "region: node 'repeat' (Loop) body, function 'repeat.body', on vulkan:"
  has loop-vk-runs ": 3 run(s) in the last run, kernels: k0_elementwise"
fi
# a Loop whose iterations depend on run-time data (a `while` condition, a
# trip count computed from the input) between device kernels: ONNX
# Runtime's output on the CPU and on the device
expect_ok while-compile "$DMLC" compile "$HERE/while_mid.onnx" -o "$WORK/while.dmlpkg" --target cpu,vulkan
has while-node "host nodes: 4 'grow' (Loop)"
for dv in cpu vulkan; do
  [ $dv = vulkan ] && [ $VK = 0 ] && continue
  expect_ok "while-$dv" "$DMLC" run "$WORK/while.dmlpkg" --input "x=$HERE/x_while.npy" --output-dir "$WORK/while-$dv" --device $dv
  cmp -s "$HERE/while_ort_y.npy" "$WORK/while-$dv/y.npy" && ok || bad "while $dv: y differs from ONNX Runtime's"
  if [ $dv = vulkan ]; then
    has while-vk-region "region: node 'grow' (Loop) body, function 'grow.body', on vulkan:"
    has while-vk-runs ": 4 run(s) in the last run, kernels: k0_elementwise, k1_reduce"
  else
    grep -q "^region:" <<<"$out" && bad "while cpu: a region line on the cpu: $out" || ok
  fi
done
# a Scan over a symbolic length T (a run-time Loop, onnx_loop.c) between
# device kernels: its body's kernels on the device once per step (T = 37),
# the results the CPU plan's bit for bit (cumulative sum; two scan inputs
# with reverse directions and output axis 1: Add, Mul, Sub and data
# movement, exactly rounded); the RNN cell (MatMul, Tanh) runs its body on
# the device (values: test_onnx_scan_runtime on the CPU)
SCANS="$HERE/../onnx/fixtures"
for m in cumsum:s0,x:s_final,y two:s0,x,w:s_final,y1,y2 rnn:h0,x:h_final,y; do
  IFS=: read -r name ins outs <<<"$m"
  expect_ok "scan-$name-compile" "$DMLC" compile "$SCANS/scan_rt_$name.onnx" -o "$WORK/scan_$name.dmlpkg" --target cpu,vulkan
  has "scan-$name-node" "(Loop: 1 node; host nodes:"
  args=()
  for i in ${ins//,/ }; do args+=(--input "$i=$HERE/x_scan_${name}_$i.npy"); done
  expect_ok "scan-$name-cpu" "$DMLC" run "$WORK/scan_$name.dmlpkg" "${args[@]}" --output-dir "$WORK/scan-$name-cpu"
  [ $VK = 1 ] || continue
  expect_ok "scan-$name-vk" "$DMLC" run "$WORK/scan_$name.dmlpkg" "${args[@]}" --output-dir "$WORK/scan-$name-vk" --device vulkan
  has "scan-$name-region" "region: node 'scan_$name' (Loop) body, function 'scan_$name.body', on vulkan:"
  has "scan-$name-runs" ": 37 run(s) in the last run, kernels: k0_move"
  [ $name = rnn ] && continue
  for o in ${outs//,/ }; do
    cmp -s "$WORK/scan-$name-cpu/$o.npy" "$WORK/scan-$name-vk/$o.npy" && ok || bad "scan $name: output $o: vulkan and cpu results differ"
  done
done
# sequences of run-time length (stacked, onnx_seq.c): lists built by
# SequenceInsert in two run-time Loops (a trip count len(x), and a while
# loop), read by ConcatFromSequence, SequenceAt at a run-time position and
# SequenceLength, T = 11: the bodies on the device once per iteration, the
# outputs the CPU plan's bit for bit (Gather, Mul, Add and data movement,
# exactly rounded; values: test_onnx_seq_runtime on the CPU)
expect_ok seqrt-compile "$DMLC" compile "$SCANS/seq_rt_loop.onnx" -o "$WORK/seqrt.dmlpkg" --target cpu,vulkan
sargs=(--input "x=$HERE/x_seqrt_loop_x.npy" --input "pos=$HERE/x_seqrt_loop_pos.npy" --input "lim=$HERE/x_seqrt_loop_lim.npy")
expect_ok seqrt-cpu "$DMLC" run "$WORK/seqrt.dmlpkg" "${sargs[@]}" --output-dir "$WORK/seqrt-cpu"
if [ $VK = 1 ]; then
  expect_ok seqrt-vk "$DMLC" run "$WORK/seqrt.dmlpkg" "${sargs[@]}" --output-dir "$WORK/seqrt-vk" --device vulkan
  has seqrt-region "region: node 'build' (Loop) body, function 'build.body', on vulkan:"
  has seqrt-while-region "region: node 'while' (Loop) body, function 'while.body', on vulkan:"
  has seqrt-while-runs ": 10 run(s) in the last run"
  has seqrt-runs ": 11 run(s) in the last run"
  for o in cat stack at n wcat; do
    cmp -s "$WORK/seqrt-cpu/$o.npy" "$WORK/seqrt-vk/$o.npy" && ok || bad "seqrt: output $o: vulkan and cpu results differ"
  done
fi
expect_err while-strict "a Loop whose number of iterations is only known at run time) runs on the cpu target only" "$DMLC" compile "$HERE/while_mid.onnx" -o "$WORK/w2.dmlpkg" --target cpu,vulkan --no-cpu-fallback
if [ $VK = 1 ]; then
  expect_ok ctrl-bench "$DMLC" bench "$WORK/ctrl.dmlpkg" --device vulkan --iterations 3 --warmup 1 --json
  has ctrl-bench-host '"name": "k2_host"'
  # the synthetic input takes the else branch: 4 runs (1 warm-up, 3 timed),
  # its device kernel's last time; the then branch never ran
  has ctrl-bench-else '"role": "else", "function": "choose.else", "device": "vulkan:'
  has ctrl-bench-else-runs '"runs": 1, "runs_total": 4, "kernels": [{"name": "k0_move", "ms": '
  has ctrl-bench-then '"role": "then", "function": "choose.then", "device": "vulkan:'
  has ctrl-bench-then-runs '"runs": 0, "runs_total": 0, "kernels": [], "regions": []}'
fi
# branches the device cannot run whole: the then branch's own fall-back per
# segment (LpNormalization a host entry between its device kernels), the
# else branch with no node for the device (its session on the CPU, noted
# once by dmlc run); both bit for bit as the CPU plan (NaN included)
expect_ok ch-compile "$DMLC" compile "$HERE/ctrl_host.onnx" -o "$WORK/ch.dmlpkg" --target cpu,vulkan
has ch-note-then "function 'choose.then': 1 of 4 nodes on the host, the rest on the device"
has ch-note-else "function 'choose.else': whole function (per-segment placement: no node of the function runs on the device)"
expect_ok ch-inspect "$DMLC" inspect "$WORK/ch.dmlpkg"
has ch-inspect-then "vulkan, function 'choose.then': 1 of 4 nodes on the host"
has ch-inspect-else "vulkan, function 'choose.else': whole function"
for b in then else; do
  expect_ok "ch-cpu-$b" "$DMLC" run "$WORK/ch.dmlpkg" --input "x=$HERE/x_ctrl_$b.npy" --output-dir "$WORK/ch-cpu-$b"
  [ $VK = 1 ] || continue
  expect_ok "ch-vk-$b" "$DMLC" run "$WORK/ch.dmlpkg" --input "x=$HERE/x_ctrl_$b.npy" --output-dir "$WORK/ch-vk-$b" --device vulkan
  cmp -s "$WORK/ch-cpu-$b/y.npy" "$WORK/ch-vk-$b/y.npy" && ok || bad "ch $b: vulkan and cpu results differ"
  has "ch-vk-$b-note" "note: node 'choose' (If) else: function 'choose.else' runs on the host (CPU kernels)"
  if [ $b = then ]; then
    has ch-vk-then-region "region: node 'choose' (If) then, function 'choose.then', on vulkan:"
    has ch-vk-then-kernels "1 run(s) in the last run, kernels: k0_elementwise, k1_host, k2_elementwise"
  else
    has ch-vk-else-region "region: node 'choose' (If) else, function 'choose.else', on cpu (the CPU fall-back"
    has ch-vk-else-kernels "1 run(s) in the last run, no device kernels"
  fi
done
# string tensors in and out around a device segment (issue 23: a Vulkan run
# returned empty strings with exit status 0): a string input read by the
# first host entry, a string made there, read by the second host entry
# across the device's kernel and returned, a string output of the second;
# every output bit for bit as the CPU plan's and ONNX Runtime's
expect_ok strio-compile "$DMLC" compile "$HERE/string_io.onnx" -o "$WORK/strio.dmlpkg" --target cpu,vulkan --print-kernels
has strio-note "function 'forward': 4 of 7 nodes on the host, the rest on the device"
grep -q "^kernel k0_host (host)" <<<"$out" && grep -q "^kernel k2_host (host)" <<<"$out" && ok ||
  bad "strio: not two host entries around the device's kernel: $out"
for dv in cpu vulkan; do
  [ $dv = vulkan ] && [ $VK = 0 ] && continue
  expect_ok "strio-run-$dv" "$DMLC" run "$WORK/strio.dmlpkg" --input "s=$HERE/s_strio.npy" \
    --input "x=$HERE/x_strio.npy" --output-dir "$WORK/strio-$dv" --device $dv
  has "strio-$dv-sizes" "y: str[4] -> $WORK/strio-$dv/y.npy (strings of 8..15 bytes)"
  for o in y u r; do
    cmp -s "$HERE/strio_ort_$o.npy" "$WORK/strio-$dv/$o.npy" && ok || bad "strio $dv: output $o differs from ONNX Runtime's"
  done
done
# no node for the device: the whole function on the host, noted by dmlc run
expect_ok whole-compile "$DMLC" compile "$HERE/lp_only.onnx" -o "$WORK/whole.dmlpkg" --target cpu,vulkan
has whole-note "function 'forward': whole function (per-segment placement: no node of the function runs on the device)"
expect_ok whole-run-cpu "$DMLC" run "$WORK/whole.dmlpkg" --input "x=$HERE/x_lp.npy" --output-dir "$WORK/whole-cpu"
if [ $VK = 1 ]; then
  expect_ok whole-run-vulkan "$DMLC" run "$WORK/whole.dmlpkg" --input "x=$HERE/x_lp.npy" --output-dir "$WORK/whole-vk" --device vulkan
  has whole-run-note "note: function 'forward' runs on the host (CPU kernels): the package's vulkan kernels leave it out: whole function"
  cmp -s "$WORK/whole-cpu/y.npy" "$WORK/whole-vk/y.npy" && ok || bad "whole: vulkan and cpu results differ"
fi
# an If in a branch of an If (tests/onnx/fixtures/if_rt_nested.onnx): the
# outer If alone in 'forward' (no node for the device: that function on the
# host), its then branch a host entry (the inner If) before a device
# kernel, the inner branches on the device: the regions nest, each on the
# device; bit for bit as the CPU plan (c1 true: the outer then branch, its
# inner branches Abs+Add or Concat, exactly rounded; the outer else
# branch's ReduceSum is not, so it is left to test_onnx_if_runtime's CPU)
NESTED=$HERE/../onnx/fixtures/if_rt_nested.onnx
expect_ok nested-compile "$DMLC" compile "$NESTED" -o "$WORK/nested.dmlpkg" --target cpu,vulkan
has nested-note "function 'if_outer.then': 1 of 2 nodes on the host, the rest on the device"
for c2 in true false; do
  args=(--input "c1=$HERE/c_true.npy" --input "c2=$HERE/c_$c2.npy" --input "x=$HERE/x_nested.npy")
  expect_ok "nested-cpu-$c2" "$DMLC" run "$WORK/nested.dmlpkg" "${args[@]}" --output-dir "$WORK/nested-cpu-$c2"
  grep -q "^region:" <<<"$out" && bad "nested cpu: a region line on the cpu: $out" || ok
  [ $VK = 1 ] || continue
  expect_ok "nested-vk-$c2" "$DMLC" run "$WORK/nested.dmlpkg" "${args[@]}" --output-dir "$WORK/nested-vk-$c2" --device vulkan
  cmp -s "$WORK/nested-cpu-$c2/y.npy" "$WORK/nested-vk-$c2/y.npy" && ok || bad "nested $c2: vulkan and cpu results differ"
  has "nested-vk-$c2-whole" "note: function 'forward' runs on the host (CPU kernels)"
  has "nested-vk-$c2-outer" "region: node 'if_outer' (If) then, function 'if_outer.then', on vulkan:"
  [ $c2 = true ] && r="then, function 'if_inner.then'" || r="else, function 'if_inner.else'"
  has "nested-vk-$c2-inner" "  region: node 'if_inner' (If) $r, on vulkan:"
done
# an If whose branch captures a data-dependent extent counted on the device
# (tests/symshape/if_capture.onnx: a = x[x > 0], empty in case a): the
# branch session on the device takes the empty capture; ONNX Runtime's
# outputs bit for bit
if [ $VK = 1 ]; then
  SYM=$HERE/../symshape
  expect_ok capt-compile "$DMLC" compile "$SYM/if_capture.onnx" -o "$WORK/capt.dmlpkg" --target cpu,vulkan
  for t in a b c; do
    expect_ok "capt-vk-$t" "$DMLC" run "$WORK/capt.dmlpkg" --input "x=$SYM/if_capture.$t.x.npy" --output-dir "$WORK/capt-$t" --device vulkan
    has "capt-vk-$t-region" "region: node '' (If) else, function 'If.else', on vulkan:"
    cmp -s "$SYM/if_capture.$t.y.npy" "$WORK/capt-$t/y.npy" && ok || bad "capt $t: y differs from ONNX Runtime's"
  done
fi
# the cuda target falls back the same way (PTX through clang-16)
if "$DMLC" compile "$HERE/lp_mid.onnx" -o "$WORK/c.dmlpkg" --target cuda --cuda-arch ptx > "$WORK/c.log" 2>&1; then
  out=$(cat "$WORK/c.log")
  has cuda-note "note: CPU fall-back: target 'cuda', function 'forward': 1 of 4 nodes on the host, the rest on the device"
  expect_err cuda-strict "target 'cuda' cannot emit every op" "$DMLC" compile "$HERE/lp_mid.onnx" \
    -o "$WORK/c2.dmlpkg" --target cuda --cuda-arch ptx --no-cpu-fallback
  # run-time If: the branches' kernels are in the package (a CUDA device
  # runs them: dmlc run --device cuda prints their region lines)
  expect_ok cuda-ctrl "$DMLC" compile "$HERE/ctrl_mid.onnx" -o "$WORK/cctrl.dmlpkg" --target cpu,cuda \
    --cuda-arch ptx --print-kernels
  has cuda-ctrl-then "function choose.then: 1 kernels"
  has cuda-ctrl-else "function choose.else: 1 kernels"
  if "$DMLC" devices 2>/dev/null | grep -q "^cuda:0"; then
    for b in then else; do
      expect_ok "cuda-ctrl-cpu-$b" "$DMLC" run "$WORK/cctrl.dmlpkg" --input "x=$HERE/x_ctrl_$b.npy" --output-dir "$WORK/cctrl-cpu-$b"
      expect_ok "cuda-ctrl-$b" "$DMLC" run "$WORK/cctrl.dmlpkg" --input "x=$HERE/x_ctrl_$b.npy" --output-dir "$WORK/cctrl-cu-$b" --device cuda
      has "cuda-ctrl-$b-region" "region: node 'choose' (If) $b, function 'choose.$b', on cuda:"
      for o in y z; do
        cmp -s "$WORK/cctrl-cpu-$b/$o.npy" "$WORK/cctrl-cu-$b/$o.npy" && ok || bad "cuda ctrl $b: output $o differs"
      done
    done
    expect_ok cuda-loop "$DMLC" compile "$HERE/loop_mid.onnx" -o "$WORK/cloop.dmlpkg" --target cpu,cuda --cuda-arch ptx
    expect_ok cuda-loop-cpu "$DMLC" run "$WORK/cloop.dmlpkg" --input "x=$HERE/x_ctrl_else.npy" --input "trip=$HERE/trip3.npy" --output-dir "$WORK/cloop-cpu"
    expect_ok cuda-loop-run "$DMLC" run "$WORK/cloop.dmlpkg" --input "x=$HERE/x_ctrl_else.npy" --input "trip=$HERE/trip3.npy" --output-dir "$WORK/cloop-cu" --device cuda
    has cuda-loop-region "region: node 'repeat' (Loop) body, function 'repeat.body', on cuda:"
    cmp -s "$WORK/cloop-cpu/y.npy" "$WORK/cloop-cu/y.npy" && ok || bad "cuda loop: cuda and cpu results differ"
    # a Scan over a symbolic T (a run-time Loop): its body on the device,
    # 37 steps; the cumulative sum (Add only) bit for bit as the CPU's
    expect_ok cuda-scan "$DMLC" compile "$SCANS/scan_rt_cumsum.onnx" -o "$WORK/cscan.dmlpkg" --target cpu,cuda --cuda-arch ptx
    sargs=(--input "s0=$HERE/x_scan_cumsum_s0.npy" --input "x=$HERE/x_scan_cumsum_x.npy")
    expect_ok cuda-scan-cpu "$DMLC" run "$WORK/cscan.dmlpkg" "${sargs[@]}" --output-dir "$WORK/cscan-cpu"
    expect_ok cuda-scan-run "$DMLC" run "$WORK/cscan.dmlpkg" "${sargs[@]}" --output-dir "$WORK/cscan-cu" --device cuda
    has cuda-scan-region "region: node 'scan_cumsum' (Loop) body, function 'scan_cumsum.body', on cuda:"
    has cuda-scan-runs ": 37 run(s) in the last run"
    for o in s_final y; do
      cmp -s "$WORK/cscan-cpu/$o.npy" "$WORK/cscan-cu/$o.npy" && ok || bad "cuda scan: output $o: cuda and cpu results differ"
    done
  else
    echo "note: no CUDA device here: the cuda runs of the run-time If and Loop were skipped"
  fi
elif grep -q "clang" "$WORK/c.log"; then
  echo "note: no clang-16 for the cuda target: its checks were skipped"
else
  bad "cuda compile: $(cat "$WORK/c.log")"
fi
[ $VK = 1 ] || echo "note: no Vulkan device here: the Vulkan runs were skipped"
echo "test_fallback: $pass passed, $fail failed"
[ $fail = 0 ]
