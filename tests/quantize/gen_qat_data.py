"""Training data of test_qat.sh (checked in beside it): 512 rows of 16
standard-normal features (tiny_mlp.onnx's input) labelled by a fixed random
linear teacher into 4 classes (tiny_mlp.onnx's output), so the loss of a
few QAT epochs must fall. Run with a python that has numpy:
    python3 gen_qat_data.py   (writes qat_x.npy f32 [512,16], qat_y.npy i64 [512])
"""
import os

import numpy as np

rng = np.random.default_rng(19)
x = rng.standard_normal((512, 16)).astype(np.float32)
teacher = rng.standard_normal((16, 4)).astype(np.float32)
y = np.argmax(x @ teacher, axis=1).astype(np.int64)
here = os.path.dirname(os.path.abspath(__file__))
np.save(os.path.join(here, "qat_x.npy"), x)
np.save(os.path.join(here, "qat_y.npy"), y)
