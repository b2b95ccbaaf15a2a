#!/usr/bin/env bash
# filecheck.sh — runs the `// RUN:` lines of a textual IR test, as LLVM's lit.
#
#   scripts/filecheck.sh TEST.dmlir DMLC FILECHECK
#
# Every line containing `// RUN:` is a command; a line ending in `\`
# continues on the next RUN line. In a command:
#   %s         is the test file, %S its directory, %t a scratch file path;
#   dmlc       runs the built DMLC binary;
#   FileCheck  runs FILECHECK (LLVM's, from Debian's llvm-16-tools);
#   not CMD    succeeds when CMD fails, and fails when it succeeds (LLVM's
#              `not`), e.g. `not dmlc opt %s --pass-pipeline=x 2>&1 | FileCheck %s`.
#              (Do not write `! dmlc ... | FileCheck`: bash's `!` negates the
#              whole pipeline, so a FileCheck failure would pass.) A crash
#              (killed by a signal) is a failure of `not` too.
# Each command runs in `bash -o pipefail`; the test fails if any command
# fails or if the file has no RUN line. Exit 77 (CTest's skip code here)
# when FILECHECK is empty or missing.
set -u
if [ $# -ne 3 ]; then
  echo "usage: $0 TEST.dmlir DMLC FILECHECK" >&2
  exit 2
fi
test_file=$1
dmlc_bin=$2
filecheck_bin=$3
if [ -z "$filecheck_bin" ] || [ ! -x "$filecheck_bin" ]; then
  echo "SKIP: FileCheck not found (install llvm-16-tools)"
  exit 77
fi
if [ ! -x "$dmlc_bin" ]; then
  echo "FAIL: dmlc binary '$dmlc_bin' not found" >&2
  exit 1
fi

tmp_dir=$(mktemp -d "${TMPDIR:-/tmp}/filecheck.XXXXXX") || exit 1
trap 'rm -rf "$tmp_dir"' EXIT

# Collect the commands, joining continuation lines.
cmds=()
pending=""
while IFS= read -r line || [ -n "$line" ]; do
  case "$line" in
    *"// RUN:"*) ;;
    *) continue ;;
  esac
  cmd=${line#*// RUN:}
  if [ "${cmd%\\}" != "$cmd" ]; then
    pending+="${cmd%\\} "
    continue
  fi
  cmds+=("$pending$cmd")
  pending=""
done <"$test_file"
if [ -n "$pending" ]; then cmds+=("$pending"); fi
if [ ${#cmds[@]} -eq 0 ]; then
  echo "FAIL: $test_file has no '// RUN:' line" >&2
  exit 1
fi

# %s, %S and %t, quoted for the shell.
q_file=$(printf '%q' "$test_file")
q_dir=$(printf '%q' "$(dirname "$test_file")")
status=0
n=0
for cmd in "${cmds[@]}"; do
  n=$((n + 1))
  q_tmp=$(printf '%q' "$tmp_dir/t$n")
  cmd=${cmd//%s/$q_file}
  cmd=${cmd//%S/$q_dir}
  cmd=${cmd//%t/$q_tmp}
  echo "RUN $n:$cmd"
  DMLC_BIN=$dmlc_bin FILECHECK_BIN=$filecheck_bin bash -o pipefail -c '
dmlc() { "$DMLC_BIN" "$@"; }
FileCheck() { "$FILECHECK_BIN" "$@"; }
not() { "$@"; local rc=$?; [ $rc -ne 0 ] && [ $rc -lt 128 ]; }
'"$cmd"
  rc=$?
  if [ $rc -ne 0 ]; then
    echo "FAIL: RUN line $n exited with status $rc" >&2
    status=1
  fi
done
if [ $status -eq 0 ]; then echo "PASS: $test_file (${#cmds[@]} RUN lines)"; fi
exit $status
