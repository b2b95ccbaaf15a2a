#!/usr/bin/env bash
# Lines of C per top-level folder (code growth made visible; printed by
# scripts/test.sh). Tests and generated code are counted separately.
set -euo pipefail
cd "$(dirname "$0")/.."
printf '%-18s %8s\n' folder lines
for d in runtime/base runtime/cpu runtime ir frontends/onnx passes compiler examples bench tests; do
  if [ "$d" = runtime ]; then
    n=$(git ls-files 'runtime/*.c' 'runtime/*.h' | grep -v '^runtime/.*/' | xargs -r cat | wc -l)
  else
    n=$(git ls-files "$d/*.c" "$d/*.h" | grep -v '^tests/fuzz/corpus/' | xargs -r cat | wc -l)
  fi
  printf '%-18s %8s\n' "$d" "$n"
done
