#!/usr/bin/env python3
"""ONNX Runtime on the random graphs dml_graphgen exported, against dmlc's CPU.

    graphgen_ort.py [--f64] DIR

DIR/graphs.txt (written by `dml_graphgen --onnx-dir DIR`, tests/vulkan/graphgen.c)
lists "<name> exported <runs> <inputs> <outputs> <nodes>" lines; each graph is
DIR/<name>.onnx (dmlc's ONNX exporter, dml_onnx_export_module) with the inputs
and the CPU's outputs of each run as DIR/<name>.r<run>.i<k>.npy and .o<k>.npy.
Each model must pass onnx.checker (full check: ONNX's shape inference too) and
load in ONNX Runtime (CPU provider); on every run each output must have the
CPU's shape and be within the generator's tolerance (tests/graphgen_io.h,
gg_out_err): max |ort - cpu| <= 1e-4 * max(1, max |cpu|) over the CPU's finite
elements, a NaN or infinity only where the CPU has the same.

Prints one line per graph, "<name>: pass (error E)" or "<name>: FAIL: <why>"
(<why> starting "checker:", "onnxruntime:" or "mismatch:", the class the
generator's shrinker keeps), then a count line with the worst error. With
--f64, a mismatch is also judged against the graph evaluated in float64
(ONNX's reference evaluator, onnx.reference, on the model with its f32
tensors made f64; slow on large convolutions): the line then ends with
each side's error from it. Exit status 0 when every graph passed, 1
otherwise. dml_graphgen --ort runs this on each batch of
seeds and on each candidate while shrinking a failure (docs/kernels.md,
"Random graphs"). Needs numpy, onnx and onnxruntime (the venv of
scripts/onnx_node_suite.sh: onnx 1.23.2, onnxruntime 1.31.1).
"""
import os
import sys

import numpy as np
import onnx
import onnxruntime as ort

TOL = 1e-4  # GG_TOL of tests/graphgen_io.h


def out_err(got, want):
    """gg_out_err(got, want) of tests/graphgen_io.h, in float64."""
    if got.dtype != want.dtype or got.shape != want.shape:
        return 1e9
    x = got.astype(np.float64).ravel()
    y = want.astype(np.float64).ravel()
    fin_y = np.isfinite(y)
    scale = max(1.0, float(np.max(np.abs(y[fin_y])))) if fin_y.any() else 1.0
    odd = ~np.isfinite(x) | ~fin_y
    if odd.any():
        xo, yo = x[odd], y[odd]
        same = (xo == yo) | (np.isnan(xo) & np.isnan(yo))
        if not same.all():
            return 1e9
    if (~odd).any():
        return float(np.max(np.abs(x[~odd] - y[~odd]))) / scale
    return 0.0


def f64_errors(path, feed, outs, cpu_outs):
    """Norm-wise errors of ONNX Runtime's and dmlc's outputs from the graph
    evaluated in float64 (onnx.reference), as text."""
    from onnx import TensorProto, numpy_helper
    from onnx.reference import ReferenceEvaluator

    m = onnx.load(path)

    def f64(t):
        if t.data_type == TensorProto.FLOAT:
            t.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(t).astype(np.float64),
                                               t.name))

    for t in m.graph.initializer:
        f64(t)
    for n in m.graph.node:
        for a in n.attribute:
            if a.type == onnx.AttributeProto.TENSOR:
                f64(a.t)
    for v in list(m.graph.input) + list(m.graph.output):
        if v.type.tensor_type.elem_type == TensorProto.FLOAT:
            v.type.tensor_type.elem_type = TensorProto.DOUBLE
    try:
        ref = ReferenceEvaluator(m).run(None, {k: v.astype(np.float64) for k, v in feed.items()})
    except Exception as e:  # noqa: BLE001
        return "f64 reference failed: %s" % " ".join(str(e).split())[:200]
    eo = max(out_err(np.asarray(o, np.float64), np.asarray(r)) for o, r in zip(outs, ref))
    ec = max(out_err(c.astype(np.float64), np.asarray(r)) for c, r in zip(cpu_outs, ref))
    return "from f64: onnxruntime %.3g, dmlc %.3g" % (eo, ec)


def run_name(run):
    return "batch %d" % (3 if run else 1) if run < 2 else "the symbols at their bounds"


def check(d, name, runs, n_in, n_out, judge=False):
    """(True, worst error) or (False, why)."""
    path = os.path.join(d, name + ".onnx")
    try:
        onnx.checker.check_model(onnx.load(path), full_check=True)
    except Exception as e:  # noqa: BLE001 (any checker error is the verdict)
        return False, "checker: %s" % " ".join(str(e).split())[:300]
    try:
        so = ort.SessionOptions()
        so.intra_op_num_threads = 1
        so.inter_op_num_threads = 1
        sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    except Exception as e:  # noqa: BLE001
        return False, "onnxruntime: cannot load: %s" % " ".join(str(e).split())[:300]
    ins = [i.name for i in sess.get_inputs()]
    if len(ins) != n_in or len(sess.get_outputs()) != n_out:
        return False, "onnxruntime: %d inputs and %d outputs, dmlc's CPU %d and %d" % (
            len(ins), len(sess.get_outputs()), n_in, n_out)
    worst = 0.0
    for r in range(runs):
        feed = {ins[k]: np.load(os.path.join(d, "%s.r%d.i%d.npy" % (name, r, k)))
                for k in range(n_in)}
        try:
            outs = sess.run(None, feed)
        except Exception as e:  # noqa: BLE001
            return False, "onnxruntime: run at %s: %s" % (run_name(r),
                                                        " ".join(str(e).split())[:300])
        wants = [np.load(os.path.join(d, "%s.r%d.o%d.npy" % (name, r, k)))
                 for k in range(n_out)]
        for k in range(n_out):
            got, want = np.asarray(outs[k]), wants[k]
            e = out_err(got, want)
            if not e <= TOL:
                shape = "" if got.shape == want.shape else " (shape %s, dmlc's CPU %s)" % (
                    list(got.shape), list(want.shape))
                why = "mismatch: output %d %s%s: error %.3g%s" % (
                    k, "at " if r < 2 else "with ", run_name(r), e, shape)
                if judge and not shape:
                    why += " (%s)" % f64_errors(path, feed, outs, wants)
                return False, why
            worst = max(worst, e)
    return True, worst


def main():
    args = sys.argv[1:]
    judge = "--f64" in args
    args = [a for a in args if a != "--f64"]
    if len(args) != 1:
        print("usage: graphgen_ort.py [--f64] DIR")
        return 2
    d = args[0]
    passed = failed = 0
    worst, worst_name = 0.0, "-"
    with open(os.path.join(d, "graphs.txt")) as f:
        for line in f:
            w = line.split()
            if not w or w[0].startswith("#") or len(w) < 5 or w[1] != "exported":
                continue
            ok, res = check(d, w[0], int(w[2]), int(w[3]), int(w[4]), judge)
            if ok:
                passed += 1
                if res > worst or worst_name == "-":
                    worst, worst_name = res, w[0]
                print("%s: pass (error %.3g)" % (w[0], res), flush=True)
            else:
                failed += 1
                print("%s: FAIL: %s" % (w[0], res), flush=True)
    print("graphgen_ort: %d passed, %d failed; worst passing error %.3g (%s); "
          "onnxruntime %s, onnx %s" % (passed, failed, worst, worst_name, ort.__version__,
                                       onnx.__version__), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
