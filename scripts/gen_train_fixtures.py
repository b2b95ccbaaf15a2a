#!/usr/bin/python3
"""Writes the PyTorch reference fixtures of tests/autodiff/test_train_grad.c.

Run with Debian's python3-torch (1.13) and python3-numpy:
    /usr/bin/python3 scripts/gen_train_fixtures.py
The outputs in tests/autodiff/data/ are committed; the C test needs no
Python. They are deterministic (fixed seeds, float64 reference arithmetic).

What it writes:
  *.dmlir            the models (dmlc IR text, f32 parameters as hex): a
                     Gemm+Relu+Gemm MLP (with a LogSoftmax / Sigmoid head for
                     nll / bce), the MLP with a LayerNormalization after the
                     first Gemm, and Conv+BatchNormalization+Relu+MaxPool+
                     Flatten+Gemm (the Conv without bias, as before a batch
                     norm: a bias there has a gradient of exactly 0, which
                     f32 rounding turns into noise that Adam's division
                     by sqrt(v) + eps amplifies into steps of size lr);
  in_*.npy           inputs and targets (f32 / int64);
  runs.txt           one training run per line: `name=... model=... x=...
                     target=... loss=... optimizer=... lr=...` plus the
                     dml_train_config_t fields (0 keeps dmlc's default, as
                     passes/dml_train.h defines it);
  run_<name>.npy     float64 vector of the reference: for each of 3 steps
                     what train_step returns (loss, correct, total), then
                     every model global (parameters and BN running
                     statistics, in the order of the .dmlir file,
                     flattened) after the step; then eval_step's loss,
                     correct and total on the same batch after the 3 steps.
                     correct/total are -1 for the regression losses.

The reference is torch.nn.functional for the model and the losses and
torch.optim for the optimizers (torch.nn.utils.clip_grad_norm_ /
clip_grad_value_ for clipping, applied to the gradients before the
optimizer step), computed in float64 from the f32 values dmlc starts with.
BatchNorm: torch's momentum 0.1 is ONNX's momentum 0.9, and torch updates
running_var with the unbiased batch variance (n / (n - 1) times the
population variance it normalizes with).
"""
import os

import numpy as np
import torch
import torch.nn.functional as F

torch.set_default_dtype(torch.float64)
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                   "autodiff", "data")
STEPS = 3
rng = np.random.default_rng(20261130)


def f32(a):
    return np.asarray(a, dtype=np.float32)


def save(name, arr):
    np.save(os.path.join(OUT, name), arr, allow_pickle=False)


def hexdense(a):
    return "dense<0x" + np.ascontiguousarray(a).astype("<f4").tobytes().hex() + ">"


def dims(a):
    return ",".join(str(d) for d in a.shape)


# ---- models ----------------------------------------------------------------

MLP = {
    "fc1.weight": f32(rng.normal(0, 0.6, (5, 4))),
    "fc1.bias": f32(rng.normal(0, 0.2, (5,))),
    "fc2.weight": f32(rng.normal(0, 0.6, (3, 5))),
    "fc2.bias": f32(rng.normal(0, 0.2, (3,))),
}
CONV = {
    "conv.weight": f32(rng.normal(0, 0.5, (2, 1, 3, 3))),
    "bn.weight": f32(rng.uniform(0.5, 1.5, (2,))),
    "bn.bias": f32(rng.normal(0, 0.2, (2,))),
    "bn.running_mean": f32(np.zeros(2)),
    "bn.running_var": f32(np.ones(2)),
    "fc.weight": f32(rng.normal(0, 0.3, (3, 18))),
    "fc.bias": f32(rng.normal(0, 0.2, (3,))),
}
MLP_LN = dict(MLP)
MLP_LN["ln.weight"] = f32(rng.uniform(0.5, 1.5, (5,)))
MLP_LN["ln.bias"] = f32(rng.normal(0, 0.2, (5,)))
STATE = {"bn.running_mean", "bn.running_var"}


