#!/usr/bin/python3
"""Writes KServe v2 infer request bodies for fashion_mlp, one JSON per line,
from the Fashion-MNIST test images (Debian's dataset-fashion-mnist; pixels
scaled to [0, 1] as the model was trained): the inputs of bench/serve_infer.lua.

    serve_bodies.py [N [ROWS]] > bodies.jsonl   (N bodies of ROWS images each;
                                                 default 1000 bodies of 1 row)
"""
import gzip
import json
import sys

N = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
ROWS = int(sys.argv[2]) if len(sys.argv) > 2 else 1
PATH = "/usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz"
with gzip.open(PATH, "rb") as f:
    raw = f.read()
count = int.from_bytes(raw[4:8], "big")
images = raw[16:]
for i in range(N):
    data = []
    for r in range(ROWS):
        k = (i * ROWS + r) % count
        data += [round(b / 255.0, 6) for b in images[k * 784:(k + 1) * 784]]
    body = {"id": str(i), "inputs": [{"name": "input", "shape": [ROWS, 784],
                                      "datatype": "FP32", "data": data}]}
    sys.stdout.write(json.dumps(body, separators=(",", ":")) + "\n")
