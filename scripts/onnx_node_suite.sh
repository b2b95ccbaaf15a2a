#!/usr/bin/env bash
# Generates ONNX's backend node tests of onnx $ONNX_VERSION into
# .cache/onnx-$ONNX_VERSION/node (ignored by git), the second node suite of
# the conformance runner (tests/conformance, docs/conformance.md). The onnx
# wheels do not ship the test data, only its generators; this installs the
# pinned wheels into a venv of its own (.cache/onnx-$ONNX_VERSION/venv, about
# 26 MB of downloads from PyPI: onnx, numpy, protobuf, ml_dtypes,
# typing_extensions) and runs scripts/gen_onnx_node_suite.py. Run by
# scripts/test.sh after scripts/setup.sh (python3-venv); a no-op when the
# suite is already there (delete the folder to regenerate).
#   bash scripts/onnx_node_suite.sh        # prints the suite's root
# PYTHON=/path/to/python with onnx==$ONNX_VERSION installed skips the venv.
set -euo pipefail
cd "$(dirname "$0")/.."
ONNX_VERSION=1.23.2
ROOT=.cache/onnx-$ONNX_VERSION
# The venv also holds onnxruntime (the peer the tests compare exported
# models with: tests/layers/check_export_ort.py); added to an older venv
# that lacks it.
ORT_PINS="onnxruntime==1.31.1 flatbuffers==25.12.19 packaging==26.4"
if [ -z "${PYTHON:-}" ] && [ -x "$ROOT/venv/bin/python" ] &&
  ! "$ROOT/venv/bin/python" -c 'import onnxruntime' 2>/dev/null; then
  "$ROOT/venv/bin/python" -m pip install -q --disable-pip-version-check --no-input \
    $ORT_PINS >&2
fi
if [ -f "$ROOT/node.stamp" ] && [ -d "$ROOT/node" ]; then
  echo "$ROOT"
  exit 0
fi
mkdir -p "$ROOT"
PY=${PYTHON:-}
if [ -z "$PY" ]; then
  if [ ! -x "$ROOT/venv/bin/python" ]; then
    python3 -m venv "$ROOT/venv"
  fi
  PY=$ROOT/venv/bin/python
  "$PY" -m pip install -q --disable-pip-version-check --no-input \
    onnx==$ONNX_VERSION numpy==2.3.5 protobuf==7.36.2 ml_dtypes==0.7.0 \
    typing_extensions==4.16.0 $ORT_PINS >&2
fi
have=$("$PY" -c 'import onnx; print(onnx.__version__)')
if [ "$have" != "$ONNX_VERSION" ]; then
  echo "onnx_node_suite.sh: $PY has onnx $have, not $ONNX_VERSION" >&2
  exit 1
fi
"$PY" scripts/gen_onnx_node_suite.py "$ROOT" >&2
touch "$ROOT/node.stamp"
echo "$ROOT"