def write_model(fname, params, batch_in, body):
    lines = ["// Written by scripts/gen_train_fixtures.py; do not edit.",
             "sym batch <= 8"]
    for k, v in params.items():
        flag = "state" if k in STATE else "param"
        lines.append(f"global @{k} : f32[{dims(v)}] {flag} = {hexdense(v)}")
    lines.append(f"func @forward(%input: f32[{batch_in}]) -> (?[?]) {{")
    lines += ["  " + b for b in body]
    lines.append("  return %logits")
    lines.append("}")
    with open(os.path.join(OUT, fname), "w") as f:
        f.write("\n".join(lines) + "\n")


MLP_BODY = ["%h = Gemm(%input, @fc1.weight, @fc1.bias) {transB = 1}",
            "%r = Relu(%h)"]
write_model("mlp.dmlir", MLP, "batch,4",
            MLP_BODY + ["%logits = Gemm(%r, @fc2.weight, @fc2.bias) {transB = 1}"])
write_model("mlp_logsoftmax.dmlir", MLP, "batch,4",
            MLP_BODY + ["%z = Gemm(%r, @fc2.weight, @fc2.bias) {transB = 1}",
                        "%logits = LogSoftmax(%z) {axis = 1}"])
write_model("mlp_sigmoid.dmlir", MLP, "batch,4",
            MLP_BODY + ["%z = Gemm(%r, @fc2.weight, @fc2.bias) {transB = 1}",
                        "%logits = Sigmoid(%z)"])
write_model("mlp_layernorm.dmlir", MLP_LN, "batch,4", [
    "%h = Gemm(%input, @fc1.weight, @fc1.bias) {transB = 1}",
    "%n = LayerNormalization(%h, @ln.weight, @ln.bias) {axis = -1, epsilon = 1e-05}",
    "%r = Relu(%n)",
    "%logits = Gemm(%r, @fc2.weight, @fc2.bias) {transB = 1}",
])
write_model("conv.dmlir", CONV, "batch,1,6,6", [
    "%c = Conv(%input, @conv.weight) {pads = [1, 1, 1, 1]}",
    "%b = BatchNormalization(%c, @bn.weight, @bn.bias, @bn.running_mean, "
    "@bn.running_var) {epsilon = 1e-05, momentum = 0.9}",
    "%r = Relu(%b)",
    "%p = MaxPool(%r) {kernel_shape = [2, 2], strides = [2, 2]}",
    "%f = Flatten(%p)",
    "%logits = Gemm(%f, @fc.weight, @fc.bias) {transB = 1}",
])


def mlp_forward(p, x, head):
    h = torch.relu(x @ p["fc1.weight"].T + p["fc1.bias"])
    z = h @ p["fc2.weight"].T + p["fc2.bias"]
    if head == "logsoftmax":
        return F.log_softmax(z, dim=1)
    if head == "sigmoid":
        return torch.sigmoid(z)
    return z


def mlp_ln_forward(p, x):
    h = x @ p["fc1.weight"].T + p["fc1.bias"]
    n = F.layer_norm(h, (5,), p["ln.weight"], p["ln.bias"], eps=1e-5)
    return torch.relu(n) @ p["fc2.weight"].T + p["fc2.bias"]


def conv_forward(p, x, training):
    c = F.conv2d(x, p["conv.weight"], None, padding=1)
    b = F.batch_norm(c, p["bn.running_mean"], p["bn.running_var"], p["bn.weight"],
                     p["bn.bias"], training=training, momentum=0.1, eps=1e-5)
    r = torch.relu(b)
    m = F.max_pool2d(r, 2, 2)
    return m.flatten(1) @ p["fc.weight"].T + p["fc.bias"]


