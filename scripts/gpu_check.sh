#!/usr/bin/env bash
# The CUDA checks and benchmarks on a GPU machine (x86-64, NVIDIA driver,
# cmake and gcc, PyTorch; no Debian packages, no network): a runtime-only
# build (libc/libm only; libcuda.so.1 is opened at run time), `dmlc
# devices`, tests/cuda/test_cuda on the packages scripts/gpu_prepare.sh put
# in .gpu-cuda/, eager ops on cuda tensors (tests/tensor/test_tensor_cuda and
# bench/eager_bench, with the PTX eager library gpu_prepare.sh carried),
# `dmlc run`/`dmlc check`/`dmlc bench` on cuda, and bench/cuda next to
# PyTorch; with .gpu-train carried (bench/gpu/train_prepare.sh) also the
# training benchmark bench/gpu/train_h200.sh (into $OUT/train); the zoo's
# packed models on cuda against ONNX Runtime's outputs and dmlc's CPU
# (scripts/zoo/run.py: $OUT/zoo_cuda.json, which `run.py --merge` takes into
# docs/zoo.*, $OUT/zoo_cuda.md, $OUT/zoo_pack.json) and the random graphs of
# dml_graphgen --pack against the CPU (tests/cuda/graphs_check.c:
# $OUT/graphgen_cuda.json, each disagreement with its seed) and every case of
# the every-op differential test (dml_every_op --pack) against the CPU
# (tests/cuda/everyop_check.c: $OUT/everyop_cuda.json, the counts
# `dml_every_op --device cuda` would print). Writes
# $OUT/gpu_check.log, $OUT/bench.md and $OUT/bench.json; the log ends with
# one line per step.
#   bash scripts/gpu_check.sh [PREPARED_DIR]     (default .gpu-cuda)
# Stand-in run without a GPU, trying the scripts here: GPU_CHECK_LOCAL=1
# DEVICE=cpu|vulkan [PYTHON=python-with-numpy] bash scripts/gpu_check.sh
# (this machine's build/, no runtime-only build, no benchmarks; DEVICE for
# cuda: the cpu runs the CPU plans of the cuda packages, vulkan the parts
# GPU_PREP_TARGET=vulkan bash scripts/gpu_prepare.sh compiled for vulkan).
# SKIP_BENCH_CUDA=1 leaves out bench/cuda (dmlc against PyTorch: GEMM, attention,
# the reference MLP), when device time is short.
# Exit status: 0 when every step succeeded (the summary at the end of the log
# lists them; the zoo, the random graphs and every op each add one line, and a part
# gpu_prepare.sh could not make is listed as skipped with why).
set -uo pipefail
cd "$(dirname "$0")/.."
G=${1:-.gpu-cuda}
OUT=${OUT:-/tmp/gpu_check_out}
mkdir -p "$OUT"
LOG=$OUT/gpu_check.log
exec > >(tee "$LOG") 2>&1
status=0
DEV=${DEVICE:-cuda}
PY=${PYTHON:-python3} # with numpy
SUMMARY=()
step() { echo; echo "=== $*"; }
# result NAME RC [DETAIL]: one summary line; a nonzero RC fails the run
result() {
  if [ "$2" -eq 0 ]; then SUMMARY+=("ok    $1${3:+: $3}"); else SUMMARY+=("FAIL  $1${3:+: $3}"); status=1; fi
}
step "machine"
uname -m; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>&1 | head -3
ls /usr/local/cuda/bin/ptxas 2>&1
step "unpack the prepared parts ($G/*.tar.gz)"
for t in "$G"/*.tar.gz; do
  [ -e "$t" ] || continue
  if tar xzf "$t" -C "$G"; then echo "unpacked $t"; else result "unpack $t" 1; fi
done
for f in "$G"/*.skipped; do
  [ -e "$f" ] && echo "not prepared: $(basename "$f" .skipped): $(cat "$f")"
done
if [ ! -d "$G/pkgs" ]; then
  echo "error: $G/pkgs is missing: run scripts/gpu_prepare.sh on the build machine and carry $G"
  exit 2
fi
if [ -n "${GPU_CHECK_LOCAL:-}" ]; then
  # the stand-in run: this machine's build/ (the compiler build has every
  # runtime program), DEVICE for cuda
  B=build
  step "stand-in run: $B/, device $DEV (no runtime-only build)"
  cmake --build $B -j2 --target dmlc test_cuda dml_graphs_check dml_everyop_check test_tensor_cuda >/dev/null || exit 1
else
  B=build-gpu
  step "runtime-only build (build-gpu)"
  # the eager kernel library gpu_prepare.sh carried (PTX made there)
  EAGER=()
  [ -f "$G/eager/dml_eager_ptx.c" ] && EAGER=(-DDMLC_EAGER_PTX_C="$PWD/$G/eager/dml_eager_ptx.c")
  cmake -S . -B build-gpu -DDMLC_RUNTIME_ONLY=ON -DDMLC_WERROR=OFF -DCMAKE_BUILD_TYPE=Release ${EAGER[@]+"${EAGER[@]}"} >build-gpu.log 2>&1 &&
    cmake --build build-gpu -j"$(nproc)" >>build-gpu.log 2>&1 || { tail -40 build-gpu.log; exit 1; }
  # that machine's compiler is not CI's: its warnings are listed, not errors
  grep -E "warning: " build-gpu.log | sort -u | head -20
  echo "built ($(grep -cE 'warning: ' build-gpu.log) warning lines with that machine's $(${CC:-cc} --version | head -1)); dmlc NEEDs: $(readelf -d build-gpu/compiler/dmlc 2>/dev/null | sed -n 's/.*NEEDED.*\[\(.*\)\]/\1/p' | tr '\n' ' ')"
fi
D=$B/compiler/dmlc
step "dmlc devices"
$D devices; result "dmlc devices" $?
step "tests/cuda/test_cuda"
$B/tests/cuda/test_cuda "$G/pkgs" "$G/models"; rc=$?
echo "test_cuda exit status: $rc"
result "tests/cuda/test_cuda" $rc "exit status $rc"
step "eager ops on $DEV tensors against the CPU (tests/tensor/test_tensor_cuda)"
if [ "$DEV" = cuda ]; then
  $B/tests/cuda/test_tensor_cuda >"$OUT/test_tensor_cuda.log" 2>&1; rc=$?
  tail -15 "$OUT/test_tensor_cuda.log"
  if [ $rc -eq 77 ]; then
    SUMMARY+=("skip  eager ops (test_tensor_cuda): $(grep -m1 '^SKIP' "$OUT/test_tensor_cuda.log")")
  else
    result "eager ops on cuda (test_tensor_cuda)" $rc "exit status $rc, $(grep -m1 'ops of the eager library' "$OUT/test_tensor_cuda.log")"
  fi
else
  SUMMARY+=("skip  eager ops (test_tensor_cuda): device $DEV")
fi
step "dmlc run --device $DEV (fashion_mlp input_2, batch 64) and the CPU"
rc=0
$D run "$G/pkgs/ref_fashion_mlp.dmlpkg" --input "input=$G/models/fashion_mlp_io/input_2.npy" \
  --device "$DEV" --output-dir /tmp/gpu_check_cuda || rc=1
$D run "$G/pkgs/ref_fashion_mlp.dmlpkg" --input "input=$G/models/fashion_mlp_io/input_2.npy" \
  --output-dir /tmp/gpu_check_cpu || rc=1
"$PY" -c "
import numpy as np, glob, sys
for f in sorted(glob.glob('/tmp/gpu_check_cuda/*.npy')):
    a = np.load(f); b = np.load(f.replace('cuda', 'cpu')); s = np.load('$G/models/fashion_mlp_io/output_2.npy')
    e = max(np.max(np.abs(a - b) / np.maximum(1, np.abs(b))), np.max(np.abs(a - s) / np.maximum(1, np.abs(s))))
    print(f, 'max scaled error vs cpu and saved:', e); sys.exit(0 if e <= 1e-4 else 1)
" || rc=1
result "dmlc run fashion_mlp on $DEV vs the CPU and saved" $rc
step "edge cases of issues 15 and 23 on $DEV vs the CPU (tests/cuda/edge_cases.py)"
"$PY" tests/cuda/edge_cases.py check "$G/edges" --dmlc $D --device "$DEV"
result "edge cases (tests/cuda/edge_cases.py)" $?
step "dmlc check --device $DEV (each kernel of the reference packages against the CPU)"
rc=0
for p in "$G"/pkgs/ref_*.dmlpkg; do
  $D check "$p" --device "$DEV" --iterations 2 || rc=1
done
result "dmlc check (reference packages)" $rc
step "the zoo on $DEV: ONNX Runtime's outputs and dmlc's CPU on the same package (scripts/zoo/run.py)"
# bounded: run.py writes its JSON after each model, so a stop keeps those done
if [ -d "$G/zoo/models" ]; then
  cp "$G/zoo/pack.json" "$OUT/zoo_pack.json" 2>/dev/null
  timeout "${ZOO_SECONDS:-200}" "$PY" scripts/zoo/run.py --targets "$DEV" --models "$G/zoo/models" \
    --packages "$G/zoo/pkgs" --dmlc $D --timeout 120 --json "$OUT/zoo_cuda.json" \
    --doc "$OUT/zoo_cuda.md"
  rc=$?
  [ $rc -eq 124 ] && echo "stopped after ${ZOO_SECONDS:-200} s: the models done are in $OUT/zoo_cuda.json"
  "$PY" - "$OUT/zoo_cuda.json" "$G/zoo/pack.json" "$DEV" >"$OUT/zoo_summary.txt" <<'PY'
import json, sys
res, pack, dev = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), sys.argv[3]
bad = n = 0
print(f"| export | {dev} | vs ONNX Runtime | vs dmlc's CPU | CPU vs ONNX Runtime | error |")
print("| --- | --- | ---: | ---: | ---: | --- |")
for k, e in sorted(res["entries"].items()):
    r = e.get("targets", {}).get(dev)
    if not r:
        continue
    n += 1
    f = lambda x: "" if r.get(x) is None else f"{r[x]:.2g}"  # noqa: E731
    print(f"| {k} | {r['result']} | {f('max_scaled_error')} | {f('vs_cpu')} | {f('cpu_vs_ort')} | {r.get('error', '')[:160]} |")
    # a compile error happened on the build machine (gpu_prepare.sh says so): listed, not failed here
    bad += r["result"] not in ("pass", "compile error")
for x in pack.get("left_out", []):
    print(f"left out: {x['export']}: {x['why']}")
print(f"{n} exports run on {dev}, {bad} failed")
sys.exit(1 if bad or n == 0 else 0)
PY
  rc2=$?
  cat "$OUT/zoo_summary.txt"
  result "zoo on $DEV ($OUT/zoo_cuda.json)" $((rc || rc2)) "$(tail -1 "$OUT/zoo_summary.txt")"
elif [ -f "$G/zoo.skipped" ]; then
  echo "not prepared: $(cat "$G/zoo.skipped")"
  SUMMARY+=("skip  zoo: not prepared: $(head -1 "$G/zoo.skipped")")
else
  result "zoo" 1 "$G/zoo.tar.gz was not carried (scripts/gpu_prepare.sh makes it)"
fi
step "random graphs on $DEV vs the CPU (dml_graphs_check on dml_graphgen --pack's graphs)"
if [ -f "$G/graphgen/graphs.txt" ]; then
  $B/tests/cuda/dml_graphs_check "$G/graphgen" --device "$DEV" --seconds "${GRAPHGEN_SECONDS:-120}" \
    --json "$OUT/graphgen_cuda.json"
  rc=$?
  result "random graphs on $DEV ($OUT/graphgen_cuda.json)" $rc \
    "$("$PY" -c "import json; d = json.load(open('$OUT/graphgen_cuda.json')); print(f\"{d['checked']} checked, {d['disagree']} disagree, {d['failed_on_build_machine']} failed on the build machine, {d['not_run']} not run; seeds failing: {[f['seed'] for f in d['failures']]}\")" 2>/dev/null || echo "exit status $rc, no JSON")"
elif [ -f "$G/graphgen.skipped" ]; then
  echo "not prepared: $(cat "$G/graphgen.skipped")"
  SUMMARY+=("skip  random graphs: not prepared: $(head -1 "$G/graphgen.skipped")")
else
  result "random graphs" 1 "$G/graphgen.tar.gz was not carried (scripts/gpu_prepare.sh makes it)"
fi
step "the CPU fall-back per segment on $DEV: host nodes between the device's kernels (tests/fallback)"
if [ -f "$G/fallback/runs.txt" ]; then
  rc=0 n=0
  while read -r pkg outs ins; do
    args=() tol=0
    for i in $ins; do
      case $i in
      tol=*) tol=${i#tol=} ;;
      *) args+=(--input "${i%%=*}=$G/fallback/${i#*=}") ;;
      esac
    done
    for dv in cpu "$DEV"; do
      rm -rf "/tmp/gpu_fb_$dv" && $D run "$G/fallback/$pkg.dmlpkg" "${args[@]}" --device "$dv" \
        --output-dir "/tmp/gpu_fb_$dv" >/tmp/gpu_fb.log 2>&1 || { rc=1; cat /tmp/gpu_fb.log; }
    done
    grep -q "^note:" /tmp/gpu_fb.log && { rc=1; echo "$pkg: a whole-function note: $(cat /tmp/gpu_fb.log)"; }
    # the If/Loop regions that ran on the device (`dmlc run`'s region: lines)
    grep "^region:" /tmp/gpu_fb.log | cut -c1-150 | sed "s/^/  $pkg: /" || true
    for o in ${outs//,/ }; do
      n=$((n + 1))
      # bit for bit, except a NaN's sign and payload (x86 keeps an
      # operand's, the GPU writes its canonical NaN): NaN where the CPU has NaN;
      # a run with tol=T (a body whose Mul + Add the CUDA compiler contracts
      # into one fma, rounded once where the CPU rounds twice) within T
      # relative to the output's largest magnitude, its difference printed
      "$PY" - "/tmp/gpu_fb_cpu/$o.npy" "/tmp/gpu_fb_$DEV/$o.npy" "$tol" "$pkg:$o" <<'PY' || { rc=1; echo "$pkg $ins: output $o differs from the CPU's"; }
import sys, numpy as np
a, b = np.load(sys.argv[1]), np.load(sys.argv[2])
tol = float(sys.argv[3])
ok = a.shape == b.shape and a.dtype == b.dtype
if ok and a.dtype.kind == "f" and tol > 0:
    na, nb = np.isnan(a), np.isnan(b)
    d = float(np.max(np.abs(a[~na].astype(np.float64) - b[~nb]), initial=0.0))
    scale = float(np.max(np.abs(a[~na]), initial=0.0)) or 1.0
    ok = np.array_equal(na, nb) and d <= tol * scale
    print(f"  {sys.argv[4]}: max |cpu - device| {d:.3g} (scaled {d / scale:.3g}, tolerance {tol:g}); bit for bit: {a.tobytes() == b.tobytes()}")
elif ok and a.dtype.kind == "f":
    na, nb = np.isnan(a), np.isnan(b)
    ok = np.array_equal(na, nb) and a[~na].tobytes() == b[~nb].tobytes()
elif ok:
    ok = a.tobytes() == b.tobytes()
sys.exit(0 if ok else 1)
PY
    done
  done <"$G/fallback/runs.txt"
  result "CPU fall-back per segment on $DEV (tests/fallback, $n outputs bit for bit but those of a tol= run)" $rc
elif [ -f "$G/fallback.skipped" ]; then
  SUMMARY+=("skip  CPU fall-back: $(cat "$G/fallback.skipped")")
fi
step "every op on $DEV vs the CPU (dml_everyop_check on dml_every_op --pack's cases)"
if [ -f "$G/everyop/cases.tsv" ]; then
  J=$OUT/everyop_${DEV%%:*}.json
  $B/tests/cuda/dml_everyop_check "$G/everyop" --device "$DEV" \
    --seconds "${EVERYOP_SECONDS:-300}" --json "$J"
  rc=$?
  if [ $rc -eq 77 ]; then
    SUMMARY+=("skip  every op: dml_everyop_check skipped on $DEV (no such device, or the CPU)")
  else
    result "every op on $DEV ($J)" $rc \
      "$("$PY" -c "import json; d = json.load(open('$J')); print(f\"{d['compiled']} cases compiled, {d['checked']} checked: {d['passed']} passed, {d['known_failures']} known failures, {d['failed']} failed, {d['refused_by_target']} refused, {d['not_run']} not run; cpu f32 vs f64 {d['cpu_f64_failed']} failed; failing: {[f['op'] + ' ' + f['dtype'] + ' ' + f['shape'] for f in d['failures']][:8]}\")" 2>/dev/null || echo "exit status $rc, no JSON")"
  fi
elif [ -f "$G/everyop.skipped" ]; then
  echo "not prepared: $(cat "$G/everyop.skipped")"
  SUMMARY+=("skip  every op: not prepared: $(head -1 "$G/everyop.skipped")")
else
  result "every op" 1 "$G/everyop.tar.gz was not carried (scripts/gpu_prepare.sh makes it)"
fi
if [ -n "${GPU_CHECK_LOCAL:-}" ]; then
  SUMMARY+=("skip  benchmarks and training: not in the stand-in run")
else
  step "dmlc bench --device cuda (fashion_mlp, batch 1 and 64)"
  rc=0
  $D bench "$G/pkgs/ref_fashion_mlp.dmlpkg" --device cuda --iterations 1000 --warmup 100 || rc=1
  $D bench "$G/pkgs/ref_fashion_mlp.dmlpkg" --device cuda --batch 64 --iterations 1000 --warmup 100 || rc=1
  result "dmlc bench" $rc
  step "eager tensors on cuda: per-op cost (bench/eager_bench --device cuda)"
  # with --iopkg: a session with inputs and outputs on the device
  # (docs/tensor.md "Sessions") against host arrays, and their outputs' bits
  IOPKG=()
  [ -f "$G/eager/add1024.dmlpkg" ] && IOPKG=(--iopkg "$G/eager/add1024.dmlpkg")
  # the eager MatMul against the compiled one-MatMul package on the device
  [ -f "$G/eager/matmul1024.dmlpkg" ] && IOPKG+=(--vkpkg "$G/eager/matmul1024.dmlpkg")
  build-gpu/bench/cuda/eager_bench --device cuda --runs 7 ${IOPKG[@]+"${IOPKG[@]}"} | tee "$OUT/eager_bench_cuda.txt"
  rc=${PIPESTATUS[0]}
  result "eager_bench --device cuda" $rc "$(grep -m1 'eager Add f32' "$OUT/eager_bench_cuda.txt")"
  # the fused normalization kernels (docs/tensor.md, bench/RESULTS.md Stop 23)
  build-gpu/bench/cuda/eager_bench --norm --device cuda --runs 7 | tee "$OUT/eager_norm_cuda.txt"
  rc=${PIPESTATUS[0]}
  result "eager_bench --norm --device cuda" $rc "$(grep -m1 'LayerNormalization' "$OUT/eager_norm_cuda.txt")"
  if [ ${#IOPKG[@]} -gt 0 ]; then
    rc=0
    grep -q "has the same bits as" "$OUT/eager_bench_cuda.txt" || rc=1
    result "session inputs/outputs on the device (eager_bench --iopkg)" $rc \
      "$(grep '^io ' "$OUT/eager_bench_cuda.txt" | tr '\n' ' ')"
  fi
  step "bench/cuda: dmlc vs PyTorch"
  if [ "${SKIP_BENCH_CUDA:-0}" = 1 ]; then
    echo "skipped: SKIP_BENCH_CUDA=1"
    SUMMARY+=("skip  bench/cuda: SKIP_BENCH_CUDA=1")
  else
    bash bench/cuda/run_cuda_bench.sh build-gpu/bench/cuda/cuda_bench "$G/pkgs" "$G/models" "$OUT"
    result "bench/cuda" $?
  fi
  step "training: dmlc cuda/vulkan/cpu vs PyTorch (bench/gpu/train_h200.sh)"
  if [ -d .gpu-train ]; then
    OUT=$OUT/train BUILD=$PWD/build-gpu-train bash bench/gpu/train_h200.sh
    result "training (bench/gpu/train_h200.sh)" $?
  else
    echo "skipped: .gpu-train was not carried (bench/gpu/train_prepare.sh prepares it)"
    SUMMARY+=("skip  training: .gpu-train was not carried")
  fi
fi
step "summary"
printf '%s\n' "${SUMMARY[@]}"
step "done: status $status"
exit $status
