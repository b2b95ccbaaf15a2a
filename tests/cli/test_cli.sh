#!/usr/bin/env bash
# End-to-end checks of the `dmlc` command as a user meets it: every
# subcommand's --help, the compile -> run -> inspect -> summary path on a
# reference model, and the user-facing errors with their messages.
#   test_cli.sh DMLC SHARED_DIR WORKDIR
set -uo pipefail
DMLC=$1 SHARED=$2 WORK=$3
mkdir -p "$WORK"
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAILED: $*" >&2; }
# expect_ok NAME CMD... / expect_err NAME SUBSTRING CMD...
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

for c in compile run opt inspect summary bench devices; do
  expect_ok "help-$c" "$DMLC" "$c" --help
  grep -q "usage: dmlc $c" <<<"$out" && ok || bad "help-$c has no usage line"
done
expect_ok help "$DMLC" --help
expect_err unknown-command "unknown command 'frobnicate'" "$DMLC" frobnicate
# A usage error: the error and one line pointing at --help, exit 2 (not the
# whole help text).
for args in "frobnicate" "run --bogus" "compile" "train m.onnx --epochs 0" "opt" "inspect" "bench x --iterations 0"; do
  # shellcheck disable=SC2086
  out=$("$DMLC" $args 2>&1); rc=$?
  cmd=${args%% *}; [ "$cmd" = frobnicate ] && hint="see 'dmlc --help'" || hint="see 'dmlc $cmd --help' for the usage and flags"
  [ $rc -eq 2 ] && [ "$(wc -l <<<"$out")" -eq 2 ] && grep -q "^error: dmlc" <<<"$out" && grep -qF "$hint" <<<"$out" \
    && ok || bad "usage error of 'dmlc $args' (rc=$rc): $out"
done
# version: the version, the commit, the targets and devices of this build
for v in version --version; do
  expect_ok "$v" "$DMLC" $v
  grep -q "^dmlc [0-9]*\.[0-9]*\.[0-9]*$" <<<"$out" && grep -qE "^commit: ([0-9a-f]{12}|unknown)" <<<"$out" && \
    grep -q "^targets: cpu" <<<"$out" && grep -q "^devices: cpu" <<<"$out" && ok || bad "dmlc $v: $out"
done
"$DMLC" --help | grep -q "^  version " && ok || bad "--help does not list version"
expect_err version-args "'version' takes no arguments" "$DMLC" version extra

M=$SHARED/models/lenet5.onnx
expect_ok compile "$DMLC" compile "$M" -o "$WORK/lenet5.dmlpkg" --batch-bound 8
grep -q "arena" <<<"$out" && ok || bad "compile prints no arena size: $out"
expect_ok run "$DMLC" run "$WORK/lenet5.dmlpkg" --input "input=$SHARED/models/lenet5_io/input_0.npy" --output-dir "$WORK/out"
[ -f "$WORK/out/logits.npy" ] && ok || bad "run wrote no logits.npy"
expect_ok inspect "$DMLC" inspect "$WORK/lenet5.dmlpkg"
grep -q "batch <= 8" <<<"$out" && ok || bad "inspect does not show the bound: $out"
expect_ok summary "$DMLC" summary "$WORK/lenet5.dmlpkg"
grep -q "Total params: 61,706 (61.7K)" <<<"$out" && ok || bad "summary total: $out"
expect_ok summary-onnx "$DMLC" summary "$M"
grep -q "Trainable params: 61,706 (61.7K)" <<<"$out" && ok || bad "summary onnx: $out"
# Only user-visible outputs (read by a node or returned): Dropout's unused
# mask is not listed, from the ONNX file, a package, and with --json.
UM=$SHARED/models/fashion_mlp_untrained.onnx
expect_ok summary-dropout "$DMLC" summary "$UM"
grep -q "(Dropout) *\[batch,256\] *[0-9]" <<<"$out" && ! grep -q "\[batch,256\] \[batch,256\]" <<<"$out" &&
  ok || bad "summary shows Dropout's mask: $out"
