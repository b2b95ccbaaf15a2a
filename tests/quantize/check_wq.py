"""Checks a `dmlc quantize --weight-only` ONNX model against its f32 model
with ONNX Runtime (docs/quantize.md "Weight-only").

usage: check_wq.py F32.onnx WQ.onnx BITS GROUP [--rows N] [--seq-max L] [--min-cos C]
       check_wq.py --dmlc DMLC WQ.dmlpkg WQ.onnx [--rows N] [--seq-max L]

1. Semantics: every blocked DequantizeLinear of WQ.onnx is decoded here with
   numpy (int8, or int4 unpacked low nibble first; the last group along K
   may be shorter) and compared with the f32 weight it replaced: the
   packed values must be round(w / s) clamped to +-qmax (127 / 7) with
   s = max|w| over the group / qmax (exactly, ties to even), so the check
   fails on a wrong packing, axis, group or scale.
2. ORT runs WQ.onnx and the f32 model with the dequantized weights put back
   (an f32 model with the same numbers): outputs equal within 1e-4
   relative to the output's largest magnitude (f32 rounding of two
   summation orders).
3. ORT runs both models on N inputs (random token ids of varied lengths with
   an attention mask for a text model with int64 inputs, random normal
   values otherwise): the cosine similarity of each row's first output
   (mean over the sequence for a [B, S, H] output: the sentence embedding)
   must be >= C (default 0.99). Prints min / mean cosine.
With --dmlc: `DMLC run WQ.dmlpkg` on N inputs (default 8) against ORT on
WQ.onnx (graph optimizations off): every output within 1e-5 of the
output's largest magnitude (f32 summation order).
"""
import os
import subprocess
import tempfile
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper


def unpack_int4(raw, n):
    b = np.frombuffer(raw, dtype=np.uint8)
    v = np.empty(b.size * 2, dtype=np.int8)
    v[0::2] = (b & 0xF).astype(np.int8)
    v[1::2] = (b >> 4).astype(np.int8)
    v = np.where(v > 7, v - 16, v)
    return v[:n]


def decode(model):
    """name of the DQ output -> (q values int, scale, axis, block)."""
    inits = {t.name: t for t in model.graph.initializer}
    out = {}
    for n in model.graph.node:
        if n.op_type != "DequantizeLinear":
            continue
        at = {a.name: onnx.helper.get_attribute_value(a) for a in n.attribute}
        qt = inits[n.input[0]]
        dims = tuple(qt.dims)
        if qt.data_type == onnx.TensorProto.INT4:
            q = unpack_int4(qt.raw_data, int(np.prod(dims))).reshape(dims)
        else:
            q = numpy_helper.to_array(qt).astype(np.int8)
        s = numpy_helper.to_array(inits[n.input[1]])
        assert len(n.input) == 2, "symmetric: no zero point expected"
        out[n.output[0]] = (q, s, at.get("axis", 1), at["block_size"])
    return out


def dequant(q, s, axis, block):
    se = np.repeat(s, block, axis=axis)
    se = se[: q.shape[0], :] if axis == 0 else se[:, : q.shape[1]]
    return q.astype(np.float32) * se


def vocab_of(model):
    """Rows of the embedding table a Gather reads with a graph input."""
    inits = {t.name: t for t in model.graph.initializer}
    ins = {i.name for i in model.graph.input}
    v = [inits[n.input[0]].dims[0] for n in model.graph.node
         if n.op_type == "Gather" and n.input[0] in inits and n.input[1] in ins]
    return min(v) if v else 1000


