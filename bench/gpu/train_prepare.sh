#!/usr/bin/env bash
# Prepares, on this (build) machine, what bench/gpu/train_h200.sh needs on
# a GPU machine that has no Debian packages, no compiler front end and no
# zlib (issues 5 and 6: Fashion-MNIST training of fashion_mlp on cuda and
# vulkan next to PyTorch). Everything goes into .gpu-train/ (ignored by git
# through .git/info/exclude), which the device tool carries:
#   pkg/fashion_mlp_train_b64.dmlpkg, _b256   untrained training packages
#       (`dmlc compile --train`: cross-entropy, Adam; the configuration of
#       bench/train_bench.sh: batch bound 64 for batch 32, 256 for batch
#       256) with the kernels of $TARGETS (default cpu,cuda,vulkan)
#   data/                 Fashion-MNIST's four IDX files, gzipped as Debian
#                         ships them (30 MiB instead of 55: the device tool
#                         carries 64 MiB in all); train_h200.sh decompresses
#                         them there (the runtime-only reader has no zlib)
#   vkinc/                the Vulkan C headers (for the runtime's Vulkan
#                         backend: the GPU machine has no libvulkan-dev)
#   gl/                   the Vulkan loader's .deb and the GL dispatch
#                         libraries' (the device README's recipe)
#   bash bench/gpu/train_prepare.sh    (after building build/ as the README says)
#   then, on the GPU machine: bash bench/gpu/train_h200.sh   (carry .gpu-train)
# Environment: TARGETS, DATA (default /usr/share/datasets/fashion-mnist,
# Debian's dataset-fashion-mnist), DMLC_SHARED_DIR, DROPOUT (keep, the
# default; remove: the model without its Dropout node, written with Python's
# onnx into $G/fashion_mlp_nodropout.onnx, and PyTorch's peer without
# dropout too, to compare with the runs recorded before the GPU targets
# emitted training-mode Dropout; the run's table says which model ran).
set -euo pipefail
cd "$(dirname "$0")/../.."
D=build/compiler/dmlc
SHARED=${DMLC_SHARED_DIR:-$PWD/../shared}
DATA=${DATA:-/usr/share/datasets/fashion-mnist}
TARGETS=${TARGETS:-cpu,cuda,vulkan}
G=.gpu-train
[ -x "$D" ] || { echo "error: $D is missing: build build/ first (README)" >&2; exit 1; }
grep -qx "/$G/" .git/info/exclude 2>/dev/null || echo "/$G/" >>.git/info/exclude
rm -rf "$G"
mkdir -p "$G/pkg" "$G/data" "$G/vkinc/vulkan" "$G/gl"
MODEL=$SHARED/models/fashion_mlp_untrained.onnx
if [ "${DROPOUT:-keep}" = remove ]; then
  MODEL=$G/fashion_mlp_nodropout.onnx
  /usr/bin/python3 - "$SHARED/models/fashion_mlp_untrained.onnx" "$MODEL" <<'PY'
import sys
import onnx
m = onnx.load(sys.argv[1])
g = m.graph
drop = [n for n in g.node if n.op_type == 'Dropout']
alias = {n.output[0]: n.input[0] for n in drop}
for n in drop:
    g.node.remove(n)
for n in g.node:
    for i, x in enumerate(n.input):
        if x in alias:
            n.input[i] = alias[x]
used = {x for n in g.node for x in n.input}
for n in [n for n in g.node if n.op_type == 'Constant' and not set(n.output) & used]:
    g.node.remove(n)
onnx.checker.check_model(m)
onnx.save(m, sys.argv[2])
print('wrote %s: %d Dropout node(s) removed' % (sys.argv[2], len(drop)))
PY
elif [ "${DROPOUT:-keep}" != keep ]; then
  echo "error: DROPOUT is keep or remove, not '$DROPOUT'" >&2
  exit 2
fi
for b in 64 256; do
  if ! $D compile "$MODEL" --train --loss cross_entropy \
    --optimizer adam --target "$TARGETS" --batch-bound $b -o "$G/pkg/fashion_mlp_train_b$b.dmlpkg"; then
    echo "error: compiling the training package for --target $TARGETS failed (above);" \
      "TARGETS=cpu,cuda or TARGETS=cpu prepares what compiles" >&2
    exit 1
  fi
done
echo "$TARGETS" >"$G/pkg/TARGETS"
basename "$MODEL" .onnx >"$G/pkg/MODEL"
cp "$DATA"/{train,t10k}-{images-idx3,labels-idx1}-ubyte.gz "$G/data/"
cp /usr/include/vulkan/*.h "$G/vkinc/vulkan/"
[ -d /usr/include/vk_video ] && cp -r /usr/include/vk_video "$G/vkinc/"
# The Vulkan loader (libvulkan1) and GL dispatch libraries, as .deb files:
# from .gl/ (bench/gpu/prepare.sh) and apt's cache where there, else
# downloaded with apt-get as the device README says.
cp .gl/*.deb "$G/gl/" 2>/dev/null || true
cp /var/cache/apt/archives/libvulkan1_*_amd64.deb "$G/gl/" 2>/dev/null || true
want="libvulkan1 libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2"
missing=""
for p in $want; do ls "$G/gl/${p}_"*.deb >/dev/null 2>&1 || missing="$missing $p"; done
if [ -n "$missing" ]; then
  o='-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=/tmp/amd64'
  mkdir -p /tmp/amd64/partial
  apt-get $o update >/dev/null
  (cd "$G/gl" && apt-get $o download $missing)
fi
du -sh "$G"/*
# The device tool carries at most 64 MiB in all.
bytes=$(du -s --apparent-size -B1 "$G" | cut -f1)
mib=$(awk -v b="$bytes" 'BEGIN { printf "%.1f", b / 1048576 }')
echo "$G: $mib MiB (the device tool carries at most 64 MiB in all)"
if [ "$bytes" -gt $((64 * 1048576)) ]; then
  echo "error: $G is larger than 64 MiB" >&2
  exit 1
fi
echo "prepared $G/ ($(cat "$G/pkg/MODEL"), targets $TARGETS): run bench/gpu/train_h200.sh on the GPU machine with $G carried"
