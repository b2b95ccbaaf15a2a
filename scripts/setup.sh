#!/usr/bin/env bash
# Installs everything dmlc's build and tests need from Debian's packages.
# Used by the README's commands and by .ci/run. Needs root (or sudo).
set -euo pipefail
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
PKGS=(
  build-essential cmake clang clang-format
  protobuf-c-compiler libprotobuf-c-dev libonnx-dev
  zlib1g-dev llvm-16-tools libonnx-testdata dataset-fashion-mnist
  pkg-config libmicrohttpd-dev libcjson-dev wrk
  # GPU code generation (codegen/): GLSL -> SPIR-V, validation, MSL
  glslang-dev glslang-tools spirv-tools spirv-headers spirv-cross
  libspirv-cross-c-shared-dev
  # CUDA target (codegen/cuda): CUDA C -> PTX, run as a subprocess
  clang-16
  # Vulkan: the loader (opened at run time) and Mesa's drivers, whose
  # lavapipe runs the Vulkan tests on the CPU
  libvulkan-dev mesa-vulkan-drivers
)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
