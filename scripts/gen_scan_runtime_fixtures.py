#!/usr/bin/env python3
"""Generates ONNX models with a Scan over a symbolic length T (imported as a
run-time Loop, frontends/onnx/onnx_loop.c) and their onnxruntime reference
outputs.

Run with the project venv (onnx, onnxruntime, numpy):
    .cache/onnx-1.23.2/venv/bin/python scripts/gen_scan_runtime_fixtures.py
Writes tests/onnx/fixtures/scan_rt_*.onnx, tests/onnx/scan_rt_ref.h (inputs,
output shapes and values onnxruntime computed, each model at T = 5 and 37)
and the inputs of tests/fallback's Scan checks (tests/fallback/x_scan*.npy).
Models use ir_version 8 and opset 17 (Scan-8: opset 8). The header is then
formatted with clang-format -i. Every file is deterministic (fixed
seed); rerun this script after changing it.
"""
import os

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
FIX = os.path.join(ROOT, "tests", "onnx", "fixtures")
FALLBACK = os.path.join(ROOT, "tests", "fallback")
HDR = os.path.join(ROOT, "tests", "onnx", "scan_rt_ref.h")
F = TensorProto.FLOAT
RNG = np.random.default_rng(4321)


def vi(name, shape):
    return helper.make_tensor_value_info(name, F, shape)


def model(nodes, inputs, outputs, fname, inits=(), opset=17):
    g = helper.make_graph(nodes, fname.split(".")[0], inputs, outputs,
                          initializer=list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)],
                          producer_name="gen_scan_runtime_fixtures")
    m.ir_version = 8
    onnx.checker.check_model(m)
    with open(os.path.join(FIX, fname), "wb") as f:
        f.write(m.SerializeToString())


def gen_cumsum(t="T", fname="scan_rt_cumsum.onnx"):
    """Cumulative sum over t steps: s = s + x_t; scan output s per step.
    x [t, 4], s0 [4]."""
    body = helper.make_graph(
        [helper.make_node("Add", ["s_in", "x_t"], ["s_out"], name="cs_add"),
         helper.make_node("Identity", ["s_out"], ["y_t"], name="cs_id")],
        "cumsum_body", [vi("s_in", [4]), vi("x_t", [4])],
        [vi("s_out", [4]), vi("y_t", [4])])
    nodes = [helper.make_node("Scan", ["s0", "x"], ["s_final", "y"], name="scan_cumsum",
                              num_scan_inputs=1, body=body)]
    model(nodes, [vi("s0", [4]), vi("x", [t, 4])],
          [vi("s_final", [4]), vi("y", [t, 4])], fname)


def gen_resid():
    """The cumulative sum's scan output added to x (both [T, 4]): the Loop's
    scan output has the trip count's dim, T (ir/infer.c loop_trip_dim)."""
    body = helper.make_graph(
        [helper.make_node("Add", ["s_in", "x_t"], ["s_out"], name="rs_add"),
         helper.make_node("Identity", ["s_out"], ["y_t"], name="rs_id")],
        "resid_body", [vi("s_in", [4]), vi("x_t", [4])],
        [vi("s_out", [4]), vi("y_t", [4])])
    nodes = [helper.make_node("Scan", ["s0", "x"], ["s_final", "y"], name="scan_resid",
                              num_scan_inputs=1, body=body),
             helper.make_node("Add", ["y", "x"], ["z"], name="resid_add")]
    model(nodes, [vi("s0", [4]), vi("x", ["T", 4])], [vi("z", ["T", 4])],
          "scan_rt_resid.onnx")


def gen_scan8():
    """Scan-8 (opset 8: batch axis, sequence_lens) over a symbolic T: its
    batch form is only unrolled, so this is refused."""
    body = helper.make_graph(
        [helper.make_node("Add", ["s_in", "x_t"], ["s_out"], name="s8_add"),
         helper.make_node("Identity", ["s_out"], ["y_t"], name="s8_id")],
        "scan8_body", [vi("s_in", [4]), vi("x_t", [4])],
        [vi("s_out", [4]), vi("y_t", [4])])
    nodes = [helper.make_node("Scan", ["", "s0", "x"], ["s_final", "y"], name="scan8",
                              num_scan_inputs=1, body=body)]
    model(nodes, [vi("s0", [2, 4]), vi("x", [2, "T", 4])],
          [vi("s_final", [2, 4]), vi("y", [2, "T", 4])], "scan_rt_v8.onnx", opset=8)


