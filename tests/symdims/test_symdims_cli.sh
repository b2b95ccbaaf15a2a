#!/bin/bash
# test_symdims_cli.sh DMLC SRC_DIR WORK_DIR — symbolic dims through the
# command line: dmlc compile --dim-bound / --input-shape (ranges, steps),
# dmlc run at several sizes of one package (the output shapes; the values
# are compared with onnxruntime's by test_symdims.c), the errors of a size
# over its bound, a pyramid without a step and a minimum too small for the
# windows, usage errors, dmlc inspect listing the derived symbols,
# dmlc bench --dim, and a dim_param "2*h" (pixel_unshuffle as torch exports
# it) bounded by its own spelling, with its odd-size and over-bound errors,
# and the Reshape refusal that names the --input-shape that works.
dmlc=$1
src=$2/tests/symdims
work=$3
. "$(dirname "$0")/../sh_test_util.sh"
rm -rf "$work" && mkdir -p "$work"
cd "$work" || exit 1

# --dim-bound by name: inspect shows the bounds and the derived symbols.
check "compile --dim-bound" "$dmlc" compile "$src/fcn_pool.onnx" -o p.dmlpkg \
  --dim-bound N=4 --dim-bound H=100,W=80 >out.txt 2>&1
"$dmlc" inspect p.dmlpkg >insp.txt 2>&1
check "inspect: H's bound" has "H <= 100" insp.txt
check "inspect: a derived symbol" has "(H+1)/2 <= 50" insp.txt
check "inspect: input at the bounds" has "at most f32\[4,3,100,80\]" insp.txt

# One package, three sizes: the output shapes follow.
for c in a b c; do
  check "run case $c" "$dmlc" run p.dmlpkg --input "x=$src/fcn_pool.$c.x.npy" \
    --output-dir "o_$c" >"run_$c.txt" 2>&1
done
check "case a shape" has "y: f32\[1,5\]" run_a.txt
check "case b shape" has "y: f32\[2,5\]" run_b.txt
check "case c shape" has "y: f32\[3,5\]" run_c.txt

# Over the bound: the error names the dim and the bound.
check "compile small bound" "$dmlc" compile "$src/fcn_pool.onnx" -o small.dmlpkg \
  --dim-bound H=32 >out.txt 2>&1
if "$dmlc" run small.dmlpkg --input "x=$src/fcn_pool.c.x.npy" --output-dir o >err.txt 2>&1; then
  echo "FAILED: a size over its bound ran"
  fails=$((fails + 1))
fi
check "over-bound error" has "H 64 exceeds the compiled bound 32" err.txt
check "over-bound hint" has "dim-bound" err.txt

# --input-shape with fixed dims, ranges and a step.
check "compile --input-shape" "$dmlc" compile "$src/fpn.onnx" -o fpn.dmlpkg \
  "--input-shape=x=[2]x3x[16:64:8]x[16:64:8]" >out.txt 2>&1
check "run fpn" "$dmlc" run fpn.dmlpkg --input "x=$src/fpn.b.x.npy" --output-dir o_f \
  >run_f.txt 2>&1
check "fpn shape" has "y: f32\[2,4,20,32\]" run_f.txt
if "$dmlc" compile "$src/fpn.onnx" -o nostep.dmlpkg >err.txt 2>&1; then
  echo "FAILED: the pyramid compiled without a step"
  fails=$((fails + 1))
fi
check "no-step error" has "\[MIN:MAX:STEP\]" err.txt
if "$dmlc" compile "$src/fcn_pool.onnx" -o m.dmlpkg "--input-shape=x=[4]x3x[16:64]x[32:64]" \
  >err.txt 2>&1; then
  echo "FAILED: a minimum too small for the windows compiled"
  fails=$((fails + 1))
fi
check "min error" has "at the smallest input sizes promised" err.txt

# Usage errors.
for bad in "--dim-bound=H=0" "--dim-bound=H" "--dim-bound=0" "--input-shape=x=1x[5:2]" \
  "--input-shape=x" "--input-shape=x=1x[a:3]" "--dim-bound=Q=3"; do
  if "$dmlc" compile "$src/fcn_pool.onnx" -o bad.dmlpkg "$bad" >err.txt 2>&1; then
    echo "FAILED: $bad was accepted"
    fails=$((fails + 1))
  fi
  check "$bad: an error line" has "error:" err.txt
