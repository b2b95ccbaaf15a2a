"""StringNormalizer's `locale` against ONNX Runtime (test_onnx_strings.c,
test_strnorm_locale): writes tests/onnx/fixtures/strnorm_locale.onnx, its
inputs and ONNX Runtime's outputs (strnorm_locale.<name>.npy).

    .cache/onnx-1.23.2/venv/bin/python tests/onnx/gen_strnorm_locale.py

The model: x str[6] -> StringNormalizer UPPER and LOWER with locale "C",
"POSIX" (ASCII letters only in ONNX Runtime: "café" -> "CAFé") and
"C.UTF-8" (every letter with a simple case mapping; the same rule as
ONNX Runtime's default "en_US.UTF-8", which needs that locale installed
where it runs); w str[5] (one word each) -> stopwords ["ÉTÉ"] compared
case-insensitively with locale "C" (only "ÉTÉ" itself is removed) and
"C.UTF-8" ("été", "ÉTÉ" and "Été" are). The text stays within the
letters dmlc maps (ASCII, Latin-1, Greek, Cyrillic) and has no empty
string (dmlc drops empty results of a [C] input as ONNX's reference does;
ONNX Runtime keeps them when there are no stopwords). Also
strnorm_tr.onnx: UPPER with locale "tr_TR.UTF-8", which dmlc refuses.
"""
import os

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")


def main():
    cases = [("up_c", "UPPER", "C"), ("lo_c", "LOWER", "C"), ("up_posix", "UPPER", "POSIX"),
             ("up_u", "UPPER", "C.UTF-8"), ("lo_u", "LOWER", "C.UTF-8")]
    nodes = [helper.make_node("StringNormalizer", ["x"], [n], name=n, case_change_action=a,
                              locale=loc) for n, a, loc in cases]
    stops = [("stop_c", "C"), ("stop_u", "C.UTF-8")]
    nodes += [helper.make_node("StringNormalizer", ["w"], [n], name=n,
                               case_change_action="NONE", is_case_sensitive=0,
                               stopwords=["\u00c9T\u00c9"], locale=loc) for n, loc in stops]
    outs = [helper.make_tensor_value_info(n, TensorProto.STRING, ["k_" + n])
            for n, _, _ in cases]
    outs += [helper.make_tensor_value_info(n, TensorProto.STRING, ["k_" + n])
             for n, _ in stops]
    g = helper.make_graph(
        nodes, "strnorm_locale",
        [helper.make_tensor_value_info("x", TensorProto.STRING, [6]),
         helper.make_tensor_value_info("w", TensorProto.STRING, [5])], outs)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)],
                          producer_name="gen_strnorm_locale.py")
    m.ir_version = 8
    onnx.checker.check_model(m)
    path = os.path.join(OUT, "strnorm_locale.onnx")
    onnx.save(m, path)
    x = np.array(["caf\u00e9 au lait", "\u00c0\u00c9\u00ce\u00d5\u00dc \u00e0\u00e9\u00ee\u00f5\u00fc",
                  "\u03b1\u03b2\u03b3 \u0391\u0392\u0393", "\u0436\u0416 \u0451\u0401",
                  "MiXeD 123 \u00df", "\u03a9 \u03c9"])
    w = np.array(["\u00e9t\u00e9", "\u00c9T\u00c9", "\u00c9t\u00e9", "ete", "x"])
    np.save(os.path.join(OUT, "strnorm_locale.x.npy"), x)
    np.save(os.path.join(OUT, "strnorm_locale.w.npy"), w)
    s = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    names = [o.name for o in s.get_outputs()]
    for n, v in zip(names, s.run(None, {"x": x.astype(object), "w": w.astype(object)})):
        np.save(os.path.join(OUT, "strnorm_locale.%s.npy" % n), v.astype(str))
        print(n, v)
    # what dmlc refuses at compile time: the Turkish case mapping
    g = helper.make_graph(
        [helper.make_node("StringNormalizer", ["x"], ["y"], name="tr",
                          case_change_action="UPPER", locale="tr_TR.UTF-8")], "strnorm_tr",
        [helper.make_tensor_value_info("x", TensorProto.STRING, [2])],
        [helper.make_tensor_value_info("y", TensorProto.STRING, ["k"])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)],
                          producer_name="gen_strnorm_locale.py")
    m.ir_version = 8
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(OUT, "strnorm_tr.onnx"))


main()