def gen_rnn():
    """RNN cell over time, batch first: h = Tanh(x_t W + h U + b), x
    [batch, T, 8] scanned along axis 1, h [batch, 6], the hidden states
    stacked along axis 1 (scan_output_axes [1]: y [batch, T, 6]). W and b
    initializers of the outer graph, U one of the body."""
    u = numpy_helper.from_array((RNG.standard_normal((6, 6)) * 0.4).astype(np.float32),
                                "U")
    body = helper.make_graph(
        [helper.make_node("MatMul", ["x_t", "W"], ["xw"], name="rnn_xw"),
         helper.make_node("MatMul", ["h_in", "U"], ["hu"], name="rnn_hu"),
         helper.make_node("Add", ["xw", "hu"], ["pre0"], name="rnn_add"),
         helper.make_node("Add", ["pre0", "b"], ["pre"], name="rnn_bias"),
         helper.make_node("Tanh", ["pre"], ["h_out"], name="rnn_tanh"),
         helper.make_node("Identity", ["h_out"], ["y_t"], name="rnn_y")],
        "rnn_body", [vi("h_in", ["batch", 6]), vi("x_t", ["batch", 8])],
        [vi("h_out", ["batch", 6]), vi("y_t", ["batch", 6])], initializer=[u])
    w = numpy_helper.from_array((RNG.standard_normal((8, 6)) * 0.4).astype(np.float32),
                                "W")
    b = numpy_helper.from_array((RNG.standard_normal((6,)) * 0.1).astype(np.float32), "b")
    nodes = [helper.make_node("Scan", ["h0", "x"], ["h_final", "y"], name="scan_rnn",
                              num_scan_inputs=1, scan_input_axes=[1],
                              scan_output_axes=[1], body=body)]
    model(nodes, [vi("h0", ["batch", 6]), vi("x", ["batch", "T", 8])],
          [vi("h_final", ["batch", 6]), vi("y", ["batch", "T", 6])], "scan_rt_rnn.onnx",
          [w, b])


def gen_two():
    """Two scan inputs, reverse directions, a non-zero output axis: x [T, 3]
    read from its end (scan_input_directions [1, 0]), w [3, T] along axis 1;
    s = s + x_t * w_t; outputs y1 = s in reverse order
    (scan_output_directions [1, 0]), y2 = x_t - w_t stacked along axis 1
    ([3, T])."""
    body = helper.make_graph(
        [helper.make_node("Mul", ["x_t", "w_t"], ["xw"], name="two_mul"),
         helper.make_node("Add", ["s_in", "xw"], ["s_out"], name="two_add"),
         helper.make_node("Identity", ["s_out"], ["y1_t"], name="two_y1"),
         helper.make_node("Sub", ["x_t", "w_t"], ["y2_t"], name="two_sub")],
        "two_body", [vi("s_in", [3]), vi("x_t", [3]), vi("w_t", [3])],
        [vi("s_out", [3]), vi("y1_t", [3]), vi("y2_t", [3])])
    nodes = [helper.make_node("Scan", ["s0", "x", "w"], ["s_final", "y1", "y2"],
                              name="scan_two", num_scan_inputs=2,
                              scan_input_axes=[0, 1], scan_input_directions=[1, 0],
                              scan_output_directions=[1, 0], scan_output_axes=[0, 1],
                              body=body)]
    model(nodes, [vi("s0", [3]), vi("x", ["T", 3]), vi("w", [3, "T"])],
          [vi("s_final", [3]), vi("y1", ["T", 3]), vi("y2", [3, "T"])],
          "scan_rt_two.onnx")
    # The same with w's length a symbol of its own: nothing but the run
    # checks that the two scan inputs have one length.
    model(nodes, [vi("s0", [3]), vi("x", ["T", 3]), vi("w", [3, "U"])],
          [vi("s_final", [3]), vi("y1", ["T", 3]), vi("y2", [3, "T"])],
          "scan_rt_two_lens.onnx")


