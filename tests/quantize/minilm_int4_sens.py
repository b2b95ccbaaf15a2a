"""Which MiniLM layers cost the int4 cosine (docs/quantize.md, "GPTQ on
MiniLM"): ONNX Runtime on the f32 model with the dequantized weights of a
`dmlc quantize --weight-only int4` file put back into one group of layers
at a time (attention q/k/v, attention output, FFN intermediate, FFN
output), the others f32; cosine of the 1,000 sentence embeddings to ORT's
f32 ones (minilm_real.py's cached reference). Needs the zoo's venv.

  $Z/venv/bin/python tests/quantize/minilm_int4_sens.py [QUANTIZED.onnx] [GROUP]
  (default .cache/gptq/int4_gptq_act_g32.onnx, group 32; run from the repo root)
"""
import sys, os, glob, numpy as np, onnx
from onnx import numpy_helper
sys.path.insert(0, "tests/quantize"); sys.path.insert(0, "scripts/zoo")
import minilm_real as mr
from tokenizers import Tokenizer
import onnxruntime as ort
f32 = onnx.load(".cache/minilm/models/minilm_l6_real.torchscript.onnx")
QP = sys.argv[1] if len(sys.argv) > 1 else ".cache/gptq/int4_gptq_act_g32.onnx"
G = int(sys.argv[2]) if len(sys.argv) > 2 else 32
q = onnx.load(QP)
qi = {t.name: t for t in q.graph.initializer}
# weight name -> layer (MatMul node name)
w2node = {n.input[1]: n.name for n in f32.graph.node if n.op_type == "MatMul" and n.input[1] in {t.name for t in f32.graph.initializer}}
deq = {}
for w, node in w2node.items():
    if w + "_quantized" not in qi: continue
    v = numpy_helper.to_array(qi[w + "_quantized"]).astype(np.float32)
    s = numpy_helper.to_array(qi[w + "_scale"])
    deq[w] = v * np.repeat(s, G, axis=0)[:v.shape[0]]
mdir = glob.glob(".cache/minilm/site-0.1.0/*/model")[0]
sent, _ = mr.sentences(1000)
tok = Tokenizer.from_file(os.path.join(mdir, "tokenizer.json")); tok.no_padding(); tok.enable_truncation(256)
enc = [e.ids for e in tok.encode_batch(sent)]
order = sorted(range(len(enc)), key=lambda i: -len(enc[i]))
ref = np.load(glob.glob(".cache/minilm/ref-*-ort_f32.npy")[0])
def ev(name, pred):
    m = onnx.ModelProto(); m.CopyFrom(f32)
    n = 0
    for t in m.graph.initializer:
        if t.name in deq and pred(w2node[t.name]):
            t.CopyFrom(numpy_helper.from_array(deq[t.name], t.name)); n += 1
    so = ort.SessionOptions(); so.intra_op_num_threads = 1
    s = ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"])
    y = np.zeros((1000, 384), np.float32)
    for b0 in range(0, 1000, 32):
        idx = order[b0:b0+32]; L = max(len(enc[i]) for i in idx)
        ids = np.zeros((len(idx), L), np.int64); mask = np.zeros_like(ids)
        for r, i in enumerate(idx): ids[r, :len(enc[i])] = enc[i]; mask[r, :len(enc[i])] = 1
        y[idx] = s.run(None, {"input_ids": ids, "attention_mask": mask})[0]
    c = mr.cos_rows(y, ref)
    print(f"{name}: {n} layers int4 ({os.path.basename(QP)}), others f32: min {c.min():.5f} mean {c.mean():.5f}", flush=True)
ev("all", lambda l: True)
ev("attention q/k/v only", lambda l: "/self/" in l)
ev("attention output only", lambda l: "attention/output" in l)
ev("FFN intermediate only", lambda l: "intermediate" in l)
ev("FFN output only", lambda l: "/output/dense" in l and "attention" not in l)
