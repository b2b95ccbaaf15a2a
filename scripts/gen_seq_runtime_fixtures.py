#!/usr/bin/env python3
"""Generates ONNX models with sequences of run-time length (lowered as
stacked sequences, frontends/onnx/onnx_seq.c and onnx_loop.c) and their
onnxruntime reference outputs.

Run with the project venv (onnx, onnxruntime, numpy):
    .cache/onnx-1.23.2/venv/bin/python scripts/gen_seq_runtime_fixtures.py
Writes tests/onnx/fixtures/seq_rt_*.onnx (two refused by dmlc) and tests/onnx/seq_rt_ref.h (inputs,
output shapes and values onnxruntime computed, each model at T = 3 and 11)
and the inputs of tests/fallback's check of the Loop model
(tests/fallback/x_seqrt_loop_*.npy, T = 11).
Models use ir_version 8 and opset 17. The header is then formatted with
clang-format -i. Every file is deterministic (fixed seed); rerun this
script after changing it.
"""
import os

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
FIX = os.path.join(ROOT, "tests", "onnx", "fixtures")
FALLBACK = os.path.join(ROOT, "tests", "fallback")
HDR = os.path.join(ROOT, "tests", "onnx", "seq_rt_ref.h")
F, I64, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL
RNG = np.random.default_rng(2468)


def model(nodes, inputs, outputs, fname, inits=()):
    g = helper.make_graph(nodes, fname.split(".")[0], inputs, outputs,
                          initializer=list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)],
                          producer_name="gen_seq_runtime_fixtures")
    m.ir_version = 8
    onnx.checker.check_model(m)
    with open(os.path.join(FIX, fname), "wb") as f:
        f.write(m.SerializeToString())


def gen_loop():
    """A list built in a loop run at run time: M = len(x) (x [T, 2, 3]),
    the body appends x[i] * 2 + i to a sequence that starts empty; after
    the loop ConcatFromSequence (axis 1, new_axis 0: [2, 3T]; axis 1,
    new_axis 1: [2, T, 3]), SequenceAt(pos) with a run-time pos, and
    SequenceLength. A second loop, without trip count, appends x[i] while
    i + 1 < lim (a run-time input; its length a data-dependent dim), read
    by ConcatFromSequence (axis 0, new_axis 0: [2 lim, 3])."""
    wbody = helper.make_graph(
        [helper.make_node("Gather", ["x", "i"], ["xi"], axis=0, name="wb_gather"),
         helper.make_node("Add", ["i", "one"], ["i1"], name="wb_next"),
         helper.make_node("Less", ["i1", "lim"], ["c_out"], name="wb_cond"),
         helper.make_node("SequenceInsert", ["s_in", "xi"], ["s_out"], name="wb_insert")],
        "while_body",
        [helper.make_tensor_value_info("i", I64, []),
         helper.make_tensor_value_info("c_in", B, []),
         helper.make_tensor_sequence_value_info("s_in", F, None)],
        [helper.make_tensor_value_info("c_out", B, []),
         helper.make_tensor_sequence_value_info("s_out", F, None)],
        initializer=[helper.make_tensor("one", I64, [], [1])])
    body = helper.make_graph(
        [helper.make_node("Gather", ["x", "i"], ["xi"], axis=0, name="lb_gather"),
         helper.make_node("Cast", ["i"], ["fi"], to=F, name="lb_cast"),
         helper.make_node("Mul", ["xi", "two"], ["x2"], name="lb_mul"),
         helper.make_node("Add", ["x2", "fi"], ["el"], name="lb_add"),
         helper.make_node("SequenceInsert", ["s_in", "el"], ["s_out"], name="lb_insert"),
         helper.make_node("Identity", ["c_in"], ["c_out"], name="lb_cond")],
        "loop_body",
        [helper.make_tensor_value_info("i", I64, []),
         helper.make_tensor_value_info("c_in", B, []),
         helper.make_tensor_sequence_value_info("s_in", F, None)],
        [helper.make_tensor_value_info("c_out", B, []),
         helper.make_tensor_sequence_value_info("s_out", F, None)],
        initializer=[helper.make_tensor("two", F, [], [2.0])])
    nodes = [
        helper.make_node("Shape", ["x"], ["shp"], name="shape"),
        helper.make_node("Gather", ["shp", "zero"], ["m"], axis=0, name="len"),
        helper.make_node("SequenceEmpty", [], ["s0"], dtype=F, name="empty"),
        helper.make_node("Loop", ["m", "true", "s0"], ["s"], body=body, name="build"),
        helper.make_node("ConcatFromSequence", ["s"], ["cat"], axis=1, new_axis=0,
                         name="cat"),
        helper.make_node("ConcatFromSequence", ["s"], ["stack"], axis=1, new_axis=1,
                         name="stack"),
        helper.make_node("SequenceAt", ["s", "pos"], ["at"], name="at"),
        helper.make_node("SequenceLength", ["s"], ["n"], name="n"),
        helper.make_node("Loop", ["", "true", "s0"], ["w"], body=wbody, name="while"),
        helper.make_node("ConcatFromSequence", ["w"], ["wcat"], axis=0, new_axis=0,
                         name="wcat"),
    ]
    inits = [helper.make_tensor("zero", I64, [], [0]),
             helper.make_tensor("true", B, [], [True])]
    model(nodes,
          [helper.make_tensor_value_info("x", F, ["T", 2, 3]),
           helper.make_tensor_value_info("pos", I64, []),
           helper.make_tensor_value_info("lim", I64, [])],
          [helper.make_tensor_value_info("cat", F, [2, None]),
           helper.make_tensor_value_info("stack", F, [2, None, 3]),
           helper.make_tensor_value_info("at", F, [2, 3]),
           helper.make_tensor_value_info("n", I64, []),
           helper.make_tensor_value_info("wcat", F, [None, 3])],
          "seq_rt_loop.onnx", inits)


