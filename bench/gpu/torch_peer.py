# PyTorch peer figures on the GPU, side by side with dmlc's bench.
import sys, time, json
import torch, onnx, numpy as np
from onnx import numpy_helper
torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
dev = 'cuda'
res = {}
def timeit(fn, iters=200, warm=20):
    for _ in range(warm): fn()
    torch.cuda.synchronize()
    s = torch.cuda.Event(enable_timing=True); e = torch.cuda.Event(enable_timing=True)
    ts = []
    for _ in range(iters):
        s.record(); fn(); e.record(); torch.cuda.synchronize(); ts.append(s.elapsed_time(e))
    ts.sort(); return ts[len(ts)//2]
m = onnx.load(sys.argv[1])
W = {i.name: torch.tensor(numpy_helper.to_array(i)).to(dev) for i in m.graph.initializer}
gemms = [n for n in m.graph.node if n.op_type == 'Gemm']
layers = [(W[n.input[1]], W[n.input[2]]) for n in gemms]
def mlp(x):
    for i, (w, b) in enumerate(layers):
        x = torch.nn.functional.linear(x, w, b)
        if i + 1 < len(layers): x = torch.relu(x)
    return x
for b in (1, 64):
    x = torch.rand(b, 784, device=dev)
    with torch.no_grad():
        res[f'torch_mlp_b{b}_ms'] = timeit(lambda: mlp(x))
        # end to end with host copies, as dmlc bench's end-to-end time
        xh = torch.rand(b, 784)
        res[f'torch_mlp_b{b}_e2e_ms'] = timeit(lambda: mlp(xh.to(dev)).cpu(), iters=100)
A = torch.rand(4096, 4096, device=dev); B = torch.rand(4096, 4096, device=dev)
t = timeit(lambda: A @ B, iters=50)
res['torch_gemm4096_f32_ms'] = t; res['torch_gemm4096_f32_tflops'] = 2 * 4096**3 / t / 1e9
torch.backends.cuda.matmul.allow_tf32 = True
t = timeit(lambda: A @ B, iters=50)
res['torch_gemm4096_tf32_tflops'] = 2 * 4096**3 / t / 1e9
x = torch.rand(1 << 26, device=dev); y = torch.empty_like(x)
t = timeit(lambda: y.copy_(x), iters=100)
res['torch_copy_GBps'] = 2 * 4 * (1 << 26) / t / 1e6
t = timeit(lambda: torch.relu(x * x + x) * 0.5 - 1, iters=100)
res['torch_elementwise_eager_ms'] = t
print(json.dumps(res, indent=1))
