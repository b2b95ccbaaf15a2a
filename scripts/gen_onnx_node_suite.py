#!/usr/bin/env python3
"""Writes ONNX's backend node tests of the installed onnx wheel into OUT/node.

The onnx wheels do not ship backend/test/data/node; they ship the generators
(onnx/backend/test/case/node/*.py). This writes each case exactly as ONNX's
own `backend-test-tools generate-data` (onnx/backend/test/cmd_tools.py) does:
OUT/node/<name>/model.onnx and test_data_set_N/input_K.pb, output_K.pb
(TensorProto, SequenceProto, OptionalProto or MapProto, by the declared
type). NumPy's global generator is seeded (0) first, so the random inputs of
the generators are the same on every run.

Run by scripts/onnx_node_suite.sh (which makes the pinned venv):
    python gen_onnx_node_suite.py OUT
"""
import os
import shutil
import sys
import warnings

import numpy as np


def write_value(path, value, vtype, name):
    from onnx import TensorProto, numpy_helper

    if vtype.HasField("map_type"):
        proto = numpy_helper.from_dict(value, name)
    elif vtype.HasField("sequence_type"):
        proto = numpy_helper.from_list(value, name)
    elif vtype.HasField("optional_type"):
        proto = numpy_helper.from_optional(value, name)
    else:
        assert vtype.HasField("tensor_type"), name
        proto = value if isinstance(value, TensorProto) else numpy_helper.from_array(value, name)
    with open(path, "wb") as f:
        f.write(proto.SerializeToString())


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: gen_onnx_node_suite.py OUT")
    out = os.path.join(sys.argv[1], "node")
    np.random.seed(0)
    warnings.simplefilter("ignore")  # the generators' own overflow warnings
    from onnx.backend.test.case import node

    cases = node.collect_testcases()
    tmp = out + ".tmp"
    if os.path.exists(tmp):
        shutil.rmtree(tmp)
    os.makedirs(tmp)
    for case in cases:
        d = os.path.join(tmp, case.name)
        os.makedirs(d)
        with open(os.path.join(d, "model.onnx"), "wb") as f:
            f.write(case.model.SerializeToString())
        g = case.model.graph
        for i, (inputs, outputs) in enumerate(case.data_sets):
            ds = os.path.join(d, "test_data_set_%d" % i)
            os.makedirs(ds)
            for j, v in enumerate(inputs):
                write_value(os.path.join(ds, "input_%d.pb" % j), v, g.input[j].type, g.input[j].name)
            for j, v in enumerate(outputs):
                write_value(os.path.join(ds, "output_%d.pb" % j), v, g.output[j].type,
                            g.output[j].name)
    if os.path.exists(out):
        shutil.rmtree(out)
    os.rename(tmp, out)
    print("%d node tests -> %s" % (len(cases), out))


if __name__ == "__main__":
    main()
