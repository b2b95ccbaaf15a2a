#!/bin/bash
# test_symdims_cli.sh DMLC SRC_DIR WORK_DIR — symbolic dims through the
# command line: dmlc compile --dim-bound / --input-shape (ranges, steps),
# dmlc run at several sizes of one package (the output shapes; the values
# are compared with onnxruntime's by test_symdims.c), the errors of a size
# over its bound, a pyramid without a step and a minimum too small for the
# windows, usage errors, dmlc inspect listing the derived symbols, and
# dmlc bench --dim.
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

echo "$fails failed"
[ "$fails" -eq 0 ]
