#!/bin/sh
# save_clang.sh — DMLC_CLANG for conv_emu.py and direct_emu.py: copies the
# CUDA C of each kernel whose first line matches $CONV_EMU_MATCH (grep
# basic regex; default the f16/bf16 implicit-GEMM convolutions, whose first
# line says "implicit-GEMM conv, f16 tensor cores" or "bf16") into
# $CONV_EMU_SAVE as k<n>.cu, in compile order, then runs the real clang
# ($CONV_EMU_CLANG) on the same arguments.
default='implicit-GEMM conv, b\{0,1\}f16 tensor cores'
match=${CONV_EMU_MATCH:-$default}
for a in "$@"; do
  case "$a" in
  *.cu)
    if head -n 1 "$a" | grep -q "$match"; then
      n=$(ls "$CONV_EMU_SAVE" | wc -l)
      cp "$a" "$CONV_EMU_SAVE/k$n.cu"
    fi
    ;;
  esac
done
exec "$CONV_EMU_CLANG" "$@"
