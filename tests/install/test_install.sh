#!/usr/bin/env bash
# Installs a dmlc build into a temporary prefix and builds examples/ out of
# the tree against it, once with pkg-config and plain cc (shared and static
# libraries) and once with CMake's find_package(dmlc); then runs the installed
# `dmlc` and the out-of-tree examples on the reference fashion_mlp.
#   bash tests/install/test_install.sh BUILD_DIR
# (ctest: install_embed, docs/embedding.md). Needs pkg-config, zlib, and the
# Fashion-MNIST test set (Debian's dataset-fashion-mnist, scripts/setup.sh).
set -euo pipefail
build=$(cd "$1" && pwd)
src=$(cd "$(dirname "$0")/../.." && pwd)
data=/usr/share/datasets/fashion-mnist
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

prefix=$tmp/prefix
cmake --install "$build" --prefix "$prefix" >/dev/null
pcdir=$(dirname "$(find "$prefix" -name dmlc-runtime.pc)")
libdir=$(dirname "$pcdir")
export PKG_CONFIG_PATH=$pcdir
for f in include/dmlc/dml_rt.h include/dmlc/dml_driver.h include/dmlc/dml_layers.h \
         include/dmlc/dml_trainer.h include/dmlc/dml_onnx_export.h bin/dmlc lib*/cmake/dmlc/dmlcConfig.cmake \
         lib*/cmake/dmlc/dmlcConfigVersion.cmake; do
  compgen -G "$prefix/$f" >/dev/null || fail "$f not installed"
done
for lib in dmlc_runtime dmlc_compiler; do
  [ -f "$libdir/lib$lib.a" ] || fail "lib$lib.a not installed"
  soname=$(readelf -d "$libdir/lib$lib.so" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
  [ "$soname" = "lib$lib.so.0" ] || fail "lib$lib.so has SONAME '$soname', not lib$lib.so.0"
  [ -e "$libdir/$soname" ] || fail "$soname not installed"
done
# Every installed header compiles alone with the flags pkg-config gives.
for h in "$prefix"/include/dmlc/*.h; do
  echo "#include \"$(basename "$h")\"" >"$tmp/h.c"
  cc -std=c11 -Wall -Wextra -Werror -c -o /dev/null "$tmp/h.c" $(pkg-config --cflags dmlc) ||
    fail "$(basename "$h") does not compile alone from include/dmlc"
done

# The examples, copied out of the tree.
cp -r "$src/examples" "$tmp/ex"
cd "$tmp"
CFLAGS="-std=c11 -O2 -Wall -Wextra -Werror"
# pkg-config, shared libraries (rpath: the prefix is not in the loader's path)
cc $CFLAGS -o classify_pc ex/classify_fashion_mnist.c \
  $(pkg-config --cflags --libs dmlc-runtime zlib) -Wl,-rpath,"$libdir"
cc $CFLAGS -o layers_pc ex/layers_mlp.c $(pkg-config --cflags --libs dmlc zlib) -Wl,-rpath,"$libdir"
# pkg-config --static: the archives and their Libs.private/Requires.private
static_libs() { pkg-config --static --libs "$@" | sed "s|-ldmlc_\([a-z]*\)|$libdir/libdmlc_\1.a|g"; }
cc $CFLAGS -o classify_static ex/classify_fashion_mnist.c \
  $(pkg-config --cflags dmlc-runtime) $(static_libs dmlc-runtime zlib)
cc $CFLAGS -o layers_static ex/layers_mlp.c $(pkg-config --cflags dmlc) $(static_libs dmlc zlib)
if readelf -d classify_static layers_static | grep -q 'libdmlc_'; then
  fail "the static link still needs a libdmlc_*.so"
fi
# CMake package, out of the tree: shared, then static
cmake -S ex -B build-cmake -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build-cmake >/dev/null
readelf -d build-cmake/classify_fashion_mnist | grep -q 'libdmlc_runtime.so.0' ||
  fail "find_package(dmlc)'s dmlc::runtime is not the shared library"
cmake -S ex -B build-cmake-static -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release \
  -DDMLC_EXAMPLES_STATIC=ON >/dev/null
cmake --build build-cmake-static >/dev/null
if readelf -d build-cmake-static/classify_fashion_mnist build-cmake-static/layers_mlp |
  grep -q 'libdmlc_'; then
  fail "dmlc::*_static links a libdmlc_*.so"
fi

# Run: the installed dmlc compiles the reference model; the examples run it.
model=$src/../shared/models/fashion_mlp.onnx
[ -f "$model" ] || model=$src/examples/fashion_mlp.onnx
[ -d "$data" ] || fail "$data missing (apt-get install dataset-fashion-mnist)"
"$prefix/bin/dmlc" compile "$model" -o fashion.dmlpkg >/dev/null
# 8695/10000: the accuracy PyTorch and ONNX Runtime give (shared/models/README.md)
for exe in classify_pc classify_static build-cmake/classify_fashion_mnist \
  build-cmake-static/classify_fashion_mnist; do
  out=$(./$exe fashion.dmlpkg "$data")
  grep -q "8695 correct, accuracy 86.95%" <<<"$out" || fail "$exe: $out"
done
for exe in layers_pc layers_static build-cmake/layers_mlp build-cmake-static/layers_mlp; do
  out=$(./$exe -n 256)
  grep -Eq "untrained accuracy on 256 test images: [0-9.]+%" <<<"$out" || fail "$exe: $out"
done
echo "install: headers, libdmlc_runtime/libdmlc_compiler .so.0 + .a, pc files, CMake package ok"
echo "out-of-tree examples (pkg-config and find_package, shared and static): 8695/10000 correct"
