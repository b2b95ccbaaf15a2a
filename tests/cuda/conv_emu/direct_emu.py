#!/usr/bin/env python3
"""direct_emu.py — the direct f16/bf16 convolution kernels (the scheduler's
conv kernel rendered by codegen/cuda/cuda.c: one thread per output, the
taps' f16 loads widened by the bare cvt, the channel loop unrolled) run on
the host: gen_cuda_packages --conv-direct compiles the cases of
tests/cuda/conv_direct_cases.h with save_clang.sh as DMLC_CLANG (each conv
kernel's CUDA C saved, CONV_EMU_MATCH "(conv)$") and writes each case's
params.h; each source is converted to host C++ (kernel.inc: the inline-asm
helpers left out for direct_emu.cc's, the PTX special registers renamed),
compiled with direct_emu.cc and run against a double reference. No GPU
needed; clang-16 is (exit 77, skipped, without it).
  direct_emu.py GEN_CUDA_PACKAGES WORK_DIR"""
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from conv_emu import drop_fns, run_kernels  # noqa: E402


def convert(src, out):
    """kernel.inc of the direct kernel source `src` into `out`; its name."""
    body = drop_fns(src)
    for line in ["#define __global__ __attribute__((global))",
                 "#define __device__ __attribute__((device))",
                 "#define __shared__ __attribute__((shared))"]:
        if line not in body:
            raise SystemExit("direct_emu: %r not in the kernel source" % line)
        body = body.replace(line, "#define %s" % line.split()[1])
    body = re.sub(r"__attribute__\(\(launch_bounds\(\d+\)\)\)", "", body)
    for a, b in [("__nvvm_read_ptx_sreg_", "emu_sreg_"),
                 ("__nvvm_ex2_approx_f", "exp2f"), ("__nvvm_lg2_approx_f", "log2f")]:
        body = body.replace(a, b)
    if re.search(r"\basm\b|__asm__|__syncthreads|__shared__ float", body):
        raise SystemExit("direct_emu: an instruction direct_emu.cc does not know")
    m = re.search(r'extern "C" __global__ void\s+(\w+)\(', body)
    if not m:
        raise SystemExit("direct_emu: no kernel entry in the source")
    with open(os.path.join(out, "kernel.inc"), "w") as f:
        f.write(body)
    return m.group(1)


def main():
    gen, work = sys.argv[1:3]

    def prepare(i, src, d, pkgs, name):
        kernel = convert(src, d)
        with open(os.path.join(pkgs, name + ".params.h")) as h:
            params = h.read()
        with open(os.path.join(d, "params.h"), "w") as h:
            h.write(params + "#define KERNEL %s\n" % kernel)
        unroll = re.findall(r"#pragma unroll (\d+)", src)
        return "%s; unroll %s, %d bare f16 conversions" % (
            params.split("\n")[0][3:-3], ",".join(unroll) or "none",
            len(re.findall(r"dml_cvt_h2f\(\(unsigned\)", src)))

    # one direct conv kernel per case (Conv, its bias, residual and Relu fused)
    return run_kernels("direct_emu", gen, work, "--conv-direct", r"conv_direct_\d+",
                       "direct_emu.cc", prepare, match=r"_conv (conv)$")


if __name__ == "__main__":
    sys.exit(main())
