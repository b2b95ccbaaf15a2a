#!/bin/bash
# Training steps/s of torchvision's ResNet-18 and a BERT encoder classifier
# by dmlc, PyTorch eager and torch.compile on the GPU machine, side by side
# in one run (issue 20 item 4; docs/training.md, "Training speed of
# ResNet-18 and BERT against PyTorch").
#
# Here (the build machine), once: build dmlc and dml_train_bench and pack
# them with clang-16 (scripts/gpu_toolchain.sh carries dml_train_bench too):
#   bash bench/gpu/train_models_prepare.sh
# then one device call (the weights cannot travel: the models are exported
# there, with that machine's torch, torchvision and transformers):
#   run(command="bash bench/gpu/train_models.sh", carry=[".gpu-tc"], timeout_s=600)
# Writes to $OUT: train_models.log (everything), train_models.json (per
# model: export and compile seconds, and bench/gpu/train_models.py bench's
# result: steps/s, samples/s, rounds, first losses, load) and
# train_models.md (the table).
#
# Steps: unpack .gpu-tc/tc.tar.xz into $TC (as scripts/gpu_zoo.sh does;
# without it, this checkout's build/: the stand-in run below);
# export the models of $MODELS in parallel (train_models.py export: random
# weights, torch.onnx's dynamo exporter, optimize=False, batch dynamic; 16
# batches of 32 seeded random inputs and labels); `dmlc compile --train
# --loss cross_entropy --optimizer momentum --momentum 0.9 --batch-bound 32
# --target $TARGET --no-cpu-fallback --cuda-arch $CUDA_ARCH` each (in
# parallel, each running DMLC_CUDA_JOBS (default nproc) clang and ptxas
# chains at a time); then per model
# train_models.py bench: dmlc (dml_train_bench --rounds-stdin on
# --device $DEVICE), PyTorch eager and torch.compile, interleaved rounds,
# the median of $ROUNDS. A model that fails to export or compile is a row
# saying so, never a stop.
#
# Environment (defaults): MODELS ("resnet18:full bert:full"; sizes full,
# small, tiny: train_models.py's CONFIGS; "resnet18:small bert:small" when
# the full ones do not fit the time), DEVICE (cuda), TARGET (cpu,cuda),
# SIDES (dmlc,eager,compile), ROUNDS (5), ROUND_S (2.0: seconds a side's
# round aims at), LR (0.01), PRECISION (fp32: dmlc's f32 kernels and
# PyTorch with TF32 off; tf32: `dmlc compile --allow-tf32` and PyTorch's
# TF32 on), CUDA_ARCH (sm_90 where ptxas is found, else ptx), BATCHES
# (16), THREADS (4: dmlc's CPU threads and torch's on
# the CPU), OUT (/tmp/train_models_out), WORK (/tmp/train_models), TC
# (/tmp/dmlc-tc), DMLC and TRAIN_BENCH (the toolchain's, else
# build/compiler/dmlc and build/bench/train/dml_train_bench, else a
# runtime-only build of dml_train_bench with that machine's cmake), PYTHON
# (python3: with torch, torchvision, transformers, onnx, numpy), TOTAL_S
# (520: the seconds the whole script may take: the compiles stop 150 s
# before it, no model's benchmark starts with less than 90 s left, and
# each is stopped 10 s before it).
# Stand-in run on a machine without a GPU (the script path end to end):
#   DEVICE=cpu TARGET=cpu MODELS="resnet18:tiny bert:tiny" SIDES=dmlc,eager \
#     ROUNDS=2 ROUND_S=0.5 BATCHES=4 PYTHON=/work/venv211/bin/python \
#     bash bench/gpu/train_models.sh
# Exit status: 0 when every model ran on every side.
set -u
cd "$(dirname "$0")/../.." || exit 1
ROOT=$PWD
OUT=${OUT:-/tmp/train_models_out}
W=${WORK:-/tmp/train_models}
TC=${TC:-/tmp/dmlc-tc}
MODELS=${MODELS:-resnet18:full bert:full}
DEVICE=${DEVICE:-cuda}
TARGET=${TARGET:-cpu,cuda}
SIDES=${SIDES:-dmlc,eager,compile}
ROUNDS=${ROUNDS:-5}
ROUND_S=${ROUND_S:-2.0}
LR=${LR:-0.01}
PRECISION=${PRECISION:-fp32}
BATCHES=${BATCHES:-16}
THREADS=${THREADS:-4}
TOTAL_S=${TOTAL_S:-520}
PY=${PYTHON:-python3}
T0=$(date +%s)
mkdir -p "$OUT" "$W"
exec > >(tee "$OUT/train_models.log") 2>&1
step() { echo; echo "=== $* ($(($(date +%s) - T0)) s)"; }
status=0
case "$PRECISION" in
fp32) TF32_FLAG=() ;;
tf32) TF32_FLAG=(--allow-tf32) ;;
*) echo "error: PRECISION is fp32 or tf32, not '$PRECISION'"; exit 2 ;;
esac

