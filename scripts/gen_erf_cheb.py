#!/usr/bin/env python3
"""Coefficients of runtime/cpu/cpu_vmath.c's erf: g(t) = erf(sqrt t) / sqrt t
(entire in t; g(0) = 2/sqrt(pi)) interpolated at the Chebyshev points of
degree 24 on t in [0, 16], in u = t/8 - 1 (numpy.polynomial.chebyshev
chebinterpolate; math.erf as the reference), then converted to monomial
coefficients in u (cheb2poly: all below 0.36 in magnitude, their absolute
sum 1.13, so Horner's rule in double loses nothing). Prints the C array
(highest degree first, as the Horner loop reads it) and the largest
relative error of Horner's rule in double on 200001 points (7.9e-15).

  python3 scripts/gen_erf_cheb.py
"""
import math

import numpy as np
from numpy.polynomial import chebyshev as C


def g(t):
    t = np.asarray(t, dtype=np.float64)
    out = np.empty_like(t)
    for i, v in np.ndenumerate(t):
        s = math.sqrt(v)
        out[i] = 2 / math.sqrt(math.pi) if v == 0 else math.erf(s) / s
    return out


def main():
    deg = 24
    p = C.cheb2poly(C.chebinterpolate(lambda u: g(8 * u + 8), deg))
    t = np.linspace(0, 16, 200001)
    v = np.zeros_like(t)
    for k in p[::-1]:
        v = v * (t / 8 - 1) + k
    err = np.max(np.abs(v - g(t)) / g(t))
    print('/* scripts/gen_erf_cheb.py: degree %d, max relative error %.2g */' % (deg, err))
    print('static const double k_erf_poly[%d] = {' % (deg + 1))
    for v in p[::-1]:
        print('    %.17g,' % v)
    print('};')


if __name__ == '__main__':
    main()
