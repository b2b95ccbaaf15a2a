#!/usr/bin/env bash
# The whole zoo in one command (docs/zoo.md): the pinned venv
# (scripts/zoo/setup.sh), the export into the versioned cache (once; cached
# entries are kept), then scripts/zoo/run.py with the arguments given
# (e.g. --targets cpu,vulkan), writing docs/zoo.json and docs/zoo.md.
# Needs build/compiler/dmlc (or pass --dmlc PATH).
set -euo pipefail
cd "$(dirname "$0")/../.."
dir="$(scripts/zoo/setup.sh | tail -n 1)"
"$dir/venv/bin/python" scripts/zoo/export.py --out "$dir/models"
"$dir/venv/bin/python" scripts/zoo/run.py --models "$dir/models" "$@"
