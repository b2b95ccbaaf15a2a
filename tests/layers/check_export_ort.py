#!/usr/bin/env python3
"""ONNX Runtime on the models test_layers_models wrote with
dml_onnx_export_module (the C layer API's models as ONNX): each must pass
onnx.checker (full check, with ONNX's shape inference) and give dmlc's
outputs within 1e-5 (|ort - dmlc| <= 1e-5 * max(1, |dmlc|) per element).

    check_export_ort.py BUILD_TESTS_LAYERS_DIR

Reads export_<tag>.onnx, export_<tag>_input.npy and
export_<tag>_<output>.npy for tag in fashion_mlp, cnn, embed
(test_layers_models) and trained_mlp (test_layers_train: the MLP after a
pass of Adam over 6,000 Fashion-MNIST images; its first 32 test images). Needs onnx
and onnxruntime (the venv of scripts/onnx_node_suite.sh has both)."""
import os
import sys

import numpy as np
import onnx
import onnxruntime as ort

D = sys.argv[1]
SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
fails = 0
for tag in ("fashion_mlp", "cnn", "embed", "trained_mlp"):
    path = os.path.join(D, "export_%s.onnx" % tag)
    model = onnx.load(path)
    onnx.checker.check_model(model, full_check=True)
    x = np.load(os.path.join(D, "export_%s_input.npy" % tag))
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    outs = sess.run(None, {sess.get_inputs()[0].name: x})
    ops = sorted({n.op_type for n in model.graph.node})
    # the initializers are the weights, named as PyTorch's state_dict keys
    # (the fixtures' params.txt); constants are Constant nodes
    params = os.path.join(SRC, "tests", "layers", "fixtures", tag, "params.txt")
    if os.path.exists(params):
        keys = sorted(ln.split()[0] for ln in open(params) if ln.strip())
        inits = sorted(t.name for t in model.graph.initializer)
        if keys != inits:
            fails += 1
            print("%s: initializers %s, PyTorch's parameters %s: FAILED" % (tag, inits, keys))
    print("%s: opset %d, %d nodes, ops %s" % (tag, model.opset_import[0].version,
                                            len(model.graph.node), ",".join(ops)))
    for name, got in zip(names, outs):
        f = os.path.join(D, "export_%s_%s.npy" % (tag, name))
        if not os.path.exists(f):
            continue
        want = np.load(f)
        err = float(np.max(np.abs(got.astype(np.float64) - want) /
                           np.maximum(1.0, np.abs(want)))) if want.size else 0.0
        ok = got.shape == want.shape and err <= 1e-5
        fails += not ok
        print("  %s: |onnxruntime - dmlc| scaled %.3g %s" % (name, err,
                                                            "ok" if ok else "FAILED"))
print("onnxruntime %s, onnx %s" % (ort.__version__, onnx.__version__))
sys.exit(1 if fails else 0)