done

# dmlc bench --dim sets the named dims (the default, 1, is too small).
check "bench --dim" "$dmlc" bench p.dmlpkg --dim H=40 --dim W=33 --iterations 2 \
  --warmup 0 >bench.txt 2>&1
if "$dmlc" bench p.dmlpkg --iterations 1 --warmup 0 >err.txt 2>&1; then
  echo "FAILED: bench at H = W = 1 ran"
  fails=$((fails + 1))
fi
check "bench too small" has "too small for the model" err.txt

# dim_param "2*h": --dim-bound 2*h=64 bounds h by 32; two sizes run.
check "compile 2*h" "$dmlc" compile "$src/pixel_unshuffle.onnx" -o pu.dmlpkg \
  --dim-bound 'batch=4,2*h=64,2*w=64' >out.txt 2>&1
"$dmlc" inspect pu.dmlpkg >insp.txt 2>&1
check "inspect: h <= 32" has "h <= 32" insp.txt
check "inspect: input 2*h" has "at most f32\[4,3,64,64\]" insp.txt
check "run 2*h case a" "$dmlc" run pu.dmlpkg --input "x=$src/pixel_unshuffle.a.x.npy" \
  --output-dir o_pa >run_pa.txt 2>&1
check "2*h case a shape" has "y: f32\[1,4,8,12\]" run_pa.txt
check "run 2*h case b" "$dmlc" run pu.dmlpkg --input "x=$src/pixel_unshuffle.b.x.npy" \
  --output-dir o_pb >run_pb.txt 2>&1
check "2*h case b shape" has "y: f32\[3,4,32,19\]" run_pb.txt

# zeros_npy FILE D0 D1 ...: an f32 .npy of zeros (Python's standard library).
zeros_npy() {
  python3 - "$@" <<'PY'
import struct, sys
shape = tuple(int(d) for d in sys.argv[2:])
n = 1
for d in shape:
    n *= d
h = repr({"descr": "<f4", "fortran_order": False, "shape": shape})
h = (h + " " * (64 - (10 + len(h) + 1) % 64) + "\n").encode("latin1")
open(sys.argv[1], "wb").write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) + h + bytes(4 * n))
PY
}
zeros_npy odd.npy 1 3 63 64
zeros_npy over.npy 1 3 66 64
if "$dmlc" run pu.dmlpkg --input x=odd.npy --output-dir o >err.txt 2>&1; then
  echo "FAILED: an odd H ran on 2*h"
  fails=$((fails + 1))
fi
check "odd-size error" has "input 'x': dim 2 is 63, not a multiple of 2 (the dim is 2\*h" err.txt
if "$dmlc" run pu.dmlpkg --input x=over.npy --output-dir o >err.txt 2>&1; then
  echo "FAILED: an H over 2*h's bound ran"
  fails=$((fails + 1))
fi
check "2*h over-bound error" has "h 33 exceeds the compiled bound 32 (dim 2 is 66 = 2\*h, at most 64)" err.txt

# Reshape f32[N] into [-1,2]: refused naming the --input-shape that works.
if "$dmlc" compile "$src/reshape_pairs.onnx" -o rp.dmlpkg >err.txt 2>&1; then
  echo "FAILED: Reshape of N into [-1,2] compiled without a step"
  fails=$((fails + 1))
fi
check "reshape suggestion" has "dmlc compile --input-shape x=\[2:64:2\]" err.txt
check "compile reshape with the step" "$dmlc" compile "$src/reshape_pairs.onnx" -o rp.dmlpkg \
  "--input-shape=x=[2:64:2]" >out.txt 2>&1
check "run reshape" "$dmlc" run rp.dmlpkg --input "x=$src/reshape_pairs.b.x.npy" \
  --output-dir o_rp >run_rp.txt 2>&1
check "reshape shape" has "y: f32\[32,2\]" run_rp.txt

echo "$fails failed"
[ "$fails" -eq 0 ]