expect_ok compile-untrained "$DMLC" compile "$UM" -o "$WORK/untrained.dmlpkg"
expect_ok summary-dropout-pkg "$DMLC" summary "$WORK/untrained.dmlpkg"
grep -q "(Dropout) *\[batch,256\] *[0-9]" <<<"$out" && ! grep -q "\[batch,256\] \[batch,256\]" <<<"$out" &&
  ok || bad "package summary shows Dropout's mask: $out"
expect_ok summary-dropout-json "$DMLC" summary "$UM" --json
grep -q '"Dropout", "output_shape": "\[batch,256\]"' <<<"$out" && ok || bad "summary --json shows Dropout's mask: $out"
# compile --help names the importer's opset range (the README's 1 to 28)
expect_ok compile-help "$DMLC" compile --help
grep -q "opsets 1-28 of the default domain" <<<"$out" && grep -q "ONNX opsets 1 to 28" "$(dirname "$0")/../../README.md" &&
  ok || bad "compile --help and README disagree on opsets: $out"

# Errors a user meets.
expect_err missing-model "cannot open" "$DMLC" compile "$WORK/nope.onnx" -o "$WORK/x.dmlpkg"
expect_err no-output "no output given" "$DMLC" compile "$M"
expect_err target-unknown "unknown target 'tpu'" "$DMLC" compile "$M" -o "$WORK/x.dmlpkg" --target tpu
# GPU targets (when this build has codegen/): kernels in the package, the
# plan printed, and a clear list of what a target cannot emit.
if "$DMLC" compile --help | grep -q "vulkan (SPIR-V kernels)" && \
   ! "$DMLC" compile "$M" -o "$WORK/x.dmlpkg" --target vulkan 2>&1 | grep -q "not implemented in this build"; then
  # an op no GPU target emits (Multinomial: scripts/gen_onnx_fixtures.py)
  MISSING=$(cd "$(dirname "$0")/../onnx/fixtures" && pwd)/gpu_missing_op.onnx
  expect_err target-missing-ops "Multinomial: 1 node" "$DMLC" compile "$MISSING" -o "$WORK/x.dmlpkg" --target vulkan --no-cpu-fallback
  grep -qF "target 'vulkan' cannot emit every op" <<<"$out" && ok || bad "missing-ops message: $out"
  F=$SHARED/models/fashion_mlp.onnx
  expect_ok compile-gpu "$DMLC" compile "$F" -o "$WORK/fm.dmlpkg" --target cpu,vulkan,metal --print-kernels
  grep -qF "kernel k0_gemm (gemm)" <<<"$out" && grep -qF "nodes: 1:Gemm(/net/net.1/Gemm) 2:Relu(/net/net.2/Relu)" <<<"$out" \
    && ok || bad "--print-kernels: $out"
  expect_ok inspect-gpu "$DMLC" inspect "$WORK/fm.dmlpkg"
  grep -q "kernels.spirv" <<<"$out" && grep -q "kernels.msl" <<<"$out" && ok || bad "inspect: no kernel sections: $out"
  expect_ok run-gpu-pkg-on-cpu "$DMLC" run "$WORK/fm.dmlpkg" --input "input=$SHARED/models/fashion_mlp_io/input_0.npy" --output-dir "$WORK/out2"
  # A missing Vulkan loader is a clear error, for devices and for sessions.
  expect_ok devices-no-loader env DMLC_VULKAN_LOADER=/nonexistent/libvulkan.so.1 "$DMLC" devices
  grep -qF "could not be opened" <<<"$out" && ok || bad "devices without a loader: $out"
  expect_err run-no-loader "the Vulkan loader '/nonexistent/libvulkan.so.1' could not be opened" \
    env DMLC_VULKAN_LOADER=/nonexistent/libvulkan.so.1 "$DMLC" run "$WORK/fm.dmlpkg" \
    --input "input=$SHARED/models/fashion_mlp_io/input_0.npy" --device vulkan
  if "$DMLC" devices | grep -q "^vulkan:0"; then
    expect_ok devices "$DMLC" devices
    grep -qF "[default for 'vulkan']" <<<"$out" && ok || bad "devices marks no default: $out"
    expect_ok run-vulkan "$DMLC" run "$WORK/fm.dmlpkg" --input "input=$SHARED/models/fashion_mlp_io/input_0.npy" --output-dir "$WORK/out3" --device vulkan
    cmp -s "$WORK/out3/logits.npy" "$WORK/out2/logits.npy" || ok # values compared in test_vulkan
    expect_ok bench-vulkan "$DMLC" bench "$WORK/fm.dmlpkg" --device vulkan --iterations 3 --warmup 1 --json
    grep -qF '"name": "k0_gemm", "nodes": "Gemm,Relu"' <<<"$out" && ok || bad "bench --json: $out"
    expect_err run-no-kernels "compile it with dmlc compile --target vulkan" "$DMLC" run "$WORK/lenet5.dmlpkg" \
      --input "input=$SHARED/models/lenet5_io/input_0.npy" --device vulkan
    expect_err bad-device "no Vulkan device 'vulkan:42'" "$DMLC" run "$WORK/fm.dmlpkg" \
      --input "input=$SHARED/models/fashion_mlp_io/input_0.npy" --device vulkan:42
  else
    echo "note: no Vulkan device here; the Vulkan run checks of this script were skipped"
  fi
  # cuda: PTX (clang-16) in kernels.cuda; the ops it lacks listed
  expect_err target-cuda-missing-ops "target 'cuda' cannot emit every op" "$DMLC" compile "$MISSING" -o "$WORK/x.dmlpkg" --target cuda --no-cpu-fallback
  expect_ok compile-cuda "$DMLC" compile "$F" -o "$WORK/fc.dmlpkg" --target cuda --cuda-arch ptx
  expect_ok inspect-cuda "$DMLC" inspect "$WORK/fc.dmlpkg"
  grep -q "kernels.cuda" <<<"$out" && ok || bad "inspect: no kernels.cuda: $out"
  expect_err cuda-arch-bad "bad --cuda-arch 'sm80'" "$DMLC" compile "$F" -o "$WORK/fc.dmlpkg" --target cuda --cuda-arch sm80
  expect_err cuda-arch-no-cuda "--cuda-arch needs --target cuda" "$DMLC" compile "$F" -o "$WORK/fc.dmlpkg" --cuda-arch ptx
