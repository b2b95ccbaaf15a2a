#!/bin/sh
# `dmlc train` / `dmlc eval` end to end on fashion_mlp_untrained.onnx with a
# small synthetic IDX data set (a folder in the MNIST layout; the label of
# an image is decided by its brightest quarter, so it can be learned):
# training, eval, the trained package with `dmlc run`, the exported ONNX
# model (same outputs as the package, bit for bit), determinism, resume
# from a checkpoint == uninterrupted, and usage errors.
#   test_cli_train.sh DMLC SHARED_DIR
set -u
DMLC=$1
MODEL=$2/models/fashion_mlp_untrained.onnx
DIR=$(mktemp -d "${TMPDIR:-/tmp}/dmlc_cli_train.XXXXXX")
trap 'rm -rf "$DIR"' EXIT
. "$(dirname "$0")/../sh_test_util.sh"

python3 - "$DIR/data" <<'PY' || { echo "FAILED: making the data"; exit 1; }
import gzip, os, struct, sys
d = sys.argv[1]
os.makedirs(d)
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
    with gzip.open(os.path.join(d, name + '-images-idx3-ubyte.gz'), 'wb') as f:
        f.write(struct.pack('>IIII', 0x803, n, 28, 28) + bytes(imgs))
    with open(os.path.join(d, name + '-labels-idx1-ubyte'), 'wb') as f:
        f.write(struct.pack('>II', 0x801, n) + bytes(labs))
write('train', 300, 1)
write('t10k', 100, 2)
PY

T="$DMLC train $MODEL --data $DIR/data --epochs 3 --batch-size 16 --seed 7 --validate-on test"
check "train" $T -o "$DIR/a.dmlpkg" --history "$DIR/a.csv" --export-onnx "$DIR/a.onnx" \
  --checkpoint-every 1 --checkpoint-dir "$DIR/ckpt" >"$DIR/train.txt" 2>&1
check "train: epochs" has "epoch 3/3  19 steps  loss " "$DIR/train.txt"
check "train: validation on t10k" has "validating on 100 rows" "$DIR/train.txt"
check "train: memory" has "peak memory (planned): " "$DIR/train.txt"
check "train: rss" has "peak memory (measured): max RSS " "$DIR/train.txt"
check "train: export" has "6 initializers replaced, 1 Dropout set to inference" "$DIR/train.txt"
check "history" has "^epoch,loss,accuracy,val_loss,val_accuracy,lr,seconds,validation$" "$DIR/a.csv"
check "history says test" has "^3,.*,test$" "$DIR/a.csv"
check "history rows" test "$(wc -l <"$DIR/a.csv")" -eq 4
check "checkpoints" test -f "$DIR/ckpt/epoch-0003.safetensors"
# it learned: the final validation accuracy is well above chance (0.25)
acc=$(tail -n 1 "$DIR/a.csv" | cut -d, -f5)
check "learned (val_accuracy $acc)" awk "BEGIN { exit !($acc >= 0.9) }"

# eval: the same figure as the last epoch's validation
check "eval" "$DMLC" eval "$DIR/a.dmlpkg" --data "$DIR/data" >"$DIR/eval.txt" 2>&1
check "eval line" has "rows 100  loss " "$DIR/eval.txt"
pct=$(awk -v a="$acc" 'BEGIN { printf "%.4f", a }')
check "eval accuracy = last val_accuracy" has "accuracy $pct" "$DIR/eval.txt"
check "eval train split" "$DMLC" eval "$DIR/a.dmlpkg" --data "$DIR/data" --split train --batch-size 7 >"$DIR/eval2.txt" 2>&1
check "eval train rows" has "rows 300  loss " "$DIR/eval2.txt"

# same seed: the same losses; resume from epoch 1 == uninterrupted
check "train again" $T -o "$DIR/b.dmlpkg" --history "$DIR/b.csv" --quiet >/dev/null 2>&1
check "deterministic" test "$(cut -d, -f1-6 "$DIR/a.csv")" = "$(cut -d, -f1-6 "$DIR/b.csv")"
check "resume" $T -o "$DIR/c.dmlpkg" --history "$DIR/c.csv" --resume "$DIR/ckpt/epoch-0001.safetensors" \
  >"$DIR/resume.txt" 2>&1
