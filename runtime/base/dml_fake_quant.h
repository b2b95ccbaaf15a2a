/*
 * dml_fake_quant.h — the formulas of int8 fake quantization, written once:
 * the CPU kernels of FakeQuantize / FakeQuantizeGrad (runtime/cpu/
 * cpu_fake_quant.c), `dmlc quantize` (compiler/dml_quantize.c: the QDQ
 * model's scales and zero points) and quantization-aware training
 * (`dmlc train --qat`, docs/quantize.md) read them from here, so the QDQ
 * model exported after QAT quantizes exactly as the trained model did.
 *
 * Per-tensor activations (int8 asymmetric, ONNX Runtime's
 * quant_utils.compute_scale_zp with qmin -128, qmax 127):
 *   rmin = min(lo, 0), rmax = max(hi, 0), scale = (rmax - rmin) / 255 (f32),
 *   zero_point = clamp(round_half_even(-128 - rmin / scale), -128, 127);
 *   a scale below FLT_MIN (or not finite) becomes 1 with zero point 0.
 * Per-channel weights (int8 symmetric in [-127, 127]):
 *   scale = max |w| over the channel's finite values / 127 (f32; quant_max
 *   in general); below
 *   FLT_MIN: 1 (ORT's rule for an all-zero tensor).
 * The fake-quantized value (PyTorch's fake_quantize_per_tensor_affine /
 * _per_channel_affine forward, with ONNX QuantizeLinear's division and
 * ties-to-even rounding):
 *   q = round_half_even(x / scale) + zero_point,
 *   y = (clamp(q, qmin, qmax) - zero_point) * scale.
 * Its straight-through estimator (PyTorch's FakeQuantize backward,
 * torch/ao/quantization/fake_quantize.py and ATen's
 * fake_quantize_per_tensor_affine_cachemask: the gradient passes where
 * qmin <= q <= qmax, zero elsewhere; Bengio et al. 2013, "Estimating or
 * Propagating Gradients Through Stochastic Neurons"):
 *   dx = dy where qmin <= q <= qmax, else 0.
 * NaN: y is NaN (the value stays visible) and dx is 0 (q is not in range);
 * +-inf saturate to the range's ends with dx 0.
 */
#ifndef DML_FAKE_QUANT_H_
#define DML_FAKE_QUANT_H_

#include <float.h>
#include <math.h>
#include <stdint.h>

/* Activation range [lo, hi] -> int8 asymmetric scale and zero point. */
static inline void dml_fq_act_qparams(double lo, double hi, float *out_scale,
                                      int32_t *out_zp) {
  lo = fmin(lo, 0);
  hi = fmax(hi, 0);
  float s = (float)((hi - lo) / 255.0);
  if (!(s >= FLT_MIN) || !isfinite(s)) {
    *out_scale = 1.0f;
    *out_zp = 0;
    return;
  }
  double zp = nearbyint(-128.0 - lo / s);
  *out_scale = s;
  *out_zp = (int32_t)(zp < -128 ? -128 : zp > 127 ? 127 : zp);
}

/* Largest |w| of a channel (finite values only) -> symmetric scale for the
 * grid [-qmax, qmax] (int8: qmax 127). */
static inline float dml_fq_weight_scale(float amax, float qmax) {
  float s = amax / qmax;
  return s >= FLT_MIN ? s : 1.0f;
}

/* q = round_half_even(x / scale) + zero_point (NaN for NaN x). */
static inline float dml_fq_q(float x, float scale, float zp) {
  return nearbyintf(x / scale) + zp;
}

/* The fake-quantized value of x. */
static inline float dml_fq_value(float x, float scale, float zp, float qmin, float qmax) {
  float q = dml_fq_q(x, scale, zp);
  if (isnan(q)) return q;
  q = q < qmin ? qmin : q > qmax ? qmax : q;
  return (q - zp) * scale;
}

/* 1 where the straight-through estimator passes the gradient of x. */
static inline int dml_fq_pass(float x, float scale, float zp, float qmin, float qmax) {
  float q = dml_fq_q(x, scale, zp);
  return q >= qmin && q <= qmax;
}

#endif /* DML_FAKE_QUANT_H_ */