fi
expect_ok bench-cpu "$DMLC" bench "$WORK/lenet5.dmlpkg" --iterations 3 --warmup 1
grep -q "end to end: min" <<<"$out" && ok || bad "bench on cpu: $out"
expect_err bench-bad-iterations "--iterations needs a positive integer" "$DMLC" bench "$WORK/lenet5.dmlpkg" --iterations 0
expect_err bad-bound "--batch-bound needs a positive integer" "$DMLC" compile "$M" -o "$WORK/x.dmlpkg" --batch-bound 0
expect_err bad-dyn-bound "--dynamic-dim-bound needs a positive integer" "$DMLC" compile "$M" -o "$WORK/x.dmlpkg" --dynamic-dim-bound 0
expect_err bad-dyn-max "--dynamic-max-elements needs a positive integer" "$DMLC" compile "$M" -o "$WORK/x.dmlpkg" --dynamic-max-elements=x
# A Reshape whose shape is a graph input compiles without --bind: its dims
# are data-dependent symbols bounded by the input's element count (6).
R=$(dirname "$0")/../conformance/fixtures/reshape_input.onnx
expect_ok compile-dyn-shape "$DMLC" compile "$R" -o "$WORK/reshape.dmlpkg" --dynamic-dim-bound 16 --dynamic-max-elements 100
expect_ok inspect-dyn-shape "$DMLC" inspect "$WORK/reshape.dmlpkg"
grep -q "Reshape_2.d0 <= 6" <<<"$out" && ok || bad "inspect shows no data-dependent symbol: $out"
# Rows beyond the batch bound run in chunks of the bound; the concatenated
# outputs are those of one run at a bound that fits (bit for bit on cpu).
expect_ok batch-over-bound "$DMLC" run "$WORK/lenet5.dmlpkg" --input "input=$SHARED/models/lenet5_io/input_1.npy" --output-dir "$WORK/chunks"
grep -qF "note: 64 rows exceed the batch bound 8: running 8 chunks and concatenating the outputs" <<<"$out" && ok || bad "no chunk note: $out"
expect_ok compile-64 "$DMLC" compile "$M" -o "$WORK/lenet64.dmlpkg" --batch-bound 64
expect_ok run-64 "$DMLC" run "$WORK/lenet64.dmlpkg" --input "input=$SHARED/models/lenet5_io/input_1.npy" --output-dir "$WORK/whole"
cmp -s "$WORK/chunks/logits.npy" "$WORK/whole/logits.npy" && ok || bad "chunked run differs from the whole run"
# a last chunk shorter than the bound (64 = 12 * 5 + 4)
expect_ok compile-5 "$DMLC" compile "$M" -o "$WORK/lenet5b.dmlpkg" --batch-bound 5
expect_ok run-5 "$DMLC" run "$WORK/lenet5b.dmlpkg" --input "input=$SHARED/models/lenet5_io/input_1.npy" --output-dir "$WORK/chunks5"
grep -qF "running 13 chunks" <<<"$out" && cmp -s "$WORK/chunks5/logits.npy" "$WORK/whole/logits.npy" && ok || bad "bound-5 chunks: $out"
# several inputs: batch rows split, a static input bound whole; an output
# without batch rows cannot be concatenated (an error, not a wrong file)
FX=$(cd "$(dirname "$0")/fixtures" && pwd)
expect_ok compile-two "$DMLC" compile "$FX/two_inputs.onnx" -o "$WORK/two2.dmlpkg" --batch-bound 2
expect_err run-two-chunks "5 rows exceed the batch bound 2 and output 'z' (f32[2]) has no 'batch' rows to concatenate over chunks" \
  "$DMLC" run "$WORK/two2.dmlpkg" --input "a=$FX/a5.npy" --input "b=$FX/a5.npy" --input "c=$FX/c2.npy" --output-dir "$WORK/two"
