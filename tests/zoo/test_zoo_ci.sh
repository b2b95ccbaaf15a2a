#!/usr/bin/env bash
# Runs the zoo's CI subset: for each line of models.txt (a folder under
# tests/zoo holding model.onnx, spec and the .npy files), dmlc compile with
# the spec's flags, dmlc run on the saved inputs, and zoo_compare of every
# output with ONNX Runtime's saved output (scaled error <= 1e-4); then the
# same for each input set of other sizes the folder's `sets` names
# (<tag>.in.<i>.npy / <tag>.ref.<i>.npy in the spec's order, written by
# gen_sets.py: the text models at batch 1 x sequence 32 and 3 x 5), from
# the same package.
# With a DEVICE (vulkan) every model is compiled once for cpu,DEVICE and run
# from that package on the CPU and on the device in the same test (issue 23
# item 4: whole models, CPU against each GPU): each output of both runs
# against ONNX Runtime's (zoo models) or PyTorch's (reference models) saved
# output, and the device's against the CPU's, each as
#   max|a - b| / max(1, max|b|) <= 1e-4
# (NaN where b has NaN, equal infinities). With SHARED_MODELS (the
# reference models' folder, ../shared/models) its fashion_mlp, lenet5 and
# resnet_small run too, on their three saved pairs input_k.npy ->
# output_k.npy (batch 1, 64 and 1). Without a device of that kind it exits
# 77 (skipped), saying so.
# usage: test_zoo_ci.sh DMLC ZOO_COMPARE SRC_DIR WORK_DIR [DEVICE [SHARED_MODELS]]
set -euo pipefail
dmlc="$1" cmp="$2" src="$3" work="$4" device="${5:-cpu}" shared="${6:-}"
extra=() devices=(cpu)
if [ "$device" != cpu ]; then
  # a device line is "vulkan:0  NAME ..."; without one, "vulkan  not available: WHY"
  if ! "$dmlc" devices 2>/dev/null | grep -q "^$device:[0-9]"; then
    echo "SKIP: no $device device: $("$dmlc" devices 2>&1 | grep "^$device" | head -1)"
    exit 77
  fi
  extra=(--target "cpu,$device")
  devices=(cpu "$device")
fi
rm -rf "$work"
mkdir -p "$work"
fail=0 n=0

# compares $1 (dmlc's) with $2 (the reference) and says which pair it was ($3)
compare() {
  local line
  if line=$("$cmp" "$1" "$2" 2>&1); then
    echo "  ok   $3: ${line##*: }"
  else
    echo "  FAIL $3: ${line##*: }"
    fail=1
  fi
}

# run_set NAME PKG SET_TAG OUT1 REF1 [OUT2 REF2 ...]: runs PKG with the
# arguments of the array `inputs` on every device, compares each output file
# OUTk with REFk, and the device's with the CPU's
run_set() {
  local m="$1" pkg="$2" t="$3"
  shift 3
  local d out
  for d in "${devices[@]}"; do
    out="$work/$m.$t.$d"
    if ! "$dmlc" run "$pkg" "${inputs[@]}" --device "$d" --output-dir "$out" \
      >"$out.log" 2>&1; then
      echo "FAIL $m (set $t): dmlc run --device $d"
      cat "$out.log"
      fail=1
      return
    fi
  done
  while [ $# -gt 0 ]; do
    for d in "${devices[@]}"; do
      compare "$work/$m.$t.$d/$1" "$2" "$m (set $t) $1: $d vs saved"
    done
    [ "$device" = cpu ] ||
      compare "$work/$m.$t.$device/$1" "$work/$m.$t.cpu/$1" "$m (set $t) $1: $device vs cpu"
    shift 2
  done
}

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
    pairs=()
    for ((i = 0; i < ${#refs[@]}; i += 2)); do
      r="${refs[i + 1]}"
      [ "$t" = - ] || r="$t.ref.$((i / 2)).npy"
      pairs+=("${refs[i]}" "$d/$r")
    done
    run_set "$m" "$pkg" "$t" "${pairs[@]}"
  done
  echo "done $m on ${devices[*]} (sets: ${sets[*]})"
done <"$src/models.txt"
if [ "$n" = 0 ]; then
  echo "no models in $src/models.txt"
  exit 1
fi

# the reference models (input `input`, output `logits`, dim 0 `batch`)
if [ -n "$shared" ]; then
  for m in fashion_mlp lenet5 resnet_small; do
    pkg="$work/ref_$m.dmlpkg"
    if ! "$dmlc" compile "$shared/$m.onnx" -o "$pkg" "${extra[@]}" >"$work/ref_$m.compile.log" 2>&1; then
      echo "FAIL $m: dmlc compile"
      cat "$work/ref_$m.compile.log"
      fail=1
      continue
    fi
    for k in 0 1 2; do
      inputs=(--input "input=$shared/${m}_io/input_$k.npy")
      run_set "ref_$m" "$pkg" "$k" logits.npy "$shared/${m}_io/output_$k.npy"
    done
    echo "done $m on ${devices[*]} (pairs 0, 1, 2)"
  done
fi
exit $fail
