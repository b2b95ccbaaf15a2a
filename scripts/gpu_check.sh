#!/usr/bin/env bash
# The CUDA checks and benchmarks on a GPU machine (x86-64, NVIDIA driver,
# cmake and gcc, PyTorch; no Debian packages, no network): a runtime-only
# build (libc/libm only; libcuda.so.1 is opened at run time), `dmlc
# devices`, tests/cuda/test_cuda on the packages scripts/gpu_prepare.sh put
# in .gpu-cuda/, `dmlc run`/`dmlc check`/`dmlc bench` on cuda, and bench/cuda next to
# PyTorch; with .gpu-train carried (bench/gpu/train_prepare.sh) also the
# training benchmark bench/gpu/train_h200.sh (into $OUT/train). Writes
# $OUT/gpu_check.log, $OUT/bench.md and $OUT/bench.json.
#   bash scripts/gpu_check.sh [PREPARED_DIR]     (default .gpu-cuda)
# Exit status: 0 when the build, the tests and the benchmarks succeeded.
set -uo pipefail
cd "$(dirname "$0")/.."
G=${1:-.gpu-cuda}
OUT=${OUT:-/tmp/gpu_check_out}
mkdir -p "$OUT"
LOG=$OUT/gpu_check.log
exec > >(tee "$LOG") 2>&1
status=0
step() { echo; echo "=== $*"; }
step "machine"
uname -m; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>&1 | head -3
ls /usr/local/cuda/bin/ptxas 2>&1
if [ ! -d "$G/pkgs" ]; then
  echo "error: $G/pkgs is missing: run scripts/gpu_prepare.sh on the build machine and carry $G"
  exit 2
fi
step "runtime-only build (build-gpu)"
cmake -S . -B build-gpu -DDMLC_RUNTIME_ONLY=ON -DCMAKE_BUILD_TYPE=Release >build-gpu.log 2>&1 &&
  cmake --build build-gpu -j"$(nproc)" >>build-gpu.log 2>&1 || { tail -40 build-gpu.log; exit 1; }
echo "built; dmlc NEEDs: $(readelf -d build-gpu/compiler/dmlc 2>/dev/null | sed -n 's/.*NEEDED.*\[\(.*\)\]/\1/p' | tr '\n' ' ')"
D=build-gpu/compiler/dmlc
step "dmlc devices"
$D devices || status=1
step "tests/cuda/test_cuda"
build-gpu/tests/cuda/test_cuda "$G/pkgs" "$G/models"; rc=$?
echo "test_cuda exit status: $rc"
[ $rc -eq 0 ] || status=1
step "dmlc run --device cuda (fashion_mlp input_2, batch 64) and the CPU"
$D run "$G/pkgs/ref_fashion_mlp.dmlpkg" --input "input=$G/models/fashion_mlp_io/input_2.npy" \
  --device cuda --output-dir /tmp/gpu_check_cuda || status=1
$D run "$G/pkgs/ref_fashion_mlp.dmlpkg" --input "input=$G/models/fashion_mlp_io/input_2.npy" \
  --output-dir /tmp/gpu_check_cpu || status=1
python3 -c "
import numpy as np, glob, sys
for f in sorted(glob.glob('/tmp/gpu_check_cuda/*.npy')):
    a = np.load(f); b = np.load(f.replace('cuda', 'cpu')); s = np.load('$G/models/fashion_mlp_io/output_2.npy')
    e = max(np.max(np.abs(a - b) / np.maximum(1, np.abs(b))), np.max(np.abs(a - s) / np.maximum(1, np.abs(s))))
    print(f, 'max scaled error vs cpu and saved:', e); sys.exit(0 if e <= 1e-4 else 1)
" || status=1
step "edge cases of issues 15 and 23 on cuda vs the CPU (tests/cuda/edge_cases.py)"
python3 tests/cuda/edge_cases.py check "$G/edges" --dmlc $D --device cuda || status=1
step "dmlc check --device cuda (each kernel of the reference packages against the CPU)"
for p in "$G"/pkgs/ref_*.dmlpkg; do
  $D check "$p" --device cuda --iterations 2 || status=1
done
step "dmlc bench --device cuda (fashion_mlp, batch 1 and 64)"
$D bench "$G/pkgs/ref_fashion_mlp.dmlpkg" --device cuda --iterations 1000 --warmup 100 || status=1
$D bench "$G/pkgs/ref_fashion_mlp.dmlpkg" --device cuda --batch 64 --iterations 1000 --warmup 100 || status=1
step "bench/cuda: dmlc vs PyTorch"
bash bench/cuda/run_cuda_bench.sh build-gpu/bench/cuda/cuda_bench "$G/pkgs" "$G/models" "$OUT" || status=1
step "training: dmlc cuda/vulkan/cpu vs PyTorch (bench/gpu/train_h200.sh)"
if [ -d .gpu-train ]; then
  OUT=$OUT/train BUILD=$PWD/build-gpu-train bash bench/gpu/train_h200.sh || status=1
else
  echo "skipped: .gpu-train was not carried (bench/gpu/train_prepare.sh prepares it)"
fi
step "done: status $status"
exit $status
