#!/usr/bin/env bash
# Packs, on this (build) machine, the dmlc compiler and the clang-16 it calls
# for CUDA (codegen/cuda/cuda.c: CUDA C -> PTX) into one archive that the GPU
# machine unpacks (scripts/gpu_zoo.sh), so that the model zoo can be exported,
# compiled and run there: its models (2.4 GB of weights per exporter) cannot
# travel, the toolchain (about 45 MB compressed) can.
#
# The archive, .gpu-tc/tc.tar.xz (ignored through .git/info/exclude), holds
#   bin/dmlc.real, bin/clang-16.real   build/compiler/dmlc (stripped) and
#                                      Debian's clang-16 driver
#   bin/dmlc, bin/clang-16             wrappers that set LD_LIBRARY_PATH to lib/
#   bin/dml_train_bench                build/bench/train/dml_train_bench (stripped;
#                                      libc and libm only), when built: the
#                                      runtime side of bench/gpu/train_models.sh
#   lib/                               the shared libraries both need beyond
#                                      glibc and libstdc++ (ldd), copied
# except libz3.so.4 and libxml2.so.2, which libLLVM-16 links for the static
# analyzer's Z3 back end and for Windows manifests (never reached when clang
# compiles CUDA to PTX) and which, with the ICU data libxml2 pulls in, would
# take 40 MB: lib/ holds stubs of them instead, made here from the symbols
# libLLVM and libclang-cpp import (functions that abort if ever called, the
# two data symbols libxml2 exports as pointers, libxml2's symbol versions).
# The GPU machine's glibc must be at least this machine's (Debian 12: 2.36).
#   bash scripts/gpu_toolchain.sh            (after building build/ as the README says)
set -euo pipefail
cd "$(dirname "$0")/.."
[ ! -d .git ] || grep -qx '/.gpu-tc/' .git/info/exclude 2>/dev/null || echo '/.gpu-tc/' >>.git/info/exclude
CLANG=$(readlink -f "$(command -v clang-16)")
[ -x build/compiler/dmlc ] || { echo "gpu_toolchain.sh: build/compiler/dmlc is missing (build first)" >&2; exit 1; }
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
T=$W/tc
mkdir -p $T/bin $T/lib
strip -o $T/bin/dmlc.real build/compiler/dmlc
cp "$CLANG" $T/bin/clang-16.real
for b in dmlc clang-16; do
  cat >$T/bin/$b <<EOF
#!/bin/sh
# (scripts/gpu_toolchain.sh) the carried $b with its carried libraries
d=\$(dirname "\$(readlink -f "\$0")")
LD_LIBRARY_PATH="\$d/../lib\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}" exec "\$d/$b.real" "\$@"
EOF
  chmod +x $T/bin/$b
done
if [ -x build/bench/train/dml_train_bench ]; then
  strip -o $T/bin/dml_train_bench build/bench/train/dml_train_bench
else
  echo "gpu_toolchain.sh: note: build/bench/train/dml_train_bench is not built: left out" >&2
fi
skip='^(libc|libm|libstdc\+\+|libgcc_s|ld-linux-x86-64|libz3|libxml2|libicu.*)\.so'
for x in build/compiler/dmlc "$CLANG"; do
  for l in $(ldd "$x" | awk '/=>/ {print $3}'); do
    basename "$l" | grep -qE "$skip" || cp -L "$l" $T/lib/
  done
done
# The stubs: every symbol libLLVM/libclang-cpp import from libz3 or libxml2
for L in $T/lib/libLLVM-16.so.1 $T/lib/libclang-cpp.so.16; do
  nm -D --undefined-only --with-symbol-versions "$L"
done | awk '{print $2}' | grep -E '^(Z3_|xml)' | sort -u | python3 -c '
import sys, collections
data = {"xmlFree", "xmlMalloc", "xmlRealloc", "xmlMallocAtomic", "xmlMemStrdup"}
z3, xml, vers = [], [], collections.defaultdict(list)
for s in sys.stdin.read().split():
    name, _, ver = s.partition("@")
    name = name.rstrip("@")
    (z3 if name.startswith("Z3_") else xml).append(name)
    if not name.startswith("Z3_"):
        vers[ver.lstrip("@") or "LIBXML2_2.4.30"].append(name)
body = lambda n: f"void *{n};\n" if n in data else f"void {n}(void) {{ abort(); }}\n"
d = sys.argv[1]
open(d + "/z3.c", "w").write("#include <stdlib.h>\n" + "".join(map(body, z3)))
open(d + "/xml.c", "w").write("#include <stdlib.h>\n" + "".join(map(body, xml)))
node = lambda v, ns: v + " { global: " + " ".join(n + ";" for n in ns) + " };\n"
open(d + "/xml.map", "w").write("".join(node(v, ns) for v, ns in sorted(vers.items())))
' "$W"
gcc -shared -fPIC "$W/z3.c" -o $T/lib/libz3.so.4 -Wl,-soname,libz3.so.4
gcc -shared -fPIC "$W/xml.c" -o $T/lib/libxml2.so.2 -Wl,-soname,libxml2.so.2 -Wl,--version-script="$W/xml.map"
# the wrappers must work with the stubs alone (no system libz3/libxml2 found first)
$T/bin/clang-16 --version | head -1
$T/bin/dmlc --version
mkdir -p .gpu-tc
tar cf - -C "$W" tc | xz -9 -T2 >.gpu-tc/tc.tar.xz
echo ".gpu-tc/tc.tar.xz: $(($(stat -c %s .gpu-tc/tc.tar.xz) / 1000)) kB"
