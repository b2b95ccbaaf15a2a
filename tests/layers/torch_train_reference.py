#!/usr/bin/python3
"""PyTorch's figure for test_layers_train.c's Fashion-MNIST check.

The same model (784->256 ReLU, Dropout 0.2, 256->128 ReLU, 128->10), data
(the first 6,000 training images, bytes / 255, in file order, batches of 32)
and optimizer (Adam, lr 1e-3, one pass), then the accuracy on the first
1,000 test images in eval mode, for seeds 0..4. Run with Debian's
python3-torch (1.13):

    /usr/bin/python3 tests/layers/torch_train_reference.py

Printed on the development machine: 0.773 0.773 0.769 0.780 0.776 (mean 0.774).
"""
import gzip

import numpy as np
import torch
import torch.nn as nn

torch.set_num_threads(2)
D = "/usr/share/datasets/fashion-mnist/"


def idx(name, offset):
    return np.frombuffer(gzip.open(D + name).read(), np.uint8, offset=offset)


xtr = torch.tensor(idx("train-images-idx3-ubyte.gz", 16).reshape(-1, 784)[:6000] / 255.0,
                   dtype=torch.float32)
ytr = torch.tensor(idx("train-labels-idx1-ubyte.gz", 8)[:6000], dtype=torch.int64)
xte = torch.tensor(idx("t10k-images-idx3-ubyte.gz", 16).reshape(-1, 784)[:1000] / 255.0,
                   dtype=torch.float32)
yte = idx("t10k-labels-idx1-ubyte.gz", 8)[:1000]
accs = []
for seed in range(5):
    torch.manual_seed(seed)
    m = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Dropout(0.2), nn.Linear(256, 128),
                      nn.ReLU(), nn.Linear(128, 10))
    opt = torch.optim.Adam(m.parameters(), 1e-3)
    m.train()
    for s in range(0, 6000, 32):
        opt.zero_grad()
        nn.functional.cross_entropy(m(xtr[s:s + 32]), ytr[s:s + 32]).backward()
        opt.step()
    m.eval()
    with torch.no_grad():
        accs.append(float((m(xte).argmax(1).numpy() == yte).mean()))
print(" ".join("%.3f" % a for a in accs), "(mean %.3f)" % np.mean(accs))