grep -qF "recompile with --batch-bound 5" <<<"$out" && ok || bad "no recompile hint: $out"
expect_ok compile-two-y "$DMLC" compile "$FX/two_inputs_y.onnx" -o "$WORK/twoy.dmlpkg" --batch-bound 2
expect_ok run-two-y "$DMLC" run "$WORK/twoy.dmlpkg" --input "a=$FX/a5.npy" --input "b=$FX/a5.npy" --input "c=$FX/c2.npy" --output-dir "$WORK/twoy"
# y = 2 a + c over rows 0..4 of a = [[0,1],...,[8,9]], c = [100,200]
grep -qF "y: f32[5,2] -> $WORK/twoy/y.npy (min 100, max 218, mean 159)" <<<"$out" && ok || bad "two-input chunks: $out"
cmp -s "$WORK/twoy/y.npy" "$FX/y5.npy" && ok || bad "two-input chunks: y differs from y5.npy"
head -c 100 "$WORK/lenet5.dmlpkg" > "$WORK/trunc.dmlpkg"
expect_err truncated-pkg "error: " "$DMLC" run "$WORK/trunc.dmlpkg" --input "input=$SHARED/models/lenet5_io/input_0.npy"
expect_err not-npy "error: " "$DMLC" run "$WORK/lenet5.dmlpkg" --input "input=$M"
expect_err wrong-input-name "nosuch" "$DMLC" run "$WORK/lenet5.dmlpkg" --input "nosuch=$SHARED/models/lenet5_io/input_0.npy"
expect_err wrong-shape "input" "$DMLC" run "$WORK/lenet5.dmlpkg" --input "input=$SHARED/models/resnet_small_io/input_0.npy"
# Rows of another rank with the same element count are reshaped (one note):
# [1,784] for lenet5's [batch,1,28,28] gives lenet5's reference output.
expect_ok reshape "$DMLC" run "$WORK/lenet5.dmlpkg" --input "input=$SHARED/models/fashion_mlp_io/input_0.npy" --output-dir "$WORK/rs"
grep -qF "note: input 'input': reshaped f32[1,784] from '$SHARED/models/fashion_mlp_io/input_0.npy' to f32[1,1,28,28] (784 values per row)" <<<"$out" && ok || bad "reshape note: $out"
expect_ok reshape-back "$DMLC" run "$WORK/lenet5.dmlpkg" --input "input=$SHARED/models/lenet5_io/input_0.npy" --output-dir "$WORK/rs0"
! grep -q "note:" <<<"$out" && ok || bad "a note without a reshape: $out"