MODELS = {
    "mlp": (MLP, lambda p, x, t: mlp_forward(p, x, None)),
    "mlp_logsoftmax": (MLP, lambda p, x, t: mlp_forward(p, x, "logsoftmax")),
    "mlp_sigmoid": (MLP, lambda p, x, t: mlp_forward(p, x, "sigmoid")),
    "mlp_layernorm": (MLP_LN, lambda p, x, t: mlp_ln_forward(p, x)),
    "conv": (CONV, conv_forward),
}

# ---- data --------------------------------------------------------------------

DATA = {
    "mlp_x": f32(rng.normal(0, 1, (4, 4))),
    "conv_x": f32(rng.normal(0, 1, (3, 1, 6, 6))),
    "labels4": np.array([0, 2, 1, 2], dtype=np.int64),
    "labels3": np.array([1, 0, 2], dtype=np.int64),
    "probs4": f32(torch.softmax(torch.tensor(rng.normal(0, 1, (4, 3))), 1).numpy()),
    "bin4": f32(rng.uniform(0, 1, (4, 3))),
    "reg4": f32(rng.normal(0, 1.5, (4, 3))),
    "reg3": f32(rng.normal(0, 1.0, (3, 3))),
}
for k, v in DATA.items():
    save(f"in_{k}.npy", v)

# ---- runs --------------------------------------------------------------------

FIELDS = ["momentum", "beta1", "beta2", "epsilon", "alpha", "weight_decay",
          "clip_norm", "clip_value", "huber_delta", "label_smoothing"]


def run(name, model, x, target, loss, optimizer, lr, **cfg):
    return dict(name=name, model=model, x=x, target=target, loss=loss,
                optimizer=optimizer, lr=lr, cfg=cfg)


