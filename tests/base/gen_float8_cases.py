#!/usr/bin/env python3
"""Writes tests/base/float8_cases.txt, the reference of test_float8.c.

The expected values come from outside dmlc: ml_dtypes (0.7.0, the version
onnx 1.23.2 installs) for FLOAT8E4M3FN/E4M3FNUZ/E5M2/E5M2FNUZ, with
onnx.numpy_helper.saturate_cast for saturate=1, exactly as
onnx/reference/ops/op_cast.py (cast_to) does, and
onnx.numpy_helper.to_float8e8m0 for FLOAT8E8M0 (its three round modes).

Run with the venv of the ONNX 1.23.2 data (scripts/fetch_onnx_data.sh or
.cache/onnx-1.23.2/venv):
  .cache/onnx-1.23.2/venv/bin/python tests/base/gen_float8_cases.py

Lines ('#' starts a comment):
  d DTYPE BYTE F32BITS             decoding byte BYTE gives f32 F32BITS
  e DTYPE F64BITS SAT0 SAT1        encoding the double: saturate=0, =1
  m ROUND F32BITS SAT0 SAT1        f8e8m0 from a float, round_mode ROUND
All numbers are hex. The inputs: every bit pattern decoded (and, through
its f32 value, encoded again); the f32 edges (NaN, +-inf, +-0, the largest
finite value, the next f32 above it, the halfway point to the next binade
step and the f32 on either side of it, f32 subnormals); every halfway
point between neighbouring float8 values and the f32 on either side;
values of f64 precision just off those halfway points (f64 -> float8 is
rounded once); a seeded set of random f32.
"""
import struct
import sys

import ml_dtypes
import numpy as np
import onnx.numpy_helper as nh

TYPES = [
    ("f8e4m3fn", ml_dtypes.float8_e4m3fn),
    ("f8e4m3fnuz", ml_dtypes.float8_e4m3fnuz),
    ("f8e5m2", ml_dtypes.float8_e5m2),
    ("f8e5m2fnuz", ml_dtypes.float8_e5m2fnuz),
]


def f32bits(v):
    return struct.unpack("<I", struct.pack("<f", v))[0]


def f64bits(v):
    return struct.unpack("<Q", struct.pack("<d", v))[0]


def bits_f32(b):
    return struct.unpack("<f", struct.pack("<I", b))[0]


def enc(x64, t, sat):
    a = np.array([x64], dtype=np.float64)
    if sat:
        y = nh.saturate_cast(a, t)
    else:
        y = a.astype(t)
    return int(y.view(np.uint8)[0])


def main(out_path):
    rng = np.random.default_rng(20261207)
    lines = [
        "# float8 conversion reference: tests/base/gen_float8_cases.py "
        f"(ml_dtypes {ml_dtypes.__version__}, onnx.numpy_helper); do not edit"
    ]
    for name, t in TYPES:
        allb = np.arange(256, dtype=np.uint8)
        vals = allb.view(t).astype(np.float32)
        for b in range(256):
            lines.append(f"d {name} {b:x} {f32bits(vals[b]):x}")
        fin = sorted({float(v) for v in vals if np.isfinite(v) and v >= 0})
        mx = float(ml_dtypes.finfo(t).max)
        tiny = float(ml_dtypes.finfo(t).smallest_subnormal)
        ins = [float(v) for v in vals]  # every pattern's value again
        ins += [float("nan"), -float("nan"), float("inf"), -float("inf"), 0.0, -0.0]
        step = mx - fin[-2]  # the spacing at the top
        for s in (1.0, -1.0):
            ins += [s * mx, s * float(np.nextafter(np.float32(mx), np.float32(np.inf)))]
            half = mx + step / 2
            ins += [s * half, s * float(np.nextafter(np.float32(half), np.float32(0))),
                    s * float(np.nextafter(np.float32(half), np.float32(np.inf)))]
            ins += [s * (mx + step), s * 1e30, s * 3.4028234663852886e38]
            ins += [s * tiny / 2, s * tiny * 0.75, s * tiny * 0.25, s * tiny * 1.5,
                    s * tiny * 2.5, s * 1e-30, s * 1e-45]
        for a, b in zip(fin, fin[1:]):
            mid = (a + b) / 2
            ins += [mid, -mid]
            m32 = np.float32(mid)
            ins += [float(np.nextafter(m32, np.float32(0))),
                    float(np.nextafter(m32, np.float32(np.inf)))]
            ins += [mid * (1 + 2.0 ** -40), mid * (1 - 2.0 ** -40)]  # f64 only
        ins += [float(v) for v in rng.standard_normal(150).astype(np.float32) * mx / 4]
        ins += [float(v) for v in
                (rng.standard_normal(150) * 2.0 ** rng.integers(-20, 20, 150)).astype(np.float32)]
        seen = set()
        for x in ins:
            k = f64bits(x)
            if k in seen:
                continue
            seen.add(k)
            lines.append(f"e {name} {k:x} {enc(x, t, 0):x} {enc(x, t, 1):x}")
    # FLOAT8E8M0
    allb = np.arange(256, dtype=np.uint8)
    vals = allb.view(ml_dtypes.float8_e8m0fnu).astype(np.float32)
    for b in range(256):
        lines.append(f"d f8e8m0 {b:x} {f32bits(vals[b]):x}")
    ins = [float("nan"), float("inf"), -float("inf"), 0.0, -0.0, 1e-45, 1e-40,
           1.1754942e-38, 3.4028234663852886e38, -3.4028234663852886e38]
    for e in range(-149, 128, 3):
        p = 2.0 ** e
        ins += [p, -p, p * 1.5, p * 1.25, p * 1.75, p * (1 + 2.0 ** -23),
                p * (2 - 2.0 ** -23), p * (1 + 2.0 ** -2 + 2.0 ** -22)]
    p = 2.0 ** 127
    ins += [p, p * 1.5, p * (1 + 2.0 ** -23), p * 1.25]
    seen = set()
    for x in ins:
        x32 = np.float32(x)
        k = f32bits(x32)
        if k in seen or not (np.isfinite(x32) or np.isnan(x32) or np.isinf(x32)):
            continue
        seen.add(k)
        a = np.array([x32], dtype=np.float32)
        for mode in ("up", "down", "nearest"):
            r0 = int(nh.to_float8e8m0(a, False, mode).view(np.uint8)[0])
            r1 = int(nh.to_float8e8m0(a, True, mode).view(np.uint8)[0])
            lines.append(f"m {mode} {k:x} {r0:x} {r1:x}")
    with open(out_path, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "tests/base/float8_cases.txt")