# Output names are kept: percent-encoding of bytes outside [A-Za-z0-9._-]
# (and of a leading '.'); "a/b" and "a_b" no longer land in one file.
FX=$(cd "$(dirname "$0")/fixtures" && pwd)
expect_ok compile-odd "$DMLC" compile "$FX/odd_names.onnx" -o "$WORK/odd.dmlpkg"
rm -rf "$WORK/odd"
expect_ok run-odd "$DMLC" run "$WORK/odd.dmlpkg" --input "$FX/x_f32.npy" --output-dir "$WORK/odd"
for f in 1_minute_timer.npy a%2Fb.npy a_b.npy out%3A0.npy %2Ehidden.npy 50%25.npy caf%C3%A9.npy; do
  [ -f "$WORK/odd/$f" ] && ok || bad "run-odd wrote no $f: $(ls "$WORK/odd")"
done
[ "$(ls -A "$WORK/odd" | wc -l)" -eq 7 ] && ok || bad "run-odd: not 7 files: $(ls -A "$WORK/odd")"
grep -qF "a/b: f32[3,4] -> $WORK/odd/a%2Fb.npy (min -1.375, max 1.375, mean 0)" <<<"$out" && ok || bad "run-odd line: $out"
grep -qF "a_b: f32[3,4] -> $WORK/odd/a_b.npy (min 0.125, max 1.375, mean 0.75)" <<<"$out" && ok || bad "run-odd line: $out"
"$DMLC" run --help | grep -qF '"/fc/Gemm_output_0" -> %2Ffc%2FGemm_output_0.npy' && ok || bad "run --help does not tell the file names"
expect_ok compile-long "$DMLC" compile "$FX/long_name.onnx" -o "$WORK/long.dmlpkg"
expect_err run-long "(300 bytes) is too long for a file name" "$DMLC" run "$WORK/long.dmlpkg" --input "$FX/x_f32.npy" --output-dir "$WORK/long"
# Another dtype is an error unless --cast.
expect_err dtype "input 'x': '$FX/x_f64.npy' holds f64 values, the model input is f32" "$DMLC" run "$WORK/odd.dmlpkg" --input "$FX/x_f64.npy" --output-dir "$WORK/odd"
grep -qF "pass --cast to convert it to f32" <<<"$out" && ok || bad "no --cast hint: $out"
expect_ok cast "$DMLC" run "$WORK/odd.dmlpkg" --input "$FX/x_f64.npy" --output-dir "$WORK/odd64" --cast
grep -qF "note: input 'x': converted f64 values from '$FX/x_f64.npy' to f32 (--cast)" <<<"$out" && ok || bad "cast note: $out"
cmp -s "$WORK/odd/a_b.npy" "$WORK/odd64/a_b.npy" && ok || bad "--cast gives other values"
# --cast never wraps or saturates: a value the input's dtype cannot hold is
# an error naming the element (f32 inf from 1e300; -1.375 -> -1 for u8).
expect_err cast-inf "--cast: element 5 (1.0000000000000001e+300) does not fit f32" "$DMLC" run "$WORK/odd.dmlpkg" --input "$FX/x_f64_huge.npy" --output-dir "$WORK/odd64" --cast
expect_ok compile-u8 "$DMLC" compile "$FX/u8_input.onnx" -o "$WORK/u8.dmlpkg"
expect_err cast-u8 "--cast: element 0 (-1.375) does not fit u8" "$DMLC" run "$WORK/u8.dmlpkg" --input "$FX/x_f32.npy" --output-dir "$WORK/u8" --cast
expect_ok cast-u8-ok "$DMLC" run "$WORK/u8.dmlpkg" --input "$FX/x_u8ok.npy" --output-dir "$WORK/u8" --cast
grep -qF "y: f32[2,4] -> $WORK/u8/y.npy (min 0, max 255, mean 59.5)" <<<"$out" && ok || bad "cast to u8 (truncating 1.9, 4.5): $out"
# --top-k with labels: lenet5 on its reference input is a 9 (then 7, 5).
expect_ok top-k "$DMLC" run "$WORK/lenet5.dmlpkg" --input "$SHARED/models/lenet5_io/input_0.npy" --output-dir "$WORK/tk" --top-k 3 --labels "$FX/labels.txt"
grep -qF "  row 0: 9 nine: 6.12" <<<"$out" && grep -qF ", 7 seven: 5.79" <<<"$out" && ok || bad "top-k: $out"
expect_ok top-k-nolabels "$DMLC" run "$WORK/lenet5.dmlpkg" --input "$SHARED/models/lenet5_io/input_2.npy" --output-dir "$WORK/tk" --top-k 1
grep -qE "^  row 0: [0-9]: " <<<"$out" && ok || bad "top-k without labels: $out"
head -n 9 "$FX/labels.txt" > "$WORK/labels9.txt"
expect_err top-k-labels "--labels '$WORK/labels9.txt' has 9 lines, output 'logits' has 10 classes" "$DMLC" run "$WORK/lenet5.dmlpkg" --input "$SHARED/models/lenet5_io/input_0.npy" --output-dir "$WORK/tk" --top-k 3 --labels "$WORK/labels9.txt"
# trailing blank lines name no class; a wrong count writes no output file
{ cat "$FX/labels.txt"; printf '\n  \n\n'; } > "$WORK/labels_blank.txt"
expect_ok top-k-labels-blank "$DMLC" run "$WORK/lenet5.dmlpkg" --input "$SHARED/models/lenet5_io/input_0.npy" --output-dir "$WORK/tkb" --top-k 1 --labels "$WORK/labels_blank.txt"
rm -rf "$WORK/tk9" && mkdir -p "$WORK/tk9"
expect_err top-k-labels-nowrite "has 9 lines" "$DMLC" run "$WORK/lenet5.dmlpkg" --input "$SHARED/models/lenet5_io/input_0.npy" --output-dir "$WORK/tk9" --top-k 3 --labels "$WORK/labels9.txt"
[ -z "$(ls -A "$WORK/tk9")" ] && ok || bad "a --labels count error still wrote: $(ls "$WORK/tk9")"
expect_err top-k-bad "--top-k needs an integer in [1, 64], not '0'" "$DMLC" run "$WORK/lenet5.dmlpkg" --top-k 0
expect_err labels-no-top-k "--labels needs --top-k" "$DMLC" run "$WORK/lenet5.dmlpkg" --labels "$FX/labels.txt"
# A compile that fails leaves an existing package untouched.
cp "$WORK/lenet5.dmlpkg" "$WORK/keep.dmlpkg"
expect_err atomic "cannot open" "$DMLC" compile "$WORK/nope.onnx" -o "$WORK/keep.dmlpkg"
cmp -s "$WORK/lenet5.dmlpkg" "$WORK/keep.dmlpkg" && ok || bad "failed compile changed the existing package"

