#!/usr/bin/env bash
# Prepares, on this (build) machine, what scripts/gpu_check.sh runs on a GPU
# machine that has no Debian packages and no compiler libraries, in
# .gpu-cuda/ at the repository root (ignored by git through
# .git/info/exclude; carried to the GPU machine). Each part is carried as
# one gzip'ed tar file, .gpu-cuda/PART.tar.gz (gpu_check.sh unpacks them),
# so that the folder stays within GPU_CARRY_MB (default 45) MB:
#   pkgs      the CUDA test and benchmark packages (tests/cuda/gen_cuda_packages:
#             clang-16, and ptxas when present)
#   models    the reference models with their saved inputs/outputs
#   edges     the edge cases of issues 15 and 23 (tests/cuda/edge_cases.py)
#   eager     the CUDA eager kernel library build/runtime/dml_eager_ptx.c
#             (PTX made here with clang-16), which gpu_check.sh's runtime-only
#             build compiles in (-DDMLC_EAGER_PTX_C) for test_tensor_cuda, and
#             add1024.dmlpkg (one Add, for TARGET) for eager_bench --iopkg,
#             matmul1024.dmlpkg (one MatMul) for eager_bench --vkpkg
#   graphgen  random graphs of `dml_graphgen --pack` (seeds GRAPHGEN_SEEDS,
#             default 0:60) compiled for cpu,cuda, with the CPU's outputs of
#             their batch-1 run here (issue 23 item 3)
#   everyop   every case of the every-op differential test (`dml_every_op
#             --pack`: each op x dtype x shape compiled for cpu,cuda, with
#             the manifest cases.tsv; no input values: the checker makes
#             them from the seed; GPU_EVERYOP_BIG=0 leaves out the cases of
#             2^24 elements) for dml_everyop_check (issue 15 item 4)
#   fallback  the CPU fall-back's models (tests/fallback: an op the GPU lacks,
#             an If and a Loop between device kernels) compiled for
#             cpu,TARGET with their inputs and runs.txt, for the per-segment
#             placement on the GPU (the nodes on the host between the
#             device's kernels; bit for bit as the CPU plan)
#   zoo       exported zoo models compiled for cpu,cuda (scripts/zoo/run.py
#             --pack: each model's smallest export first, smallest models
#             first, as many as fit the budget left), with their inputs and
#             ONNX Runtime's outputs (issue 14; issue 23 item 4);
#             GPU_ZOO_ONLY=name,... packs only those models (run.py --only)
# pkgs, models and edges must succeed (the script stops otherwise); graphgen,
# everyop and zoo are fail-soft: a part that cannot be made leaves
# .gpu-cuda/PART.skipped saying why, which gpu_check.sh prints.
#   bash scripts/gpu_prepare.sh        (after building build/ as the README says)
# GPU_PREP_TARGET=vulkan compiles edges, graphgen, everyop and zoo for cpu,vulkan
# instead, for a stand-in run of gpu_check.sh here (GPU_CHECK_LOCAL=1
# DEVICE=vulkan; see there).
set -euo pipefail
cd "$(dirname "$0")/.."
# (in a git worktree .git is a file: the folder then shows as untracked)
[ ! -d .git ] || grep -qx '/.gpu-cuda/' .git/info/exclude 2>/dev/null || echo '/.gpu-cuda/' >>.git/info/exclude
SHARED=${DMLC_SHARED_DIR:-$PWD/../shared}
BUDGET_MB=${GPU_CARRY_MB:-45}
SEEDS=${GRAPHGEN_SEEDS:-0:60}
T=${GPU_PREP_TARGET:-cuda}
G=.gpu-cuda
cmake --build build -j2 --target gen_cuda_packages >/dev/null
rm -rf $G # (bench/gpu/prepare.sh owns .gpu/)
mkdir -p $G/pkgs $G/models
DMLC_SHARED_DIR=$SHARED build/tests/cuda/gen_cuda_packages $G/pkgs
for m in fashion_mlp lenet5 resnet_small; do
  cp "$SHARED/models/$m.onnx" $G/models/
  cp -r "$SHARED/models/${m}_io" $G/models/