def feeds(sess, rows, seq_max, rng, vocab):
    out = []
    ins = sess.get_inputs()
    for r in range(rows):
        L = int(rng.integers(4, seq_max + 1))
        f = {}
        for i in ins:
            if "int64" in i.type:
                if "mask" in i.name:
                    m = np.ones((1, L), np.int64)
                    pad = int(rng.integers(0, L // 2 + 1))
                    if pad:
                        m[0, L - pad:] = 0
                    f[i.name] = m
                elif "type" in i.name:
                    f[i.name] = np.zeros((1, L), np.int64)
                else:
                    f[i.name] = rng.integers(0, vocab, size=(1, L)).astype(np.int64)
            else:
                shape = [d if isinstance(d, int) else 1 for d in i.shape]
                f[i.name] = rng.standard_normal(shape).astype(np.float32)
        out.append(f)
    return out


def embed(y, f):
    y = y.astype(np.float64)
    if y.ndim == 3:
        m = next((v for k, v in f.items() if "mask" in k), None)
        if m is not None:
            w = m[0].astype(np.float64)[None, :, None]
            return (y * w).sum(1).ravel() / max(w.sum(), 1)
        return y.mean(1).ravel()
    return y.ravel()


def dmlc_vs_ort(a):
    dmlc, pkg, onx = a[1], a[2], a[3]
    rows = int(a[a.index("--rows") + 1]) if "--rows" in a else 8
    seq_max = int(a[a.index("--seq-max") + 1]) if "--seq-max" in a else 32
    so = ort.SessionOptions()
    so.log_severity_level = 3
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    s = ort.InferenceSession(onx, so, providers=["CPUExecutionProvider"])
    names = [o.name for o in s.get_outputs()]
    rng = np.random.default_rng(1)
    worst = 0.0
    with tempfile.TemporaryDirectory() as d:
        for k, f in enumerate(feeds(s, rows, seq_max, rng, vocab_of(onnx.load(onx)))):
            args = [dmlc, "run", pkg, "--output-dir", os.path.join(d, str(k))]
            for n, v in f.items():
                if v.dtype == np.float32 and v.shape[0] == 1:
                    v = np.repeat(v, 3, axis=0)  # a batch of 3 for the f32 models
                    f[n] = v
                np.save(os.path.join(d, n + ".npy"), v)
                args += ["--input", f"{n}={os.path.join(d, n + '.npy')}"]
            subprocess.run(args, check=True, capture_output=True)
            ys = s.run(None, f)
            for n, y in zip(names, ys):
                got = np.load(os.path.join(d, str(k), n + ".npy"))
                assert got.shape == y.shape, (n, got.shape, y.shape)
                worst = max(worst, float(np.abs(got - y).max() / max(np.abs(y).max(), 1e-30)))
    print(f"dmlc {pkg} vs ORT {onx}: max rel diff {worst:.3g} over {rows} inputs")
    assert worst <= 1e-5, worst
    print("ok")


def main():
    a = sys.argv[1:]
    if a[0] == "--dmlc":
        return dmlc_vs_ort(a)
    f32p, wqp, bits, group = a[0], a[1], int(a[2]), int(a[3])
    rows = int(a[a.index("--rows") + 1]) if "--rows" in a else 200
    seq_max = int(a[a.index("--seq-max") + 1]) if "--seq-max" in a else 64
    min_cos = float(a[a.index("--min-cos") + 1]) if "--min-cos" in a else 0.99
    f32 = onnx.load(f32p)
    wq = onnx.load(wqp)
    onnx.checker.check_model(wq)
    qmax = 127 if bits == 8 else 7
    dq = decode(wq)
    assert dq, "no DequantizeLinear in " + wqp
    f32_inits = {t.name: numpy_helper.to_array(t) for t in f32.graph.initializer}
    # 1. the quantized values
    back = {}
    for name, (q, s, axis, block) in dq.items():
        wname = name[: -len("_DequantizeLinear_Output")]
        w = f32_inits[wname].astype(np.float32)
        assert block == group, (name, block)
        K = w.shape[axis]
        nb = (K + block - 1) // block
        assert s.shape[axis] == nb and s.shape[1 - axis] == w.shape[1 - axis], s.shape
        amax = np.abs(w)
        pad = nb * block - K
        amax = np.pad(amax, [(0, pad), (0, 0)] if axis == 0 else [(0, 0), (0, pad)])
        amax = amax.reshape((nb, block, -1)).max(1) if axis == 0 else \
            amax.reshape((w.shape[0], nb, block)).max(2)
        want_s = (amax / np.float32(qmax)).astype(np.float32)
        want_s[want_s < np.finfo(np.float32).tiny] = 1
        assert np.array_equal(s, want_s), "scales differ: " + wname
        se = dequant(np.ones_like(q), s, axis, block)
        want_q = np.clip(np.rint(w / se), -qmax, qmax).astype(np.int8)
        assert np.array_equal(q, want_q), "values differ: " + wname
        back[wname] = dequant(q, s, axis, block)
    print(f"{len(dq)} weights: values and scales as specified (int{bits}, group {group})")
    # 2. ORT on WQ.onnx vs the f32 model with the dequantized weights
    ref = onnx.load(f32p)
    for t in ref.graph.initializer:
        if t.name in back:
            t.CopyFrom(numpy_helper.from_array(back[t.name], t.name))
    so = ort.SessionOptions()
    so.log_severity_level = 3
    # no fusions: ORT would fuse the two graphs differently (MatMulNBits, Gelu)
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    s_wq = ort.InferenceSession(wq.SerializeToString(), so, providers=["CPUExecutionProvider"])
    s_ref = ort.InferenceSession(ref.SerializeToString(), so, providers=["CPUExecutionProvider"])
    s_f32 = ort.InferenceSession(f32p, so, providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(0)
    fs = feeds(s_f32, rows, seq_max, rng, vocab_of(f32))
    worst = 0.0
    cos = []
    for f in fs:
        y_wq = s_wq.run(None, f)[0]
        y_ref = s_ref.run(None, f)[0]
        y_f32 = s_f32.run(None, f)[0]
        worst = max(worst, float(np.abs(y_wq - y_ref).max() / max(np.abs(y_ref).max(), 1e-30)))
        e, e32 = embed(y_wq, f), embed(y_f32, f)
        cos.append(float(e @ e32 / (np.linalg.norm(e) * np.linalg.norm(e32))))
    print(f"ORT blocked-DQ model vs f32 model with dequantized weights: max rel diff {worst:.3g}")
    assert worst <= 1e-4, worst
    cos = np.array(cos)
    print(f"cosine to f32 over {rows} inputs: min {cos.min():.5f} mean {cos.mean():.5f}")
    assert cos.min() >= min_cos, cos.min()
    print("ok")


if __name__ == "__main__":
    main()
