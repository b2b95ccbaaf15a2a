#!/usr/bin/env python3
"""Checks a QDQ model written by `dmlc quantize` (tests/quantize):

  check_qdq.py structure F32.onnx QDQ.onnx KEPT,...     (needs onnx, numpy)
  check_qdq.py ort F32.onnx QDQ.onnx CALIB.npy REPORT.json DMLC_OUT.npy
                                                 (needs onnxruntime too)

structure: onnx.checker passes; opset >= 13; every Conv/Gemm/MatMul not in
KEPT reads its weight through DequantizeLinear of an int8 initializer
(zero points 0, values in [-127, 127], axis = the output channels, weight
== DQ(weight) within half a step) and its bias through DequantizeLinear of
an int32 initializer whose scales are x_scale * w_scale; every activation
it reads comes from a QuantizeLinear -> DequantizeLinear pair; every
QuantizeLinear output feeds a DequantizeLinear; the KEPT layers read f32.
ort: ONNX Runtime runs the QDQ model; its output's SQNR against the f32
model agrees with the report's within 0.05 dB, dmlc's output of the QDQ
model (DMLC_OUT.npy, `dmlc run`) agrees with ORT's within one output-
quantization-free tolerance (1e-4 of max |y|), and ORT's quantize_static
(MinMax, per channel, QInt8) gives the same scales and zero points for the
tensors both models quantize.
"""
import json
import sys

import numpy as np
import onnx
from onnx import numpy_helper


def inits(m):
    return {i.name: numpy_helper.to_array(i) for i in m.graph.initializer}


def producers(m):
    return {o: n for n in m.graph.node for o in n.output}


def fail(msg):
    print("FAILED: " + msg)
    sys.exit(1)


def structure(f32_path, q_path, kept):
    m = onnx.load(q_path)
    f = onnx.load(f32_path)
    onnx.checker.check_model(m, full_check=True)
    opset = [o.version for o in m.opset_import if o.domain in ("", "ai.onnx")][0]
    if opset < 13:
        fail("opset %d < 13" % opset)
    I, P = inits(m), producers(m)
    F = inits(f)
    consumers = {}
    for n in m.graph.node:
        for i in n.input:
            consumers.setdefault(i, []).append(n)
    for n in m.graph.node:
        if n.op_type == "QuantizeLinear":
            c = consumers.get(n.output[0], [])
            if not c or any(x.op_type != "DequantizeLinear" for x in c):
                fail("%s output not read by DequantizeLinear" % n.name)
    checked = 0
    for n in m.graph.node:
        if n.op_type not in ("Conv", "Gemm", "MatMul"):
            continue
        if n.name in kept:
            if n.input[1] not in I or I[n.input[1]].dtype != np.float32:
                fail("kept layer %s does not read an f32 weight" % n.name)
            continue
        # activation: Q -> DQ
        dq = P.get(n.input[0])
        if dq is None or dq.op_type != "DequantizeLinear":
            fail("%s: activation not from DequantizeLinear" % n.name)
        q = P.get(dq.input[0])
        if q is None or q.op_type != "QuantizeLinear":
            fail("%s: activation DequantizeLinear not fed by QuantizeLinear" % n.name)
        xs = I[dq.input[1]]
        # weight
        wd = P.get(n.input[1])
        if wd is None or wd.op_type != "DequantizeLinear":
            fail("%s: weight not from DequantizeLinear" % n.name)
        wq, ws, wz = I[wd.input[0]], I[wd.input[1]], I[wd.input[2]]
        if wq.dtype != np.int8 or wz.dtype != np.int8 or np.any(wz != 0):
            fail("%s: weight not int8 symmetric" % n.name)
        if wq.min() < -127 or wq.max() > 127:
            fail("%s: weight outside [-127, 127]" % n.name)
        axis = {a.name: a.i for a in wd.attribute}.get("axis", 1)
        if n.op_type == "Conv":
            want = 0
        elif n.op_type == "Gemm":
            want = 0 if {a.name: a.i for a in n.attribute}.get("transB", 0) else 1
        else:
            want = 1
        if ws.ndim != 1 or axis != want or ws.size != wq.shape[want]:
            fail("%s: weight scales not per channel on axis %d" % (n.name, want))
        orig = F[wd.input[0][: -len("_quantized")]]
        shape = [1] * wq.ndim
        shape[want] = -1
        deq = wq.astype(np.float32) * ws.reshape(shape)
        if np.max(np.abs(deq - orig) - 0.5 * ws.reshape(shape)) > 1e-6:
            fail("%s: weight != DQ(weight) within half a step" % n.name)
        if len(n.input) > 2 and n.input[2]:
            bd = P.get(n.input[2])
            if bd is None or bd.op_type != "DequantizeLinear":
                fail("%s: bias not from DequantizeLinear" % n.name)
            bq, bs = I[bd.input[0]], I[bd.input[1]]
            if bq.dtype != np.int32:
                fail("%s: bias not int32" % n.name)
            if not np.allclose(bs, xs * ws, rtol=1e-6, atol=0):
                fail("%s: bias scale != x_scale * w_scale" % n.name)
        checked += 1
    left = [i for i in m.graph.initializer
            if i.data_type == onnx.TensorProto.FLOAT and i.name in F and i.name.endswith("weight")]
    if any(i.name.split(".")[0] not in kept for i in left):
        fail("f32 weights left: %s" % [i.name for i in left])
    print("structure ok: %d quantized layers" % checked)


