#!/usr/bin/env bash
# `dmlc run` runs rows beyond the batch bound in chunks only when the
# compiler found the rows independent (meta rows-independent, passes/
# dml_row_indep.h); a model that mixes rows is an error naming the node,
# never a silent wrong answer. Chunked outputs equal one run at a bound that
# fits, bit for bit on the CPU.
#   test_rowsafe.sh DMLC SHARED_DIR WORKDIR
set -uo pipefail
DMLC=$1 SHARED=$2 WORK=$3
FX=$(cd "$(dirname "$0")/rowsafe" && pwd)
mkdir -p "$WORK"
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAILED: $*" >&2; }
expect_ok() {
  local name=$1; shift
  if out=$("$@" 2>&1); then ok; else bad "$name: exit $?: $out"; fi
}
expect_err() {
  local name=$1 want=$2; shift 2
  out=$("$@" 2>&1)
  local rc=$?
  if [ $rc -ne 0 ] && grep -qF -- "$want" <<<"$out"; then ok; else bad "$name: rc=$rc, wanted '$want' in: $out"; fi
}

# Models that mix rows: refused over the bound with the node named, and run
# whole at a bound that fits.
for m in "softmax0:node 'sm' (Softmax, axis 0) mixes rows" \
         "reducesum0:node 'rs' (ReduceSum, axes include 0) mixes rows" \
         "transpose:node 't' (Transpose, perm[0] = 1) mixes rows"; do
  name=${m%%:*} why=${m#*:}
  expect_ok "compile-$name" "$DMLC" compile "$FX/$name.onnx" -o "$WORK/$name.dmlpkg" --batch-bound 64
  expect_ok "inspect-$name" "$DMLC" inspect "$WORK/$name.dmlpkg"
  grep -qF "rows-independent: 0" <<<"$out" && grep -qF "rows-mixed-by: $why" <<<"$out" && ok ||
    bad "inspect-$name: no rows-independent: 0 / $why in: $out"
  expect_err "run-$name" "rows beyond the batch bound 64 cannot run in chunks: $why; recompile with --batch-bound >= 100" \
    "$DMLC" run "$WORK/$name.dmlpkg" --input "x=$FX/x100.npy" --output-dir "$WORK/$name.out"
  [ ! -e "$WORK/$name.out" ] && ok || bad "run-$name wrote outputs"
  expect_ok "compile-$name-128" "$DMLC" compile "$FX/$name.onnx" -o "$WORK/$name-128.dmlpkg" --batch-bound 128
  expect_ok "run-$name-128" "$DMLC" run "$WORK/$name-128.dmlpkg" --input "x=$FX/x100.npy" --output-dir "$WORK/$name.whole"
  grep -qF "chunks" <<<"$out" && bad "run-$name-128 chunked: $out" || ok
done

# Row-independent models: chunked over the bound, equal to one whole run.
chunked_equals_whole() { # NAME ONNX INPUT ROWS OUTPUT
  local name=$1 onnx=$2 input=$3 rows=$4 output=$5
  expect_ok "compile-$name-64" "$DMLC" compile "$onnx" -o "$WORK/$name-64.dmlpkg" --batch-bound 64
  expect_ok "inspect-$name" "$DMLC" inspect "$WORK/$name-64.dmlpkg"
  grep -qF "rows-independent: 1" <<<"$out" && ok || bad "inspect-$name: not rows-independent: $out"
  expect_ok "run-$name-64" "$DMLC" run "$WORK/$name-64.dmlpkg" --input "$input" --output-dir "$WORK/$name.chunks"
  grep -qF "note: $rows rows exceed the batch bound 64: running $(((rows + 63) / 64)) chunks" <<<"$out" && ok ||
    bad "run-$name-64: no chunk note: $out"
  expect_ok "compile-$name-whole" "$DMLC" compile "$onnx" -o "$WORK/$name-whole.dmlpkg" --batch-bound "$rows"
  expect_ok "run-$name-whole" "$DMLC" run "$WORK/$name-whole.dmlpkg" --input "$input" --output-dir "$WORK/$name.whole"
  cmp -s "$WORK/$name.chunks/$output.npy" "$WORK/$name.whole/$output.npy" && ok ||
    bad "$name: chunked output differs from the whole run"
}
# 1,000 rows from the reference models' saved inputs (their rows cycled;
# plain python3, no numpy).
mk_rows() { # IN.npy OUT.npy N: the first N rows, cycling IN's rows
  python3 - "$@" <<'PY'
import struct, sys
src, dst, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
b = open(src, "rb").read()
hl = struct.unpack("<H", b[8:10])[0] if b[6] == 1 else struct.unpack("<I", b[8:12])[0]
off = (10 if b[6] == 1 else 12) + hl
hdr = b[off - hl:off].decode("latin1")
d = eval(hdr)
shape = d["shape"]
row = len(b[off:]) // shape[0]
rows = b"".join(b[off + (i % shape[0]) * row: off + (i % shape[0] + 1) * row] for i in range(n))
d["shape"] = (n,) + tuple(shape[1:])
h = repr(d)
pad = 64 - (10 + len(h) + 1) % 64
h = (h + " " * pad + "\n").encode("latin1")
open(dst, "wb").write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) + h + rows)
PY
}
mk_rows "$SHARED/models/fashion_mlp_io/input_1.npy" "$WORK/fm1000.npy" 1000 && ok || bad "mk_rows fashion_mlp"
mk_rows "$SHARED/models/lenet5_io/input_1.npy" "$WORK/le1000.npy" 1000 && ok || bad "mk_rows lenet5"
FMO=$(cd "$WORK" && "$DMLC" compile "$SHARED/models/fashion_mlp.onnx" -o fm.dmlpkg >/dev/null 2>&1 && "$DMLC" inspect fm.dmlpkg | sed -n 's/^ *output \([^ :]*\).*/\1/p' | head -1)
chunked_equals_whole fashion_mlp "$SHARED/models/fashion_mlp.onnx" "$WORK/fm1000.npy" 1000 "${FMO:-logits}"
chunked_equals_whole lenet5 "$SHARED/models/lenet5.onnx" "$WORK/le1000.npy" 1000 logits
chunked_equals_whole batchnorm "$FX/batchnorm.onnx" "x=$FX/x1000_bn.npy" 1000 y

# Inputs with different row counts: said before the bound.
expect_ok compile-two "$DMLC" compile "$FX/two.onnx" -o "$WORK/two.dmlpkg" --batch-bound 64
expect_err run-two-rows "input 'b' has 40 rows, input 'a' 400" \
  "$DMLC" run "$WORK/two.dmlpkg" --input "a=$FX/a400.npy" --input "b=$FX/b40.npy" --output-dir "$WORK/two.out"
grep -qF "exceeds the compiled bound" <<<"$out" && bad "run-two-rows blames the bound: $out" || ok

echo "test_rowsafe: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
