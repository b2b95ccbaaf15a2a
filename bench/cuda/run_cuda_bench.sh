#!/usr/bin/env bash
# bench/cuda: dmlc on CUDA next to PyTorch on the same GPU, with ratios
# (bench/cuda/README.md). Runs on the GPU machine (scripts/gpu_check.sh).
#   bash bench/cuda/run_cuda_bench.sh CUDA_BENCH PKG_DIR MODELS_DIR OUT_DIR
# PKG_DIR holds ref_fashion_mlp.dmlpkg, bench_elementwise.dmlpkg,
# bench_gemm4096.dmlpkg, bench_gemm4096_tf32.dmlpkg (compiled with
# --allow-tf32), bench_gemm4096_f16.dmlpkg (f16 tensor cores) and
# bench_attention4096_f16.dmlpkg (the fused attention kernel)
# (tests/cuda/gen_cuda_packages); MODELS_DIR the
# reference models (fashion_mlp.onnx for PyTorch). Writes OUT_DIR/bench.json
# and OUT_DIR/bench.md (nothing else: the GPU machine returns few files) and
# prints the table.
set -uo pipefail
B=$1 P=$2 M=$3 O=$4
mkdir -p "$O"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
{
  "$B" "$P/ref_fashion_mlp.dmlpkg" --batch 1 --iterations 2000 --warmup 200
  "$B" "$P/ref_fashion_mlp.dmlpkg" --batch 1 --iterations 200 --warmup 20 --kernels
  "$B" "$P/bench_elementwise.dmlpkg" --iterations 30 --warmup 3 --kernels
  "$B" "$P/bench_gemm4096.dmlpkg" --iterations 10 --warmup 2 --kernels
  "$B" "$P/bench_gemm4096_tf32.dmlpkg" --iterations 20 --warmup 3 --kernels
  "$B" "$P/bench_gemm4096_f16.dmlpkg" --iterations 20 --warmup 3 --kernels
  "$B" "$P/bench_attention4096_f16.dmlpkg" --iterations 5 --warmup 1 --kernels
} > "$T/dmlc.jsonl"
rc=$?
PYTHONUNBUFFERED=1 python3 "$(dirname "$0")/torch_bench.py" "$M" > "$T/torch.json"
rc2=$?
cat "$T/dmlc.jsonl" "$T/torch.json"
python3 - "$O" "$T" <<'PY'
import json, sys
o, tmp = sys.argv[1], sys.argv[2]
d = [json.loads(l) for l in open(f"{tmp}/dmlc.jsonl") if l.strip()]
t = json.load(open(f"{tmp}/torch.json"))
mlp, mlpk, ew, gemm, tf32, f16, att = d
rows = [
    ("fashion_mlp batch 1, end to end (us, lower is better)", mlp["median_us"], t["mlp_b1_us"], t["mlp_b1_us"] / mlp["median_us"]),
    ("fused elementwise 2^26 f32 (GB/s)", ew["gbps"], t["elementwise_gbps"], ew["gbps"] / t["elementwise_gbps"]),
    ("  vs PyTorch's copy bandwidth (GB/s)", ew["gbps"], t["copy_gbps"], ew["gbps"] / t["copy_gbps"]),
    ("4096^3 f32 GEMM (TFLOP/s)", gemm["tflops"], t["gemm_f32_tflops"], gemm["tflops"] / t["gemm_f32_tflops"]),
    ("4096^3 GEMM, --allow-tf32 (TFLOP/s) vs cuBLAS TF32", tf32["tflops"], t["gemm_tf32_tflops"], tf32["tflops"] / t["gemm_tf32_tflops"]),
    ("4096^3 f16 GEMM, f32 accumulation (TFLOP/s) vs cuBLAS f16", f16["tflops"], t["gemm_f16_tflops"], f16["tflops"] / t["gemm_f16_tflops"]),
    ("fused attention f16 [2,16,4096,128] (TFLOP/s) vs PyTorch SDPA", att["tflops"], t["attention_f16_tflops"], att["tflops"] / t["attention_f16_tflops"]),
]
lines = [f"device: {mlp['device']} | PyTorch {t['torch']} on {t['device']}", "",
         "| measurement | dmlc cuda | PyTorch | dmlc / PyTorch (speed) |", "| --- | ---: | ---: | ---: |"]
for name, a, b, r in rows:
    lines.append(f"| {name} | {a:.2f} | {b:.2f} | {r:.3f} |")
lines.append(f"\nfashion_mlp batch 1 kernels alone: {mlpk['median_us']:.2f} us (device time of its {mlpk.get('gbps', 0):.0f} GB/s kernels)")
open(f"{o}/bench.md", "w").write("\n".join(lines) + "\n")
json.dump({"dmlc": d, "torch": t}, open(f"{o}/bench.json", "w"), indent=1)
print("\n".join(lines))
PY
exit $(( rc || rc2 ))
