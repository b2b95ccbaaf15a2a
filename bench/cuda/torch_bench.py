"""PyTorch side of bench/cuda (bench/cuda/README.md): the same three
measurements as cuda_bench, on the same GPU, printed as one JSON object.

  python3 torch_bench.py MODELS_DIR

- fashion_mlp at batch 1, end to end (host array in, host array out), eager,
  weights read from MODELS_DIR/fashion_mlp.onnx (Gemm/MatMul/Add/Relu/
  Flatten/Reshape interpreted with torch ops): median of 1000 runs, wall
  clock.
- a fused elementwise op on 2^26 f32 (relu(x * 1.5 - 0.25), three eager
  kernels) and a plain device copy of the same size: CUDA events, median of
  50, bytes read + written / time.
- a 4096^3 f32 GEMM with TF32 off and on: CUDA events, median of 20.
"""
import json
import sys
import time

import numpy as np
import torch


def mlp_from_onnx(path):
    import onnx
    from onnx import numpy_helper

    m = onnx.load(path)
    init = {i.name: torch.tensor(numpy_helper.to_array(i)).cuda() for i in m.graph.initializer}
    nodes = list(m.graph.node)
    inp = [i.name for i in m.graph.input if i.name not in init][0]
    out = m.graph.output[0].name

    def attr(n, name, default):
        for a in n.attribute:
            if a.name == name:
                return onnx.helper.get_attribute_value(a)
        return default

    def run(x):
        env = {inp: x}
        env.update(init)
        for n in nodes:
            a = [env[i] for i in n.input if i]
            if n.op_type == "Gemm":
                A = a[0].t() if attr(n, "transA", 0) else a[0]
                B = a[1].t() if attr(n, "transB", 0) else a[1]
                y = attr(n, "alpha", 1.0) * (A @ B)
                if len(a) > 2:
                    y = y + attr(n, "beta", 1.0) * a[2]
            elif n.op_type == "MatMul":
                y = a[0] @ a[1]
            elif n.op_type == "Add":
                y = a[0] + a[1]
            elif n.op_type == "Relu":
                y = torch.relu(a[0])
            elif n.op_type == "Flatten":
                y = torch.flatten(a[0], attr(n, "axis", 1))
            elif n.op_type == "Reshape":
                y = a[0].reshape([int(v) for v in a[1].tolist()])
            elif n.op_type == "Constant":
                y = torch.tensor(numpy_helper.to_array(attr(n, "value", None))).cuda()
            else:
                raise SystemExit(f"torch_bench: op {n.op_type} not interpreted")
            env[n.output[0]] = y
        return env[out]

    return run


def events(fn, reps, warm=5):
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        ts.append(a.elapsed_time(b) * 1e3)  # us
    return float(np.median(ts))


def main():
    models = sys.argv[1]
    res = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__}
    run = mlp_from_onnx(f"{models}/fashion_mlp.onnx")
    x = np.random.default_rng(0).standard_normal((1, 784)).astype(np.float32)
    if len(list(np.load(f"{models}/fashion_mlp_io/input_0.npy").shape)) == 4:
        x = x.reshape(1, 1, 28, 28)
    with torch.no_grad():
        for _ in range(100):
            run(torch.from_numpy(x).cuda()).cpu().numpy()
        ts = []
        for _ in range(1000):
            t0 = time.perf_counter()
            run(torch.from_numpy(x).cuda()).cpu().numpy()
            ts.append((time.perf_counter() - t0) * 1e6)
    res["mlp_b1_us"] = float(np.median(ts))
    n = 1 << 26
    xd = torch.randn(n, device="cuda")
    yd = torch.empty_like(xd)
    us = events(lambda: torch.relu(xd * 1.5 - 0.25), 50)
    res["elementwise_us"] = us
    res["elementwise_gbps"] = 8.0 * n / (us * 1e-6) / 1e9
    us = events(lambda: yd.copy_(xd), 50)
    res["copy_gbps"] = 8.0 * n / (us * 1e-6) / 1e9
    a = torch.randn(4096, 4096, device="cuda")
    b = torch.randn(4096, 4096, device="cuda")
    for tf32 in (False, True):
        torch.backends.cuda.matmul.allow_tf32 = tf32
        us = events(lambda: a @ b, 20)
        res["gemm_tf32_tflops" if tf32 else "gemm_f32_tflops"] = 2.0 * 4096**3 / (us * 1e-6) / 1e12
    torch.backends.cuda.matmul.allow_tf32 = False
    ah, bh = a.half(), b.half()
    us = events(lambda: ah @ bh, 20)
    res["gemm_f16_tflops"] = 2.0 * 4096**3 / (us * 1e-6) / 1e12
    # attention, sequence 4096, head 128, f16, [2, 16, 4096, 128] (SDPA picks
    # its flash kernel): 4 * B * H * S^2 * D flops
    q, k, v = (torch.randn(2, 16, 4096, 128, device="cuda", dtype=torch.half) for _ in range(3))
    sdpa = torch.nn.functional.scaled_dot_product_attention
    us = events(lambda: sdpa(q, k, v), 20)
    res["attention_f16_tflops"] = 4.0 * 2 * 16 * 4096**2 * 128 / (us * 1e-6) / 1e12
    print(json.dumps(res))


if __name__ == "__main__":
    main()
