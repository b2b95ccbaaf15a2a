"""Writes matmul1024.onnx: one MatMul of two f32 [1024,1024] inputs A and B,
for eager_bench's compiled-package comparison, and add1024.onnx: one Add of
two f32 [1024,1024], for its session input/output figures (docs/tensor.md).

    .cache/onnx-1.23.2/venv/bin/python bench/make_eager_models.py OUT_DIR
"""
import os
import sys

import onnx
from onnx import TensorProto, helper


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    os.makedirs(out, exist_ok=True)
    n = 1024
    a = helper.make_tensor_value_info("A", TensorProto.FLOAT, [n, n])
    b = helper.make_tensor_value_info("B", TensorProto.FLOAT, [n, n])
    y = helper.make_tensor_value_info("Y", TensorProto.FLOAT, [n, n])
    g = helper.make_graph([helper.make_node("MatMul", ["A", "B"], ["Y"])], "matmul", [a, b], [y])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(out, "matmul1024.onnx"))
    g = helper.make_graph([helper.make_node("Add", ["A", "B"], ["Y"])], "add", [a, b], [y])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(out, "add1024.onnx"))


if __name__ == "__main__":
    main()
