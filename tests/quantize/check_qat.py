"""Checks of test_qat.sh on the model `dmlc train --qat --export-onnx` wrote:
  check_qat.py QDQ.onnx X.npy QDQ_OUT.npy FAKE_OUT.npy
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
