#!/usr/bin/env bash
# The Python package's test (ctest `python_package`; docs/python.md):
# installs the build into a prefix, pip-installs python/ against it into a
# venv (the extension only is compiled: dmlc's libraries come from the
# prefix through find_package(dmlc)), then runs test_dmlc.py,
# test_tensor.py (tensors, eager ops) and test_train.py (training and
# serving) there with pytest (pinned; the files are unittest test cases,
# which also run alone: python3 tests/python/test_dmlc.py SHARED_DIR).
#   [PYTHON=python3] bash tests/python/test_python.sh BUILD_DIR SHARED_DIR WORK_DIR
# The venv and the extension's build folder stay in WORK_DIR between runs;
# pip downloads the pinned build tools (python/pyproject.toml) and numpy
# from PyPI (once per venv).
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "$1" && pwd)
shared=$2
work=$3
mkdir -p "$work"
work=$(cd "$work" && pwd)
t0=$(date +%s)
rm -rf "$work/prefix"
cmake --install "$build" --prefix "$work/prefix" >/dev/null
venv=$work/venv
if [ ! -x "$venv/bin/python" ]; then
  "${PYTHON:-python3}" -m venv "$venv"
fi
pip=("$venv/bin/python" -m pip --disable-pip-version-check --no-input -q)
# The build tools pinned in python/pyproject.toml, installed into the venv
# (no build isolation: their paths stay the same, so a later run rebuilds
# only what changed in WORK_DIR/pybuild).
mapfile -t tools < <("$venv/bin/python" -c 'import sys, tomllib
print("\n".join(tomllib.load(open(sys.argv[1], "rb"))["build-system"]["requires"]))' \
  "$src/python/pyproject.toml")
"${pip[@]}" install numpy==2.3.5 pytest==8.3.4 "${tools[@]}"
t1=$(date +%s)
"${pip[@]}" install --no-build-isolation --force-reinstall --no-deps "$src/python" \
  --config-settings=cmake.define.dmlc_DIR="$work/prefix/lib/cmake/dmlc" \
  --config-settings=build-dir="$work/pybuild"
t2=$(date +%s)
echo "test_python.sh: install + venv $((t1 - t0)) s, pip install ./python $((t2 - t1)) s"
cd "$work"
[ -f "$shared/models/fashion_mlp.onnx" ] || { echo "test_python.sh: no reference models under $shared/models"; exit 1; }
pytest=("$venv/bin/python" -m pytest -v -p no:cacheprovider --rootdir "$src/tests/python")
"$venv/bin/python" -c 'import dmlc, sys; print("dmlc", dmlc.__version__, "from", dmlc.__file__, "devices:", [d["id"] for d in dmlc.devices()], file=sys.stderr)'
# the package, then tensors and eager ops (dmlc.Tensor, dmlc.ops)
DMLC_SHARED_DIR=$shared "${pytest[@]}" "$src/tests/python/test_dmlc.py" \
  "$src/tests/python/test_tensor.py"
t3=$(date +%s)
# training and serving (test_train.py compares with the installed `dmlc train`)
DMLC_SHARED_DIR=$shared DMLC_BIN="$work/prefix/bin/dmlc" \
  "${pytest[@]}" "$src/tests/python/test_train.py"
t4=$(date +%s)
echo "test_python.sh: test_dmlc.py $((t3 - t2)) s, test_train.py $((t4 - t3)) s"
