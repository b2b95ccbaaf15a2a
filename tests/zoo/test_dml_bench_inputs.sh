#!/usr/bin/env bash
# dml_bench on a model of two inputs (bert_tiny.torchscript of the zoo's CI
# subset: input_ids, attention_mask), as bench/cpu_bench.py --zoo drives it:
# the inputs by position and by NAME=FILE in the other order must both run
# and print the JSON line; a wrong name, a missing input file and a flag
# without its value must fail with a message, not crash.
# usage: test_dml_bench_inputs.sh DMLC DML_BENCH SRC_DIR WORK_DIR
set -euo pipefail
dmlc="$1" bench="$2" src="$3/bert_tiny.torchscript" work="$4"
rm -rf "$work"
mkdir -p "$work"
"$dmlc" compile "$src/model.onnx" -o "$work/m.dmlpkg" --dim-bound batch=4,seq=32 --dim-bound 64
fail=0
expect_json() { # $1: what; rest: dml_bench arguments
  local what="$1" out
  shift
  if out=$("$bench" "$work/m.dmlpkg" "$@" 2>&1) && grep -q '"median_ms"' <<<"$out"; then
    echo "ok: $what: $out"
  else
    echo "FAIL: $what: $out"
    fail=1
  fi
}
expect_error() { # $1: what; $2: text the error must hold; rest: arguments
  local what="$1" want="$2" out rc=0
  shift 2
  out=$("$bench" "$work/m.dmlpkg" "$@" 2>&1) || rc=$?
  if [ "$rc" -ne 0 ] && [ "$rc" -lt 128 ] && grep -qi -- "$want" <<<"$out"; then
    echo "ok: $what: exit $rc: $out"
  else
    echo "FAIL: $what: exit $rc (want 1 or 2 and '$want'): $out"
    fail=1
  fi
}
a="$src/in.0.npy" b="$src/in.1.npy"
expect_json "by position" "$a" "$b" --iterations 2 --warmup 1 --threads 2
expect_json "by name, other order" "attention_mask=$b" "input_ids=$a" --iterations 2 --warmup 0
expect_error "unknown input name" "input_idz" "input_idz=$a" "attention_mask=$b" --iterations 1
expect_error "missing file" "nonexistent" "$work/nonexistent.npy" "$b" --iterations 1
expect_error "flag without value" "needs a value" "$a" "$b" --iterations
expect_error "no input" "no INPUT" --iterations 1
exit $fail
