#!/usr/bin/env python3
"""Adds input sets of other sizes to zoo CI folders (tests/zoo/<model>.<exporter>/):
for each folder named, new inputs at other values of the symbolic dims
(batch and sequence length of the text models) and ONNX Runtime's outputs
on them, as <tag>.in.<i>.npy / <tag>.ref.<i>.npy in the order of the
folder's `spec` input and ref lines, and the tags in `sets`.
test_zoo_ci.sh runs every set after the spec's own. The models' saved
inputs are batch 2, sequence 16 (scripts/zoo); the sets here are batch 1 at
the sequence bound 32 and batch 3 at sequence 5 with padded rows (an
attention mask of trailing zeros), within the CI bounds batch=4, seq=32.

Token ids are drawn below the largest id of the saved inputs (the
vocabulary is at least that large); masks are 1 then 0 for padding; other
integer inputs take the saved input's values tiled; floats are normal.

Usage: python3 tests/zoo/gen_sets.py FOLDER...   (onnx, onnxruntime, numpy:
the pinned venv of scripts/onnx_node_suite.sh or scripts/zoo's)
"""
import os
import sys

import numpy as np
import onnxruntime as ort

# (tag, batch, sequence, padded rows: row -> real tokens)
SETS = [("b1s32", 1, 32, {}), ("b3s5", 3, 5, {1: 3})]


def read_spec(d):
    inputs, refs = [], []
    for line in open(os.path.join(d, "spec")):
        f = line.split()
        if not f:
            continue
        if f[0] == "input":
            inputs.append((f[1], f[2]))
        elif f[0] == "ref":
            refs.append((f[1], f[2]))
    return inputs, refs


def make_input(name, saved, b, s, pad, rng):
    if saved.ndim != 2:
        sys.exit(f"gen_sets: input {name}: only [batch, sequence] inputs are made")
    if "mask" in name:
        x = np.ones((b, s), saved.dtype)
        for row, real in pad.items():
            x[row, real:] = 0
        return x
    if np.issubdtype(saved.dtype, np.integer):
        hi = int(saved.max()) + 1
        if "ids" in name:
            return rng.integers(0, hi, size=(b, s)).astype(saved.dtype)
        return np.resize(saved, (b, s)).astype(saved.dtype)
    return rng.standard_normal((b, s)).astype(saved.dtype)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for d in sys.argv[1:]:
        inputs, refs = read_spec(d)
        sess = ort.InferenceSession(os.path.join(d, "model.onnx"),
                                    providers=["CPUExecutionProvider"])
        out_names = [o.name for o in sess.get_outputs()]
        rng = np.random.default_rng(20261206)
        tags = []
        for tag, b, s, pad in SETS:
            feed = {}
            for i, (name, fn) in enumerate(inputs):
                x = make_input(name, np.load(os.path.join(d, fn)), b, s, pad, rng)
                feed[name] = x
                np.save(os.path.join(d, f"{tag}.in.{i}.npy"), x)
            got = sess.run(None, feed)
            for i, (outfile, _) in enumerate(refs):
                # the output dmlc writes as <name>.npy, else the i-th
                k = next((j for j, o in enumerate(out_names) if o + ".npy" == outfile), i)
                np.save(os.path.join(d, f"{tag}.ref.{i}.npy"), got[k])
            tags.append(tag)
        with open(os.path.join(d, "sets"), "w") as f:
            f.write("# written by tests/zoo/gen_sets.py: input sets of other sizes\n")
            f.write("\n".join(tags) + "\n")
        print(f"gen_sets: {d}: {', '.join(tags)} ({len(out_names)} outputs)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