def c_floats(v):
    return ", ".join("%.9ef" % float(x) for x in np.asarray(v, np.float32).ravel()) or "0"


def main():
    os.makedirs(FIX, exist_ok=True)
    gen_cumsum()
    # static, but more steps than unrolling takes (ONNX_LOOP_MAX_ITERS)
    gen_cumsum(70000, "scan_rt_long.onnx")
    gen_scan8()
    gen_resid()
    gen_rnn()
    gen_two()
    cases = []  # (case name, model file, inputs {name: array}, output names)
    for t in (5, 37):
        cases.append(("cumsum_%d" % t, "scan_rt_cumsum.onnx",
                      {"s0": RNG.standard_normal(4).astype(np.float32),
                       "x": RNG.standard_normal((t, 4)).astype(np.float32)},
                      ["s_final", "y"]))
        cases.append(("rnn_%d" % t, "scan_rt_rnn.onnx",
                      {"h0": RNG.standard_normal((2, 6)).astype(np.float32),
                       "x": RNG.standard_normal((2, t, 8)).astype(np.float32)},
                      ["h_final", "y"]))
        cases.append(("two_%d" % t, "scan_rt_two.onnx",
                      {"s0": RNG.standard_normal(3).astype(np.float32),
                       "x": RNG.standard_normal((t, 3)).astype(np.float32),
                       "w": RNG.standard_normal((3, t)).astype(np.float32)},
                      ["s_final", "y1", "y2"]))
    # tests/fallback: the same models on lavapipe against the CPU.
    for name, _, ins, _ in cases:
        if name.endswith("_37"):
            for k, v in ins.items():
                np.save(os.path.join(FALLBACK, "x_scan_%s_%s.npy" % (name.split("_")[0], k)),
                        v)
    # The residual model, its inputs from a generator of its own (the other
    # cases' values stay as they were).
    rng = np.random.default_rng(8765)
    for t in (5, 37):
        cases.append(("resid_%d" % t, "scan_rt_resid.onnx",
                      {"s0": rng.standard_normal(4).astype(np.float32),
                       "x": rng.standard_normal((t, 4)).astype(np.float32)},
                      ["z"]))
    lines = ["/* Generated by scripts/gen_scan_runtime_fixtures.py with onnxruntime %s;"
             " do not edit. */" % ort.__version__,
             "#ifndef SCAN_RT_REF_H_", "#define SCAN_RT_REF_H_", "#include <stdint.h>", "",
             "typedef struct scan_rt_tensor {", "  const char *name;", "  int32_t rank;",
             "  int64_t dims[4];", "  const float *f;", "} scan_rt_tensor_t;", "",
             "typedef struct scan_rt_case {", "  const char *name, *model;",
             "  uint32_t n_in, n_out;", "  scan_rt_tensor_t in[3], out[3];",
             "} scan_rt_case_t;", ""]
    sess = {}
    body = []
    for name, fname, ins, outs in cases:
        if fname not in sess:
            sess[fname] = ort.InferenceSession(os.path.join(FIX, fname),
                                               providers=["CPUExecutionProvider"])
        got = sess[fname].run(outs, ins)
        tens = []
        for kind, items in (("in", list(ins.items())), ("out", list(zip(outs, got)))):
            row = []
            for k, v in items:
                arr = "%s_%s_%s" % (name, kind, k)
                lines.append("static const float %s[] = {%s};" % (arr, c_floats(v)))
                row.append('{"%s", %d, {%s}, %s}' % (
                    k, v.ndim, ", ".join(str(d) for d in v.shape) or "0", arr))
            tens.append(row)
        body.append('  {"%s", "%s", %d, %d, {%s}, {%s}},' % (
            name, fname, len(tens[0]), len(tens[1]), ", ".join(tens[0]),
            ", ".join(tens[1])))
    lines += ["", "static const scan_rt_case_t scan_rt_cases[] = {"] + body + ["};", "",
              "#endif"]
    with open(HDR, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