check "resume line" has "resumed from .*epoch-0001.safetensors at epoch 1, step 19" "$DIR/resume.txt"
check "resume == uninterrupted" test "$(tail -n 2 "$DIR/a.csv" | cut -d, -f1-6)" = "$(tail -n 2 "$DIR/c.csv" | cut -d, -f1-6)"
# a checkpoint of another configuration is refused, naming each difference
# (the seed and the batch size here); --resume-anyway continues with notes
check "resume mismatch" sh -c "! $DMLC train $MODEL --data $DIR/data --epochs 3 --batch-size 8 --seed 8 -o $DIR/z.dmlpkg --resume $DIR/ckpt/epoch-0001.safetensors >$DIR/rm.txt 2>&1"
check "resume mismatch text" has "the checkpoint was written by a run of another configuration" "$DIR/rm.txt"
check "resume mismatch seed" has "seed: checkpoint 7, this run 8" "$DIR/rm.txt"
check "resume mismatch batch" has "batch_size: checkpoint 16, this run 8" "$DIR/rm.txt"
check "resume mismatch hint" has "pass --resume-anyway" "$DIR/rm.txt"
check "resume lr mismatch" sh -c "! $T --lr 0.01 -o $DIR/z.dmlpkg --resume $DIR/ckpt/epoch-0001.safetensors >$DIR/rm2.txt 2>&1"
check "resume lr mismatch text" has "lr: checkpoint constant:0.001, this run constant:0.01$" "$DIR/rm2.txt"
check "resume anyway" $T --batch-size 8 -o "$DIR/d.dmlpkg" --quiet --resume "$DIR/ckpt/epoch-0001.safetensors" --resume-anyway >"$DIR/ra.txt" 2>&1
check "resume anyway note" has "note: --resume-anyway: batch_size: checkpoint 16, this run 8" "$DIR/ra.txt"
check "resume-anyway needs --resume" sh -c "! $T -o $DIR/z.dmlpkg --resume-anyway 2>$DIR/ra2.txt"
check "resume-anyway text" has "--resume-anyway needs --resume CKPT" "$DIR/ra2.txt"
# a FIFO as the checkpoint is refused at once, not waited on
mkfifo "$DIR/fifo.safetensors"
check "resume fifo" sh -c "! timeout 20 $T -o $DIR/z.dmlpkg --resume $DIR/fifo.safetensors >$DIR/rf.txt 2>&1"
check "resume fifo text" has "fifo.safetensors' is a FIFO (named pipe), not a regular file" "$DIR/rf.txt"
# an output that is the model itself, spelled differently, is refused
cp "$MODEL" "$DIR/m.onnx"
check "export over the model" sh -c "cd $DIR && ! $DMLC train m.onnx --data $DIR/data -o z.dmlpkg --export-onnx ./m.onnx 2>$DIR/es.txt"
check "export over the model text" has "the output './m.onnx' is the model 'm.onnx' itself; choose another --export-onnx" "$DIR/es.txt"
check "model intact" cmp "$MODEL" "$DIR/m.onnx"
check "-o = --history" sh -c "! $T -o $DIR/h.out --history $DIR/./h.out 2>$DIR/es2.txt"
check "-o = --history text" has "error: dmlc train: -o and --history both name '$DIR/./h.out'; one would overwrite the other" "$DIR/es2.txt"
check "output = data" sh -c "! $DMLC train $MODEL --data $DIR/data/train-images-idx3-ubyte.gz,$DIR/data/train-labels-idx1-ubyte -o $DIR/data/train-labels-idx1-ubyte 2>$DIR/es3.txt"
check "output = data text" has "is the data file '$DIR/data/train-labels-idx1-ubyte' of --data" "$DIR/es3.txt"

# the trained package runs; the exported ONNX model gives the same outputs
python3 - "$DIR/x.npy" <<'PY'
import struct, sys
h = "{'descr': '<f4', 'fortran_order': False, 'shape': (5, 784), }"
h += ' ' * (118 - len(h)) + '\n'
data = b''.join(struct.pack('<f', ((i * 37) % 101) / 100.0) for i in range(5 * 784))
open(sys.argv[1], 'wb').write(b'\x93NUMPY\x01\x00' + struct.pack('<H', len(h)) + h.encode() + data)
PY
check "run trained" "$DMLC" run "$DIR/a.dmlpkg" --input "input=$DIR/x.npy" --output-dir "$DIR/o1" >/dev/null
check "compile exported" "$DMLC" compile "$DIR/a.onnx" -o "$DIR/x.dmlpkg" >/dev/null
check "run exported" "$DMLC" run "$DIR/x.dmlpkg" --input "input=$DIR/x.npy" --output-dir "$DIR/o2" >/dev/null
check "exported == trained" cmp "$DIR/o1/logits.npy" "$DIR/o2/logits.npy"

# the default: the last 10% of the training rows validate (270 + 30), the
# metrics table on them
check "default split" "$DMLC" train "$MODEL" --data "$DIR/data" --epochs 2 --batch-size 16 \
  --metrics accuracy,f1,top2,precision,recall -o "$DIR/s.dmlpkg" --history "$DIR/s.csv" >"$DIR/split.txt" 2>&1