def gen_split():
    """SplitToSequence along a symbolic dim: x [T, 4] into [4] pieces
    (keepdims 0), y [2, T] into [2, 1] pieces (no split, keepdims 1) and
    into pieces of a scalar split 1; read by SequenceAt, ConcatFromSequence
    and SequenceLength; SequenceMap over x's pieces with w [4] (a tensor
    input): e * w and ReduceSum(e), each stacked by ConcatFromSequence."""
    mbody = helper.make_graph(
        [helper.make_node("Mul", ["e", "we"], ["o1"], name="mb_mul"),
         helper.make_node("ReduceSum", ["e"], ["o2"], keepdims=0, name="mb_sum")],
        "map_body",
        [helper.make_tensor_value_info("e", F, [4]),
         helper.make_tensor_value_info("we", F, [4])],
        [helper.make_tensor_value_info("o1", F, [4]),
         helper.make_tensor_value_info("o2", F, [])])
    nodes = [
        helper.make_node("SplitToSequence", ["x"], ["sx"], axis=0, keepdims=0,
                         name="split_x"),
        helper.make_node("SequenceAt", ["sx", "pos"], ["at"], name="at"),
        helper.make_node("ConcatFromSequence", ["sx"], ["xt"], axis=1, new_axis=1,
                         name="xt"),
        helper.make_node("SequenceLength", ["sx"], ["n"], name="n"),
        helper.make_node("SplitToSequence", ["y"], ["sy"], axis=1, name="split_y"),
        helper.make_node("ConcatFromSequence", ["sy"], ["ycat"], axis=0, new_axis=0,
                         name="ycat"),
        helper.make_node("SplitToSequence", ["y", "one"], ["sy1"], axis=-1,
                         name="split_y1"),
        helper.make_node("SequenceAt", ["sy1", "last"], ["ylast"], name="ylast"),
        helper.make_node("SequenceMap", ["sx", "w"], ["m1", "m2"], body=mbody,
                         name="map"),
        helper.make_node("ConcatFromSequence", ["m1"], ["mapped"], axis=0, new_axis=1,
                         name="mapped"),
        helper.make_node("ConcatFromSequence", ["m2"], ["sums"], axis=0, new_axis=1,
                         name="sums"),
    ]
    inits = [helper.make_tensor("one", I64, [], [1]),
             helper.make_tensor("last", I64, [], [-1])]
    model(nodes,
          [helper.make_tensor_value_info("x", F, ["T", 4]),
           helper.make_tensor_value_info("y", F, [2, "T"]),
           helper.make_tensor_value_info("pos", I64, []),
           helper.make_tensor_value_info("w", F, [4])],
          [helper.make_tensor_value_info("at", F, [4]),
           helper.make_tensor_value_info("xt", F, [4, "T"]),
           helper.make_tensor_value_info("n", I64, []),
           helper.make_tensor_value_info("ycat", F, [None, 1]),
           helper.make_tensor_value_info("ylast", F, [2, 1]),
           helper.make_tensor_value_info("mapped", F, ["T", 4]),
           helper.make_tensor_value_info("sums", F, ["T"])],
          "seq_rt_split.onnx", inits)


