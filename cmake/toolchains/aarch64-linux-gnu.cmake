# Cross build for 64-bit Arm Linux with Debian's gcc-aarch64-linux-gnu
# (docs/embedding.md):
#   cmake -S . -B build-arm64 -DDMLC_RUNTIME_ONLY=ON \
#         -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/aarch64-linux-gnu.cmake
# Programs run under qemu-aarch64 (Debian's qemu-user) with the target's
# libraries from /usr/aarch64-linux-gnu (tests/arm64/test_arm64.sh).
# Debian's cross gcc searches /usr/aarch64-linux-gnu/include, then the
# host's /usr/include, so libvulkan-dev's (architecture-independent)
# vulkan/vulkan.h builds the Vulkan backend too (opened at run time).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(DMLC_CROSS_TRIPLE aarch64-linux-gnu)
set(CMAKE_C_COMPILER ${DMLC_CROSS_TRIPLE}-gcc)
set(CMAKE_CXX_COMPILER ${DMLC_CROSS_TRIPLE}-g++)
set(CMAKE_FIND_ROOT_PATH /usr/${DMLC_CROSS_TRIPLE})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
find_program(DMLC_QEMU_AARCH64 qemu-aarch64)
if(DMLC_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${DMLC_QEMU_AARCH64} -L /usr/${DMLC_CROSS_TRIPLE})
endif()
