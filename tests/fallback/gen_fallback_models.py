"""Generates the CPU fall-back test models (tests/fallback/test_fallback.sh).

  python3 tests/fallback/gen_fallback_models.py  (with onnx and numpy, e.g. .cache/onnx-1.23.2/venv)

- lp_mid.onnx: x f32[4,8] -> Mul(x, x) -> LpNormalization(p=2, axis=1) ->
  Add(., 1.5) -> Relu -> y f32[4,8]: LpNormalization, which no GPU target
  emits, between GPU ops.
- string_mid.onnx: x f32[5] -> Cast(to string) -> StringConcat(., "0") ->
  Cast(to f32) -> Mul(., x) -> y f32[5]: string tensors in the middle (the
  decimal text of x with a "0" appended parses back as x when x has a
  fractional part, else as 10 x).
- f8_mid.onnx: x f32[5] -> Cast(to FLOAT8E4M3FN, saturate 1) -> Cast(to
  f32) -> Mul(., x) -> y f32[5]: float8 tensors in the middle (CPU only:
  the two Casts run on the host); y_f8.npy is the reference of x_f8.npy,
  from ml_dtypes (x rounded to E4M3FN, 1000 saturated to 448, times x).
- lp_only.onnx: x f32[4,8] -> LpNormalization(p=1, axis=1) -> y: no node
  for the device, so the whole function runs on the host.
- lp_views.onnx: x f32[N,8] (N symbolic) -> Mul(x, x) -> LpNormalization ->
  n, returned as output "n" (a host result returned) and Reshape'd to
  [N,2,4] (a view of it) -> Add(., 1.5) -> y; also z = Neg(x) (device only):
  transfers at run-time sizes, a view across the border, a host output.
- ctrl_mid.onnx: run-time control flow between device kernels: x f32[N,8]
  -> sq = Mul(x, x) -> s = ReduceSum(sq) -> Greater(s, 40) -> If: then
  Relu(Mul(sq, 2)) (f32[N,8]), else Slice(sq, rows 0:1) (f32[1,8]) -> t
  (dims decided by the branch taken, at run time) -> Add(t, 1.5) -> Neg
  -> y f32[?,8]; also z = Neg(sq). The host reads cond and runs the taken
  branch's kernels on the device, the rest on the device too.
- ctrl_host.onnx: the same If whose branches the device cannot run whole:
  then Relu(LpNormalization(Mul(sq, 2))) (the branch's own CPU fall-back
  per segment: Mul and Relu on the device, LpNormalization on the host),
  else Reshape(LpNormalization(sq, p=1), [1, -1]) (f32[1,8N]; no node for
  the device: that branch runs with the CPU kernels) -> Add(t, 1.5) -> y.
- rank_mid.onnx: as ctrl_mid, but the branches' ranks differ: then
  Relu(Mul(sq, 2)) (f32[N,8]), else Squeeze(Slice(sq, rows 0:1)) (f32[8])
  -> t -> Add(t, 1.5) -> Reshape(., [-1, 8]) -> Neg -> y f32[?,8]; the
  importer copies Add, Reshape and Neg into both branch functions (tail
  duplication, frontends/onnx/onnx_if.c), so the taken branch gives y.
  rank_ort_y_{then,else}.npy: ONNX Runtime's y for x_ctrl_{then,else}.npy.
- loop_mid.onnx: x f32[N,8], trip i64[] -> sq = Mul(x, x) -> Loop(trip):
  acc = acc * 0.5 + sq (from zeros; sq captured) -> Add(acc, 1.5) -> y
  f32[N,8]: a Loop between device kernels, its trip count an input.
- string_io.onnx: string tensors in and out of a function that also runs
  on the device (issue 23: string outputs came back empty on Vulkan): s
  str[4] (a string input read by a host entry), x f32[4] -> host: v =
  Cast(s, to f32), u = StringConcat(s, " ünï") -> device: r = Relu(v + x),
  ri = Cast(r, to i32) -> host: y = StringConcat(u, Cast(ri, to string));
  outputs y (a host result after a device segment), u (made by the first
  host entry, read by the second across the device segment, and returned)
  and r (the device's). s_strio.npy, x_strio.npy: its inputs;
  strio_ort_{y,u,r}.npy: ONNX Runtime's outputs (generated when
  onnxruntime is installed, as in .cache/onnx-1.23.2/venv).
- while_mid.onnx: a Loop whose iterations depend on run-time data, between
  device kernels: x f32[3] -> r = Relu(x) -> s0 = ReduceSum(r) -> Loop(trip
  = Cast(s0, to i64), cond = s0 < 100; body: a = a * 2, cond = sum(a) <
  100) from r -> y = Neg(.): a `while` condition and a trip count computed
  from the input. x_while.npy: its input; while_ort_y.npy: ONNX Runtime's
  output.
- ctrl_weight.onnx: an If whose two branches read one large weight of the
  caller: x f32[N,256] -> s = ReduceSum(x) -> Greater(s, 0) -> If: then
  Relu(MatMul(x, W)) f32[N,256], else Neg(MatMul(x[0:1], W)) f32[1,256]
  (branches of two shapes: an If the importer keeps) -> y, W f32[256,256]
  (256 KiB) an initializer of the main graph. x and W hold small multiples
  of 0.5, so every order of the sums gives the same bits. The branches run
  on the caller's device with its device copy of the weights
  (dml_rt_session_device_memory: W on the device once).
- x_nested.npy (f32[5,8]), c_true.npy, c_false.npy (bool[]): inputs of
  tests/onnx/fixtures/if_rt_nested.onnx (an If in a branch of an If,
  scripts/gen_if_runtime_fixtures.py) for the nested regions on the device.
- x_ctrl_then.npy (N = 5, sum of squares > 40), x_ctrl_else.npy (N = 3,
  below): both branches.
- x_lp.npy (also x of lp_views, N = 4), x_views.npy (N = 3), x_str.npy: inputs (with -0, a denormal, huge and tiny values).
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))


def save(graph, name):
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)],
                          producer_name="gen_fallback_models.py")
    m.ir_version = 10
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(HERE, name))


def lp_mid():
    c = numpy_helper.from_array(np.array(1.5, dtype=np.float32), "c")
    nodes = [
        helper.make_node("Mul", ["x", "x"], ["sq"], name="square"),
        helper.make_node("LpNormalization", ["sq"], ["n"], axis=1, p=2, name="lpnorm"),
        helper.make_node("Add", ["n", "c"], ["a"], name="add"),
        helper.make_node("Relu", ["a"], ["y"], name="relu"),
    ]
    g = helper.make_graph(
        nodes, "lp_mid",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 8])], [c])
    save(g, "lp_mid.onnx")
    rng = np.random.default_rng(14)
    x = rng.standard_normal((4, 8)).astype(np.float32)
    x[0, 0] = -0.0
    x[0, 1] = 1e-45  # a denormal
    x[1, :] = 0.0  # an all-zero row
    x[2, 3] = 1e20  # its square overflows to inf
    x[3] *= 1e-20  # squares underflow
    np.save(os.path.join(HERE, "x_lp.npy"), x)


def string_mid():
    s0 = numpy_helper.from_array(np.array(["0"], dtype=object), "s0")
    nodes = [
        helper.make_node("Cast", ["x"], ["xs"], to=TensorProto.STRING, name="to_text"),
        helper.make_node("StringConcat", ["xs", "s0"], ["xs0"], name="concat"),
        helper.make_node("Cast", ["xs0"], ["xf"], to=TensorProto.FLOAT, name="to_float"),
        helper.make_node("Mul", ["xf", "x"], ["y"], name="mul"),
    ]
    g = helper.make_graph(
        nodes, "string_mid",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [5])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [5])], [s0])
    save(g, "string_mid.onnx")
    np.save(os.path.join(HERE, "x_str.npy"),
            np.array([1.25, -3.0, 0.5, 7.0, -0.0], dtype=np.float32))


def f8_mid():
    nodes = [
        helper.make_node("Cast", ["x"], ["q"], to=TensorProto.FLOAT8E4M3FN, saturate=1,
                         name="to_f8"),
        helper.make_node("Cast", ["q"], ["xf"], to=TensorProto.FLOAT, name="to_float"),
        helper.make_node("Mul", ["xf", "x"], ["y"], name="mul"),
    ]
    g = helper.make_graph(
        nodes, "f8_mid",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [5])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [5])])
    save(g, "f8_mid.onnx")
    import ml_dtypes
    x = np.array([0.1, -3.3, 1000.0, 464.0, -0.0], dtype=np.float32)
    np.save(os.path.join(HERE, "x_f8.npy"), x)
    q = np.clip(x, -448, 448).astype(ml_dtypes.float8_e4m3fn).astype(np.float32)
    np.save(os.path.join(HERE, "y_f8.npy"), q * x)


def lp_only():
    nodes = [helper.make_node("LpNormalization", ["x"], ["y"], axis=1, p=1, name="lpnorm")]
    g = helper.make_graph(
        nodes, "lp_only",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 8])])
    save(g, "lp_only.onnx")


def lp_views():
    c = numpy_helper.from_array(np.array(1.5, dtype=np.float32), "c")
    shape = numpy_helper.from_array(np.array([-1, 2, 4], dtype=np.int64), "shape")
    nodes = [
        helper.make_node("Mul", ["x", "x"], ["sq"], name="square"),
        helper.make_node("LpNormalization", ["sq"], ["n"], axis=1, p=2, name="lpnorm"),
        helper.make_node("Reshape", ["n", "shape"], ["r"], name="reshape"),
        helper.make_node("Add", ["r", "c"], ["y"], name="add"),
        helper.make_node("Neg", ["x"], ["z"], name="neg"),
    ]
    g = helper.make_graph(
        nodes, "lp_views",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 2, 4]),
         helper.make_tensor_value_info("n", TensorProto.FLOAT, ["N", 8]),
         helper.make_tensor_value_info("z", TensorProto.FLOAT, ["N", 8])], [c, shape])
    save(g, "lp_views.onnx")
    x = np.random.default_rng(15).standard_normal((3, 8)).astype(np.float32)
    x[0, :4] = [np.inf, -np.inf, np.nan, -0.0]
    np.save(os.path.join(HERE, "x_views.npy"), x)


def ctrl_mid():
    thr = numpy_helper.from_array(np.array(40.0, dtype=np.float32), "thr")
    two = numpy_helper.from_array(np.array(2.0, dtype=np.float32), "two")
    c = numpy_helper.from_array(np.array(1.5, dtype=np.float32), "c")
    st = numpy_helper.from_array(np.array([0], dtype=np.int64), "st")
    en = numpy_helper.from_array(np.array([1], dtype=np.int64), "en")
    then_g = helper.make_graph(
        [helper.make_node("Mul", ["sq", "two"], ["m2"], name="then_mul"),
         helper.make_node("Relu", ["m2"], ["t_then"], name="then_relu")],
        "then_branch", [],
        [helper.make_tensor_value_info("t_then", TensorProto.FLOAT, ["N", 8])])
    else_g = helper.make_graph(
        [helper.make_node("Slice", ["sq", "st", "en"], ["t_else"], name="else_slice")],
        "else_branch", [],
        [helper.make_tensor_value_info("t_else", TensorProto.FLOAT, [1, 8])])
    nodes = [
        helper.make_node("Mul", ["x", "x"], ["sq"], name="square"),
        helper.make_node("ReduceSum", ["sq"], ["s"], keepdims=0, name="sum"),
        helper.make_node("Greater", ["s", "thr"], ["cond"], name="greater"),
        helper.make_node("If", ["cond"], ["t"], then_branch=then_g, else_branch=else_g,
                         name="choose"),
        helper.make_node("Add", ["t", "c"], ["a"], name="add"),
        helper.make_node("Neg", ["a"], ["y"], name="neg"),
        helper.make_node("Neg", ["sq"], ["z"], name="neg_sq"),
    ]
    g = helper.make_graph(
        nodes, "ctrl_mid",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["M", 8]),
         helper.make_tensor_value_info("z", TensorProto.FLOAT, ["N", 8])],
        [thr, two, c, st, en])
    save(g, "ctrl_mid.onnx")
    rng = np.random.default_rng(16)
    x = (rng.standard_normal((5, 8)) * 2).astype(np.float32)
    x[0, :4] = [np.inf, -0.0, 1e-45, 1e20]
    np.save(os.path.join(HERE, "x_ctrl_then.npy"), x)
    np.save(os.path.join(HERE, "x_ctrl_else.npy"),
            (rng.standard_normal((3, 8)) * 0.5).astype(np.float32))


def ctrl_host():
    thr = numpy_helper.from_array(np.array(40.0, dtype=np.float32), "thr")
    two = numpy_helper.from_array(np.array(2.0, dtype=np.float32), "two")
    c = numpy_helper.from_array(np.array(1.5, dtype=np.float32), "c")
    then_g = helper.make_graph(
        [helper.make_node("Mul", ["sq", "two"], ["m2"], name="then_mul"),
         helper.make_node("LpNormalization", ["m2"], ["l2"], axis=1, p=2,
                          name="then_lpnorm"),
         helper.make_node("Relu", ["l2"], ["t_then"], name="then_relu")],
        "then_branch", [],
        [helper.make_tensor_value_info("t_then", TensorProto.FLOAT, ["N", 8])])
    row = numpy_helper.from_array(np.array([1, -1], dtype=np.int64), "row")
    else_g = helper.make_graph(
        [helper.make_node("LpNormalization", ["sq"], ["l1"], axis=1, p=1,
                          name="else_lpnorm"),
         helper.make_node("Reshape", ["l1", "row"], ["t_else"], name="else_row")],
        "else_branch", [],
        [helper.make_tensor_value_info("t_else", TensorProto.FLOAT, [1, "K"])])
    nodes = [
        helper.make_node("Mul", ["x", "x"], ["sq"], name="square"),
        helper.make_node("ReduceSum", ["sq"], ["s"], keepdims=0, name="sum"),
        helper.make_node("Greater", ["s", "thr"], ["cond"], name="greater"),
        helper.make_node("If", ["cond"], ["t"], then_branch=then_g, else_branch=else_g,
                         name="choose"),
        helper.make_node("Add", ["t", "c"], ["y"], name="add"),
    ]
    g = helper.make_graph(
        nodes, "ctrl_host",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["M", "L"])],
        [thr, two, c, row])
    save(g, "ctrl_host.onnx")


def loop_mid():
    half = numpy_helper.from_array(np.array(0.5, dtype=np.float32), "half")
    c = numpy_helper.from_array(np.array(1.5, dtype=np.float32), "c")
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"], name="keep"),
         helper.make_node("Mul", ["acc_in", "half"], ["h"], name="body_mul"),
         helper.make_node("Add", ["h", "sq"], ["acc_out"], name="body_add")],
        "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("acc_in", TensorProto.FLOAT, ["N", 8])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("acc_out", TensorProto.FLOAT, ["N", 8])])
    nodes = [
        helper.make_node("Mul", ["x", "x"], ["sq"], name="square"),
        helper.make_node("Mul", ["sq", "half"], ["zero0"], name="zeros_like"),
        helper.make_node("Sub", ["zero0", "zero0"], ["acc0"], name="zeros"),
        helper.make_node("Loop", ["trip", "", "acc0"], ["acc"], body=body, name="repeat"),
        helper.make_node("Add", ["acc", "c"], ["y"], name="add"),
    ]
    g = helper.make_graph(
        nodes, "loop_mid",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 8]),
         helper.make_tensor_value_info("trip", TensorProto.INT64, [])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 8])], [half, c])
    save(g, "loop_mid.onnx")
    np.save(os.path.join(HERE, "trip3.npy"), np.array(3, dtype=np.int64))


def string_io():
    suffix = numpy_helper.from_array(np.array([" \u00fcn\u00ef"], dtype=object), "suffix")
    nodes = [
        helper.make_node("Cast", ["s"], ["v"], to=TensorProto.FLOAT, name="parse"),
        helper.make_node("StringConcat", ["s", "suffix"], ["u"], name="tag"),
        helper.make_node("Add", ["v", "x"], ["a"], name="add"),
        helper.make_node("Relu", ["a"], ["r"], name="relu"),
        helper.make_node("Cast", ["r"], ["ri"], to=TensorProto.INT32, name="to_int"),
        helper.make_node("Cast", ["ri"], ["rs"], to=TensorProto.STRING, name="to_text"),
        helper.make_node("StringConcat", ["u", "rs"], ["y"], name="join"),
    ]
    g = helper.make_graph(
        nodes, "string_io",
        [helper.make_tensor_value_info("s", TensorProto.STRING, [4]),
         helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("y", TensorProto.STRING, [4]),
         helper.make_tensor_value_info("u", TensorProto.STRING, [4]),
         helper.make_tensor_value_info("r", TensorProto.FLOAT, [4])], [suffix])
    save(g, "string_io.onnx")
    s = np.array(["1.5", "-20", "7", "250.25"])
    x = np.array([2.0, 3.0, -9.5, 0.5], dtype=np.float32)
    np.save(os.path.join(HERE, "s_strio.npy"), s)
    np.save(os.path.join(HERE, "x_strio.npy"), x)
    try:
        import onnxruntime as ort
    except ImportError:
        print("no onnxruntime: strio_ort_*.npy not regenerated")
        return
    sess = ort.InferenceSession(os.path.join(HERE, "string_io.onnx"),
                                providers=["CPUExecutionProvider"])
    for name, val in zip(["y", "u", "r"], sess.run(None, {"s": s.astype(object), "x": x})):
        np.save(os.path.join(HERE, "strio_ort_%s.npy" % name),
                val.astype(str) if val.dtype == object else val)


def while_mid():
    two = numpy_helper.from_array(np.array(2.0, dtype=np.float32), "two")
    lim = numpy_helper.from_array(np.array(100.0, dtype=np.float32), "lim")
    body = helper.make_graph(
        [helper.make_node("Mul", ["a_in", "two"], ["a_out"], name="double"),
         helper.make_node("ReduceSum", ["a_out"], ["s"], keepdims=0, name="body_sum"),
         helper.make_node("Less", ["s", "lim"], ["c_out"], name="body_less")],
        "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("c_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("a_in", TensorProto.FLOAT, [3])],
        [helper.make_tensor_value_info("c_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("a_out", TensorProto.FLOAT, [3])])
    nodes = [
        helper.make_node("Relu", ["x"], ["r"], name="relu"),
        helper.make_node("ReduceSum", ["r"], ["s0"], keepdims=0, name="sum"),
        helper.make_node("Less", ["s0", "lim"], ["c0"], name="less"),
        helper.make_node("Cast", ["s0"], ["t0"], to=TensorProto.INT64, name="trip"),
        helper.make_node("Loop", ["t0", "c0", "r"], ["a"], body=body, name="grow"),
        helper.make_node("Neg", ["a"], ["y"], name="neg"),
    ]
    g = helper.make_graph(
        nodes, "while_mid", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])], [two, lim])
    save(g, "while_mid.onnx")
    x = np.array([1.0, 2.0, 3.5], dtype=np.float32)
    np.save(os.path.join(HERE, "x_while.npy"), x)
    try:
        import onnxruntime as ort
    except ImportError:
        print("no onnxruntime: while_ort_y.npy not regenerated")
        return
    sess = ort.InferenceSession(os.path.join(HERE, "while_mid.onnx"),
                                providers=["CPUExecutionProvider"])
    np.save(os.path.join(HERE, "while_ort_y.npy"), sess.run(None, {"x": x})[0])


def ctrl_weight():
    rng = np.random.default_rng(21)
    w = numpy_helper.from_array(
        (rng.integers(-2, 3, (256, 256)) * 0.5).astype(np.float32), "W")
    zero = numpy_helper.from_array(np.array(0.0, dtype=np.float32), "zero")
    then_g = helper.make_graph(
        [helper.make_node("MatMul", ["x", "W"], ["mt"], name="then_mm"),
         helper.make_node("Relu", ["mt"], ["y_then"], name="then_relu")],
        "then_branch", [],
        [helper.make_tensor_value_info("y_then", TensorProto.FLOAT, ["N", 256])])
    st = numpy_helper.from_array(np.array([0], dtype=np.int64), "st")
    en = numpy_helper.from_array(np.array([1], dtype=np.int64), "en")
    else_g = helper.make_graph(
        [helper.make_node("Slice", ["x", "st", "en"], ["x0"], name="else_slice"),
         helper.make_node("MatMul", ["x0", "W"], ["me"], name="else_mm"),
         helper.make_node("Neg", ["me"], ["y_else"], name="else_neg")],
        "else_branch", [],
        [helper.make_tensor_value_info("y_else", TensorProto.FLOAT, [1, 256])])
    nodes = [
        helper.make_node("ReduceSum", ["x"], ["s"], keepdims=0, name="sum"),
        helper.make_node("Greater", ["s", "zero"], ["cond"], name="greater"),
        helper.make_node("If", ["cond"], ["y"], then_branch=then_g, else_branch=else_g,
                         name="choose"),
    ]
    g = helper.make_graph(
        nodes, "ctrl_weight",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 256])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["M", 256])],
        [w, zero, st, en])
    save(g, "ctrl_weight.onnx")


def nested_inputs():
    rng = np.random.default_rng(3)
    np.save(os.path.join(HERE, "x_nested.npy"),
            rng.standard_normal((5, 8)).astype(np.float32))
    np.save(os.path.join(HERE, "c_true.npy"), np.array(True))
    np.save(os.path.join(HERE, "c_false.npy"), np.array(False))
def rank_mid():
    thr = numpy_helper.from_array(np.array(40.0, dtype=np.float32), "thr")
    two = numpy_helper.from_array(np.array(2.0, dtype=np.float32), "two")
    c = numpy_helper.from_array(np.array(1.5, dtype=np.float32), "c")
    st = numpy_helper.from_array(np.array([0], dtype=np.int64), "st")
    en = numpy_helper.from_array(np.array([1], dtype=np.int64), "en")
    rows = numpy_helper.from_array(np.array([-1, 8], dtype=np.int64), "rows")
    then_g = helper.make_graph(
        [helper.make_node("Mul", ["sq", "two"], ["m2"], name="then_mul"),
         helper.make_node("Relu", ["m2"], ["t_then"], name="then_relu")],
        "then_branch", [],
        [helper.make_tensor_value_info("t_then", TensorProto.FLOAT, ["N", 8])])
    else_g = helper.make_graph(
        [helper.make_node("Slice", ["sq", "st", "en"], ["row"], name="else_slice"),
         helper.make_node("Squeeze", ["row", "st"], ["t_else"], name="else_squeeze")],
        "else_branch", [],
        [helper.make_tensor_value_info("t_else", TensorProto.FLOAT, [8])])
    nodes = [
        helper.make_node("Mul", ["x", "x"], ["sq"], name="square"),
        helper.make_node("ReduceSum", ["sq"], ["s"], keepdims=0, name="sum"),
        helper.make_node("Greater", ["s", "thr"], ["cond"], name="greater"),
        helper.make_node("If", ["cond"], ["t"], then_branch=then_g, else_branch=else_g,
                         name="choose"),
        helper.make_node("Add", ["t", "c"], ["a"], name="add"),
        helper.make_node("Reshape", ["a", "rows"], ["r"], name="rows"),
        helper.make_node("Neg", ["r"], ["y"], name="neg"),
        helper.make_node("Neg", ["sq"], ["z"], name="neg_sq"),
    ]
    g = helper.make_graph(
        nodes, "rank_mid",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["M", 8]),
         helper.make_tensor_value_info("z", TensorProto.FLOAT, ["N", 8])],
        [thr, two, c, st, en, rows])
    save(g, "rank_mid.onnx")
    try:
        import onnxruntime as ort
    except ImportError:
        print("no onnxruntime: rank_ort_y_*.npy not regenerated")
        return
    sess = ort.InferenceSession(os.path.join(HERE, "rank_mid.onnx"),
                                providers=["CPUExecutionProvider"])
    for b in ("then", "else"):
        x = np.load(os.path.join(HERE, "x_ctrl_%s.npy" % b))
        np.save(os.path.join(HERE, "rank_ort_y_%s.npy" % b), sess.run(["y"], {"x": x})[0])


lp_mid()
lp_views()
lp_only()
string_mid()
f8_mid()
ctrl_mid()
ctrl_host()
loop_mid()
string_io()
while_mid()
ctrl_weight()
nested_inputs()
rank_mid()
