#!/usr/bin/env bash
# The ONNX conformance run on CUDA, on a GPU machine (x86-64, NVIDIA driver,
# cmake and gcc; no Debian packages): a runtime-only build (libc/libm only;
# libcuda.so.1 is opened at run time), then dml_conformance_run on the
# packages scripts/gpu_conformance_prepare.sh put in .gpu-conf/, with
# --device cuda, against the expected-failure list named in
# .gpu-conf/expected_list (the prepared suite's: ONNX 1.12's
# tests/conformance/expected_failures_cuda.txt, made on an NVIDIA H200, or
# ONNX 1.23's expected_failures_onnx123_cuda.txt, made on an H100;
# --expect-device is the list's first line "# device: NAME" when it has one,
# else H200; DMLC_CONF_EXPECT_DEVICE names another). Writes
# $OUT/conformance_cuda.json and $OUT/conformance_cuda.log. With UPDATE=1 it
# rewrites the list instead: $OUT/<list's name>, to copy into
# tests/conformance/ (a list that does not exist yet starts empty).
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
if [ -f "$G/emit.tar.xz" ] && [ ! -f "$G/manifest.txt" ]; then
  python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' "$G/emit.tar.xz" "$G" ||
    { echo "error: could not unpack $G/emit.tar.xz"; exit 2; }
fi
if [ ! -f "$G/manifest.txt" ]; then
  echo "error: $G/manifest.txt is missing: run scripts/gpu_conformance_prepare.sh on the build machine and carry $G"
  exit 2
fi
echo; echo "=== runtime-only build (build-gpu)"
cmake -S . -B build-gpu -DDMLC_RUNTIME_ONLY=ON -DDMLC_WERROR=OFF -DCMAKE_BUILD_TYPE=Release >build-gpu.log 2>&1 &&
  cmake --build build-gpu -j"$(nproc)" --target dml_conformance_run >>build-gpu.log 2>&1 ||
  { tail -40 build-gpu.log; exit 2; }
R=build-gpu/tests/conformance/dml_conformance_run
echo "built; dml_conformance_run NEEDs: $(readelf -d $R 2>/dev/null | sed -n 's/.*NEEDED.*\[\(.*\)\]/\1/p' | tr '\n' ' ')"
LIST=$(cat "$G/expected_list" 2>/dev/null || echo tests/conformance/expected_failures_cuda.txt)
NAME=$(basename "$LIST")
DEVNAME=$(sed -n '1s/^# device: //p' "$LIST" 2>/dev/null)
ARGS=(--device cuda --expect-device "${DMLC_CONF_EXPECT_DEVICE:-${DEVNAME:-H200}}" -j 4 --timeout 60)
echo; echo "=== dml_conformance_run $G ${ARGS[*]} (list $LIST)"
if [ "${UPDATE:-0}" = 1 ]; then
  if [ -f "$LIST" ]; then cp "$LIST" "$OUT/$NAME"; else
    dev=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 | grep -o 'H[0-9]*' | head -1)
    printf '%s\n' "# device: ${dev:-?}" \
      "# Expected failures of the ONNX backend tests of $LIST's suite on CUDA (--device cuda, TF32 off)," \
      "# made by UPDATE=1 bash scripts/gpu_conformance_check.sh (docs/conformance.md, \"Split runs\"):" \
      "# one line per test, \"<suite>/<test> <reason>\"." >"$OUT/$NAME"
  fi
  "$R" "$G" "${ARGS[@]}" --update-expected --expected "$OUT/$NAME" \
    --json "$OUT/conformance_cuda.json"
  rc=$?
  echo "new list: $OUT/$NAME (copy it to $LIST); diff:"
  diff "$LIST" "$OUT/$NAME"
else
  "$R" "$G" "${ARGS[@]}" --expected "$LIST" --json "$OUT/conformance_cuda.json"
  rc=$?
fi
echo "=== done: status $rc"
exit $rc