check "default split text" has "training on 270 rows, validating on 30 rows held out from them" "$DIR/split.txt"
check "split steps" has "epoch 2/2  17 steps  loss " "$DIR/split.txt"
check "split metrics line" has "val_accuracy [0-9.]*  val_f1 [0-9.]*  val_top2 [0-9.]*  val_precision [0-9.]*  val_recall [0-9.]*  lr" "$DIR/split.txt"
check "split history" has "^epoch,loss,accuracy,val_loss,val_accuracy,lr,seconds,validation,val_f1,val_top2,val_precision,val_recall$" "$DIR/s.csv"
check "split history rows" has "^2,.*,split,[0-9.]*,[0-9.]*,[0-9.]*,[0-9.]*$" "$DIR/s.csv"
# top2 >= top1 = accuracy on the same 30 rows
check "top2 >= accuracy" awk -F, 'NR == 3 { exit !($10 >= $5 && $5 > 0) }' "$DIR/s.csv"
check "mae on class labels" sh -c "! $DMLC train $MODEL --data $DIR/data --epochs 1 --validate-on none --metrics mae -o $DIR/z.dmlpkg >$DIR/none.txt 2>&1"
check "mae on class labels text" has "mae needs float targets" "$DIR/none.txt"
check "none metric f1" "$DMLC" train "$MODEL" --data "$DIR/data" --epochs 1 --validate-on none --metrics f1 \
  -o "$DIR/n.dmlpkg" --history "$DIR/n.csv" >"$DIR/none2.txt" 2>&1
check "none text" has "training on 300 rows, no validation" "$DIR/none2.txt"
check "none history" has "^1,.*,[0-9.]*,,,[0-9.e-]*,[0-9.e-]*,,[0-9.]*$" "$DIR/n.csv"
check "bad --validate-on" sh -c "! $DMLC train $MODEL --data $DIR/data -o $DIR/z.dmlpkg --validate-on val 2>$DIR/v1.txt"
check "bad --validate-on text" has "bad --validate-on 'val' (split, test or none)" "$DIR/v1.txt"
check "test needs a folder" sh -c "! $DMLC train $MODEL --data $DIR/data/train-images-idx3-ubyte.gz,$DIR/data/train-labels-idx1-ubyte -o $DIR/z.dmlpkg --validate-on test >/dev/null 2>$DIR/v2.txt"
check "test needs a folder text" has "--validate-on test needs --data DIR" "$DIR/v2.txt"
check "bad metric" sh -c "! $DMLC train $MODEL --data $DIR/data -o $DIR/z.dmlpkg --metrics f2 2>$DIR/v3.txt"
check "bad metric text" has "unknown metric 'f2'" "$DIR/v3.txt"

# errors
check "no -o" sh -c "! $DMLC train $MODEL --data $DIR/data 2>$DIR/e1.txt"
check "no -o text" has "give MODEL.onnx, --data and -o TRAINED.dmlpkg" "$DIR/e1.txt"
check "bad loss" sh -c "! $DMLC train $MODEL --data $DIR/data -o $DIR/z.dmlpkg --loss foo 2>$DIR/e2.txt"
check "bad loss text" has "foo" "$DIR/e2.txt"
check "bad schedule" sh -c "! $DMLC train $MODEL --data $DIR/data -o $DIR/z.dmlpkg --lr-schedule cosine:1 2>$DIR/e3.txt"
check "bad schedule text" has "cosine:INITIAL,MINIMUM\[,WARMUP\]" "$DIR/e3.txt"
check "bad early stopping" sh -c "! $DMLC train $MODEL --data $DIR/data -o $DIR/z.dmlpkg --early-stopping min_delta=1 2>$DIR/e4.txt"
check "bad early stopping text" has "patience=N" "$DIR/e4.txt"
check "batch above bound" sh -c "! $DMLC train $MODEL --data $DIR/data -o $DIR/z.dmlpkg --batch-size 65 --batch-bound 64 2>$DIR/e5.txt"
check "batch text" has "batch-bound 64 < --batch-size 65" "$DIR/e5.txt"
check "missing data" sh -c "! $DMLC train $MODEL --data $DIR/nope -o $DIR/z.dmlpkg 2>$DIR/e6.txt >/dev/null"
check "missing data text" has "no such file or folder" "$DIR/e6.txt"
# an inference package (no eval_step): forward's argmax accuracy, the same
# as eval_step's on the trained model exported to ONNX
check "eval inference package" "$DMLC" compile "$DIR/a.onnx" -o "$DIR/inf.dmlpkg" >/dev/null
check "eval forward" sh -c "$DMLC eval $DIR/inf.dmlpkg --data $DIR/data >$DIR/e7.txt 2>&1"
check "eval forward text" has "rows 100  accuracy $pct (.*)  .*(forward: no eval_step, no loss)" "$DIR/e7.txt"
check "no package written on error" test ! -e "$DIR/z.dmlpkg"

[ "$fails" -eq 0 ] && echo "test_cli_train: all passed"
exit "$fails"
