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


def grid(v, bits, asym, clip):
    """dml_wq_grid: v [n, N] f64 (a group's rows) -> scale f32 [N], zero
    point int [N]. Symmetric: max|v| / qmax; asymmetric: (hi - lo) / umax
    with lo = min(min v, 0), hi = max(max v, 0), z = clamp(round(-lo / s), 0,
    umax); clip: the ratio r = 1 - i/40 (i = 0..20) of the least sum
    (v - dq)^2 per column, the first on ties."""
    qmax, umax = (127.0, 255.0) if bits == 8 else (7.0, 15.0)
    lo = np.minimum(v.min(0), 0)
    hi = np.maximum(v.max(0), 0)
    m = np.abs(v).max(0)
    best = np.full(v.shape[1], np.inf)
    bs = np.ones(v.shape[1], np.float32)
    bz = np.zeros(v.shape[1], np.int64)
    for i in range(21 if clip else 1):
        r = 1.0 - i / 40.0
        s = ((hi - lo) * r / umax if asym else m * r / qmax).astype(np.float32)
        bad = ~(s >= np.finfo(np.float32).tiny)
        s[bad] = 1.0
        z = np.clip(np.round(-lo * r / s.astype(np.float64)), 0, umax).astype(np.int64) if asym \
            else np.zeros(v.shape[1], np.int64)
        z[bad] = 0
        d = (grid_q(v, s, z, bits, asym) - z) * s.astype(np.float64)
        e = np.square(v - d).sum(0)
        take = e < best if clip else np.ones(v.shape[1], bool)
        best = np.where(take, e, best)
        bs = np.where(take, s, bs)
        bz = np.where(take, z, bz)
    return bs.astype(np.float32), bz


def grid_q(x, s, z, bits, asym):
    """dml_wq_grid_q: round half even of x / s (f64), plus z, clamped."""
    lo, hi = (0.0, 255.0 if bits == 8 else 15.0) if asym else ((-127.0, 127.0) if bits == 8 else (-7.0, 7.0))
    return np.clip(np.round(x / s.astype(np.float64)) + z, lo, hi).astype(np.int64)


def gptq_grid(w, h, group, bits, asym, clip, damp=0.01, act_order=False):
    """gptq with grid()'s scales and zero points (dml_gptq_quantize_grid):
    -> q int8 [K, N] (grid_q's ints), s f32 [G, N], z uint8 [G, N]."""
    K, N = w.shape
    W = w.astype(np.float64).copy()
    H = h.copy()
    dead = np.diag(H) == 0
    H[dead, dead] = 1
    W[dead, :] = 0
    G = (K + group - 1) // group
    s = np.zeros((G, N), np.float32)
    z = np.zeros((G, N), np.int64)
    perm = np.arange(K)
    if act_order:
        for g in range(G):
            s[g], z[g] = grid(W[g * group:(g + 1) * group], bits, asym, clip)
        perm = np.argsort(-np.diag(H), kind="stable")
        H = H[perm][:, perm]
        W = W[perm]
    H += damp * np.mean(np.diag(H)) * np.eye(K)
    Li = np.linalg.inv(np.linalg.cholesky(H))
    U = np.linalg.cholesky(Li.T @ Li).T
    q = np.zeros((K, N), np.int8)
    for k in range(K):
        row = perm[k]
        if not act_order and k % group == 0:
            s[k // group], z[k // group] = grid(W[k:k + group], bits, asym, clip)
        g = row // group
        v = grid_q(W[k], s[g], z[g], bits, asym)
        q[row] = v.astype(np.int8)
        err = (W[k] - (v - z[g]) * s[g].astype(np.float64)) / U[k, k]
        W[k + 1:] -= np.outer(U[k, k + 1:], err)
    return q, s, z.astype(np.uint8)


def rtn_grid(w, group, bits, asym, clip):
    """round to nearest on grid()'s grid: dq f64 [K, N]."""
    K, N = w.shape
    out = np.zeros((K, N))
    for g0 in range(0, K, group):
        blk = w[g0:g0 + group].astype(np.float64)
        s, z = grid(blk, bits, asym, clip)
        out[g0:g0 + group] = (grid_q(blk, s, z, bits, asym) - z) * s.astype(np.float32).astype(np.float64)
    return out


def awq_scales(w, h, xabs, group, bits, asym, clip):
    """dml_awq_scales: s [K] and alpha of the least tr(D^T H D) over alpha =
    i / 10; D = W - diag(1/s) dq(diag(s) W) (dq of f32 diag(s) W)."""
    best, bs, ba = np.inf, np.ones(w.shape[0]), 0.0
    for i in range(11):
        a = i / 10.0
        s = np.where(xabs > 0, xabs ** a, 0.0)
        pos = s[s > 0]
        s = np.where(s > 0, s / np.sqrt(pos.max() * pos.min()), 1.0)
        ws = (w.astype(np.float64) * s[:, None]).astype(np.float32)
        dq = (rtn_grid(ws, group, bits, asym, clip).astype(np.float32) / s[:, None]).astype(np.float32)
        d = (w.astype(np.float64) - dq).astype(np.float32).astype(np.float64)
        e = np.einsum("an,ab,bn->", d, h, d)
        if e < best:
            best, bs, ba = e, s, a
    return bs, ba


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
    np.set_printoptions(precision=6)
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
    # the grids of --asym / --clip-search, and AWQ's scales
    # (q_/s_/z_CASE.npy; awq_s_CASE.npy [K] f64 and awq_alpha_CASE.npy)
    xabs = np.abs(x.astype(np.float64)).mean(0)
    for bits, group, asym, clip, act in ((4, 32, 1, 0, 0), (4, 32, 1, 1, 0), (4, 16, 0, 1, 0),
                                         (8, 32, 0, 1, 0), (4, 32, 1, 1, 1)):
        q, s, z = gptq_grid(w, h, group, bits, asym, clip, act_order=bool(act))
        case = f"b{bits}_g{group}" + ("_asym" if asym else "") + ("_clip" if clip else "") + \
            ("_act" if act else "")
        np.save(os.path.join(OUT, f"q_{case}.npy"), q)
        np.save(os.path.join(OUT, f"s_{case}.npy"), s)
        np.save(os.path.join(OUT, f"z_{case}.npy"), z)
        sa, al = awq_scales(w, h, xabs, group, bits, asym, clip)
        np.save(os.path.join(OUT, f"awq_s_{case.replace('_act', '')}.npy"), sa)
        np.save(os.path.join(OUT, f"awq_alpha_{case.replace('_act', '')}.npy"), np.array([al]))
        print(f"{case}: awq alpha {al}")
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
