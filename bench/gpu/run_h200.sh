#!/bin/bash
# On the GPU machine (see bench/gpu/prepare.sh): the Vulkan loader, a
# runtime-only build, dmlc on Vulkan against the saved outputs and the CPU,
# dmlc bench per model, and the PyTorch peer (bench/gpu/torch_peer.py).
set -x
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
if ! ls /usr/share/vulkan/icd.d/*nvidia* /etc/vulkan/icd.d/*nvidia* >/dev/null 2>&1; then
  export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
fi
cmake -S . -B /tmp/brt -DDMLC_RUNTIME_ONLY=ON -DDMLC_WERROR=OFF -DCMAKE_BUILD_TYPE=Release -DDMLC_VULKAN_INCLUDE_DIR=$PWD/.gpu/vkinc > $OUT/cmake.log 2>&1
cmake --build /tmp/brt -j16 >> $OUT/cmake.log 2>&1 || { tail -30 $OUT/cmake.log; exit 1; }
D=/tmp/brt/compiler/dmlc
$D devices
for m in fashion_mlp lenet5 resnet_small; do
  for k in 0 1 2; do
    for dev in vulkan cpu; do
      mkdir -p /tmp/o/$m$k$dev
      $D run .gpu/pkg/$m.dmlpkg --input .gpu/io/${m}_io/input_$k.npy --output-dir /tmp/o/$m$k$dev --device $dev > /dev/null || echo "RUN FAILED $m $k $dev"
    done
    python3 -c "
import numpy as np, glob
w = np.load('.gpu/io/${m}_io/output_$k.npy'); g = np.load(glob.glob('/tmp/o/$m${k}vulkan/*.npy')[0]); c = np.load(glob.glob('/tmp/o/$m${k}cpu/*.npy')[0])
print('$m pair $k shape', g.shape, 'vulkan vs saved max abs', float(np.abs(g - w).max()), 'vulkan vs cpu', float(np.abs(g - c).max()))"
  done
done
for m in fashion_mlp:1 fashion_mlp:64 lenet5:64 resnet_small:64 gemm4096:1 elementwise64m:1; do
  p=${m%%:*}; b=${m##*:}
  echo "== bench $p batch $b vulkan"; $D bench .gpu/pkg/$p.dmlpkg --device vulkan --batch $b --iterations 50 --warmup 5 | head -30
done
echo "== bench fashion_mlp batch 1 cpu"; $D bench .gpu/pkg/fashion_mlp.dmlpkg --device cpu --batch 1 | head -5
# The serving object (no HTTP) on each device: 64 callers of one row each.
R=/tmp/brt/runtime
gcc -O2 -std=c11 -D_POSIX_C_SOURCE=200809L bench/dml_serve_bench.c -Iruntime -Iruntime/base \
  -Iruntime/serve $R/libdml_serve.a $R/libdml_runtime.a $R/libdml_cpu.a $R/libdml_base.a \
  -lpthread -lm -ldl -o /tmp/serve_bench
for dev in vulkan cpu; do for bs in 32 1; do
  echo "== serve $dev batch-size $bs"
  /tmp/serve_bench .gpu/pkg/fashion_mlp.dmlpkg .gpu/io/fashion_mlp_io/input_1.npy \
    --threads 64 --seconds 5 --batch-size $bs --device $dev
done; done
# dmlc serve over HTTP under wrk (bench/serve_infer.lua), carried binaries.
serve_wrk() { # DEVICE BATCH
  LD_LIBRARY_PATH=$PWD/.gpu/lib .gpu/bin/dmlc serve .gpu/pkg/fashion_mlp.dmlpkg --port 0 --quiet \
    --device $1 --batch-size $2 --batch-timeout-ms 1 > /tmp/srv.out 2> /tmp/srv.err &
  local pid=$! port=
  for _ in $(seq 100); do
    port=$(sed -n 's/.*127\.0\.0\.1:\([0-9]*\).*/\1/p' /tmp/srv.out); [ -n "$port" ] && break; sleep 0.1
  done
  echo "== wrk: dmlc serve --device $1 --batch-size $2 (port $port)"
  BODIES=.gpu/bodies.jsonl LD_LIBRARY_PATH=$PWD/.gpu/lib .gpu/bin/wrk -t4 -c64 -d30s --latency \
    -s bench/serve_infer.lua "http://127.0.0.1:$port/v2/models/fashion_mlp/infer"
  kill -TERM $pid; wait $pid; echo "serve exit $?"; grep rows/run /tmp/srv.err; tail -3 /tmp/srv.err
}
if [ -x .gpu/bin/wrk ]; then
  for dev in vulkan cpu; do for bs in 32 1; do serve_wrk $dev $bs; done; done
fi
PYTHONUNBUFFERED=1 python3 bench/gpu/torch_peer.py .gpu/onnx/fashion_mlp.onnx
