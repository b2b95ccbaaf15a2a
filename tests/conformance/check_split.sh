#!/usr/bin/env bash
# The split conformance run (docs/conformance.md) against the direct one, on
# a subset: dml_conformance --emit compiles the tests for TARGETS,
# dml_conformance_run (runtime only) runs them on DEVICE, and its JSON must
# equal dml_conformance's own run on DEVICE test by test (status, reason,
# message, ops; not the seconds), both green against EXPECTED. Then one
# expected output is replaced by another tensor of its shape: the runner
# must report that test as wrong values and exit 1.
#   check_split.sh DML_CONFORMANCE DML_CONFORMANCE_RUN DATA EXPECTED WORKDIR DEVICE TARGETS
#                  FILTER [EXPECT_DEVICE]
# Exit status 77 (skipped) when DEVICE is absent or not EXPECT_DEVICE.
set -u
CONF=$1 RUN=$2 DATA=$3 EXP=$4 W=$5 DEV=$6 TARGETS=$7 FILTER=$8 EXPDEV=${9:-}
rm -rf "$W"
mkdir -p "$W"
dev_args=(--device "$DEV")
[ -n "$EXPDEV" ] && dev_args+=(--expect-device "$EXPDEV")
"$CONF" --data "$DATA" --filter "$FILTER" "${dev_args[@]}" --expected "$EXP" \
  --json "$W/direct.json" -j 2 >"$W/direct.log" 2>&1
rc=$?
if [ $rc -eq 77 ]; then cat "$W/direct.log"; exit 77; fi
[ $rc -eq 0 ] || { echo "FAIL: dml_conformance (direct) exit $rc"; cat "$W/direct.log"; exit 1; }
"$CONF" --data "$DATA" --filter "$FILTER" --emit "$W/emit" --target "$TARGETS" -j 2 ||
  { echo "FAIL: dml_conformance --emit"; exit 1; }
"$RUN" "$W/emit" "${dev_args[@]}" --expected "$EXP" --json "$W/split.json" -j 2 \
  >"$W/split.log" 2>&1
rc=$?
[ $rc -eq 0 ] || { echo "FAIL: dml_conformance_run exit $rc"; cat "$W/split.log"; exit 1; }
tail -3 "$W/split.log"
strip() { sed -E 's/, "seconds": [0-9.]+//' "$1"; }
if ! diff <(strip "$W/direct.json") <(strip "$W/split.json"); then
  echo "FAIL: the split run's results differ from dml_conformance's (above: < direct, > split)"
  exit 1
fi
passed=$(grep -c '"status": "pass"' "$W/split.json")
failed=$(grep -c '"status": "xfail"' "$W/split.json")
if [ "$passed" -lt 3 ] || [ "$failed" -lt 1 ]; then
  echo "FAIL: the subset should have passing and expected-failing tests ($passed, $failed)"
  exit 1
fi
echo "split run = direct run on $(grep -c '"suite"' "$W/split.json") tests ($passed pass)"
# A wrong expected output must be caught: test_relu's output replaced by
# its input (same shape and dtype, other values).
T="$W/emit/node/test_relu"
[ -f "$T/0_out0.npy" ] || { echo "FAIL: $T/0_out0.npy was not emitted"; exit 1; }
cp "$T/0_in0.npy" "$T/0_out0.npy"
"$RUN" "$W/emit" "${dev_args[@]}" --expected "$EXP" --filter test_relu -j 1 >"$W/bad.log" 2>&1
rc=$?
if [ $rc -ne 1 ] || ! grep -q "FAIL: node/test_relu: wrong values: output 0 'y'" "$W/bad.log"; then
  echo "FAIL: a wrong expected output was not reported (exit $rc):"
  cat "$W/bad.log"
  exit 1
fi
echo "a wrong expected output is reported: $(grep 'FAIL: node/test_relu' "$W/bad.log")"
