#!/usr/bin/env bash
# Prepares, on this machine (Debian, dmlc built in build/), what the GPU
# machine needs for bench/gpu/run_h200.sh: packages compiled for every GPU
# target the build has, the reference models' saved inputs/outputs, the
# Vulkan headers (the GPU machine has no libvulkan-dev) and the Vulkan
# loader's .deb (the device README's recipe). Everything goes into .gpu/
# and .gl/, which git ignores; the device tool carries them:
#   bash bench/gpu/prepare.sh && run(command="bash bench/gpu/run_h200.sh",
#                                     carry=[".gl", ".gpu"])
set -euo pipefail
cd "$(dirname "$0")/../.."
D=build/compiler/dmlc
grep -qx '/.gpu/' .git/info/exclude 2>/dev/null || echo /.gpu/ >> .git/info/exclude
grep -qx '/.gl/' .git/info/exclude 2>/dev/null || echo /.gl/ >> .git/info/exclude
rm -rf .gpu && mkdir -p .gpu/pkg .gpu/io .gpu/onnx .gpu/vkinc .gl
targets=cpu
$D compile --help | grep -q vulkan && targets=$targets,vulkan
$D compile --help | grep -q cuda && targets=$targets,cuda
/usr/bin/python3 bench/gpu/make_models.py .gpu/onnx
cp ../shared/models/fashion_mlp.onnx .gpu/onnx/
for m in fashion_mlp lenet5 resnet_small; do
  $D compile ../shared/models/$m.onnx --target $targets -o .gpu/pkg/$m.dmlpkg
  cp -r ../shared/models/${m}_io .gpu/io/
done
for m in gemm4096 elementwise64m; do
  $D compile .gpu/onnx/$m.onnx --target $targets -o .gpu/pkg/$m.dmlpkg
done
cp -r /usr/include/vulkan /usr/include/vk_video .gpu/vkinc/
if [ -z "$(ls .gl/*.deb 2>/dev/null)" ]; then
  o='-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=/tmp/amd64'
  mkdir -p /tmp/amd64/partial
  apt-get $o update >/dev/null
  (cd .gl && apt-get $o download libvulkan1 libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2)
fi
# `dmlc serve` and wrk for the HTTP load test there: this machine's
# binaries with the shared libraries they need beyond glibc (the GPU
# machine has none of Debian's packages), and the request bodies.
mkdir -p .gpu/bin .gpu/lib
cp "$D" "$(command -v wrk)" .gpu/bin/
strip .gpu/bin/dmlc
for b in .gpu/bin/*; do
  ldd "$b" | awk '$3 ~ /^\// {print $3}' |
    grep -Ev '/(libc|libm|libpthread|libdl|librt|ld-linux[^/]*)\.so' |
    xargs -r cp -L -t .gpu/lib/
done
/usr/bin/python3 bench/serve_bodies.py 1000 1 >.gpu/bodies.jsonl
echo "prepared .gpu/ (targets $targets) and .gl/"