done
# The edge cases of issues 15 and 23 end to end (tests/cuda/edge_cases.py;
# needs onnx: the venv scripts/onnx_node_suite.sh makes)
PY=${PYTHON:-$(bash scripts/onnx_node_suite.sh >/dev/null && echo .cache/onnx-1.23.2/venv/bin/python)}
"$PY" tests/cuda/edge_cases.py prepare $G/edges --dmlc build/compiler/dmlc --targets "cpu,$T"

# PART.tar.gz from folder PART (removed); prints its size.
tgz() {
  tar czf "$G/$1.tar.gz" -C $G "$1" && rm -rf "${G:?}/$1"
  echo "$G/$1.tar.gz: $(($(stat -c %s "$G/$1.tar.gz") / 1000)) kB"
}
used_mb() { du -sb $G | awk '{printf "%.1f", $1 / 1e6}'; }
# The CUDA eager kernel library (docs/tensor.md "Eager ops on CUDA"; fail-soft:
# a build without clang-16 has none)
cmake --build build -j2 --target dml_runtime >/dev/null
if [ -f build/runtime/dml_eager_ptx.c ]; then
  mkdir -p $G/eager && cp build/runtime/dml_eager_ptx.c $G/eager/
  # a one-Add package for eager_bench --iopkg (a session with inputs and
  # outputs on the device, docs/tensor.md "Sessions"; fail-soft)
  if "$PY" bench/make_eager_models.py $G/eager/onnx >/dev/null &&
    build/compiler/dmlc compile $G/eager/onnx/add1024.onnx -o $G/eager/add1024.dmlpkg \
      --target "$T" >/dev/null; then :; else
    echo "add1024 package for eager_bench --iopkg not made" | tee $G/eager/add1024.skipped
  fi
  # the one-MatMul package (1024 x 1024) for eager_bench --vkpkg: the eager
  # MatMul against the compiled package's on the device (issue 21)
  if [ -f $G/eager/onnx/matmul1024.onnx ] &&
    build/compiler/dmlc compile $G/eager/onnx/matmul1024.onnx -o $G/eager/matmul1024.dmlpkg \
      --target "$T" >/dev/null; then :; else
    echo "matmul1024 package for eager_bench --vkpkg not made" | tee $G/eager/matmul1024.skipped
  fi
  rm -rf $G/eager/onnx
  tgz eager
else
  echo "build/runtime/dml_eager_ptx.c is missing (no clang-16 or no code generator)" | tee $G/eager.skipped
fi
for p in pkgs models edges; do tgz $p; done

# Random graphs (fail-soft). A graph that fails here (a compile error other
# than the target refusing an op, or the CPU's run) is listed in graphs.txt
# and counted as a failure by gpu_check.sh.
if cmake --build build -j2 --target dml_graphgen >/dev/null 2>&1 &&
  [ -x build/tests/vulkan/dml_graphgen ]; then
  mkdir -p $G/graphgen
  build/tests/vulkan/dml_graphgen --pack $G/graphgen --target "$T" --seeds "$SEEDS" \
    --ref-runs 1 || echo "dml_graphgen --pack: some graphs failed here (listed in graphs.txt)"
  tgz graphgen
else
  echo "dml_graphgen could not be built (it needs the Vulkan headers)" | tee $G/graphgen.skipped
fi

