#!/bin/bash
# On the GPU machine (after bench/gpu/train_prepare.sh here, .gpu-train
# carried): issues 5 and 6's training benchmark. Fashion-MNIST training of
# fashion_mlp (Adam 1e-3, cross-entropy, shuffled, seed 0) by dmlc on cuda,
# vulkan and the CPU (bench/train/dml_train_bench on a runtime-only build:
# libc/libm; libcuda.so.1 and libvulkan.so.1 opened at run time) and by
# PyTorch eager on cuda (bench/train_torch.py), 3 epochs at batch 32 and 2
# epochs at batch 256 (the first epoch holds each side's warm-up: 235 steps
# at batch 256 are too few to hide it; the table's ratios use the last
# epoch), side by side in one run. Writes to $OUT:
#   train_h200.log    everything, with `dmlc devices` and nvidia-smi
#   RUN-bBATCH.jsonl  each run's JSON lines (per epoch, then the result)
#   train_bench.md    the table of bench/gpu/train_report.py (samples/s,
#                     ratios to PyTorch and to dmlc cuda, targets, test
#                     accuracy against the CPU's), summary.json
#   run(command="bash bench/gpu/train_h200.sh", carry=[".gpu-train"])
# Environment (defaults): G (.gpu-train), OUT (/tmp/train_h200_out), BUILD
# (/tmp/brt-train), DEVICES ("cuda vulkan cpu": dmlc's), TORCH_DEVICE (cuda;
# "none" skips PyTorch), EPOCHS32 (3), EPOCHS256 (2), LIMIT (all rows; N:
# the first N rows of each split, for trying the script), CPU_THREADS (4),
# RUN_TIMEOUT (240 s per run), PYTHON (python3: with PyTorch and numpy). Exit status: 0 when every run succeeded.
set -u
cd "$(dirname "$0")/../.."
G=${G:-.gpu-train}
OUT=${OUT:-/tmp/train_h200_out}
B=${BUILD:-/tmp/brt-train}
DEVICES=${DEVICES:-cuda vulkan cpu}
TORCH_DEVICE=${TORCH_DEVICE:-cuda}
EPOCHS32=${EPOCHS32:-3}
EPOCHS256=${EPOCHS256:-2}
LIMIT=${LIMIT:-}
CPU_THREADS=${CPU_THREADS:-4}
RUN_TIMEOUT=${RUN_TIMEOUT:-240}
PY=${PYTHON:-python3}
mkdir -p "$OUT"
exec > >(tee "$OUT/train_h200.log") 2>&1
status=0
step() { echo; echo "=== $*"; }
if [ ! -f "$G/pkg/fashion_mlp_train_b64.dmlpkg" ] || [ ! -d "$G/data" ]; then
  echo "error: $G is not prepared: run bench/gpu/train_prepare.sh on the build machine and carry $G"
  exit 2
fi
# the carried IDX files are gzipped: decompressed next to the build (the
# runtime-only reader has no zlib)
if ls "$G"/data/*.gz >/dev/null 2>&1; then
  mkdir -p "$B-data"
  for f in "$G"/data/*.gz; do
    [ -f "$B-data/$(basename "$f" .gz)" ] || gunzip -c "$f" >"$B-data/$(basename "$f" .gz)"
  done
  G_DATA=$B-data
else
  G_DATA=$G/data
fi
step "machine"
uname -m
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>&1 | head -3
MODEL=$(cat "$G/pkg/MODEL" 2>/dev/null || echo fashion_mlp_untrained)
echo "packages: $MODEL, targets $(cat "$G/pkg/TARGETS" 2>/dev/null)"
# the PyTorch peer trains the same network: without dropout when the
# packages were prepared with DROPOUT=remove
tdrop=0.2
[ "$MODEL" = fashion_mlp_nodropout ] && tdrop=0
# The Vulkan loader: the carried .deb files (device README) where the
# machine has none.
if ! ldconfig -p 2>/dev/null | grep -q 'libvulkan\.so\.1'; then
  for f in "$G"/gl/*.deb; do [ -f "$f" ] && dpkg -x "$f" /; done
  ldconfig
fi
if ! ls /usr/share/vulkan/icd.d/*nvidia* /etc/vulkan/icd.d/*nvidia* >/dev/null 2>&1 &&
  [ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ]; then
  export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
fi

step "runtime-only build ($B)"
cmake -S . -B "$B" -DDMLC_RUNTIME_ONLY=ON -DDMLC_WERROR=OFF -DCMAKE_BUILD_TYPE=Release \
  -DDMLC_VULKAN_INCLUDE_DIR="$PWD/$G/vkinc" >"$OUT/build.log" 2>&1 &&
  cmake --build "$B" -j"$(nproc)" --target dmlc dml_train_bench >>"$OUT/build.log" 2>&1 ||
  { tail -40 "$OUT/build.log"; exit 1; }
TB=$B/bench/train/dml_train_bench
echo "built; dml_train_bench NEEDs: $(readelf -d "$TB" 2>/dev/null |
  sed -n 's/.*NEEDED.*\[\(.*\)\]/\1/p' | tr '\n' ' ')"
step "dmlc devices"
"$B/compiler/dmlc" devices

rm -f "$OUT"/*.jsonl
lim=()
[ -n "$LIMIT" ] && lim=(--limit "$LIMIT")
for cfg in "32 $EPOCHS32 64" "256 $EPOCHS256 256"; do
  read -r bs ep bound <<<"$cfg"
  for dev in $DEVICES; do
    step "dmlc $dev: batch $bs, $ep epoch(s) (package bound $bound)"
    timeout "$RUN_TIMEOUT" "$TB" "$G/pkg/fashion_mlp_train_b$bound.dmlpkg" --data "$G_DATA" \
      --device "$dev" --batch-size "$bs" --epochs "$ep" --seed 0 --lr 1e-3 \
      --threads "$CPU_THREADS" "${lim[@]}" >"$OUT/$dev-b$bs.jsonl"
    rc=$?
    cat "$OUT/$dev-b$bs.jsonl"
    [ $rc -eq 0 ] || { echo "dmlc $dev batch $bs FAILED: exit status $rc"; status=1; }
  done
  if [ "$TORCH_DEVICE" != none ]; then
    step "PyTorch eager $TORCH_DEVICE: batch $bs, $ep epoch(s)"
    timeout "$RUN_TIMEOUT" "$PY" bench/train_torch.py "$G_DATA" "$CPU_THREADS" "$ep" \
      --device "$TORCH_DEVICE" --batch-size "$bs" --dropout "$tdrop" --per-epoch "${lim[@]}" \
      >"$OUT/torch-$TORCH_DEVICE-b$bs.jsonl"
    rc=$?
    cat "$OUT/torch-$TORCH_DEVICE-b$bs.jsonl"
    [ $rc -eq 0 ] || { echo "PyTorch batch $bs FAILED: exit status $rc"; status=1; }
  fi
done

step "table ($OUT/train_bench.md)"
{
  echo "Model: $MODEL (PyTorch: dropout $tdrop); rows: ${LIMIT:-all}; epochs: $EPOCHS32 at batch 32," \
    "$EPOCHS256 at batch 256; seed 0; Adam, lr 1e-3."
  echo
  "$PY" bench/gpu/train_report.py "$OUT"
} >"$OUT/train_bench.md" && cat "$OUT/train_bench.md" || status=1
step "done: status $status"
exit $status
