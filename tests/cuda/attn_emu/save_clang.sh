#!/bin/sh
# save_clang.sh — DMLC_CLANG for attn_emu.py: copies the CUDA C of each
# tensor-core attention kernel (its first line names "fused attention")
# into $ATTN_EMU_SAVE as k<n>.cu, in compile order, then runs the real
# clang ($ATTN_EMU_CLANG) on the same arguments.
for a in "$@"; do
  case "$a" in
  *.cu)
    if head -n 1 "$a" | grep -q "fused attention"; then
      n=$(ls "$ATTN_EMU_SAVE" | wc -l)
      cp "$a" "$ATTN_EMU_SAVE/k$n.cu"
    fi
    ;;
  esac
done
exec "$ATTN_EMU_CLANG" "$@"
