#!/usr/bin/python3
"""Writes the fixtures of test_onnx_bind (tests/conformance/fixtures) with
Debian's python3-onnx:  /usr/bin/python3 tests/conformance/gen_fixtures.py

  reshape_input.onnx  y = Reshape(x: f32[2,3], shape: i64[2]), opset 13
  shape.pb            TensorProto i64[2] = [3, 2] (raw_data)
  shape_typed.pb      TensorProto i64[2] = [3, 2] (int64_data)
  sequence.pb         a SequenceProto of one tensor (not a TensorProto)
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")
os.makedirs(here, exist_ok=True)

g = helper.make_graph(
    [helper.make_node("Reshape", ["x", "shape"], ["y"])], "reshape_input",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3]),
     helper.make_tensor_value_info("shape", TensorProto.INT64, [2])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)],
                      producer_name="gen_fixtures.py")
m.ir_version = 8
onnx.save(m, os.path.join(here, "reshape_input.onnx"))

t = numpy_helper.from_array(np.array([3, 2], dtype=np.int64), "shape")
with open(os.path.join(here, "shape.pb"), "wb") as f:
    f.write(t.SerializeToString())
t = helper.make_tensor("shape", TensorProto.INT64, [2], [3, 2])
with open(os.path.join(here, "shape_typed.pb"), "wb") as f:
    f.write(t.SerializeToString())
s = onnx.SequenceProto(name="seq", elem_type=onnx.SequenceProto.TENSOR)
s.tensor_values.append(numpy_helper.from_array(np.ones((2,), np.float32), "a"))
with open(os.path.join(here, "sequence.pb"), "wb") as f:
    f.write(s.SerializeToString())
