#!/usr/bin/env bash
# Load test of `dmlc serve` on loopback (bench/RESULTS.md, "Serving"):
# the serving object alone first (bench/dml_serve_bench.c, 64 threads), then
# fashion_mlp over HTTP: wrk with bench/serve_infer.lua posting Fashion-MNIST test
# images (one image per request) at 64 connections, with --batch-size 32
# and --batch-size 1; then the malformed-request fuzz pass (bench/serve_fuzz.py).
#   bash bench/run_serve_bench.sh [DMLC [SECONDS [INSTANCES]]]
#   (defaults: build/compiler/dmlc, 30, 1)
set -euo pipefail
cd "$(dirname "$0")/.."
DMLC=${1:-build/compiler/dmlc}
SECS=${2:-30}
INST=${3:-1}
W=$(mktemp -d "${TMPDIR:-/tmp}/dmlc_serve_bench.XXXXXX")
PID=""
cleanup() {
  if [ -n "$PID" ]; then kill "$PID" 2>/dev/null || true; fi
  rm -rf "$W"
}
trap cleanup EXIT
"$DMLC" compile examples/fashion_mlp.onnx -o "$W/fashion_mlp.dmlpkg" >/dev/null
/usr/bin/python3 bench/serve_bodies.py 1000 1 >"$W/bodies.jsonl"

start_server() { # start_server FLAGS...: sets PID and PORT
  "$DMLC" serve "$W/fashion_mlp.dmlpkg" --port 0 --quiet "$@" >"$W/srv.out" 2>"$W/srv.err" &
  PID=$!
  for _ in $(seq 100); do
    PORT=$(sed -n 's/.*127\.0\.0\.1:\([0-9]*\).*/\1/p' "$W/srv.out")
    [ -n "$PORT" ] && return 0
    sleep 0.1
  done
  echo "dmlc serve did not start" >&2
  cat "$W/srv.err" >&2
  exit 1
}
stop_server() { # SIGTERM, expect exit 0 and the statistics line
  kill -TERM "$PID"
  local rc=0
  wait "$PID" || rc=$?
  PID=""
  grep "rows/run" "$W/srv.err" || true
  if [ "$rc" != 0 ]; then
    echo "dmlc serve exited with $rc" >&2
    exit 1
  fi
}

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), load $(cut -d' ' -f1-3 /proc/loadavg)"
# The serving object alone (C API, no HTTP): 64 callers of one-row requests.
SB="$(dirname "$DMLC")/../bench/dml_serve_bench"
X=../shared/models/fashion_mlp_io/input_1.npy
if [ -x "$SB" ] && [ -f "$X" ]; then
  for bs in 32 1; do
    echo "== C API: dml_serve_bench --threads 64 --seconds 10 --batch-size $bs --instances $INST"
    "$SB" "$W/fashion_mlp.dmlpkg" "$X" --threads 64 --seconds 10 --batch-size "$bs" \
      --batch-timeout-ms 1 --instances "$INST"
  done
fi
for bs in 32 1; do
  echo "== --batch-size $bs --batch-timeout-ms 1 --instances $INST: wrk -t2 -c64 -d${SECS}s"
  start_server --batch-size "$bs" --batch-timeout-ms 1 --instances "$INST"
  BODIES="$W/bodies.jsonl" wrk -t2 -c64 -d"${SECS}s" --latency -s bench/serve_infer.lua \
    "http://127.0.0.1:$PORT/v2/models/fashion_mlp/infer"
  stop_server
done

echo "== fuzz pass (--max-body-bytes 32768, so larger bodies get 413)"
start_server --max-body-bytes 32768 --instances "$INST"
/usr/bin/python3 bench/serve_fuzz.py "$PORT" 3000 1
stop_server
