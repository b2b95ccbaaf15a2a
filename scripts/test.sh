#!/usr/bin/env bash
# The README's test command: set-up, build, and every test through ctest.
#   bash scripts/test.sh   (build dirs: build/, build-runtime/, build-release/,
#                           build-runtime-cpu/, build-asan/, build-tsan/)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# ONNX 1.23.2's node tests (onnx_conformance_123*): generated once into
# .cache/onnx-1.23.2 from the pinned onnx wheel (PyPI).
bash scripts/onnx_node_suite.sh >/dev/null
# The runtime alone, with nothing above it (ARCHITECTURE.md's layering):
# this build has no include path or library of ir/, passes/, frontends/.
cmake -S . -B build-runtime -DDMLC_RUNTIME_ONLY=ON >/dev/null
cmake --build build-runtime -j"$(nproc)" >/dev/null
echo "runtime-only build: ok ($(du -k build-runtime/runtime/libdml_runtime.a | cut -f1) KiB libdml_runtime.a)"
# Its `dmlc` (the runtime's commands, for machines without the packages)
# needs libc and libm alone: GPU libraries are opened at run time.
needed=$(readelf -d build-runtime/compiler/dmlc | sed -n 's/.*NEEDED.*\[\(.*\)\]/\1/p' | sort | tr '\n' ' ')
if [ "$needed" != "libc.so.6 libm.so.6 " ]; then
  echo "runtime-only dmlc needs more than libc and libm: $needed" >&2
  exit 1
fi
echo "runtime-only dmlc: needs $needed"
# Its install tree holds the runtime part only (docs/embedding.md).
rt_prefix=$(mktemp -d)
cmake --install build-runtime --prefix "$rt_prefix" >/dev/null
rt_files=$(cd "$rt_prefix" && find . -type f -o -type l | sort | tr '\n' ' ')
if [[ "$rt_files" != *dmlc-runtime.pc* || "$rt_files" != *libdmlc_runtime.so.0* ||
      "$rt_files" == *dmlc.pc* || "$rt_files" == *compiler* || "$rt_files" == *dml_driver.h* ]]; then
  echo "runtime-only install: not the runtime part alone: $rt_files" >&2
  exit 1
fi
rm -rf "$rt_prefix"
echo "runtime-only install: ok"
# Release (-O3) compiles the whole tree once more, tests not run: GCC's
# -O3 inlining finds warnings (-Wmaybe-uninitialized) that -O2 does not,
# and warnings are errors.
cmake -S . -B build-release -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build-release -j"$(nproc)" >/dev/null
echo "release build: ok"
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build build -j"$(nproc)"
bash scripts/line_count.sh
ctest --test-dir build --output-on-failure -j"$(nproc)"
# The runtime without its GPU backends (-DDMLC_WITH_VULKAN=OFF
# -DDMLC_WITH_CUDA=OFF, docs/embedding.md "Backends"), runtime and its dmlc
# only, so the switches do not rot: a package runs there bit-equal to the
# full build and the GPU devices are refused saying why.
cmake -S . -B build-runtime-cpu -DDMLC_RUNTIME_ONLY=ON -DDMLC_WITH_VULKAN=OFF \
  -DDMLC_WITH_CUDA=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build-runtime-cpu -j"$(nproc)" --target dmlc dmlc_runtime >/dev/null
bash tests/install/test_backends.sh build build-runtime-cpu
# arm64: the runtime-only build cross-compiled (docs/embedding.md); the
# reference models compiled here run on it under qemu-aarch64.
cmake -S . -B build-arm64 -DDMLC_RUNTIME_ONLY=ON \
  -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/aarch64-linux-gnu.cmake >/dev/null
cmake --build build-arm64 -j"$(nproc)" --target dmlc dmlc_runtime dmlc_runtime_static >/dev/null
bash tests/arm64/test_arm64.sh build build-arm64
# The same tests again under AddressSanitizer and UBSan (leaks included).
cmake -S . -B build-asan -DDMLC_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug >/dev/null
cmake --build build-asan -j"$(nproc)" >/dev/null
ASAN_OPTIONS=detect_leaks=1 ctest --test-dir build-asan --output-on-failure -j"$(nproc)"
# The serving tests (label "serve") again under ThreadSanitizer.
cmake -S . -B build-tsan -DDMLC_SANITIZE=thread -DCMAKE_BUILD_TYPE=Debug >/dev/null
cmake --build build-tsan -j"$(nproc)" --target test_serve dmlc >/dev/null
TSAN_OPTIONS=halt_on_error=1 ctest --test-dir build-tsan -L serve --output-on-failure -j"$(nproc)"
# Every fuzz target for 10 s under libFuzzer + ASan + UBSan (build-fuzz/,
# clang): ~70 s of fuzzing, plus ~4 min to build build-fuzz/ the first time
# on 2 cores. A crash fails this script and leaves its input in
# tests/fuzz/corpus/<target>/, which the normal build's ctest then replays.
FUZZ_SETUP=0 bash scripts/fuzz.sh 10
