"""Checks of test_qat.sh on the model `dmlc train --qat --export-onnx` wrote:
  check_qat.py QDQ.onnx X.npy QDQ_OUT.npy FAKE_OUT.npy
  check_qat.py ema CHECKPOINT.safetensors X.npy BATCH
The second form: the graph input's range "x_range" in the checkpoint after
one epoch of BATCH-row steps in order (--no-shuffle) must equal, within
1e-6, the moving average computed here in f32 (PyTorch's
MovingAverageMinMaxObserver, constant 0.01) from the calibrated range
[min(x), max(x)] over all rows (fewer than the 1000 calibration rows).
QDQ.onnx must be a QDQ model (QuantizeLinear/DequantizeLinear, no
FakeQuantize); ONNX Runtime's output on X must equal dmlc's on the same QDQ
model (QDQ_OUT.npy) within 1e-4 absolute + 1e-4 relative (both run the
quantization ops' reference form: only f32 summation order differs), and the
trained fake-quantized package's forward (FAKE_OUT.npy) must agree with it
on the argmax of >= 98% of the rows, within 5% of max|y|: the two differ
only by the int32 bias of the QDQ model (biases train in f32, as in
PyTorch's QAT), whose last-bit differences can move an activation across a
rounding boundary, one quantization step. Exit 0 when all hold.
"""
import sys

import numpy as np
import onnx
import onnxruntime as ort

if sys.argv[1] == "ema":
    import json
    import struct

    b = open(sys.argv[2], "rb").read()
    n = struct.unpack("<Q", b[:8])[0]
    h = json.loads(b[8:8 + n])
    s0, s1 = h["x_range"]["data_offsets"]
    got = np.frombuffer(b[8 + n + s0:8 + n + s1], dtype=np.float32)
    x = np.load(sys.argv[3])
    bs = int(sys.argv[4])
    r = np.array([x.min(), x.max()], np.float32)
    c = np.float32(0.01)
    for k in range(0, len(x), bs):
        xb = x[k:k + bs]
        r = (r + (np.array([xb.min(), xb.max()], np.float32) - r) * c).astype(np.float32)
    print(f"x_range after training {got}, expected {r}")
    sys.exit(0 if np.allclose(got, r, rtol=1e-6, atol=1e-6) else 1)

qdq, xs, q_out, f_out = sys.argv[1:5]
m = onnx.load(qdq)
ops = {n.op_type for n in m.graph.node}
ok = True
if "QuantizeLinear" not in ops or "DequantizeLinear" not in ops or "FakeQuantize" in ops:
    print(f"not a QDQ model: ops {sorted(ops)}")
    ok = False
x = np.load(xs)
s = ort.InferenceSession(qdq, providers=["CPUExecutionProvider"])
r = s.run(None, {s.get_inputs()[0].name: x})[0]
a = np.load(q_out)
b = np.load(f_out)
d_q = np.abs(r - a).max()
if not np.all(np.abs(r - a) <= 1e-4 + 1e-4 * np.abs(r)):
    print(f"dmlc and ONNX Runtime differ on the QDQ model: max |diff| {d_q}")
    ok = False
agree = float((r.argmax(1) == b.argmax(1)).mean())
d_f = np.abs(r - b).max()
if agree < 0.98 or d_f > 0.05 * np.abs(r).max():
    print(f"the fake-quantized package and the QDQ model differ: argmax agree {agree}, "
          f"max |diff| {d_f} of max |y| {np.abs(r).max()}")
    ok = False
print(f"ORT vs dmlc on the QDQ model: max |diff| {d_q:.3g}; QDQ vs trained fake-quant "
      f"package: argmax agree {agree:.4f}, max |diff| {d_f:.3g}")
sys.exit(0 if ok else 1)
