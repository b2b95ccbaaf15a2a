#!/bin/sh
# `dmlc run` and `dmlc inspect` end to end on the tiny Gemm+Relu package that
# test_rt writes.   test_cmd_run.sh DMLC TEST_RT
set -u
DMLC=$1
RT=$2
DIR=$(mktemp -d "${TMPDIR:-/tmp}/dmlc_cmd_run.XXXXXX")
trap 'rm -rf "$DIR"' EXIT
. "$(dirname "$0")/../sh_test_util.sh"

"$RT" --write "$DIR" || { echo "FAILED: test_rt --write"; exit 1; }

# run with NAME=FILE, into a new nested directory
check "run NAME=FILE" "$DMLC" run "$DIR/tiny.dmlpkg" --input "x=$DIR/x.npy" --output-dir "$DIR/out/a" >"$DIR/run.txt" 2>"$DIR/run.err"
check "run line" has "logits: f32\[3,3\] -> $DIR/out/a/logits.npy (min " "$DIR/run.txt"
check "run values" "$RT" --compare "$DIR/out/a/logits.npy" "$DIR/expected.npy"

# one-input model: --input FILE, --flag=value spelling
check "run FILE" "$DMLC" run "$DIR/tiny.dmlpkg" --input="$DIR/x.npy" --output-dir="$DIR/out/b" >/dev/null
check "run FILE values" "$RT" --compare "$DIR/out/b/logits.npy" "$DIR/expected.npy"

# errors: unknown input name, missing input, unknown device, bad package
"$DMLC" run "$DIR/tiny.dmlpkg" --input "img=$DIR/x.npy" >/dev/null 2>"$DIR/e1.txt"
check "unknown input exit code" test $? -eq 1
check "unknown input message" has "no input named 'img'" "$DIR/e1.txt"
"$DMLC" run "$DIR/tiny.dmlpkg" >/dev/null 2>"$DIR/e2.txt"
check "missing input exit code" test $? -eq 1
check "missing input message" has "input 'x' (f32\[batch,4\]) is not given: add --input x=FILE.npy" "$DIR/e2.txt"
"$DMLC" run "$DIR/tiny.dmlpkg" --input "$DIR/x.npy" --device tpu >/dev/null 2>"$DIR/e3.txt"
check "device message" has "device 'tpu' is not available: no such device" "$DIR/e3.txt"
head -c 100 "$DIR/tiny.dmlpkg" >"$DIR/cut.dmlpkg"
"$DMLC" run "$DIR/cut.dmlpkg" --input "$DIR/x.npy" >/dev/null 2>"$DIR/e4.txt"
check "truncated package exit code" test $? -eq 1
check "truncated package message" has "error: pkg.load: truncated" "$DIR/e4.txt"
"$DMLC" run --bogus >/dev/null 2>&1
check "usage error exit code" test $? -eq 2
check "run --help" sh -c "'$DMLC' run --help | grep -q -- '--output-dir DIR'"

# inspect
check "inspect" "$DMLC" inspect "$DIR/tiny.dmlpkg" >"$DIR/inspect.txt"
for want in "format version: 2" "  meta " "  graph " "  weights " "producer: dmlc 0.1.0" \
    "source: tiny.onnx" "targets: cpu" "batch <= 64" "  x: f32\[batch,4\]  (at most f32\[64,4\])" \
    "  logits: f32\[batch,3\]" "nodes: 2" "weights: 60 bytes" "parameters: 15 (15) trainable" \
    "arena: 2560 bytes"; do
  check "inspect shows '$want'" has "$want" "$DIR/inspect.txt"
done
"$DMLC" inspect "$DIR/cut.dmlpkg" >/dev/null 2>&1
check "inspect bad package exit code" test $? -eq 1

if [ $fails -ne 0 ]; then
  echo "$fails failed"
  exit 1
fi
echo "1 passed, 0 failed"
