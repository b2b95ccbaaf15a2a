#!/usr/bin/env bash
# The README's main job: set up, build, compile the Fashion-MNIST MLP from
# ONNX into a package, classify the 10,000 test images, print the accuracy.
#   bash scripts/main_job.sh
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)" >/dev/null
set -x
build/compiler/dmlc compile examples/fashion_mlp.onnx -o build/fashion_mlp.dmlpkg
build/compiler/dmlc summary build/fashion_mlp.dmlpkg
build/examples/classify_fashion_mnist build/fashion_mlp.dmlpkg /usr/share/datasets/fashion-mnist
