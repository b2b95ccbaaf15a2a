#!/usr/bin/env bash
# Fails if any of the project's C sources differs from .clang-format's style.
#   bash scripts/check_format.sh      (fix with: clang-format -i FILE)
set -euo pipefail
cd "$(dirname "$0")/.."
command -v clang-format >/dev/null || { echo "clang-format not installed: skipped"; exit 0; }
bad=0
while IFS= read -r f; do
  if ! clang-format --dry-run --Werror "$f" >/dev/null 2>&1; then
    echo "not formatted: $f"
    bad=$((bad + 1))
  fi
done < <(git ls-files '*.c' '*.h' | grep -v '^tests/fuzz/corpus/')
echo "$bad files not formatted"
[ "$bad" -eq 0 ]
