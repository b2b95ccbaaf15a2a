#!/usr/bin/env bash
# Runs the zoo's CI subset: for each line of models.txt (a folder under
# tests/zoo holding model.onnx, spec and the .npy files), dmlc compile with
# the spec's flags, dmlc run on the saved inputs, and zoo_compare of every
# output with ONNX Runtime's saved output (scaled error <= 1e-4).
# usage: test_zoo_ci.sh DMLC ZOO_COMPARE SRC_DIR WORK_DIR
set -euo pipefail
dmlc="$1" cmp="$2" src="$3" work="$4"
rm -rf "$work"
mkdir -p "$work"
fail=0 n=0
while read -r m; do
  case "$m" in '' | '#'*) continue ;; esac
  d="$src/$m"
  n=$((n + 1))
  # spec lines: "compile FLAG..." / "input NAME FILE" / "ref FILE_OF_OUTPUT REF_FILE"
  compile=() inputs=() refs=()
  while read -r kind a b; do
    case "$kind" in
    compile) read -r -a compile <<<"$a $b" ;;
    input) inputs+=(--input "$a=$d/$b") ;;
    ref) refs+=("$a" "$b") ;;
    esac
  done <"$d/spec"
  pkg="$work/$m.dmlpkg"
  if ! "$dmlc" compile "$d/model.onnx" -o "$pkg" "${compile[@]}" >"$work/$m.compile.log" 2>&1; then
    echo "FAIL $m: dmlc compile"
    cat "$work/$m.compile.log"
    fail=1
    continue
  fi
  if ! "$dmlc" run "$pkg" "${inputs[@]}" --output-dir "$work/$m.out" >"$work/$m.run.log" 2>&1; then
    echo "FAIL $m: dmlc run"
    cat "$work/$m.run.log"
    fail=1
    continue
  fi
  for ((i = 0; i < ${#refs[@]}; i += 2)); do
    if ! "$cmp" "$work/$m.out/${refs[i]}" "$d/${refs[i + 1]}"; then
      echo "FAIL $m: output ${refs[i]}"
      fail=1
    fi
  done
  echo "done $m"
done <"$src/models.txt"
if [ "$n" = 0 ]; then
  echo "no models in $src/models.txt"
  exit 1
fi
exit $fail
