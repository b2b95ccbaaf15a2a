#!/bin/sh
# The runtime-only training path of the GPU training benchmark
# (bench/gpu/train_h200.sh): `dmlc compile --train` writes an untrained
# training package, bench/train/dml_train_bench trains it from plain IDX
# files (read without zlib) and prints JSON lines. Checked against `dmlc
# train` on the same model, data, options and seed: the same epoch losses
# (bit for bit, 9 significant digits) and its last validation accuracy ==
# the bench's test accuracy. Also: the accuracy is well above chance, the
# errors (gzip data in the zlib-free reader, batch above the bound, a
# package without train_step, --train flags without --train).
#   test_train_bench.sh DMLC DML_TRAIN_BENCH SHARED_DIR
set -u
DMLC=$1
BENCH=$2
MODEL=$3/models/fashion_mlp_untrained.onnx
DIR=$(mktemp -d "${TMPDIR:-/tmp}/dmlc_train_bench.XXXXXX")
trap 'rm -rf "$DIR"' EXIT
. "$(dirname "$0")/../sh_test_util.sh"

# The synthetic IDX set of test_cli_train.sh (the brightest quarter is the
# label), written gzipped in gz/ and plain in plain/.
python3 - "$DIR" <<'PY' || { echo "FAILED: making the data"; exit 1; }
import gzip, os, struct, sys
d = sys.argv[1]
os.makedirs(d + '/gz')
os.makedirs(d + '/plain')
def write(name, n, seed):
    s = seed
    imgs, labs = bytearray(), bytearray()
    for _ in range(n):
        img = bytearray(784)
        for k in range(784):
            s = (s * 1103515245 + 12345) & 0x7FFFFFFF
            img[k] = (s >> 16) & 0x3F
        lab = (s >> 8) % 4
        r0, c0 = (lab // 2) * 14, (lab % 2) * 14
        for r in range(r0, r0 + 14):
            for c in range(c0, c0 + 14):
                img[r * 28 + c] = min(255, img[r * 28 + c] + 150)
        imgs += img
        labs.append(lab)
    x = struct.pack('>IIII', 0x803, n, 28, 28) + bytes(imgs)
    y = struct.pack('>II', 0x801, n) + bytes(labs)
    for sub, op in (('gz', gzip.open), ('plain', open)):
        with op(os.path.join(d, sub, name + '-images-idx3-ubyte' + ('.gz' if sub == 'gz' else '')), 'wb') as f:
            f.write(x)
        with op(os.path.join(d, sub, name + '-labels-idx1-ubyte' + ('.gz' if sub == 'gz' else '')), 'wb') as f:
            f.write(y)
write('train', 300, 1)
write('t10k', 100, 2)
PY

check "compile --train" "$DMLC" compile "$MODEL" --train --loss cross_entropy --optimizer adam \
  --batch-bound 64 -o "$DIR/t.dmlpkg" >"$DIR/compile.txt" 2>&1
check "bench" "$BENCH" "$DIR/t.dmlpkg" --data "$DIR/plain" --epochs 3 --batch-size 16 --seed 7 \
  --lr 1e-3 >"$DIR/bench.json" 2>"$DIR/bench.err"
check "bench: epoch lines" test "$(grep -c '"event":"epoch"' "$DIR/bench.json")" -eq 3
check "bench: result line" has '"event":"result","device":"cpu"' "$DIR/bench.json"
check "bench: rows" has '"train_rows":300,"test_rows":100' "$DIR/bench.json"
check "dmlc train" "$DMLC" train "$MODEL" --data "$DIR/gz" --validate-on test --epochs 3 --batch-size 16 --seed 7 \
  --lr 1e-3 -o "$DIR/a.dmlpkg" --history "$DIR/a.csv" --quiet >/dev/null 2>&1
# the epoch losses of both, "%.9g" each
tail -n +2 "$DIR/a.csv" | cut -d, -f2 >"$DIR/train_losses.txt"
sed -n 's/.*"event":"epoch".*"loss":\([^,]*\),.*/\1/p' "$DIR/bench.json" >"$DIR/bench_losses.txt"
check "losses as dmlc train's" cmp "$DIR/train_losses.txt" "$DIR/bench_losses.txt"
val=$(tail -n 1 "$DIR/a.csv" | cut -d, -f5)
acc=$(sed -n 's/.*"test_accuracy":\([^,}]*\).*/\1/p' "$DIR/bench.json")
check "test accuracy ($acc) = dmlc train's val_accuracy ($val)" test "$acc" = "$val"
check "learned (test accuracy $acc)" awk "BEGIN { exit !($acc >= 0.9) }"
sps=$(sed -n 's/.*"samples_per_s_mean":\([^,}]*\).*/\1/p' "$DIR/bench.json")
check "samples/s ($sps) is a positive number" awk "BEGIN { exit !($sps > 0) }"
check "--limit" "$BENCH" "$DIR/t.dmlpkg" --data "$DIR/plain" --limit 50 >"$DIR/limit.json" 2>&1
check "--limit rows" has '"train_rows":50,"test_rows":50' "$DIR/limit.json"

# --rounds-stdin (bench/gpu/train_models.py's rounds): a round per line of
# stdin over the first K batches, in order with --no-shuffle; --step-losses
# N: the first N steps' losses, the same as a plain run's first steps
printf '3\n2\n0\n' | "$BENCH" "$DIR/t.dmlpkg" --data "$DIR/plain" --batch-size 16 --no-shuffle \
  --rounds-stdin --step-losses 4 >"$DIR/rounds.json" 2>"$DIR/rounds.err"
check "--rounds-stdin: exit 0" test $? -eq 0
check "--rounds-stdin: two epoch lines" test "$(grep -c '"event":"epoch"' "$DIR/rounds.json")" -eq 2
check "--rounds-stdin: 3 steps, then 2" has '"epoch":2,"epochs":2,"steps":5,' "$DIR/rounds.json"
check "--step-losses: four step lines" test "$(grep -c '"event":"step"' "$DIR/rounds.json")" -eq 4
check "--rounds-stdin: result line" has '"event":"result"' "$DIR/rounds.json"
check "plain run, --step-losses 3" "$BENCH" "$DIR/t.dmlpkg" --data "$DIR/plain" --batch-size 16 \
  --no-shuffle --step-losses 3 >"$DIR/steps.json" 2>&1
grep '"event":"step"' "$DIR/steps.json" >"$DIR/steps_plain.txt"
grep '"event":"step"' "$DIR/rounds.json" | head -3 >"$DIR/steps_rounds.txt"
check "the same first step losses" cmp "$DIR/steps_plain.txt" "$DIR/steps_rounds.txt"
printf '2\nmany\n' | "$BENCH" "$DIR/t.dmlpkg" --data "$DIR/plain" --rounds-stdin >"$DIR/r2.json" 2>"$DIR/r2.err"
check "--rounds-stdin, a bad line: it stops, exit 0" test $? -eq 0
check "--rounds-stdin, a bad line: message" has "'many' is not a step count" "$DIR/r2.err"
check "--rounds-stdin, a bad line: one round" test "$(grep -c '"event":"epoch"' "$DIR/r2.json")" -eq 1

# errors
"$BENCH" "$DIR/t.dmlpkg" --data "$DIR/gz" >"$DIR/e1.txt" 2>&1
check "gzip data: exit 1" test $? -eq 1
check "gzip data: message" has "is gzip-compressed and this build reads plain files only" "$DIR/e1.txt"
check "gzip data: the fix" has "decompress it first (gunzip -k" "$DIR/e1.txt"
"$BENCH" "$DIR/t.dmlpkg" --data "$DIR/plain" --batch-size 65 >"$DIR/e2.txt" 2>&1
check "batch above the bound: exit 1" test $? -eq 1
check "batch above the bound: message" has "above the package's batch bound 64" "$DIR/e2.txt"
"$DMLC" compile "$MODEL" -o "$DIR/plain.dmlpkg" >/dev/null 2>&1
"$BENCH" "$DIR/plain.dmlpkg" --data "$DIR/plain" >"$DIR/e3.txt" 2>&1
check "not a training package: exit 1" test $? -eq 1
check "not a training package: message" has "train_step" "$DIR/e3.txt"
"$DMLC" compile "$MODEL" --optimizer sgd -o "$DIR/x.dmlpkg" >"$DIR/e4.txt" 2>&1
check "--optimizer without --train: exit 2" test $? -eq 2
check "--optimizer without --train: message" has "need --train" "$DIR/e4.txt"
"$DMLC" compile "$MODEL" --train --loss nope -o "$DIR/x.dmlpkg" >"$DIR/e5.txt" 2>&1
check "bad --loss: exit 1" test $? -eq 1
check "bad --loss: message" has "cross_entropy" "$DIR/e5.txt"
"$BENCH" "$DIR/t.dmlpkg" --data "$DIR/plain" --epochs 0 >"$DIR/e6.txt" 2>&1
check "--epochs 0: exit 2" test $? -eq 2

if [ "$fails" -ne 0 ]; then
  echo "$fails check(s) failed"
  exit 1
fi
echo "all checks passed"
