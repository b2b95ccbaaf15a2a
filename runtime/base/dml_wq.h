/*
 * dml_wq.h — the facts of MatMulWQ, dmlc's weight-only-quantized MatMul
 * (ops.def): its weight layouts and its shape rule, in one place. The
 * wq-fuse pass (passes/wq_fuse.c) writes the layouts, shape inference
 * (ir/infer.c) checks them, the CPU kernel (runtime/cpu/cpu_wq_gemm.c)
 * reads them; docs/package-format.md describes them.
 *
 *   MatMulWQ(a, w, scale [, zero_point]) -> y        attributes bits, block_size
 *
 *   a           f32 [..., K] (rank >= 1)
 *   scale       f32 [G, N], G = ceil(K / block_size)
 *   y           f32 [..., N]: y[.., n] = sum_k a[.., k] * dq(k, n)
 *   dq(k, n)    = (float)(q(k, n) - z(k / block_size, n)) * scale[k / block_size, n]
 *               (DequantizeLinear's formula, opset 21 blocked along K)
 *
 * The weight w is stored in panels of 32 columns, each panel's K rows
 * contiguous, so the kernel streams one panel's bytes in order:
 *
 *   bits = 8:   w i8 or u8 [P, K, 32], P = ceil(N / 32):
 *               q(k, n) = w[n / 32, k, n % 32];
 *               zero_point (optional, 0 when absent) w's dtype, [G, N].
 *   bits = 4:   w u8 [P, K, 16]: byte w[n / 32, k, n % 16] holds column n in
 *               its low nibble when n % 32 < 16, else in its high nibble.
 *               A nibble u is q = u - 8 (q in [-8, 7]); zero_point
 *               (optional) i8 [G, N]. (A uint4 weight with zero point z is
 *               stored as nibble q and zero point z - 8:
 *               (q - 8) - (z - 8) = q - z.)
 *   The columns of the last panel past N hold q = 0 (byte 0, nibble 8).
 *
 * 16 bytes of a 4-bit row unpack to 32 columns with a mask and a shift and
 * no shuffle.
 */
#ifndef DML_WQ_H_
#define DML_WQ_H_

#include <stdint.h>

/* Columns per panel; bytes per panel row (32 values of `bits` bits). */
#define DML_WQ_PANEL 32
#define DML_WQ_ROW_BYTES(bits) ((int64_t)DML_WQ_PANEL * (bits) / 8)

/* Number of panels of n columns. */
static inline int64_t dml_wq_panels(int64_t n) {
  return (n + DML_WQ_PANEL - 1) / DML_WQ_PANEL;
}

/* Byte offset in w of element (k, n) of a K-row weight, and its nibble
 * shift (0 or 4; always 0 for bits 8). */
static inline int64_t dml_wq_offset(int64_t K, int bits, int64_t k, int64_t n) {
  int64_t rb = DML_WQ_ROW_BYTES(bits);
  return (n / DML_WQ_PANEL * K + k) * rb + (bits == 4 ? n % 16 : n % DML_WQ_PANEL);
}
static inline int dml_wq_shift(int bits, int64_t n) {
  return bits == 4 && n % DML_WQ_PANEL >= 16 ? 4 : 0;
}

/* Number of groups along K. */
static inline int64_t dml_wq_groups(int64_t K, int64_t block_size) {
  return block_size > 0 ? (K + block_size - 1) / block_size : 0;
}

#endif
