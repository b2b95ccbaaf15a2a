"""Writes dtypes.onnx, the Python package test's model of many dtypes
(tests/python/test_dmlc.py): per dtype one input and one output computed by
an exact op, every dim 0 symbolic ("batch"):

    f32  x [batch,3] -> relu   = Relu(x)
    f16  h [batch]   -> h2     = Add(h, h)
    bf16 g [batch]   -> g2     = Add(g, g)
    f64  d [batch]   -> d2     = Neg(d)
    i8   a [batch]   -> a2     = Add(a, a)
    u8   b [batch]   -> b2     = Add(b, b)
    i32  c [batch]   -> c2     = Mul(c, c)
    i64  i [batch]   -> i2     = Add(i, i)
    bool m [batch]   -> n      = Not(m)

Run with the shared venv: .cache/onnx-1.23.2/venv/bin/python tests/python/gen_dtypes_model.py
"""
import os

import onnx
from onnx import TensorProto as T, helper as h

CASES = [  # (input, dtype, dims after batch, output, op, operands)
    ("x", T.FLOAT, [3], "relu", "Relu", 1),
    ("h", T.FLOAT16, [], "h2", "Add", 2),
    ("g", T.BFLOAT16, [], "g2", "Add", 2),
    ("d", T.DOUBLE, [], "d2", "Neg", 1),
    ("a", T.INT8, [], "a2", "Add", 2),
    ("b", T.UINT8, [], "b2", "Add", 2),
    ("c", T.INT32, [], "c2", "Mul", 2),
    ("i", T.INT64, [], "i2", "Add", 2),
    ("m", T.BOOL, [], "n", "Not", 1),
]

inputs, outputs, nodes = [], [], []
for name, dt, dims, out, op, k in CASES:
    inputs.append(h.make_tensor_value_info(name, dt, ["batch"] + dims))
    outputs.append(h.make_tensor_value_info(out, dt, ["batch"] + dims))
    nodes.append(h.make_node(op, [name] * k, [out], name=op.lower() + "_" + name))
graph = h.make_graph(nodes, "dtypes", inputs, outputs)
model = h.make_model(graph, opset_imports=[h.make_opsetid("", 13)],
                     producer_name="tests/python/gen_dtypes_model.py")
model.ir_version = 8
onnx.checker.check_model(model)
onnx.save(model, os.path.join(os.path.dirname(os.path.abspath(__file__)), "dtypes.onnx"))