def gen_refused():
    """Refused: a scalar split 2 along a symbolic dim (the last piece may be
    shorter), and SequenceInsert into a sequence of run-time length."""
    model([helper.make_node("SplitToSequence", ["x", "two"], ["s"], axis=0,
                            name="split_2"),
           helper.make_node("ConcatFromSequence", ["s"], ["y"], axis=0, name="cat")],
          [helper.make_tensor_value_info("x", F, ["T", 4])],
          [helper.make_tensor_value_info("y", F, [None, 4])], "seq_rt_split2.onnx",
          [helper.make_tensor("two", I64, [], [2])])
    model([helper.make_node("SplitToSequence", ["x"], ["s"], axis=0, keepdims=0,
                            name="split"),
           helper.make_node("SequenceInsert", ["s", "e"], ["s2"], name="insert_after"),
           helper.make_node("ConcatFromSequence", ["s2"], ["y"], axis=0, new_axis=1,
                            name="cat")],
          [helper.make_tensor_value_info("x", F, ["T", 4]),
           helper.make_tensor_value_info("e", F, [4])],
          [helper.make_tensor_value_info("y", F, [None, 4])], "seq_rt_insert.onnx")


def c_vals(a):
    if a.dtype == np.float32:
        return ", ".join(repr(float(v)) + "f" for v in a.reshape(-1)) or "0"
    return ", ".join("%dll" % v for v in a.reshape(-1)) or "0"


def main():
    gen_loop()
    gen_split()
    gen_refused()
    cases = []  # (case name, model file, inputs {name: array}, output names)
    for t in (3, 11):
        cases.append(("loop_%d" % t, "seq_rt_loop.onnx",
                      {"x": RNG.standard_normal((t, 2, 3)).astype(np.float32),
                       "pos": np.array(t - 2, np.int64),
                       "lim": np.array(t - 1, np.int64)},
                      ["cat", "stack", "at", "n", "wcat"]))
        cases.append(("split_%d" % t, "seq_rt_split.onnx",
                      {"x": RNG.standard_normal((t, 4)).astype(np.float32),
                       "y": RNG.standard_normal((2, t)).astype(np.float32),
                       "pos": np.array(-1 if t == 3 else 4, np.int64),
                       "w": np.array([0.5, -1.0, 2.0, 0.25], np.float32)},
                      ["at", "xt", "n", "ycat", "ylast", "mapped", "sums"]))
    # tests/fallback: the Loop model at T = 11 on lavapipe against the CPU.
    for k, v in next(c for c in cases if c[0] == "loop_11")[2].items():
        np.save(os.path.join(FALLBACK, "x_seqrt_loop_%s.npy" % k), v)
    lines = ["/* Generated by scripts/gen_seq_runtime_fixtures.py with onnxruntime %s;"
             " do not edit. */" % ort.__version__,
             "#ifndef SEQ_RT_REF_H_", "#define SEQ_RT_REF_H_", "#include <stdint.h>", "",
             "/* One tensor: f32 (f) or i64 (i). */",
             "typedef struct seq_rt_tensor {", "  const char *name;", "  int is_i64;",
             "  int32_t rank;", "  int64_t dims[4];", "  const float *f;",
             "  const int64_t *i;", "} seq_rt_tensor_t;", "",
             "typedef struct seq_rt_case {", "  const char *name, *model;",
             "  uint32_t n_in, n_out;", "  seq_rt_tensor_t in[4], out[7];",
             "} seq_rt_case_t;", ""]
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
                i64 = v.dtype == np.int64
                lines.append("static const %s %s[] = {%s};" % (
                    "int64_t" if i64 else "float", arr, c_vals(v)))
                row.append('{"%s", %d, %d, {%s}, %s, %s}' % (
                    k, int(i64), v.ndim, ", ".join(str(d) for d in v.shape) or "0",
                    "0" if i64 else arr, arr if i64 else "0"))
            tens.append(row)
        body.append('  {"%s", "%s", %d, %d, {%s}, {%s}},' % (
            name, fname, len(tens[0]), len(tens[1]), ", ".join(tens[0]),
            ", ".join(tens[1])))
    lines += ["", "static const seq_rt_case_t seq_rt_cases[] = {"] + body + ["};", "",
              "#endif"]
    with open(HDR, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
