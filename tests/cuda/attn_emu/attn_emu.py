#!/usr/bin/env python3
"""attn_emu.py — the tensor-core attention kernels (codegen/cuda/cuda_attn.c)
emulated on the host: gen_cuda_packages --attn-tc compiles the forms of
tests/cuda/attn_tc_cases.h with save_clang.sh as DMLC_CLANG (each kernel's
CUDA C saved), then each kernel is converted to host C (kernel.inc: the
kernel function alone, the PTX special registers, ex2 and the barrier
renamed to emu.c's; params.h: its shapes, offsets and strides read back
from the source), compiled with emu.c and run (emu.c: lanes as coroutines,
ldmatrix / mma.sync / shfl computed per warp, compared with a double
reference). No GPU needed; clang-16 is (exit 77, skipped, without it).
  attn_emu.py GEN_CUDA_PACKAGES CC WORK_DIR"""
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def convert(src, out):
    """kernel.inc and params.h of the kernel source `src` into `out`."""
    k0 = src.index('extern "C" __global__ void')
    body = src[k0:]
    body = "static void fa_kernel" + body[body.index("(float *__restrict__ arena"):]
    for a, b in [('asm volatile("cp.async.wait_group 1;");', ";"),
                 ('asm volatile("cp.async.wait_group 0;");', ";"),
                 ("__nvvm_read_ptx_sreg_", "emu_sreg_"),
                 ("__nvvm_ex2_approx_f", "emu_ex2"), ("__syncthreads", "emu_sync"),
                 ("__builtin_bit_cast(float, ", "emu_bits_f(")]:
        body = body.replace(a, b)
    if "asm" in body:
        raise SystemExit("attn_emu: an instruction emu.c does not know in the kernel")
    with open(os.path.join(out, "kernel.inc"), "w") as f:
        f.write(body)

    def num(p):
        m = re.search(p, src)
        if not m:
            raise SystemExit("attn_emu: %r not in the kernel source" % p)
        return m.group(1)

    P = {"BF16": int("_fa_bf16" in src.split("\n")[0]),
         "D": int(num(r"float o\[(\d+)\]\[4\]")) * 8,
         "SQ": num(r"const unsigned Sq = (\d+)u"), "T": num(r", T = (\d+)u;"),
         "HQ": num(r"b = bh / (\d+)u"), "G": num(r"kh = h / (\d+)u"),
         "SMEM": num(r"_dynamic_smem = (\d+)u")}
    for n, who in [("Q", "h"), ("K", "kh"), ("V", "kh"), ("Y", "h")]:
        m = re.search(n + r"g = \((?:const )?unsigned short \*\)(arena|weights) \+ "
                      r"(\d+)ull \+ b \* (\d+)ull \+ " + who + r" \* (\d+)ull", src)
        if not m or m.group(1) != "arena":
            raise SystemExit("attn_emu: %s's view not found (or in the weights)" % n)
        P[n + "_OFF"], P[n + "_SB"], P[n + "_SH"] = m.group(2), m.group(3), m.group(4)
    P["Q_SP"] = num(r"Qg \+ \(q0 \+ r\) \* (\d+)ull")
    P["K_SP"] = num(r"Kg \+ j \* (\d+)ull")
    P["V_SP"] = num(r"Vg \+ j \* (\d+)ull")
    P["Y_SP"] = num(r"Yg \+ i \* (\d+)ull")
    P["SCALE"] = num(r"s\[n\]\[e\] \* ([-0-9.e+]+)f")
    P["CAUSAL"] = int("if (j > i)" in src)
    m = re.search(r"if \(j >= (\d+)u\) x = -__builtin_inff\(\);\s*else if \(i < Sq\) \{\s*"
                  r"const unsigned long long mo = (\d+)ull \+ b \* (\d+)ull \+ h \* "
                  r"(\d+)ull \+ i \* (\d+)ull \+ j \* (\d+)ull", src)
    keys = ["M_LEN", "M_OFF", "M_SB", "M_SH", "M_SI", "M_SJ"]
    P["MASK"] = 0
    for k in keys:
        P[k] = 0
    if m:
        P["MASK"] = 2 if "unsigned char" in src[m.end():m.end() + 200] else 1
        for k, v in zip(keys, m.groups()):
            P[k] = v
    with open(os.path.join(out, "params.h"), "w") as f:
        for k, v in P.items():
            f.write("#define P_%s %s\n" % (k, v))
    return P


def main():
    gen, cc, work = sys.argv[1:4]
    clang = os.environ.get("DMLC_CLANG") or shutil.which("clang-16")
    if not clang:
        print("attn_emu: clang-16 not found (the kernels are compiled with it): skipped")
        return 77
    shutil.rmtree(work, ignore_errors=True)
    save = os.path.join(work, "src")
    os.makedirs(save)
    env = dict(os.environ, DMLC_CLANG=os.path.join(HERE, "save_clang.sh"),
               ATTN_EMU_SAVE=save, ATTN_EMU_CLANG=clang)
    r = subprocess.run([gen, os.path.join(work, "pkgs"), "--attn-tc"], env=env,
                       capture_output=True, text=True)
    wrote = re.findall(r"attn_tc_(\d+)\.dmlpkg", r.stdout)
    if r.returncode or not wrote:
        print(r.stdout + r.stderr)
        return 1
    srcs = sorted(os.listdir(save), key=lambda f: int(f[1:-3]))
    if len(srcs) != len(wrote):
        print("attn_emu: %d packages but %d tensor-core attention kernels"
              % (len(wrote), len(srcs)))
        return 1
    failed = 0
    for i, f in enumerate(srcs):
        with open(os.path.join(save, f)) as h:
            src = h.read()
        d = os.path.join(work, "k%d" % i)
        os.makedirs(d)
        P = convert(src, d)
        exe = os.path.join(d, "emu")
        c = subprocess.run([cc, "-std=gnu11", "-O1", "-w", "-I", d, "-o", exe,
                            os.path.join(HERE, "emu.c"), "-lm"], capture_output=True,
                           text=True)
        if c.returncode:
            print(c.stdout + c.stderr)
            return 1
        e = subprocess.run([exe], capture_output=True, text=True, timeout=600)
        what = "%s D %s Sq %s T %s%s%s" % ("bf16" if P["BF16"] else "f16", P["D"],
                                          P["SQ"], P["T"], " causal" * P["CAUSAL"],
                                          ["", " mask", " bool mask"][P["MASK"]])
        print("attn_tc_%s (%s): %s" % (wrote[i], what, (e.stdout + e.stderr).strip()))
        failed += e.returncode != 0
    print("attn_emu: %d of %d kernels beyond the bound" % (failed, len(srcs)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
