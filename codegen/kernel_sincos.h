/*
 * kernel_sincos.h — the one source of the GPU kernels' sin and cos of f32
 * (DML_KF_SIN, DML_KF_COS of an f32, f16 or bf16 value), written once in
 * the C subset that GLSL 450 and CUDA C share and expanded by both
 * renderers (spirv/glsl.c, whose SPIR-V is also Metal's MSL, and
 * cuda/cuda.c) and by the host test tests/codegen/test_sincos.c, which
 * compares it with the C library over every magnitude.
 *
 * DML_SINCOS_SRC is DML_SRC( the functions ); the includer defines
 * DML_SRC: `#__VA_ARGS__` to get the text (one line; the comments here are
 * not in it), `__VA_ARGS__` to compile it. The text uses these macros,
 * which the includer defines before it:
 *   DML_SC_FN          function qualifiers ("" in GLSL, __device__ in CUDA)
 *   DML_SC_U           32-bit unsigned ("uint", "unsigned")
 *   DML_SC_F2U(x)      the bits of f32 x
 *   DML_SC_MULHI(a, b) the high 32 bits of the 64-bit product a * b (u32)
 *   DML_SC_FLOOR(x)    floor of an f32
 *   DML_SC_PRECISE     "precise" in GLSL (no contraction or reassociation
 *                      of the Cody–Waite steps), empty elsewhere
 * It defines dml_sincos(x, q0) (sin for q0 = 0, cos for q0 = 1), dml_sin(x)
 * and dml_cos(x), all of f32, and dml_2opi(i, a, b, c, d, e), the one of
 * a..e that i (0..4) picks (the table of 2/pi's words as selects: GLSL and
 * C spell constant arrays differently).
 *
 * x = j pi/2 + r with |r| <= pi/4 (about), then sin or cos by j mod 4 of
 * Cephes' sinf/cosf minimax polynomials on r (degree 7 and 8; the forms
 * the CUDA prelude had), so every backend computes the same function:
 *   |x| <= 8192 (the fast path: a floor, three multiply-subtracts and the
 *     polynomial): Cody–Waite with pi/2 in three parts, 1.5703125 (8
 *     significant bits) + 4.837512969970703125e-4 (11 bits) + the f32
 *     nearest the rest; j <= 5215 has 13 bits, so j times either of the
 *     first two is exact and x - j C1 is exact (Cody and Waite, Software
 *     Manual for the Elementary Functions, 1980; the constants are twice
 *     Cephes sinf's DP1, DP2, DP3 for pi/4); no fused multiply-add needed,
 *     and one changes nothing (the products are exact);
 *   8192 < |x| < inf: Payne–Hanek (Payne and Hanek, "Radian reduction for
 *     trigonometric functions", SIGNUM Newsletter 18(1), 1983; as musl's
 *     __rem_pio2f / fdlibm's __kernel_rem_pio2 and CUDA libdevice's
 *     __internal_trig_reduce_slowpathd do it, written here anew in 32-bit
 *     words): |x| = m 2^e with m < 2^24, and x 2/pi mod 4 from the 96 bits
 *     of 2/pi's binary fraction that matter (those above add multiples of
 *     4, those below less than 2^-94), m times them in 32-bit words
 *     (DML_SC_MULHI for the high halves): the quadrant and the fraction to
 *     62 bits, truncated (an error below 2^-61 of a quadrant), converted to
 *     f32 from its magnitude's high and low words (no cancellation), so a
 *     reduced argument down to 2^-38 of a quadrant keeps 24 significant
 *     bits;
 *   NaN and +-inf give NaN; sin(-0) = -0.
 * Cost: the fast path is about as fast as lavapipe's own sin, but a
 * renderer that runs both arms of a branch in SIMD lanes (lavapipe does)
 * pays for Payne–Hanek on every element: docs/kernels.md "Sin and Cos".
 * Measured by tests/codegen/test_sincos.c against glibc's sinf/cosf: see
 * its header (and docs/kernels.md, "Sin and Cos").
 */
#ifndef DML_KERNEL_SINCOS_H_
#define DML_KERNEL_SINCOS_H_