# The CPU fall-back per segment (fail-soft): runs.txt lines "PKG OUTS INPUTS..."
# (OUTS comma-separated; INPUTS NAME=FILE relative to the folder).
mkdir -p $G/fallback
if (
  set -e
  cp tests/fallback/*.npy $G/fallback/
  # (tests/fallback's models, then the run-time Scan and sequence fixtures
  # of tests/onnx/fixtures that test_fallback.sh runs on Vulkan)
  for m in lp_mid ctrl_mid loop_mid rank_mid while_mid scan_rt_cumsum scan_rt_two seq_rt_loop; do
    src=tests/fallback/$m.onnx
    [ -f "$src" ] || src=tests/onnx/fixtures/$m.onnx
    build/compiler/dmlc compile "$src" -o $G/fallback/$m.dmlpkg --target "cpu,$T" \
      $([ "$T" = cuda ] && echo --cuda-arch sm_90) 2>&1 | grep -E "^note: CPU fall-back" | cut -c1-160
  done
  {
    echo "lp_mid y x=x_lp.npy"
    echo "ctrl_mid y,z x=x_ctrl_then.npy"
    echo "ctrl_mid y,z x=x_ctrl_else.npy"
    echo "loop_mid y x=x_ctrl_else.npy trip=trip3.npy"
    echo "rank_mid y,z x=x_ctrl_then.npy"
    echo "rank_mid y,z x=x_ctrl_else.npy"
    echo "while_mid y x=x_while.npy"
    echo "scan_rt_cumsum s_final,y s0=x_scan_cumsum_s0.npy x=x_scan_cumsum_x.npy"
    # (its body's s + x * w is one fma on CUDA: within 1e-6, not bit for bit)
    echo "scan_rt_two s_final,y1,y2 s0=x_scan_two_s0.npy x=x_scan_two_x.npy w=x_scan_two_w.npy$([ "$T" = cuda ] && echo ' tol=1e-6')"
    echo "seq_rt_loop cat,stack,at,n,wcat x=x_seqrt_loop_x.npy pos=x_seqrt_loop_pos.npy lim=x_seqrt_loop_lim.npy"
  } >$G/fallback/runs.txt
); then
  tgz fallback
else
  rm -rf $G/fallback
  echo "the CPU fall-back's models could not be compiled" | tee $G/fallback.skipped
fi

# Every op (fail-soft). A case that fails to compile here is listed as
# "fail" in cases.tsv and counted as a failure by gpu_check.sh.
if cmake --build build -j2 --target dml_every_op >/dev/null 2>&1 &&
  [ -x build/tests/check/dml_every_op ]; then
  mkdir -p $G/everyop
  build/tests/check/dml_every_op --pack $G/everyop --target "$T" \
    $([ "${GPU_EVERYOP_BIG:-1}" = 0 ] && echo --no-big) >$G/everyop.log 2>&1 ||
    echo "dml_every_op --pack: some cases failed here (FAIL lines; listed in cases.tsv)"
  grep -E '^(FAIL|every_op on|packed into)' $G/everyop.log | tail -n 12 || true
  rm -f $G/everyop.log
  tgz everyop
else
  echo "dml_every_op could not be built (it needs the Vulkan headers)" | tee $G/everyop.skipped
fi

# The zoo (fail-soft): the budget left, less 1 MB.
left=$(awk -v b="$BUDGET_MB" -v u="$(used_mb)" 'BEGIN { printf "%.1f", b - u - 1 }')
echo "zoo: $left MB of the $BUDGET_MB MB budget left"
if awk -v l="$left" 'BEGIN { exit !(l < 1) }'; then
  echo "no room left for the zoo within GPU_CARRY_MB=$BUDGET_MB" | tee $G/zoo.skipped
elif ! "$PY" -c 'import numpy' 2>/dev/null; then
  echo "no Python with numpy ($PY) for scripts/zoo/run.py" | tee $G/zoo.skipped
elif "$PY" scripts/zoo/run.py --targets "$T" --pack $G/zoo --pack-budget-mb "$left" \
  --pack-max-mb 200 ${GPU_ZOO_ONLY:+--only "$GPU_ZOO_ONLY"} >$G/zoo.log 2>&1; then
  tail -1 $G/zoo.log
  rm -f $G/zoo.log
  tgz zoo
else
  {
    echo "scripts/zoo/run.py --pack failed (exported zoo in .cache/zoo-*/models? scripts/zoo/zoo.sh):"
    tail -5 $G/zoo.log
  } | tee $G/zoo.skipped
  rm -rf $G/zoo $G/zoo.log
fi

total=$(used_mb)
ls -l $G
echo "prepared $G/: $total MB (budget $BUDGET_MB MB); run scripts/gpu_check.sh on the GPU machine with $G carried"
if awk -v t="$total" -v b="$BUDGET_MB" 'BEGIN { exit !(t > b) }'; then
  echo "error: $G is over the budget"
  exit 1
fi
