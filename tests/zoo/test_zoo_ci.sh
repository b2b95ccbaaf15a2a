#!/usr/bin/env bash
# Runs the zoo's CI subset: for each line of models.txt (a folder under
# tests/zoo holding model.onnx, spec and the .npy files), dmlc compile with
# the spec's flags, dmlc run on the saved inputs, and zoo_compare of every
# output with ONNX Runtime's saved output (scaled error <= 1e-4); then the
# same for each input set of other sizes the folder's `sets` names
# (<tag>.in.<i>.npy / <tag>.ref.<i>.npy in the spec's order, written by
# gen_sets.py: the text models at batch 1 x sequence 32 and 3 x 5), from
# the same package.
# With DEVICE vulkan the packages are compiled for cpu,vulkan and run with
# --device vulkan; without a Vulkan device that exits 77 (skipped), saying
# so.
# usage: test_zoo_ci.sh DMLC ZOO_COMPARE SRC_DIR WORK_DIR [DEVICE]
set -euo pipefail
dmlc="$1" cmp="$2" src="$3" work="$4" device="${5:-cpu}"
extra=() run_dev=()
if [ "$device" != cpu ]; then
  # a device line is "vulkan:0  NAME ..."; without one, "vulkan  not available: WHY"
  if ! "$dmlc" devices 2>/dev/null | grep -q "^$device:[0-9]"; then
    echo "SKIP: no $device device: $("$dmlc" devices 2>&1 | grep "^$device" | head -1)"
    exit 77
  fi
  extra=(--target "cpu,$device")
  run_dev=(--device "$device")
fi
rm -rf "$work"
mkdir -p "$work"
fail=0 n=0
while read -r m; do
  case "$m" in '' | '#'*) continue ;; esac
  d="$src/$m"
  n=$((n + 1))
  # spec lines: "compile FLAG..." / "input NAME FILE" / "ref FILE_OF_OUTPUT REF_FILE"
  compile=() names=() files=() refs=()
  while read -r kind a b; do
    case "$kind" in
    compile) read -r -a compile <<<"$a $b" ;;
    input) names+=("$a") files+=("$b") ;;
    ref) refs+=("$a" "$b") ;;
    esac
  done <"$d/spec"
  pkg="$work/$m.dmlpkg"
  if ! "$dmlc" compile "$d/model.onnx" -o "$pkg" "${compile[@]}" "${extra[@]}" \
    >"$work/$m.compile.log" 2>&1; then
    echo "FAIL $m: dmlc compile"
    cat "$work/$m.compile.log"
    fail=1
    continue
  fi
  sets=(-)
  if [ -f "$d/sets" ]; then
    while read -r t; do
      case "$t" in '' | '#'*) continue ;; esac
      sets+=("$t")
    done <"$d/sets"
  fi
  for t in "${sets[@]}"; do
    inputs=()
    for ((i = 0; i < ${#names[@]}; i++)); do
      f="${files[i]}"
      [ "$t" = - ] || f="$t.in.$i.npy"
      inputs+=(--input "${names[i]}=$d/$f")
    done
    out="$work/$m.$t.out"
    if ! "$dmlc" run "$pkg" "${inputs[@]}" "${run_dev[@]}" --output-dir "$out" \
      >"$work/$m.$t.run.log" 2>&1; then
      echo "FAIL $m (set $t): dmlc run"
      cat "$work/$m.$t.run.log"
      fail=1
      continue
    fi
    for ((i = 0; i < ${#refs[@]}; i += 2)); do
      r="${refs[i + 1]}"
      [ "$t" = - ] || r="$t.ref.$((i / 2)).npy"
      if ! "$cmp" "$out/${refs[i]}" "$d/$r"; then
        echo "FAIL $m (set $t): output ${refs[i]}"
        fail=1
      fi
    done
  done
  echo "done $m on $device (sets: ${sets[*]})"
done <"$src/models.txt"
if [ "$n" = 0 ]; then
  echo "no models in $src/models.txt"
  exit 1
fi
exit $fail