# Special files: a FIFO as a model, a package, an input or an external-data
# file is refused at once (timeout: before, each of these hung forever).
rm -f "$WORK/fifo" && mkfifo "$WORK/fifo"
expect_err fifo-model "'$WORK/fifo' is a FIFO (named pipe), not a regular file" timeout 20 "$DMLC" compile "$WORK/fifo" -o "$WORK/x.dmlpkg"
expect_err fifo-package "'$WORK/fifo' is a FIFO (named pipe), not a regular file" timeout 20 "$DMLC" run "$WORK/fifo" --input "$FX/x_f32.npy"
expect_err fifo-input "'$WORK/fifo' is a FIFO (named pipe), not a regular file" timeout 20 "$DMLC" run "$WORK/odd.dmlpkg" --input "x=$WORK/fifo"
expect_err fifo-inspect "'$WORK/fifo' is a FIFO (named pipe), not a regular file" timeout 20 "$DMLC" inspect "$WORK/fifo"
expect_err fifo-opt "'$WORK/fifo' is a FIFO (named pipe), not a regular file" timeout 20 "$DMLC" opt "$WORK/fifo"
expect_err fifo-labels "'$WORK/fifo' is a FIFO (named pipe), not a regular file" timeout 20 "$DMLC" run "$WORK/lenet5.dmlpkg" --input "$SHARED/models/lenet5_io/input_0.npy" --top-k 1 --labels "$WORK/fifo"
expect_err dir-model "'$WORK' is a directory, not a regular file" timeout 20 "$DMLC" compile "$WORK" -o "$WORK/x.dmlpkg"
# external data: the model folder's external.bin replaced by a FIFO
EXT=$(cd "$(dirname "$0")/../onnx/fixtures" && pwd)
rm -rf "$WORK/ext" && mkdir -p "$WORK/ext" && cp "$EXT/external.onnx" "$WORK/ext/" && mkfifo "$WORK/ext/external.bin"
expect_err fifo-external "is a FIFO (named pipe), not a regular file" timeout 20 "$DMLC" compile "$WORK/ext/external.onnx" -o "$WORK/x.dmlpkg"
grep -qF "cannot read external data file 'external.bin'" <<<"$out" && ok || bad "fifo-external names no file: $out"

