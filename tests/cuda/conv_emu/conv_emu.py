#!/usr/bin/env python3
"""conv_emu.py — the f16/bf16 implicit-GEMM convolution kernels
(codegen/cuda/cuda_mma.c, dml_codegen_cuda_mma16 on a Conv) emulated on the
host: gen_cuda_packages --conv-tc compiles the cases of
tests/cuda/conv_tc_cases.h with save_clang.sh as DMLC_CLANG (each such
kernel's CUDA C saved), then each whole source (prelude, epilogue, main
loop) is converted to host C++ (kernel.inc: the inline-asm helpers left
out for emu.cc's, the PTX special registers, barrier and approximate
exp2/log2 renamed; params.h: the kernel's names, dynamic shared memory,
M / N / K and the convolution (the comment line the gather starts with)
read back from the source),
compiled with emu.cc and run (emu.cc: threads as coroutines, cp.async
groups, mma.sync per warp; checked against a double reference of the
convolution through the kernel's own epilogue). No GPU needed; clang-16
is (exit 77, skipped, without it).
  conv_emu.py GEN_CUDA_PACKAGES WORK_DIR"""
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
# device functions with inline PTX: emu.cc has host forms of these
ASM_FNS = ["dml_opaque", "dml_cvt_f2h", "dml_cvt_h2f", "dml_smem16", "dml_cp16h",
           "dml_commit16", "dml_mma16"]


def drop_fns(src):
    """src without the DML_DEV definitions of ASM_FNS (brace-matched)."""
    out, i = [], 0
    pat = re.compile(r"DML_DEV [^;{()]*\b(" + "|".join(ASM_FNS) + r")\(")
    while True:
        m = pat.search(src, i)
        if not m:
            out.append(src[i:])
            return "".join(out)
        out.append(src[i:m.start()])
        j = src.index("{", m.end())
        depth = 0
        while True:
            if src[j] == "{":
                depth += 1
            elif src[j] == "}":
                depth -= 1
                if depth == 0:
                    break
            j += 1
        i = j + 1


def convert(src, out):
    """kernel.inc and params.h of the kernel source `src` into `out`."""
    def num(p):
        m = re.search(p, src)
        if not m:
            raise SystemExit("conv_emu: %r not in the kernel source" % p)
        return m.groups()

    body = drop_fns(src)
    for line in ["#define __global__ __attribute__((global))",
                 "#define __device__ __attribute__((device))",
                 "#define __shared__ __attribute__((shared))",
                 "extern __shared__ __attribute__((aligned(16))) unsigned dml_dsmem[];"]:
        if line not in body:
            raise SystemExit("conv_emu: %r not in the kernel source" % line)
        body = body.replace(line, "")
    body = re.sub(r'asm volatile\("cp\.async\.wait_group (\d+);"\);', r"emu_wait(\1);", body)
    for a, b in [("__nvvm_read_ptx_sreg_", "emu_sreg_"), ("__syncthreads", "emu_sync"),
                 ("__nvvm_ex2_approx_f", "exp2f"), ("__nvvm_lg2_approx_f", "log2f")]:
        body = body.replace(a, b)
    if re.search(r"\basm\b|__asm__", body):
        raise SystemExit("conv_emu: an instruction emu.cc does not know in the kernel")
    with open(os.path.join(out, "kernel.inc"), "w") as f:
        f.write(body)
    P = {"BF16": int("bf16 tensor cores" in src.split("\n")[0])}
    P["KERNEL"], = num(r'extern "C" __global__ void __attribute__\(\(launch_bounds\(256\)\)\)\n'
                       r"(\w+)\(")
    P["EPILOGUE"], = num(r"DML_DEV void (\w+_epilogue)\(")
    P["SMEM"], = num(r"_dynamic_smem = (\d+)u;")
    P["BLOCK_N"], = num(r"bn0 = __nvvm_read_ptx_sreg_ctaid_x\(\) \* (\d+)u;")
    P["M_EXPR"], P["N"], P["K"] = num(r"const unsigned M = ([^,]+), N = (\d+)u, K = (\d+)u;")
    P["A_BUF"], P["A_OFF"] = num(r"ned short \*\)(arena|weights) \+ (\d+)u;\n"
                                 r"  const unsigned short \*__restrict__ B")
    P["B_BUF"], P["B_OFF"] = num(r"B = \(const unsigned short \*\)(arena|weights) \+ (\d+)u;")
    P["A_W"] = int(P["A_BUF"] == "weights")
    P["B_W"] = int(P["B_BUF"] == "weights")
    del P["A_BUF"], P["B_BUF"]
    # the convolution the kernel computes, as its source states it
    g = num(r"/\* the implicit GEMM of Conv: C (\d+) H (\d+) W (\d+) kh (\d+) kw (\d+) "
            r"OH (\d+) OW (\d+) stride (\d+) (\d+) dilation (\d+) (\d+) pad (\d+) "
            r"(\d+) \*/")
    for k, v in zip(["C", "H", "W", "KH", "KW", "OH", "OW", "SH", "SW", "DH", "DW", "PH",
                     "PW"], g):
        P[k] = v
    P["TABLES"] = int("dml_ktap[kx]" in src)
    P["BVEC"] = int("dml_cp16h(Bs_s" in src)
    with open(os.path.join(out, "params.h"), "w") as f:
        for k, v in P.items():
            f.write("#define P_%s %s\n" % (k, v))
    return P


