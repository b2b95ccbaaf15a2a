#!/usr/bin/env bash
# Prepares, on this (build) machine, the ONNX conformance run that
# scripts/gpu_conformance_check.sh does on a GPU machine without Debian's
# packages (no libonnx-testdata, clang-16 or protobuf-c there): every ONNX
# backend test that compiles for --target cpu,cuda is written as a package
# with its data sets (.npy) by `dml_conformance --emit`, and the tests that
# do not compile are recorded with their reasons (docs/conformance.md,
# "Split runs"). Output: .gpu-conf/ at the repository root (ignored by git
# through .git/info/exclude; carried to the GPU machine): emit.tar.xz, the
# emitted folder (ONNX 1.12: about 18 MiB, ONNX 1.23: 62 MiB, 5 to 6 MiB
# packed), which gpu_conformance_check.sh unpacks there, and expected_list.
#   bash scripts/gpu_conformance_prepare.sh [dml_conformance flags, e.g. --suites node]
# (after building build/ as the README says). TF32 stays off: packages are
# compiled without --allow-tf32. CONF_SUITE picks the suite and, written to
# .gpu-conf/expected_list, the CUDA expected-failure list the check uses:
#   CONF_SUITE=onnx112 (default)  Debian's libonnx-testdata (ONNX 1.12),
#                                 tests/conformance/expected_failures_cuda.txt
#   CONF_SUITE=onnx123            the node tests of the pinned onnx 1.23.2
#                                 wheel (scripts/onnx_node_suite.sh makes
#                                 .cache/onnx-1.23.2),
#                                 tests/conformance/expected_failures_onnx123_cuda.txt
set -euo pipefail
cd "$(dirname "$0")/.."
for d in .gpu-conf .gpu-conf.emit; do
  grep -qx "/$d/" .git/info/exclude 2>/dev/null || echo "/$d/" >>.git/info/exclude
done
cmake --build build -j2 --target dml_conformance >/dev/null
case "${CONF_SUITE:-onnx112}" in
onnx112) DATA=() LIST=tests/conformance/expected_failures_cuda.txt ;;
onnx123)
  bash scripts/onnx_node_suite.sh >/dev/null
  DATA=(--data .cache/onnx-1.23.2) LIST=tests/conformance/expected_failures_onnx123_cuda.txt
  ;;
*) echo "CONF_SUITE must be onnx112 or onnx123" >&2; exit 2 ;;
esac
rm -rf .gpu-conf .gpu-conf.emit
# --timeout 150: the largest expanded tests (LinearAttention's) take over 20 s
# to compile on a loaded 2-core build machine; what times out is not emitted
build/tests/conformance/dml_conformance ${DATA[@]+"${DATA[@]}"} --emit .gpu-conf.emit --target cpu,cuda -j 2 --timeout 150 "$@"
du -sh --apparent-size .gpu-conf.emit
mkdir -p .gpu-conf
XZ_OPT=-6T2 tar cJf .gpu-conf/emit.tar.xz -C .gpu-conf.emit . && rm -rf .gpu-conf.emit
echo "$LIST" >.gpu-conf/expected_list
du -sh --apparent-size .gpu-conf
echo "prepared .gpu-conf/: run scripts/gpu_conformance_check.sh on the GPU machine with .gpu-conf carried"
