#!/usr/bin/env bash
# Prepares, on this (build) machine, the ONNX conformance run that
# scripts/gpu_conformance_check.sh does on a GPU machine without Debian's
# packages (no libonnx-testdata, clang-16 or protobuf-c there): every ONNX
# backend test that compiles for --target cpu,cuda is written as a package
# with its data sets (.npy) by `dml_conformance --emit`, and the tests that
# do not compile are recorded with their reasons (docs/conformance.md,
# "Split runs"). Output: .gpu-conf/ at the repository root (ignored by git
# through .git/info/exclude; carried to the GPU machine; about 18 MiB).
#   bash scripts/gpu_conformance_prepare.sh [dml_conformance flags, e.g. --suites node]
# (after building build/ as the README says). TF32 stays off: packages are
# compiled without --allow-tf32.
set -euo pipefail
cd "$(dirname "$0")/.."
grep -qx '/.gpu-conf/' .git/info/exclude 2>/dev/null || echo '/.gpu-conf/' >> .git/info/exclude
cmake --build build -j2 --target dml_conformance >/dev/null
rm -rf .gpu-conf
build/tests/conformance/dml_conformance --emit .gpu-conf --target cpu,cuda -j 2 "$@"
du -sh --apparent-size .gpu-conf
echo "prepared .gpu-conf/: run scripts/gpu_conformance_check.sh on the GPU machine with .gpu-conf carried"
