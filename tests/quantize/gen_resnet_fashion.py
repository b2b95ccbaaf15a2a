"""resnet_small for Fashion-MNIST (docs/quantize.md's accuracy table):
../shared/models/resnet_small.onnx (stem + 3 residual blocks, BatchNorm,
random weights, input [B, 3, 32, 32]) with input [B, 1, 28, 28]: the stem
Conv's weight summed over its 3 input channels (a gray image repeated in 3
channels gives the same output; GlobalAveragePool takes any spatial size),
and every Identity of an initializer (PyTorch's export shares equal-valued
BatchNorm weights between layers that way) made an initializer of its own,
so training does not tie those layers. Train it with `dmlc train` first.
    python3 gen_resnet_fashion.py IN.onnx OUT.onnx   (numpy, onnx)
"""
import sys

import numpy as np
import onnx
from onnx import numpy_helper

m = onnx.load(sys.argv[1])
g = m.graph
inits = {t.name: t for t in g.initializer}
keep = []
for n in g.node:
    if n.op_type == "Identity" and n.input[0] in inits:
        a = numpy_helper.to_array(inits[n.input[0]]).copy()
        g.initializer.append(numpy_helper.from_array(a, n.output[0]))
    else:
        keep.append(n)
del g.node[:]
g.node.extend(keep)
for t in g.initializer:
    if t.name == "stem.0.weight":
        w = numpy_helper.to_array(t).sum(axis=1, keepdims=True).astype(np.float32)
        t.CopyFrom(numpy_helper.from_array(w, t.name))
d = g.input[0].type.tensor_type.shape.dim
d[1].dim_value, d[2].dim_value, d[3].dim_value = 1, 28, 28
del g.value_info[:]
onnx.checker.check_model(m)
onnx.save(m, sys.argv[2])
