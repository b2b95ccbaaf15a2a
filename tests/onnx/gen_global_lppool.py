"""Writes the GlobalLpPool fixtures of test_onnx_global_lppool.c and their
onnxruntime reference (global_lppool_ref.h):
  fixtures/global_lppool_p3.onnx   X f32 [2, 3, 4, 5] -> Y [2, 3, 1, 1], p = 3
  fixtures/global_lppool_1d.onnx   X f32 [1, 4, 7] -> Y [1, 4, 1], p default (2)
  fixtures/global_lppool_rank2.onnx X f32 [2, 3] (refused: rank < 3)
The inputs hold edge values: NaN, +-inf, -0, tiny and huge magnitudes,
negative values (|x|^p with odd p).
Run: python3 tests/onnx/gen_global_lppool.py (with onnx, onnxruntime and numpy, e.g. .cache/onnx-1.23.2/venv)"""
import os
import subprocess

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper

HERE = os.path.dirname(os.path.abspath(__file__))


def model(shape, out_shape, p=None, opset=13):
    attrs = {} if p is None else {"p": p}
    node = helper.make_node("GlobalLpPool", ["X"], ["Y"], name="glp", **attrs)
    g = helper.make_graph(
        [node], "g",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, out_shape)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)],
                          producer_name="gen_global_lppool", ir_version=8)
    onnx.checker.check_model(m)
    return m


def inputs_p3():
    rng = np.random.default_rng(15)
    x = rng.uniform(-3, 3, size=(2, 3, 4, 5)).astype(np.float32)
    x[0, 1, 2, 3] = np.nan  # channel (0, 1): NaN
    x[1, 0, 0, 0] = -np.inf  # channel (1, 0): inf
    x[1, 2] = -0.0  # channel (1, 2): all -0 -> 0
    x[0, 2] = 1e-30  # tiny: (20 * 1e-90)^(1/3) underflows in f32 -> 0
    x[1, 1, 3] = 1e12  # huge: |x|^3 overflows f32 -> inf
    return x


def inputs_1d():
    x = np.array([[[1, -2, 3, -4, 5, -6, 7],
                   [0.5, 0.25, -0.125, 0, 0, 0, 1e-3],
                   [1e18, 1e18, 0, 0, 0, 0, 0],  # (2e36)^(1/2): f32 sum fits
                   [-1, -1, -1, -1, -1, -1, -1]]], dtype=np.float32)
    return x


def ref(m, x):
    s = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    return s.run(None, {"X": x})[0]


def c_floats(name, a):
    vals = []
    for v in a.reshape(-1).tolist():
        if np.isnan(v):
            vals.append("NAN")
        elif np.isinf(v):
            vals.append("INFINITY" if v > 0 else "-INFINITY")
        else:
            vals.append(float(v).hex() + "f")
    return "static const float %s[%d] = {%s};\n" % (name, len(vals), ", ".join(vals))


def main():
    fx = os.path.join(HERE, "fixtures")
    m3 = model([2, 3, 4, 5], [2, 3, 1, 1], p=3)
    m1 = model([1, 4, 7], [1, 4, 1])
    onnx.save(m3, os.path.join(fx, "global_lppool_p3.onnx"))
    onnx.save(m1, os.path.join(fx, "global_lppool_1d.onnx"))
    bad = helper.make_model(
        helper.make_graph(
            [helper.make_node("GlobalLpPool", ["X"], ["Y"], name="glp")], "g",
            [helper.make_tensor_value_info("X", TensorProto.FLOAT, [2, 3])],
            [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)]),
        opset_imports=[helper.make_opsetid("", 13)], producer_name="gen_global_lppool",
        ir_version=8)
    onnx.save(bad, os.path.join(fx, "global_lppool_rank2.onnx"))
    x3, x1 = inputs_p3(), inputs_1d()
    y3, y1 = ref(m3, x3), ref(m1, x1)
    with open(os.path.join(HERE, "global_lppool_ref.h"), "w") as f:
        f.write("/* Written by tests/onnx/gen_global_lppool.py (onnxruntime %s). */\n"
                % ort.__version__)
        f.write("#include <math.h>\n")
        f.write(c_floats("k_x_p3", x3))
        f.write(c_floats("k_y_p3", y3))
        f.write(c_floats("k_x_1d", x1))
        f.write(c_floats("k_y_1d", y1))
    # the project's style (scripts/check_format.sh checks every .h)
    subprocess.run(["clang-format", "-i", os.path.join(HERE, "global_lppool_ref.h")],
                   check=True)


if __name__ == "__main__":
    main()