# Writing outputs: only a regular file is replaced. A symbolic link or a
# device node at the output path is refused and left as it was.
ln -sfn "$WORK/target.dmlpkg" "$WORK/link.dmlpkg"; rm -f "$WORK/target.dmlpkg"
expect_err out-symlink "'$WORK/link.dmlpkg' is a symbolic link: dmlc replaces only regular files" "$DMLC" compile "$M" -o "$WORK/link.dmlpkg"
[ -L "$WORK/link.dmlpkg" ] && [ ! -e "$WORK/target.dmlpkg" ] && ok || bad "the symbolic link was replaced"
expect_err out-fifo "'$WORK/fifo' is a FIFO (named pipe): dmlc replaces only regular files" timeout 20 "$DMLC" compile "$M" -o "$WORK/fifo"
[ -p "$WORK/fifo" ] && ok || bad "the FIFO was replaced"
expect_err out-devnull "'/dev/null' is a character device: dmlc replaces only regular files" "$DMLC" compile "$M" -o /dev/null
[ -c /dev/null ] && ok || bad "/dev/null is no longer a device"
mkdir -p "$WORK/npyout" && ln -sfn /dev/null "$WORK/npyout/a_b.npy"
expect_err out-npy-symlink "a_b.npy' is a symbolic link" "$DMLC" run "$WORK/odd.dmlpkg" --input "$FX/x_f32.npy" --output-dir "$WORK/npyout"
expect_err opt-out-symlink "is a symbolic link" "$DMLC" opt "$M" -o "$WORK/link.dmlpkg"
# --print-ir-after of a pass the pipeline does not run: an error, not an
# empty dump with status 0 (a new user's review, stop 23)
expect_err opt-dump-absent "pass 'fuse' is not in the pipeline 'shape-infer'" "$DMLC" opt "$M" --print-ir-after=fuse
# The output is the model by another spelling (./m.onnx): refused, model kept.
cp "$M" "$WORK/m.onnx"
DMLC_ABS=$(cd "$(dirname "$DMLC")" && pwd)/$(basename "$DMLC")
expect_err same-file "the output './m.onnx' is the model 'm.onnx' itself" bash -c "cd '$WORK' && '$DMLC_ABS' compile m.onnx -o ./m.onnx"
cmp -s "$M" "$WORK/m.onnx" && ok || bad "compile -o ./m.onnx changed the model"
expect_err opt-same-file "the output './m.onnx' is the input 'm.onnx' itself" bash -c "cd '$WORK' && '$DMLC_ABS' opt m.onnx -o ./m.onnx"
cmp -s "$M" "$WORK/m.onnx" && ok || bad "opt -o ./m.onnx changed the model"
ln -f "$WORK/m.onnx" "$WORK/hard.onnx"
expect_err same-file-hardlink "is the model" "$DMLC" compile "$WORK/m.onnx" -o "$WORK/hard.onnx"
# dmlc run: an output that would replace an --input file is refused.
mkdir -p "$WORK/inout" && cp "$FX/x_f32.npy" "$WORK/inout/a_b.npy"
expect_err run-over-input "output 'a_b' would be written to '$WORK/inout/a_b.npy', which is the file of --input 'x=$WORK/inout/a_b.npy'" \
  "$DMLC" run "$WORK/odd.dmlpkg" --input "x=$WORK/inout/a_b.npy" --output-dir "$WORK/inout"