RUNS = [
    # every loss kind, plain SGD
    run("ce_labels_sgd", "mlp", "mlp_x", "labels4", "cross_entropy", "sgd", 0.5),
    run("ce_probs_sgd", "mlp", "mlp_x", "probs4", "cross_entropy", "sgd", 0.5),
    run("ce_smooth_sgd", "mlp", "mlp_x", "labels4", "cross_entropy", "sgd", 0.5,
        label_smoothing=0.1),
    run("nll_sgd", "mlp_logsoftmax", "mlp_x", "labels4", "nll", "sgd", 0.5),
    run("bce_logits_sgd", "mlp", "mlp_x", "bin4", "bce_with_logits", "sgd", 0.5),
    run("bce_sgd", "mlp_sigmoid", "mlp_x", "bin4", "bce", "sgd", 0.5),
    run("mse_sgd", "mlp", "mlp_x", "reg4", "mse", "sgd", 0.1),
    run("mae_sgd", "mlp", "mlp_x", "reg4", "mae", "sgd", 0.1),
    run("huber_sgd", "mlp", "mlp_x", "reg4", "huber", "sgd", 0.1),
    run("huber_d05_sgd", "mlp", "mlp_x", "reg4", "huber", "sgd", 0.1, huber_delta=0.5),
    # every optimizer (cross-entropy on the MLP)
    run("sgd_wd", "mlp", "mlp_x", "labels4", "cross_entropy", "sgd", 0.5,
        weight_decay=0.05),
    run("momentum", "mlp", "mlp_x", "labels4", "cross_entropy", "momentum", 0.2),
    run("momentum_wd", "mlp", "mlp_x", "labels4", "cross_entropy", "momentum", 0.2,
        momentum=0.8, weight_decay=0.05),
    run("nesterov", "mlp", "mlp_x", "labels4", "cross_entropy", "nesterov", 0.2),
    run("nesterov_wd", "mlp", "mlp_x", "labels4", "cross_entropy", "nesterov", 0.2,
        momentum=0.7, weight_decay=0.05),
    run("adam", "mlp", "mlp_x", "labels4", "cross_entropy", "adam", 0.05),
    run("adam_wd", "mlp", "mlp_x", "labels4", "cross_entropy", "adam", 0.05,
        beta1=0.8, beta2=0.99, epsilon=1e-6, weight_decay=0.05),
    run("adamw_default_wd", "mlp", "mlp_x", "labels4", "cross_entropy", "adamw", 0.05),
    run("adamw_wd", "mlp", "mlp_x", "labels4", "cross_entropy", "adamw", 0.05,
        weight_decay=0.2, beta1=0.85),
    run("adamw_no_wd", "mlp", "mlp_x", "labels4", "cross_entropy", "adamw", 0.05,
        weight_decay=-1.0),
    run("rmsprop", "mlp", "mlp_x", "labels4", "cross_entropy", "rmsprop", 0.01),
    run("rmsprop_momentum_wd", "mlp", "mlp_x", "labels4", "cross_entropy", "rmsprop",
        0.01, momentum=0.5, alpha=0.9, weight_decay=0.05, epsilon=1e-6),
    run("adagrad", "mlp", "mlp_x", "labels4", "cross_entropy", "adagrad", 0.2),
    run("adagrad_wd", "mlp", "mlp_x", "labels4", "cross_entropy", "adagrad", 0.2,
        weight_decay=0.05, epsilon=1e-6),
    # clipping
    run("sgd_clip_norm", "mlp", "mlp_x", "labels4", "cross_entropy", "sgd", 0.5,
        clip_norm=0.2),
    run("sgd_clip_value", "mlp", "mlp_x", "labels4", "cross_entropy", "sgd", 0.5,
        clip_value=0.05),
    run("adam_clip_norm_wd", "mlp", "mlp_x", "labels4", "cross_entropy", "adam", 0.05,
        clip_norm=0.2, weight_decay=0.05),
    run("momentum_clip_value_wd", "mlp", "mlp_x", "reg4", "mse", "momentum", 0.05,
        clip_value=0.1, weight_decay=0.05),
    # LayerNormalization
    run("layernorm_ce_sgd", "mlp_layernorm", "mlp_x", "labels4", "cross_entropy", "sgd",
        0.5),
    run("layernorm_mse_adam", "mlp_layernorm", "mlp_x", "reg4", "mse", "adam", 0.05),
    # Conv + BatchNorm (running statistics) + MaxPool
    run("conv_ce_sgd", "conv", "conv_x", "labels3", "cross_entropy", "sgd", 0.2),
    run("conv_ce_adam", "conv", "conv_x", "labels3", "cross_entropy", "adam", 0.02),
    run("conv_mse_momentum", "conv", "conv_x", "reg3", "mse", "momentum", 0.05),
]


def loss_fn(r, out, t):
    kind, c = r["loss"], r["cfg"]
    if kind == "cross_entropy":
        return F.cross_entropy(out, t, label_smoothing=c.get("label_smoothing", 0.0))
    if kind == "nll":
        return F.nll_loss(out, t)
    if kind == "bce_with_logits":
        return F.binary_cross_entropy_with_logits(out, t)
    if kind == "bce":
        return F.binary_cross_entropy(out, t)
    if kind == "mse":
        return F.mse_loss(out, t)
    if kind == "mae":
        return F.l1_loss(out, t)
    if kind == "huber":
        return F.huber_loss(out, t, delta=c.get("huber_delta", 0.0) or 1.0)
    raise ValueError(kind)


def correct_of(r, out, t):
    """[correct, total] as passes/dml_train.h counts them; [-1, -1] for the
    regression losses, which have none."""
    if r["loss"] in ("cross_entropy", "nll"):
        want = t if t.dim() == 1 else t.argmax(1)
        return [float((out.argmax(1) == want).sum()), float(want.numel())]
    if r["loss"] in ("bce_with_logits", "bce"):
        pred = out > (0.0 if r["loss"] == "bce_with_logits" else 0.5)
        return [float((pred == (t > 0.5)).sum()), float(t.numel())]
    return [-1.0, -1.0]


