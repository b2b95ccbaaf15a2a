#!/usr/bin/python3
"""Writes the PyTorch reference fixtures of tests/layers (test_layers.c).

Run with Debian's python3-torch (1.13) from the repository root:

    /usr/bin/python3 tests/layers/gen_fixtures.py

For each model, a folder under tests/layers/fixtures/ holds
  - one <key>.npy per state_dict entry (num_batches_tracked left out): the
    module names are the layer API's generated names, so the keys are the
    parameter names dml_layers gives ("conv2d.weight", "batch_norm.running_var");
  - params.txt: the keys in state_dict order with their shapes;
  - the input(s) and every output of the model in eval mode (Dropout is the
    identity, BatchNorm uses its running statistics).
Weights are PyTorch's default initialization under torch.manual_seed(0), then
BatchNorm's and LayerNorm's affine parameters and running statistics are
randomized so that they matter. Everything is float32 (indices int64).
"""
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))


def save(folder, name, t):
    os.makedirs(folder, exist_ok=True)
    a = t.detach().cpu().numpy()
    if a.dtype == np.float64:
        a = a.astype(np.float32)
    np.save(os.path.join(folder, name + ".npy"), np.ascontiguousarray(a))


def save_params(folder, mods):
    lines = []
    for k, v in mods.state_dict().items():
        if k.endswith("num_batches_tracked"):
            continue
        save(folder, k, v)
        lines.append("%s %s" % (k, ",".join(str(d) for d in v.shape)))
    with open(os.path.join(folder, "params.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")


def randomize_norms(mods):
    with torch.no_grad():
        for m in mods.modules():
            if isinstance(m, (nn.BatchNorm2d, nn.LayerNorm)):
                m.weight.copy_(1.0 + 0.3 * torch.randn_like(m.weight))
                m.bias.copy_(0.2 * torch.randn_like(m.bias))
            if isinstance(m, nn.BatchNorm2d):
                m.running_mean.copy_(0.2 * torch.randn_like(m.running_mean))
                m.running_var.copy_(0.5 + torch.rand_like(m.running_var))


def cnn():
    """The CNN of test_layers.c's build_cnn(), layer for layer."""
    torch.manual_seed(0)
    m = nn.ModuleDict({
        "conv2d": nn.Conv2d(3, 8, 3, padding=1),
        "batch_norm": nn.BatchNorm2d(8),
        "conv2d_1": nn.Conv2d(8, 8, 3, padding="same", dilation=2, groups=2),
        "dense": nn.Linear(256, 32),
        "layer_norm": nn.LayerNorm(32),
        "dense_1": nn.Linear(32, 10),
    })
    randomize_norms(m)
    m.eval()
    x = torch.randn(3, 3, 12, 12)
    with torch.no_grad():
        h = F.relu(m["batch_norm"](m["conv2d"](x)))
        h = F.max_pool2d(h, 2)                                  # [3,8,6,6]
        h = F.elu(h + m["conv2d_1"](h))                         # residual add
        a = F.avg_pool2d(h, 3, 2, 1, ceil_mode=True)            # count_include_pad=True
        b = F.max_pool2d(h, 3, 2, 1, ceil_mode=True)
        c = torch.cat([a, b], 1)                                # [3,16,4,4]
        gap = torch.tanh(torch.flatten(F.adaptive_avg_pool2d(c, 1), 1))
        d = F.gelu(m["dense"](torch.flatten(c, 1)))             # exact GELU
        d = F.dropout(d, 0.3, training=False)
        ln = m["layer_norm"](d)
        sig = torch.sigmoid(ln)
        logits = m["dense_1"](F.leaky_relu(ln, 0.2))
        outs = {"logits": logits, "probs": F.softmax(logits, -1),
                "logp": F.log_softmax(logits, 1), "gap": gap, "sig": sig}
    folder = os.path.join(HERE, "fixtures", "cnn")
    save_params(folder, m)
    save(folder, "input", x)
    for k, v in outs.items():
        save(folder, "out_" + k, v)


def embed():
    """Embedding -> LayerNorm over the last two dims -> flatten -> dense -> tanh."""
    torch.manual_seed(1)
    m = nn.ModuleDict({
        "embedding": nn.Embedding(20, 6),
        "layer_norm": nn.LayerNorm([5, 6]),
        "dense": nn.Linear(30, 4),
    })
    randomize_norms(m)
    m.eval()
    idx = torch.randint(0, 20, (4, 5), dtype=torch.int64)
    with torch.no_grad():
        e = m["layer_norm"](m["embedding"](idx))
        out = torch.tanh(m["dense"](torch.flatten(e, 1)))
    folder = os.path.join(HERE, "fixtures", "embed")
    save_params(folder, m)
    save(folder, "input", idx)
    save(folder, "out_out", out)


if __name__ == "__main__":
    cnn()
    embed()
