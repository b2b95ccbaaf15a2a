"""check_gptq.py OUT.onnx WEIGHT Q.npy S.npy: the int4 / int8 values and
scales `dmlc quantize --weight-only --method gptq` wrote for initializer
WEIGHT against gen_gptq_ref.py's numpy GPTQ (Q [K, N] int8, S [G, N]):
at least 99% of the values equal, none more than 1 apart, scales within
1e-6 relative for 99% (LAPACK there, dmlc's Cholesky here: a value at a
rounding tie may go the other way). Needs numpy and onnx."""
import sys

import numpy as np
import onnx
from onnx import numpy_helper


def main():
    path, name, qp, sp = sys.argv[1:5]
    m = onnx.load(path)
    inits = {t.name: t for t in m.graph.initializer}
    q = numpy_helper.to_array(inits[name + "_quantized"]).astype(np.int32)
    s = numpy_helper.to_array(inits[name + "_scale"])
    qr = np.load(qp).astype(np.int32)
    sr = np.load(sp)
    same = (q == qr).mean()
    far = int((np.abs(q - qr) > 1).sum())
    s_same = (np.abs(s - sr) <= 1e-6 * np.abs(sr)).mean()
    print(f"{name}: {same:.4f} of the values equal numpy's GPTQ, {far} more than 1 apart; "
          f"{s_same:.4f} of the scales")
    ok = same >= 0.99 and far == 0 and s_same >= 0.99
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
