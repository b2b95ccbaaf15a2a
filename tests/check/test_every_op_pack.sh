#!/usr/bin/env bash
# every_op_pack_vulkan: the pack path of the every-op differential test, as
# the GPU machine takes it (scripts/gpu_prepare.sh's part everyop,
# scripts/gpu_check.sh), on lavapipe with a handful of ops: `dml_every_op
# --pack DIR --target vulkan` compiles their cases for cpu,vulkan and writes
# them down, the runtime-only dml_everyop_check runs them on the device, and
# its count line must be the one `dml_every_op --device vulkan` prints for
# the same ops (f64 forms are refused, each op has a row of 70,001; Sin's
# bf16, a known failure until the shared sin/cos reduction, now passes).
# The checker is also shown able to fail: a kernel made wrong on purpose
# (DMLC_VULKAN_TEST_CORRUPT_KERNEL), a known failure that passes, a
# manifest cut short; and a known failure that fails is counted as known
# (k_known is empty now: the rows the wrong kernel breaks are marked so).
# Exit 77 (skipped) without a Vulkan device.
#   test_every_op_pack.sh DML_EVERY_OP DML_EVERYOP_CHECK WORKDIR
set -uo pipefail
EO=$1 CHK=$2 WORK=$3
OPS=Relu,Add,Sin,ReduceSum,Softmax,Where
rm -rf "$WORK"
mkdir -p "$WORK/pack"
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAILED: $*" >&2; }

direct=$("$EO" --device vulkan --only $OPS --no-big 2>&1); rc=$?
if [ $rc -eq 77 ]; then
  echo "$direct"
  exit 77
fi
echo "$direct" | tail -n 3
[ $rc -eq 0 ] && ok || bad "dml_every_op --device vulkan (rc=$rc): $direct"
want=$(grep '^every_op on vulkan: ' <<<"$direct")

out=$("$EO" --pack "$WORK/pack" --target vulkan --only $OPS --no-big 2>&1); rc=$?
echo "$out" | tail -n 2
[ $rc -eq 0 ] && grep -q "^packed into $WORK/pack: " <<<"$out" && ok || bad "--pack (rc=$rc): $out"
# every case is listed; the packages are the compiled ones
n_pkg=$(find "$WORK/pack" -name 'eo_*.dmlpkg' | wc -l)
n_listed=$(grep -c $'\tpacked\t' "$WORK/pack/cases.tsv")
[ "$n_pkg" -gt 0 ] && [ "$n_pkg" -eq "$n_listed" ] && ok || bad "$n_pkg packages, $n_listed packed lines"
grep -qP '^\d+\tpacked\tSin\tbf16\trandom\t[^\t]*\t[^\t]*\t[^\t]*\t-\t' "$WORK/pack/cases.tsv" &&
  ok || bad "Sin bf16 is not in cases.tsv as a plain case (no known-failure reason)"

got=$("$CHK" "$WORK/pack" --device vulkan --json "$WORK/everyop.json" 2>&1); rc=$?
echo "$got" | tail -n 2
[ $rc -eq 0 ] && ok || bad "dml_everyop_check (rc=$rc): $got"
[ -n "$want" ] && [ "$(grep '^every_op on vulkan: ' <<<"$got")" = "$want" ] && ok ||
  bad "the counts differ: dml_every_op: '$want'; dml_everyop_check: '$(grep '^every_op on' <<<"$got")'"
grep -q '"failed": 0,' "$WORK/everyop.json" && grep -q '"known": \[\]' "$WORK/everyop.json" &&
  ok || bad "everyop.json: $(cat "$WORK/everyop.json")"

# A wrong kernel is a disagreement: exit 1, named.
out=$(DMLC_VULKAN_TEST_CORRUPT_KERNEL=k0_elementwise "$CHK" "$WORK/pack" --device vulkan 2>&1); rc=$?
[ $rc -eq 1 ] && grep -q '^FAIL Relu f32 random on vulkan: k0_elementwise ' <<<"$out" && ok ||
  bad "corrupt k0_elementwise (rc=$rc): $out"
# Known failures that fail are counted as known (exit 0): the cases the
# wrong k0_elementwise breaks, marked known in a copy of the manifest.
out=$(DMLC_VULKAN_TEST_CORRUPT_KERNEL=k0_elementwise "$CHK" "$WORK/pack" --device vulkan 2>&1)
sed -n 's/^FAIL \([^ ]*\) \([^ ]*\) \(.*\) on vulkan: .*/\1\t\2\t\3/p' <<<"$out" >"$WORK/broken.tsv"
n_broken=$(wc -l <"$WORK/broken.tsv")
mkdir -p "$WORK/kfail" && cp "$WORK"/pack/eo_*.dmlpkg "$WORK/kfail/"
awk -F'\t' -v OFS='\t' 'NR == FNR { b[$1 FS $2 FS $3] = 1; next }
  $2 == "packed" && (($3 FS $4 FS $5) in b) { $9 = "made up" } 1' \
  "$WORK/broken.tsv" "$WORK/pack/cases.tsv" >"$WORK/kfail/cases.tsv"
out=$(DMLC_VULKAN_TEST_CORRUPT_KERNEL=k0_elementwise "$CHK" "$WORK/kfail" --device vulkan \
  --json "$WORK/kfail.json" 2>&1); rc=$?
[ "$n_broken" -gt 0 ] && [ $rc -eq 0 ] && grep -q " $n_broken known failures, 0 failed," <<<"$out" &&
  grep -q "\"known_failures\": $n_broken," "$WORK/kfail.json" &&
  grep -q '"op": "Relu", "dtype": "f32", "shape": "random"' "$WORK/kfail.json" &&
  ok || bad "known failures that fail ($n_broken marked, rc=$rc): $out $(cat "$WORK/kfail.json")"
# A known failure that passes fails the run (the list is out of date).
awk -F'\t' -v OFS='\t' '$2 == "packed" && $3 == "Add" && $4 == "f32" && $5 == "random" { $9 = "made up" } 1' \
  "$WORK/pack/cases.tsv" >"$WORK/known.tsv"
mkdir -p "$WORK/known" && cp "$WORK/known.tsv" "$WORK/known/cases.tsv" && cp "$WORK"/pack/eo_*.dmlpkg "$WORK/known/"
out=$("$CHK" "$WORK/known" --device vulkan 2>&1); rc=$?
[ $rc -eq 1 ] && grep -q '^FAIL Add f32 random on vulkan: listed as a known failure (made up) but passes' <<<"$out" &&
  ok || bad "known passing (rc=$rc): $out"
# A manifest cut short is an error (exit 2), not a pass.
head -n 20 "$WORK/pack/cases.tsv" >"$WORK/known/cases.tsv"
out=$("$CHK" "$WORK/known" --device vulkan 2>&1); rc=$?
[ $rc -eq 2 ] && grep -q 'incomplete' <<<"$out" && ok || bad "cut short (rc=$rc): $out"
# --device cpu is the reference: skipped (77), and usage errors exit 2.
"$CHK" "$WORK/pack" --device cpu >/dev/null 2>&1; rc=$?
[ $rc -eq 77 ] && ok || bad "--device cpu (rc=$rc)"
"$CHK" >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] && ok || bad "no DIR (rc=$rc)"

echo "every_op_pack_vulkan: $pass passed, $fail failed"
[ $fail -eq 0 ]