def run_kernels(tool, gen, work, gen_flag, pkg_re, emu_cc, prepare, match=None):
    """The emulators' driver (conv_emu.py, direct_emu.py): `gen gen_flag`
    (gen_cuda_packages) compiles its cases into WORK/pkgs with save_clang.sh
    as DMLC_CLANG saving each matching kernel's CUDA C into WORK/src
    (CONV_EMU_MATCH: match, else the tensor-core kernels); each saved
    source i is made ready in WORK/k<i> by prepare(i, src, dir, pkgs,
    package name) (kernel.inc, params.h; returns what the line prints for
    it), compiled with emu_cc and run. Exit status 0 when every kernel is
    within its bound, 77 without clang-16 / clang++."""
    clang = os.environ.get("DMLC_CLANG") or shutil.which("clang-16")
    cxx = shutil.which("clang++-16") or shutil.which("clang++")
    if not clang or not cxx:
        print("%s: clang-16 / clang++ not found: skipped" % tool)
        return 77
    shutil.rmtree(work, ignore_errors=True)
    save = os.path.join(work, "src")
    pkgs = os.path.join(work, "pkgs")
    os.makedirs(save)
    env = dict(os.environ, DMLC_CLANG=os.path.join(HERE, "save_clang.sh"),
               CONV_EMU_SAVE=save, CONV_EMU_CLANG=clang)
    if match:
        env["CONV_EMU_MATCH"] = match
    r = subprocess.run([gen, pkgs, gen_flag], env=env, capture_output=True, text=True)
    wrote = re.findall(r"(" + pkg_re + r")\.dmlpkg", r.stdout)
    if r.returncode or not wrote:
        print(r.stdout + r.stderr)
        return 1
    srcs = sorted(os.listdir(save), key=lambda f: int(f[1:-3]))
    # every case has one kernel of the form
    if len(srcs) != len(wrote):
        print("%s: %d packages but %d kernels of the form" % (tool, len(wrote), len(srcs)))
        return 1
    failed = 0
    for i, f in enumerate(srcs):
        with open(os.path.join(save, f)) as h:
            src = h.read()
        d = os.path.join(work, "k%d" % i)
        os.makedirs(d)
        what = prepare(i, src, d, pkgs, wrote[i])
        exe = os.path.join(d, "emu")
        c = subprocess.run([cxx, "-std=gnu++17", "-O1", "-w", "-I", d, "-o", exe,
                            os.path.join(HERE, emu_cc), "-lm"], capture_output=True,
                           text=True)
        if c.returncode:
            print(c.stdout + c.stderr)
            return 1
        e = subprocess.run([exe], capture_output=True, text=True, timeout=600)
        print("%s (%s): %s" % (wrote[i], what, (e.stdout + e.stderr).strip()))
        failed += e.returncode != 0
    print("%s: %d of %d kernels beyond the bound" % (tool, failed, len(srcs)))
    return 1 if failed else 0


def main():
    gen, work = sys.argv[1:3]

    def prepare(i, src, d, pkgs, name):
        P = convert(src, d)
        return "%s M %s N %s K %s, A %s, B %s" % (
            "bf16" if P["BF16"] else "f16", P["M_EXPR"], P["N"], P["K"],
            "tables" if P["TABLES"] else "divisions",
            "16-byte cp.async" if P["BVEC"] else "2-byte loads")

    # every case has one f16/bf16 implicit-GEMM conv kernel (conv_tc_cases.h n_tc)
    return run_kernels("conv_emu", gen, work, "--conv-tc", r"conv_tc_\d+", "emu.cc", prepare)


if __name__ == "__main__":
    sys.exit(main())
