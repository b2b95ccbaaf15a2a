#!/bin/sh
# bench/gpu/train_report.py (the table of bench/gpu/train_h200.sh) on
# made-up runs: ratios to PyTorch cuda and to dmlc cuda from the last
# epoch's samples/s (and the means'), the issues' targets met / not met, the accuracy band
# against dmlc cpu, a failed run (no result line), summary.json.
#   test_train_report.sh PYTHON3 SOURCE_DIR
set -u
PY=$1
SRC=$2
DIR=$(mktemp -d "${TMPDIR:-/tmp}/dmlc_train_report.XXXXXX")
trap 'rm -rf "$DIR"' EXIT
fails=0
has() { grep -qF -- "$1" "$DIR/t.md" || { echo "FAILED: missing '$1' in:"; cat "$DIR/t.md"; fails=$((fails + 1)); }; }
run() { # run FILE ACCURACY SPS...
  f=$1 acc=$2
  shift 2
  : >"$DIR/$f"
  for s in "$@"; do echo "{\"event\":\"epoch\",\"loss\":0.5,\"samples_per_s\":$s}" >>"$DIR/$f"; done
  echo "{\"event\":\"result\",\"test_accuracy\":$acc}" >>"$DIR/$f"
}
run cuda-b32.jsonl 0.861 50000 70000      # mean 60000, last 70000
run vulkan-b32.jsonl 0.8455 15000 15000   # mean 15000
run cpu-b32.jsonl 0.858 30000 30000
echo '{"samples_per_s": 20000}' >"$DIR/torch-cuda-b32.jsonl"
echo '{"event": "epoch", "samples_per_s": 20000}' >>"$DIR/torch-cuda-b32.jsonl"
echo '{"event": "epoch", "samples_per_s": 23000}' >>"$DIR/torch-cuda-b32.jsonl"
echo '{"samples_per_s": 20000, "test_accuracy": 0.85}' >>"$DIR/torch-cuda-b32.jsonl"
run cuda-b256.jsonl 0.80 200000
run cpu-b256.jsonl 0.805 100000
echo '{"event":"epoch","samples_per_s":5}' >"$DIR/vulkan-b256.jsonl" # no result: failed
run torch-cuda-b256.jsonl 0.79 100000 160000
"$PY" "$SRC/bench/gpu/train_report.py" "$DIR" >"$DIR/t.md" || { echo "FAILED: the script"; exit 1; }
has "| 32 | dmlc cuda | 2 | 60,000 | 70,000 | 3.04x (2.79x) |  | >= 3.0x: met | 0.8610 | +0.30 pt (in band) |"
has "| 32 | dmlc vulkan | 2 | 15,000 | 15,000 | 0.65x (0.70x) | 0.21x (0.25x) | >= 1.0x: NOT met | 0.8455 | -1.25 pt (OUT of band) |"
has "| 32 | torch cuda | 2 | 21,500 | 23,000 |  |  |  | 0.8500 | -0.80 pt |"
has "| 32 | dmlc cpu | 2 | 30,000 | 30,000 | 1.30x (1.40x) | 0.43x (0.50x) |  | 0.8580 |  |"
has "| 256 | dmlc cuda | 1 | 200,000 | 200,000 | 1.25x (1.54x) |  | >= 1.5x: NOT met | 0.8000 | -0.50 pt (in band) |"
has "| 256 | dmlc vulkan | | failed |"
"$PY" -c "import json,sys; s=json.load(open(sys.argv[1])); assert len(s) == 8, s" "$DIR/summary.json" ||
  { echo "FAILED: summary.json"; fails=$((fails + 1)); }
[ "$fails" -eq 0 ] || exit 1
echo "all checks passed"
