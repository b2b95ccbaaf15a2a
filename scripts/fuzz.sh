#!/usr/bin/env bash
# Fuzzes every loader of untrusted bytes with libFuzzer under ASan/UBSan.
#   bash scripts/fuzz.sh [seconds per target (default 600)] [target ...]
# Builds build-fuzz/ with clang. New crashes land in tests/fuzz/corpus/<target>/
# as crash-* files: fix the bug, keep the file (it becomes a CTest replay).
set -euo pipefail
cd "$(dirname "$0")/.."
SECS=${1:-600}
shift || true
# scripts/test.sh has run the set-up already: FUZZ_SETUP=0 skips it.
[ "${FUZZ_SETUP:-1}" = 0 ] || bash scripts/setup.sh
if ! dpkg-query -W -f='${Status}' libclang-rt-14-dev 2>/dev/null | grep -q "install ok installed"; then
  apt-get install -y -qq libclang-rt-14-dev >/dev/null
fi
CC=clang cmake -S . -B build-fuzz -DDMLC_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(fuzz_onnx fuzz_ir_parse fuzz_pkg fuzz_npy fuzz_safetensors fuzz_serve_json)
cmake --build build-fuzz -j"$(nproc)" --target "${targets[@]}" >/dev/null
for t in "${targets[@]}"; do
  corpus=tests/fuzz/corpus/$t
  mkdir -p "$corpus" "build-fuzz/work/$t"
  echo "== $t: ${SECS}s"
  ./build-fuzz/tests/fuzz/$t "build-fuzz/work/$t" "$corpus" -max_total_time="$SECS" \
      -artifact_prefix="$corpus/" -max_len=65536 -print_final_stats=1 2>&1 | tail -n 12
done