def sqnr(a, b):
    return 10 * np.log10(np.sum(a.astype(np.float64) ** 2) / np.sum((a.astype(np.float64) - b) ** 2))


def ort_check(f32_path, q_path, calib, report, dmlc_out):
    import onnxruntime as ort
    from onnxruntime.quantization import (CalibrationDataReader, QuantFormat, QuantType,
                                          quantize_static)
    x = np.load(calib)
    run = lambda p: ort.InferenceSession(p, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    yf, yq = run(f32_path), run(q_path)
    rep = json.load(open(report))
    s = sqnr(yf, yq)
    if abs(s - rep["output"]["sqnr_db"]) > 0.05:
        fail("ORT output SQNR %.3f dB, report %.3f" % (s, rep["output"]["sqnr_db"]))
    yd = np.load(dmlc_out)
    err = np.max(np.abs(yd - yq))
    if err > 1e-4 * np.max(np.abs(yq)):
        fail("dmlc and ORT outputs of the QDQ model differ by %g (max |y| %g)" % (err, np.max(np.abs(yq))))

    class R(CalibrationDataReader):
        def __init__(s):
            s.it = iter([{"x": x}])

        def get_next(s):
            return next(s.it, None)

    quantize_static(f32_path, q_path + ".ort.onnx", R(), quant_format=QuantFormat.QDQ,
                    per_channel=True, activation_type=QuantType.QInt8,
                    weight_type=QuantType.QInt8)
    A, B = inits(onnx.load(q_path)), inits(onnx.load(q_path + ".ort.onnx"))
    same = [k for k in A if k in B and (k.endswith("_scale") or k.endswith("_zero_point"))
            and "bias" not in k]
    for k in same:
        if A[k].shape != B[k].shape or not np.allclose(A[k], B[k], rtol=1e-6, atol=0):
            fail("%s: dmlc %s, ORT quantize_static %s" % (k, A[k], B[k]))
    if len(same) < 4:
        fail("only %d scales to compare with ORT: %s" % (len(same), same))
    print("ort ok: SQNR %.2f dB (report %.2f), dmlc vs ORT max diff %.3g, %d scales equal "
          "to quantize_static's" % (s, rep["output"]["sqnr_db"], err, len(same)))


if sys.argv[1] == "structure":
    structure(sys.argv[2], sys.argv[3], set(filter(None, sys.argv[4].split(","))))
else:
    ort_check(*sys.argv[2:7])
