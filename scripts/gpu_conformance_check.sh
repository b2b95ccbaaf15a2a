#!/usr/bin/env bash
# The ONNX conformance run on CUDA, on a GPU machine (x86-64, NVIDIA driver,
# cmake and gcc; no Debian packages): a runtime-only build (libc/libm only;
# libcuda.so.1 is opened at run time), then dml_conformance_run on the
# packages scripts/gpu_conformance_prepare.sh put in .gpu-conf/, with
# --device cuda, against tests/conformance/expected_failures_cuda.txt (the
# list is for an NVIDIA H200: --expect-device H200; DMLC_CONF_EXPECT_DEVICE
# names another). Writes $OUT/conformance_cuda.json and
# $OUT/conformance_cuda.log. With UPDATE=1 it rewrites the list instead:
# $OUT/expected_failures_cuda.txt, to copy into tests/conformance/.
#   bash scripts/gpu_conformance_check.sh [PREPARED_DIR]     (default .gpu-conf)
# Exit status: 0 when every result is as the list expects (1: not; 2: the
# build or the inputs failed; 77: no CUDA device, or not the expected one).
set -uo pipefail
cd "$(dirname "$0")/.."
G=${1:-.gpu-conf}
OUT=${OUT:-/tmp/gpu_conformance_out}
mkdir -p "$OUT"
exec > >(tee "$OUT/conformance_cuda.log") 2>&1
echo "=== machine"
uname -m; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>&1 | head -3
if [ ! -f "$G/manifest.txt" ]; then
  echo "error: $G/manifest.txt is missing: run scripts/gpu_conformance_prepare.sh on the build machine and carry $G"
  exit 2
fi
echo; echo "=== runtime-only build (build-gpu)"
cmake -S . -B build-gpu -DDMLC_RUNTIME_ONLY=ON -DCMAKE_BUILD_TYPE=Release >build-gpu.log 2>&1 &&
  cmake --build build-gpu -j"$(nproc)" --target dml_conformance_run >>build-gpu.log 2>&1 ||
  { tail -40 build-gpu.log; exit 2; }
R=build-gpu/tests/conformance/dml_conformance_run
echo "built; dml_conformance_run NEEDs: $(readelf -d $R 2>/dev/null | sed -n 's/.*NEEDED.*\[\(.*\)\]/\1/p' | tr '\n' ' ')"
LIST=tests/conformance/expected_failures_cuda.txt
ARGS=(--device cuda --expect-device "${DMLC_CONF_EXPECT_DEVICE:-H200}" -j 4 --timeout 60)
echo; echo "=== dml_conformance_run $G ${ARGS[*]}"
if [ "${UPDATE:-0}" = 1 ]; then
  cp "$LIST" "$OUT/expected_failures_cuda.txt"
  "$R" "$G" "${ARGS[@]}" --update-expected --expected "$OUT/expected_failures_cuda.txt" \
    --json "$OUT/conformance_cuda.json"
  rc=$?
  echo "new list: $OUT/expected_failures_cuda.txt (copy it to $LIST); diff:"
  diff "$LIST" "$OUT/expected_failures_cuda.txt"
else
  "$R" "$G" "${ARGS[@]}" --expected "$LIST" --json "$OUT/conformance_cuda.json"
  rc=$?
fi
echo "=== done: status $rc"
exit $rc
