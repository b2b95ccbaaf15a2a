#!/usr/bin/env bash
# The Elixir package's test (ctest `elixir_package`; docs/elixir.md):
# installs the build into a prefix, then runs `mix test` in bindings/elixir,
# whose compiler step builds the NIF against that prefix's static libraries.
#   bash tests/elixir/test_elixir.sh BUILD_DIR SHARED_DIR WORK_DIR
# Everything mix writes (MIX_HOME, HEX_HOME, the _build folder with the NIF)
# stays in WORK_DIR; the package has no dependencies, so mix never goes to
# the network (HEX_OFFLINE too). Exit 77 (skipped) without mix or erl_nif.h.
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "$1" && pwd)
shared=$(cd "$2" && pwd)
work=$3
if ! command -v mix >/dev/null || ! command -v erl >/dev/null; then
  echo "test_elixir.sh: skipped: mix/erl not found (apt-get install elixir erlang-dev;" \
    "scripts/setup.sh does)"
  exit 77
fi
erts=$(erl -noshell -eval \
  'io:format("~ts/erts-~ts/include", [code:root_dir(), erlang:system_info(version)]), halt().')
if [ ! -f "$erts/erl_nif.h" ]; then
  echo "test_elixir.sh: skipped: $erts/erl_nif.h not found (apt-get install erlang-dev)"
  exit 77
fi
if [ ! -d /usr/share/datasets/fashion-mnist ]; then
  echo "test_elixir.sh: skipped: /usr/share/datasets/fashion-mnist not found" \
    "(apt-get install dataset-fashion-mnist)"
  exit 77
fi
mkdir -p "$work"
work=$(cd "$work" && pwd)
rm -rf "$work/prefix"
cmake --install "$build" --prefix "$work/prefix" >/dev/null
export DMLC_PREFIX=$work/prefix DMLC_BIN=$work/prefix/bin/dmlc DMLC_SHARED_DIR=$shared
export MIX_HOME=$work/mix HEX_HOME=$work/hex HEX_OFFLINE=1 MIX_BUILD_PATH=$work/_build
export MIX_ENV=test TEST_TMPDIR=$work/tmp
rm -rf "$TEST_TMPDIR"
mkdir -p "$MIX_HOME" "$HEX_HOME" "$TEST_TMPDIR"
cd "$src/bindings/elixir"
mix test 2>&1
