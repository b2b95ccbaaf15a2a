"""Sentence-embedding agreement of weight-only packages with the f32 package,
all run by dmlc (docs/quantize.md "Weight-only"; issue 19's acceptance line):

  python3 wq_accept.py DMLC F32.dmlpkg WQ.dmlpkg [WQ2.dmlpkg ...] [--sentences N]
                       [--batch B] [--seq-max L] [--vocab V]

No tokenizer here: each "sentence" is random token ids (uniform in [1, V),
the first id 101 as BERT's [CLS]) of a random length in [4, L]; B of them are
padded to the longest of the batch with attention_mask 0 (as
sentence-transformers batches). The embedding is the mask-weighted mean of
the first output [B, S, H] over the sequence; the cosine similarity to the
f32 package's embedding of the same sentence is reported (min, mean, 1st
percentile) for each quantized package. Exit 1 when a minimum is below 0.99.
"""
import os
import subprocess
import sys
import tempfile

import numpy as np


def main():
    a = sys.argv[1:]
    opt = {}
    for k in ("--sentences", "--batch", "--seq-max", "--vocab"):
        if k in a:
            i = a.index(k)
            opt[k] = int(a[i + 1])
            del a[i:i + 2]
    dmlc, f32, wqs = a[0], a[1], a[2:]
    n, b = opt.get("--sentences", 1000), opt.get("--batch", 32)
    seq_max, vocab = opt.get("--seq-max", 64), opt.get("--vocab", 512)
    rng = np.random.default_rng(2026)
    cos = {w: [] for w in wqs}
    with tempfile.TemporaryDirectory() as d:
        done = 0
        while done < n:
            m = min(b, n - done)
            lens = rng.integers(4, seq_max + 1, size=m)
            L = int(lens.max())
            ids = rng.integers(1, vocab, size=(m, L)).astype(np.int64)
            ids[:, 0] = min(101, vocab - 1)
            mask = (np.arange(L)[None, :] < lens[:, None]).astype(np.int64)
            ids *= mask
            np.save(os.path.join(d, "ids.npy"), ids)
            np.save(os.path.join(d, "mask.npy"), mask)
            emb = {}
            for p in [f32] + wqs:
                out = os.path.join(d, "out")
                subprocess.run([dmlc, "run", p, "--input", f"input_ids={d}/ids.npy",
                                "--input", f"attention_mask={d}/mask.npy",
                                "--output-dir", out], check=True, capture_output=True)
                y = np.load(os.path.join(out, sorted(os.listdir(out))[0])).astype(np.float64)
                w = mask[:, :, None].astype(np.float64)
                emb[p] = (y * w).sum(1) / w.sum(1)
            for p in wqs:
                e, r = emb[p], emb[f32]
                cos[p] += list((e * r).sum(1) / (np.linalg.norm(e, axis=1) * np.linalg.norm(r, axis=1)))
            done += m
    bad = 0
    for p in wqs:
        c = np.array(cos[p])
        print(f"{os.path.basename(p)}: cosine to f32 over {len(c)} sentences: "
              f"min {c.min():.5f} p1 {np.percentile(c, 1):.5f} mean {c.mean():.5f}")
        bad |= c.min() < 0.99
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