step "machine"
uname -m; nproc; cat /proc/loadavg
nvidia-smi --query-gpu=name,driver_version,memory.total,utilization.gpu --format=csv 2>&1 | head -3 || true
"$PY" -c 'import torch, torchvision, transformers, onnx; print("torch", torch.__version__, "torchvision", torchvision.__version__, "transformers", transformers.__version__, "onnx", onnx.__version__)' ||
  { echo "error: $PY lacks torch, torchvision, transformers or onnx"; exit 1; }

step "toolchain"
# the carried toolchain, unpacked afresh (an older one may be in $TC);
# without it (the stand-in run) this checkout's build/
HAVE_TC=0
if [ -f .gpu-tc/tc.tar.xz ]; then
  rm -rf "$TC" "$TC.unpack" && mkdir -p "$TC.unpack"
  "$PY" -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' .gpu-tc/tc.tar.xz "$TC.unpack" &&
    mv "$TC.unpack/tc" "$TC" && rmdir "$TC.unpack" && HAVE_TC=1
fi
if [ -z "${DMLC:-}" ]; then
  if [ $HAVE_TC = 1 ]; then DMLC=$TC/bin/dmlc; else DMLC=$ROOT/build/compiler/dmlc; fi
fi
if [ -z "${TRAIN_BENCH:-}" ]; then
  if [ $HAVE_TC = 1 ] && [ -x "$TC/bin/dml_train_bench" ]; then
    TRAIN_BENCH=$TC/bin/dml_train_bench
  elif [ -x "$ROOT/build/bench/train/dml_train_bench" ]; then
    TRAIN_BENCH=$ROOT/build/bench/train/dml_train_bench
  else
    # a toolchain packed before it carried dml_train_bench: the runtime-only
    # build (cmake and cc of that machine), as bench/gpu/train_h200.sh
    B=/tmp/brt-train-models
    echo "building dml_train_bench (runtime-only, $B)"
    cmake -S . -B "$B" -DDMLC_RUNTIME_ONLY=ON -DDMLC_WERROR=OFF -DCMAKE_BUILD_TYPE=Release >"$W/build.log" 2>&1 &&
      cmake --build "$B" -j"$(nproc)" --target dml_train_bench >>"$W/build.log" 2>&1 ||
      { tail -30 "$W/build.log"; exit 1; }
    TRAIN_BENCH=$B/bench/train/dml_train_bench
  fi
fi
command -v ptxas >/dev/null || export PATH=$PATH:/usr/local/cuda/bin
[ $HAVE_TC = 1 ] && export DMLC_CLANG=${DMLC_CLANG:-$TC/bin/clang-16}
# cubins for the H100/H200 only (sm_90: one ptxas run per kernel instead
# of two), PTX only without ptxas
if [ -z "${CUDA_ARCH:-}" ]; then
  if command -v ptxas >/dev/null; then CUDA_ARCH=sm_90; else CUDA_ARCH=ptx; fi
fi
ARCH_FLAG=()
case ",$TARGET," in *,cuda,*) ARCH_FLAG=(--cuda-arch "$CUDA_ARCH") ;; esac
"$DMLC" --version | head -1
echo "dmlc: $DMLC; dml_train_bench: $TRAIN_BENCH; ptxas: $(command -v ptxas || echo none); --cuda-arch $CUDA_ARCH"
[ -x "$DMLC" ] && [ -x "$TRAIN_BENCH" ] || { echo "error: dmlc or dml_train_bench missing"; exit 1; }