def make_optimizer(r, params):
    """torch.optim with dml_train_config_t's defaults (passes/dml_train.h)."""
    c, lr, o = r["cfg"], float(np.float32(r["lr"])), r["optimizer"]
    wd = c.get("weight_decay", 0.0)
    eps = c.get("epsilon", 0.0)
    if o == "sgd":
        return torch.optim.SGD(params, lr=lr, weight_decay=wd)
    if o in ("momentum", "nesterov"):
        return torch.optim.SGD(params, lr=lr, momentum=c.get("momentum", 0.0) or 0.9,
                               nesterov=o == "nesterov", weight_decay=wd)
    if o in ("adam", "adamw"):
        betas = (c.get("beta1", 0.0) or 0.9, c.get("beta2", 0.0) or 0.999)
        if o == "adam":
            return torch.optim.Adam(params, lr=lr, betas=betas, eps=eps or 1e-8,
                                    weight_decay=wd)
        wd = 0.0 if wd < 0 else (wd or 1e-2)
        return torch.optim.AdamW(params, lr=lr, betas=betas, eps=eps or 1e-8,
                                 weight_decay=wd)
    if o == "rmsprop":
        return torch.optim.RMSprop(params, lr=lr, alpha=c.get("alpha", 0.0) or 0.99,
                                   eps=eps or 1e-8, weight_decay=wd,
                                   momentum=c.get("momentum", 0.0))
    if o == "adagrad":
        return torch.optim.Adagrad(params, lr=lr, weight_decay=wd, eps=eps or 1e-10)
    raise ValueError(o)


def reference(r):
    init, fwd = MODELS[r["model"]]
    p = {k: torch.tensor(v.astype(np.float64), requires_grad=k not in STATE)
         for k, v in init.items()}
    x = torch.tensor(DATA[r["x"]].astype(np.float64))
    tn = DATA[r["target"]]
    t = torch.tensor(tn if tn.dtype == np.int64 else tn.astype(np.float64))
    trainable = [v for k, v in p.items() if k not in STATE]
    opt = make_optimizer(r, trainable)
    c = r["cfg"]
    vec, clipped = [], []
    for _ in range(STEPS):
        opt.zero_grad()
        out = fwd(p, x, True)
        loss = loss_fn(r, out, t)
        loss.backward()
        step_counts = correct_of(r, out.detach(), t)
        if c.get("clip_norm", 0) > 0:
            norm = torch.nn.utils.clip_grad_norm_(trainable, c["clip_norm"])
            clipped.append(float(norm) > c["clip_norm"])
        if c.get("clip_value", 0) > 0:
            g = torch.cat([v.grad.flatten() for v in trainable]).abs()
            clipped.append(bool((g > c["clip_value"]).any() and (g < c["clip_value"]).any()))
            torch.nn.utils.clip_grad_value_(trainable, c["clip_value"])
        opt.step()
        vec += [float(loss)] + step_counts
        for k in init:
            vec += p[k].detach().flatten().tolist()
    # The clipping cases must actually clip (else they would not test it).
    assert all(clipped), (r["name"], clipped)
    with torch.no_grad():
        out = fwd(p, x, False)
        vec += [float(loss_fn(r, out, t))] + correct_of(r, out, t)
    return np.array(vec, dtype=np.float64)


with open(os.path.join(OUT, "runs.txt"), "w") as f:
    f.write("# Written by scripts/gen_train_fixtures.py; do not edit.\n")
    for r in RUNS:
        cfg = " ".join(f"{k}={r['cfg'].get(k, 0.0)!r}" for k in FIELDS)
        f.write(f"name={r['name']} model={r['model']} x={r['x']} target={r['target']} "
                f"loss={r['loss']} optimizer={r['optimizer']} lr={r['lr']!r} {cfg}\n")
        save(f"run_{r['name']}.npy", reference(r))
print(f"wrote {len(RUNS)} runs to {os.path.normpath(OUT)}")