/* clang-format off */
#define DML_SINCOS_SRC DML_SRC(                                                     \
DML_SC_FN DML_SC_U dml_2opi(DML_SC_U i, DML_SC_U a, DML_SC_U b, DML_SC_U c,   \
                            DML_SC_U d, DML_SC_U e) {                              \
  return i == 0u ? a : i == 1u ? b : i == 2u ? c : i == 3u ? d : e;                \
}                                                                                   \
DML_SC_FN float dml_sincos(float x, float q0) {                                     \
  DML_SC_PRECISE float r;                                                           \
  float q;                                                                          \
  DML_SC_U u = DML_SC_F2U(x) & 0x7fffffffu;                                         \
  if (u <= 0x46000000u) {                                                           \
    float j = DML_SC_FLOOR(x * 0.636619772f + 0.5f);                                \
    DML_SC_PRECISE float t = x - j * 1.5703125f;                                    \
    t = t - j * 4.837512969970703125e-4f;                                           \
    r = t - j * 7.54978995489188216e-8f;                                            \
    q = j - 4.0f * DML_SC_FLOOR(j * 0.25f);                                         \
  } else {                                                                          \
    DML_SC_U pos = (u >> 23) - 120u;                                                \
    DML_SC_U k = pos >> 5, sh = pos & 31u, sl = 31u - sh;                           \
    DML_SC_U m = (u & 0x7fffffu) | 0x800000u;                                       \
    DML_SC_U t0 = dml_2opi(k, 0u, 0xA2F9836Eu, 0x4E441529u, 0xFC2757D1u,             \
                           0xF534DDC0u);                                            \
    DML_SC_U t1 = dml_2opi(k, 0xA2F9836Eu, 0x4E441529u, 0xFC2757D1u, 0xF534DDC0u,    \
                           0xDB629599u);                                            \
    DML_SC_U t2 = dml_2opi(k, 0x4E441529u, 0xFC2757D1u, 0xF534DDC0u, 0xDB629599u,    \
                           0x3C439041u);                                            \
    DML_SC_U t3 = dml_2opi(k, 0xFC2757D1u, 0xF534DDC0u, 0xDB629599u, 0x3C439041u,    \
                           0xFE5163ABu);                                            \
    DML_SC_U w0 = (t0 << sh) | ((t1 >> 1u) >> sl);                                  \
    DML_SC_U w1 = (t1 << sh) | ((t2 >> 1u) >> sl);                                  \
    DML_SC_U w2 = (t2 << sh) | ((t3 >> 1u) >> sl);                                  \
    DML_SC_U lo1 = m * w1;                                                          \
    DML_SC_U rlo = lo1 + DML_SC_MULHI(m, w2);                                       \
    DML_SC_U rhi = m * w0 + DML_SC_MULHI(m, w1) + (rlo < lo1 ? 1u : 0u) +           \
                   0x20000000u;                                                     \
    DML_SC_U f = rhi & 0x3fffffffu;                                                 \
    DML_SC_U neg = f < 0x20000000u ? 1u : 0u;                                       \
    DML_SC_U mh = neg != 0u ? 0x1fffffffu - f + (rlo == 0u ? 1u : 0u)               \
                            : f - 0x20000000u;                                      \
    DML_SC_U ml = neg != 0u ? 0u - rlo : rlo;                                       \
    float fh = mh;                                                                  \
    float fl = ml;                                                                  \
    r = (fh * 9.31322574615478516e-10f + fl * 2.16840434497100887e-19f) *           \
        1.57079632679489662f;                                                       \
    DML_SC_U n = rhi >> 30;                                                         \
    if (neg != 0u) r = -r;                                                          \
    if (x < 0.0f) {                                                                 \
      r = -r;                                                                       \
      n = (4u - n) & 3u;                                                            \
    }                                                                               \
    q = n;                                                                          \
  }                                                                                 \
  q = q + q0;                                                                       \
  if (q >= 4.0f) q = q - 4.0f;                                                      \
  float z = r * r;                                                                  \
  float ps = r + r * z * (-1.6666654611e-1f + z * (8.3321608736e-3f +               \
                                                   z * (-1.9515295891e-4f)));       \
  float pc = 1.0f - 0.5f * z + z * z * (4.166664568298827e-2f +                     \
             z * (-1.388731625493765e-3f + z * 2.443315711809948e-5f));             \
  float v = (q == 0.0f || q == 2.0f) ? ps : pc;                                     \
  v = q >= 2.0f ? -v : v;                                                           \
  v = u >= 0x7f800000u ? x - x : v;                                                 \
  return (q0 == 0.0f && x == 0.0f) ? x : v;                                         \
}                                                                                   \
DML_SC_FN float dml_sin(float x) { return dml_sincos(x, 0.0f); }                   \
DML_SC_FN float dml_cos(float x) { return dml_sincos(x, 1.0f); }                   \
)
/* clang-format on */

#endif /* DML_KERNEL_SINCOS_H_ */