names=()
for ms in $MODELS; do names+=("${ms%%:*}_${ms##*:}"); done
for n in "${names[@]}"; do
  rm -f "$W/$n".{onnx,dmlpkg,json,x.npy,y.npy,export.status,compile.status,bench.json}
done

step "export (${names[*]}, in parallel)"
# (wait for these pids only: a bare wait would wait for the tee above too)
pids=()
for ms in $MODELS; do
  n=${ms%%:*}_${ms##*:}
  (
    t=$(date +%s.%N)
    OMP_NUM_THREADS=4 timeout 300 "$PY" bench/gpu/train_models.py export --model "${ms%%:*}" \
      --size "${ms##*:}" --out "$W" --batches "$BATCHES" >"$W/$n.export.log" 2>&1
    rc=$?
    echo "{\"rc\": $rc, \"seconds\": $(awk -v a="$t" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')}" >"$W/$n.export.status"
  ) &
  pids+=($!)
done
wait "${pids[@]}"
for n in "${names[@]}"; do
  echo "$n: $(cat "$W/$n.export.status")"; grep -E "^exported|Error|error" "$W/$n.export.log" | tail -3
done

step "dmlc compile --train --target $TARGET (in parallel)"
cores=$(nproc)
export DMLC_CUDA_JOBS=${DMLC_CUDA_JOBS:-$cores}
# leave at least 150 s for the benchmarks
ctime=$((TOTAL_S - 150 - ($(date +%s) - T0)))
[ $ctime -ge 30 ] || ctime=30
echo "compile time limit: $ctime s; $DMLC_CUDA_JOBS clang/ptxas jobs per compile"
pids=()
for n in "${names[@]}"; do
  [ -f "$W/$n.onnx" ] || continue
  (
    t=$(date +%s.%N)
    timeout "$ctime" "$DMLC" compile "$W/$n.onnx" --train --loss cross_entropy --optimizer momentum \
      --momentum 0.9 --batch-bound 32 --target "$TARGET" --no-cpu-fallback ${TF32_FLAG[@]+"${TF32_FLAG[@]}"} \
      ${ARCH_FLAG[@]+"${ARCH_FLAG[@]}"} \
      -o "$W/$n.dmlpkg" >"$W/$n.compile.log" 2>&1
    rc=$?
    echo "{\"rc\": $rc, \"seconds\": $(awk -v a="$t" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'), \"jobs\": $DMLC_CUDA_JOBS}" >"$W/$n.compile.status"
  ) &
  pids+=($!)
done
[ ${#pids[@]} -gt 0 ] && wait "${pids[@]}"
for n in "${names[@]}"; do
  [ -f "$W/$n.compile.status" ] && { echo "$n: $(cat "$W/$n.compile.status")"; tail -3 "$W/$n.compile.log"; }
done

tf=()
[ "$PRECISION" = tf32 ] && tf=(--tf32)
for n in "${names[@]}"; do
  if [ ! -f "$W/$n.dmlpkg" ]; then
    status=1
    continue
  fi
  el=$(($(date +%s) - T0))
  if [ $((TOTAL_S - el)) -lt 90 ]; then
    echo "$n: not run: $el s spent, less than 90 s left of TOTAL_S $TOTAL_S"
    status=1
    continue
  fi
  step "bench $n on $DEVICE ($SIDES)"
  timeout $((TOTAL_S - el - 10)) "$PY" bench/gpu/train_models.py bench --name "$n" --dir "$W" \
    --pkg "$W/$n.dmlpkg" --train-bench "$TRAIN_BENCH" --device "$DEVICE" --sides "$SIDES" \
    --rounds "$ROUNDS" --round-s "$ROUND_S" --lr "$LR" --momentum 0.9 --threads "$THREADS" \
    ${tf[@]+"${tf[@]}"} --json "$W/$n.bench.json" || status=1
done

step "summary"
"$PY" bench/gpu/train_models.py summary --dir "$W" --names "${names[@]}" --precision "$PRECISION" \
  --target "$TARGET" --json "$OUT/train_models.json" --md "$OUT/train_models.md" || status=1
cat "$OUT/train_models.md"
step "done: status $status"
exit $status
