"""Reference data for test_gptq (tests/quantize/test_gptq.c): a numpy
implementation of GPTQ (Frantar, Ashkboos, Hoefler, Alistarh, "GPTQ:
Accurate Post-Training Quantization for Generative Pre-trained
Transformers", arXiv 2210.17323, 2022, Algorithm 1, one column at a time)
with the grid of `dmlc quantize --weight-only` (symmetric, qmax 7 / 127,
per output column in groups along K, scales from the error-compensated
rows at the start of each group), on a small layer with correlated inputs.

Writes tests/quantize/gptq/{x,w}.npy (f32 inputs [M, K], weight [K, N]) and
per case CASE = b{bits}_g{group}[_act] (_act: act-order): q_CASE.npy (int8 [K, N]) and s_CASE.npy
(f32 [ceil(K/g), N]), and the matching outputs of a small ONNX text model
(gptq_text.onnx: input_ids / attention_mask int64 [batch, seq] -> Gather
-> Mul by the mask -> MatMul; with its calibration ids / masks).

    /work/venv/bin/python tests/quantize/gen_gptq_ref.py   # numpy, onnx
"""
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "gptq")


def gptq(w, h, group, bits, damp=0.01, act_order=False):
    """w [K, N] f32, h = 2 X^T X [K, K] f64 -> q int8 [K, N], s f32 [G, N].
    act_order: static group scales from w, rows by decreasing diag(H)."""
    K, N = w.shape
    qmax = 127.0 if bits == 8 else 7.0
    W = w.astype(np.float64).copy()
    H = h.copy()
    dead = np.diag(H) == 0
    H[dead, dead] = 1
    W[dead, :] = 0
    G = (K + group - 1) // group
    s = np.zeros((G, N), np.float32)
    perm = np.arange(K)
    if act_order:
        for g in range(G):
            sf = (np.abs(W[g * group:(g + 1) * group]).max(0) / qmax).astype(np.float32)
            sf[~(sf >= np.finfo(np.float32).tiny)] = 1.0
            s[g] = sf
        perm = np.argsort(-np.diag(H), kind="stable")
        H = H[perm][:, perm]
        W = W[perm]
    H += damp * np.mean(np.diag(H)) * np.eye(K)
    L = np.linalg.cholesky(H)
    Li = np.linalg.inv(L)
    Hinv = Li.T @ Li
    U = np.linalg.cholesky(Hinv).T  # upper: Hinv = U^T U
    q = np.zeros((K, N), np.int8)
    for k in range(K):
        row = perm[k]
        if not act_order and k % group == 0:
            m = np.abs(W[k:k + group]).max(0)
            sf = (m / qmax).astype(np.float32)
            sf[~(sf >= np.finfo(np.float32).tiny)] = 1.0
            s[k // group] = sf
        sk = s[row // group].astype(np.float64)
        v = np.clip(np.round(W[k] / sk), -qmax, qmax)  # ties to even
        q[row] = v.astype(np.int8)
        err = (W[k] - v * sk) / U[k, k]
        W[k + 1:] -= np.outer(U[k, k + 1:], err)
    return q, s


def rtn(w, group, bits):
    K, N = w.shape
    qmax = 127.0 if bits == 8 else 7.0
    G = (K + group - 1) // group
    s = np.zeros((G, N), np.float32)
    q = np.zeros((K, N), np.int8)
    for g in range(G):
        blk = w[g * group:(g + 1) * group]
        sf = (np.abs(blk).max(0) / np.float32(qmax)).astype(np.float32)
        sf[~(sf >= np.finfo(np.float32).tiny)] = 1.0
        s[g] = sf
        q[g * group:(g + 1) * group] = np.clip(np.round(blk / sf), -qmax, qmax)
    return q, s


def dq(q, s, group):
    return q.astype(np.float32) * np.repeat(s, group, axis=0)[:q.shape[0]]


def main():
    os.makedirs(OUT, exist_ok=True)
    rng = np.random.default_rng(19)
    M, K, N = 256, 80, 24  # K = 80: groups of 32 end in a short one
    # correlated inputs: a few strong directions, per-feature scales, an
    # offset, and one input always 0 (a dead column)
    z = rng.standard_normal((M, 8))
    mix = rng.standard_normal((8, K))
    x = z @ mix + 0.1 * rng.standard_normal((M, K))
    x *= np.exp(rng.uniform(-1.5, 1.5, K))
    x += 0.5
    x[:, 5] = 0
    x = x.astype(np.float32)
    w = (0.1 * rng.standard_normal((K, N))).astype(np.float32)
    w[3, 7] = 0.9  # an outlier
    np.save(os.path.join(OUT, "x.npy"), x)
    np.save(os.path.join(OUT, "w.npy"), w)
    h = 2.0 * x.astype(np.float64).T @ x.astype(np.float64)
    for bits, group, act in ((4, 32, 0), (4, 16, 0), (8, 32, 0), (4, 32, 1)):
        q, s = gptq(w, h, group, bits, act_order=bool(act))
        case = f"b{bits}_g{group}" + ("_act" if act else "")
        np.save(os.path.join(OUT, f"q_{case}.npy"), q)
        np.save(os.path.join(OUT, f"s_{case}.npy"), s)
        qr, sr = rtn(w, group, bits)
        e_g = np.square(x @ (w - dq(q, s, group))).sum()
        e_r = np.square(x @ (w - dq(qr, sr, group))).sum()
        print(f"{case}: output error GPTQ / RTN = {e_g / e_r:.4f}")
    text_model()


def text_model():
    """gptq_text.onnx: token ids and a mask in, MatMul on the masked
    embeddings; calibration ids / masks [16, 12] int64 (rows padded)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(7)
    V, E, N = 50, 40, 8
    emb = rng.standard_normal((V, E)).astype(np.float32)
    emb[:, :10] = emb[:, 10:20] * 0.9 + 0.1 * emb[:, :10]  # correlated features
    w = (0.2 * rng.standard_normal((E, N))).astype(np.float32)
    g = helper.make_graph(
        [helper.make_node("Gather", ["emb", "input_ids"], ["e"], name="gather"),
         helper.make_node("Cast", ["attention_mask"], ["mf"], to=TensorProto.FLOAT, name="cast"),
         helper.make_node("Unsqueeze", ["mf", "axes"], ["m3"], name="unsq"),
         helper.make_node("Mul", ["e", "m3"], ["h"], name="mul"),
         helper.make_node("MatMul", ["h", "W"], ["y"], name="proj")],
        "gptq_text",
        [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "seq"]),
         helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "seq"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", "seq", N])],
        [numpy_helper.from_array(emb, "emb"), numpy_helper.from_array(w, "W"),
         numpy_helper.from_array(np.array([-1], np.int64), "axes")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(OUT, "gptq_text.onnx"))
    ids = rng.integers(1, V, (16, 12)).astype(np.int64)
    mask = np.ones((16, 12), np.int64)
    for r in range(16):
        n = 4 + r % 9
        ids[r, n:] = 0
        mask[r, n:] = 0
    np.save(os.path.join(OUT, "ids.npy"), ids)
    np.save(os.path.join(OUT, "empty_ids.npy"), np.zeros((0, 12), np.int64))
    # f32 rows for wq_model.onnx (x [N, 40]): correlated
    z = rng.standard_normal((64, 4))
    np.save(os.path.join(OUT, "calib40.npy"),
            (z @ rng.standard_normal((4, 40)) + 0.05 * rng.standard_normal((64, 40))).astype(np.float32))
    np.save(os.path.join(OUT, "mask.npy"), mask)
    # the reference of --calib-mask attention_mask: H over unpadded rows
    hrows = emb[ids[mask == 1]].astype(np.float64)
    h = 2.0 * hrows.T @ hrows
    q, s = gptq(w, h, 16, 4)
    np.save(os.path.join(OUT, "text_q_b4_g16.npy"), q)
    np.save(os.path.join(OUT, "text_s_b4_g16.npy"), s)
    q, s = gptq(w, h, 16, 4, act_order=True)
    np.save(os.path.join(OUT, "text_q_b4_g16_act.npy"), q)
    np.save(os.path.join(OUT, "text_s_b4_g16_act.npy"), s)


if __name__ == "__main__":
    main()