cmp -s "$FX/x_f32.npy" "$WORK/inout/a_b.npy" && ok || bad "run replaced its input"
# A replaced file keeps its mode (0600 stays 0600); a dead writer's temp
# file of the same output is removed, a live process's is kept.
rm -f "$WORK/p.dmlpkg"* && touch "$WORK/p.dmlpkg" && chmod 600 "$WORK/p.dmlpkg"
echo stale > "$WORK/p.dmlpkg.tmp.999999999"; echo live > "$WORK/p.dmlpkg.tmp.$$"
expect_ok keep-mode "$DMLC" compile "$M" -o "$WORK/p.dmlpkg"
[ "$(stat -c %a "$WORK/p.dmlpkg")" = 600 ] && ok || bad "mode $(stat -c %a "$WORK/p.dmlpkg"), not 600"
[ ! -e "$WORK/p.dmlpkg.tmp.999999999" ] && ok || bad "stale temp file kept"
[ -e "$WORK/p.dmlpkg.tmp.$$" ] && ok || bad "a live process's temp file removed"
chmod 640 "$WORK/odd/a_b.npy"
expect_ok keep-mode-npy "$DMLC" run "$WORK/odd.dmlpkg" --input "$FX/x_f32.npy" --output-dir "$WORK/odd"
[ "$(stat -c %a "$WORK/odd/a_b.npy")" = 640 ] && ok || bad "npy mode $(stat -c %a "$WORK/odd/a_b.npy"), not 640"

# Importer: attribute types, ir_version, opset imports.
expect_err attr-type "node 'fc' (Gemm): attribute 'alpha' has type INT, the ONNX spec of Gemm says FLOAT" "$DMLC" compile "$FX/gemm_alpha_int.onnx" -o "$WORK/x.dmlpkg"
expect_err ir-version-0 "model has ir_version 0: not a valid ONNX model" "$DMLC" compile "$FX/ir_version0.onnx" -o "$WORK/x.dmlpkg"
expect_err no-opset "model declares no opset for the default ONNX domain (opset_import is missing)" "$DMLC" compile "$FX/no_opset.onnx" -o "$WORK/x.dmlpkg"
expect_err opset-99 "model uses opset 99 of the default ONNX domain" "$DMLC" compile "$FX/opset99.onnx" -o "$WORK/x.dmlpkg"

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
