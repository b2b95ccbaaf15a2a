/*
 * cpu_signal.c — signal ops of ONNX opset 17 (operator spec):
 * HannWindow, HammingWindow, BlackmanWindow, DFT, STFT, MelWeightMatrix.
 *
 * Windows and MelWeightMatrix write any numeric output_datatype (values
 * computed in double, stored with C conversion). DFT and STFT take f32 or
 * f64 signals whose last dim is 1 (real) or 2 (complex) and compute a
 * direct O(n^2) transform in double (a reference kernel, not an FFT).
 */
#include <math.h>
#include <string.h>

#include "cpu_internal.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

/* ==== windows =========================================================== */

/* w[n] = a0 - a1 cos(2 pi n / N1) + a2 cos(4 pi n / N1), N1 = size when
 * periodic, size - 1 otherwise (spec: HannWindow a0 = a1 = 0.5;
 * HammingWindow a0 = 25/46, a1 = 21/46; BlackmanWindow 0.42, 0.5, 0.08). */
dml_status_t dml_cpuk_Window(const dml_cpu_call_t *c) {
  int64_t size;
  if (dml_cpu_read_ints(&c->inputs[0], &size, 1) != 1)
    return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT,
                         "size must be an integer scalar");
  dml_tensor_t *y = &c->outputs[0];
  if (size < 0 || y->rank != 1 || y->dims[0] != size)
    return dml_cpu_err_shapes(c, "output must be [%lld]", (long long)size);
  if (y->dtype == DML_DTYPE_BOOL) return dml_cpu_err_dtype(c, "output", y->dtype);
  double a0, a1, a2 = 0;
  if (c->op == DML_OP_HANN_WINDOW) {
    a0 = 0.5, a1 = 0.5;
  } else if (c->op == DML_OP_HAMMING_WINDOW) {
    a0 = 25.0 / 46.0, a1 = 1.0 - 25.0 / 46.0;
  } else {
    a0 = 0.42, a1 = 0.5, a2 = 0.08;
  }
  double n1 = dml_cpu_get_int(c, "periodic", 1) ? (double)size : (double)(size - 1);
  for (int64_t n = 0; n < size; n++) {
    double v =
        a0 - a1 * cos(2 * M_PI * (double)n / n1) + a2 * cos(4 * M_PI * (double)n / n1);
    dml_store_f64(y->dtype, y->data, (size_t)n, v);
  }
  return DML_OK;
}

/* ==== DFT =============================================================== */

/* One transform: `in_n` complex-or-real samples read through (x, xs) with
 * the sample j at x + j * xs (cplx: real, imag adjacent), zero-padded or
 * truncated to n; `bins` outputs at y + k * ys (real, imag adjacent). The
 * window, when given, multiplies sample j. */
static void dft1(dml_dtype_t dt, const void *x, int64_t x0, int64_t xs, int64_t in_n,
                 int cplx, const dml_tensor_t *win, int64_t n, int64_t bins, int inverse,
                 void *y, int64_t y0, int64_t ys) {
  int64_t m = in_n < n ? in_n : n;
  for (int64_t k = 0; k < bins; k++) {
    double re = 0, im = 0;
    for (int64_t j = 0; j < m; j++) {
      double xr = dml_cpu_ld(dt, x, x0 + j * xs),
             xi = cplx ? dml_cpu_ld(dt, x, x0 + j * xs + 1) : 0;
      if (win) {
        double w = dml_cpu_ld(dt, win->data, j);
        xr *= w, xi *= w;
      }
      /* exact angle reduction keeps large n accurate */
      double a = 2 * M_PI * (double)((j * k) % n) / (double)n;
      if (!inverse) a = -a;
      double cr = cos(a), ci = sin(a);
      re += xr * cr - xi * ci;
      im += xr * ci + xi * cr;
    }
    if (inverse) re /= (double)n, im /= (double)n;
    dml_cpu_st(dt, y, y0 + k * ys, re);
    dml_cpu_st(dt, y, y0 + k * ys + 1, im);
  }
}

/* The real signal of length n whose spectrum's first bins are the in_n
 * complex samples at x + j * xs (Hermitian extension; numpy's irfft):
 * y[t] = (Re X0 + 2 sum_{0<k<n/2} Re(X_k e^{2 pi i k t / n})
 *         + [n even] Re X_{n/2} (-1)^t) / n, bins past in_n being 0. */
static void irdft1(dml_dtype_t dt, const void *x, int64_t x0, int64_t xs, int64_t in_n,
                   int cplx, int64_t n, void *y, int64_t y0, int64_t ys) {
  for (int64_t t = 0; t < n; t++) {
    double acc = 0;
    for (int64_t k = 0; 2 * k <= n && k < in_n; k++) {
      double xr = dml_cpu_ld(dt, x, x0 + k * xs),
             xi = cplx ? dml_cpu_ld(dt, x, x0 + k * xs + 1) : 0;
      double a = 2 * M_PI * (double)((k * t) % n) / (double)n;
      double v = xr * cos(a) - xi * sin(a);
      acc += k == 0 || 2 * k == n ? v : 2 * v;
    }
    dml_cpu_st(dt, y, y0 + t * ys, acc / (double)n);
  }
}

/* DFT (opsets 17, 20): input [batch, ..., n, 1|2], dft_length (scalar,
 * optional), axis (opset 17: attribute, default 1; opset 20: input 2,
 * default -2; negative counts from the end), inverse, onesided. Forward
 * onesided keeps bins 0..n/2; inverse onesided (opset 20's irfft) reads a
 * half spectrum and writes the real signal [..., n, 1], n = dft_length or
 * 2 * (in_n - 1). Output [..., bins, 2] otherwise. */
dml_status_t dml_cpuk_DFT(const dml_cpu_call_t *c) {
  const dml_tensor_t *x = &c->inputs[0], *dl = dml_cpu_in(c, 1), *ax = dml_cpu_in(c, 2);
  dml_tensor_t *y = &c->outputs[0];
  dml_dtype_t dt = x->dtype;
  if (dt != DML_DTYPE_F32 && dt != DML_DTYPE_F64)
    return dml_cpu_err_dtype(c, "input", dt);
  int32_t r = x->rank;
  if (r < 2 || (x->dims[r - 1] != 1 && x->dims[r - 1] != 2))
    return dml_cpu_err_shapes(c, "input must be [..., n, 1 or 2]");
  int64_t axis = dml_cpu_get_int(c, "axis", 1), axis0;
  if (ax && dml_cpu_read_ints(ax, &axis, 1) != 1)
    return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT,
                         "axis must be an integer scalar");
  axis0 = axis;
  if (axis < 0) axis += r;
  if (axis < 0 || axis > r - 2)
    return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT,
                         "axis %lld is out of range for rank %d", (long long)axis0,
                         (int)r);
  int inverse = dml_cpu_get_int(c, "inverse", 0) != 0;
  int onesided = dml_cpu_get_int(c, "onesided", 0) != 0;
  int cplx = x->dims[r - 1] == 2, irfft = onesided && inverse;
  int64_t in_n = x->dims[axis], n = irfft ? 2 * (in_n - 1) : in_n;
  if (dl && dml_cpu_read_ints(dl, &n, 1) != 1)
    return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT,
                         "dft_length must be an integer scalar");
  if (n < 1)
    return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT, "dft_length %lld must be >= 1",
                         (long long)n);
  int64_t bins = onesided && !inverse ? n / 2 + 1 : n, oc = irfft ? 1 : 2;
  if (y->dtype != dt || y->rank != r || y->dims[axis] != bins || y->dims[r - 1] != oc)
    return dml_cpu_err_shapes(c,
                              "output must have %lld bins on axis %lld and last dim %lld",
                              (long long)bins, (long long)axis, (long long)oc);
  int64_t outer = 1, inner = 1;
  for (int32_t i = 0; i < axis; i++) outer *= x->dims[i];
  for (int32_t i = (int32_t)axis + 1; i < r - 1; i++) {
    if (y->dims[i] != x->dims[i]) return dml_cpu_err_shapes(c, "output dims differ");
    inner *= x->dims[i];
  }
  int64_t ce = x->dims[r - 1];
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++) {
      if (irfft)
        irdft1(dt, x->data, (o * in_n * inner + i) * ce, inner * ce, in_n, cplx, n,
               y->data, o * bins * inner + i, inner);
      else
        dft1(dt, x->data, (o * in_n * inner + i) * ce, inner * ce, in_n, cplx, NULL, n,
             bins, inverse, y->data, (o * bins * inner + i) * 2, inner * 2);
    }
  return DML_OK;
}

/* STFT (opset 17): signal [batch, len, 1|2], frame_step, window [wlen]
 * (optional), frame_length (optional; else wlen); output [batch, frames,
 * bins, 2] with frames = (len - frame_length) / frame_step + 1 and bins =
 * frame_length/2+1 when onesided (default), frame_length otherwise. */
dml_status_t dml_cpuk_STFT(const dml_cpu_call_t *c) {
  const dml_tensor_t *x = &c->inputs[0], *win = dml_cpu_in(c, 2), *fl = dml_cpu_in(c, 3);
  dml_tensor_t *y = &c->outputs[0];
  dml_dtype_t dt = x->dtype;
  if (dt != DML_DTYPE_F32 && dt != DML_DTYPE_F64)
    return dml_cpu_err_dtype(c, "signal", dt);
  if (x->rank != 3 || (x->dims[2] != 1 && x->dims[2] != 2))
    return dml_cpu_err_shapes(c, "signal must be [batch, length, 1 or 2]");
  int64_t step, flen = -1;
  if (dml_cpu_read_ints(&c->inputs[1], &step, 1) != 1 || step < 1)
    return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT,
                         "frame_step must be an integer scalar >= 1");
  if (fl && dml_cpu_read_ints(fl, &flen, 1) != 1)
    return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT,
                         "frame_length must be an integer scalar");
  if (win && (win->dtype != dt || win->rank != 1 || (fl && win->dims[0] != flen)))
    return dml_cpu_err_shapes(c, "window must be [frame_length] of the signal's dtype");
  if (!fl) {
    if (!win)
      return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT,
                           "frame_length or window is required");
    flen = win->dims[0];
  }
  int64_t len = x->dims[1];
  if (flen < 1 || flen > len)
    return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT,
                         "frame_length %lld must be in [1, %lld]", (long long)flen,
                         (long long)len);
  int onesided = dml_cpu_get_int(c, "onesided", 1) != 0;
  int cplx = x->dims[2] == 2;
  if (onesided && cplx)
    return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT,
                         "onesided requires a real signal");
  int64_t frames = (len - flen) / step + 1, bins = onesided ? flen / 2 + 1 : flen;
  if (y->dtype != dt || y->rank != 4 || y->dims[0] != x->dims[0] ||
      y->dims[1] != frames || y->dims[2] != bins || y->dims[3] != 2)
    return dml_cpu_err_shapes(c, "output must be [%lld, %lld, %lld, 2]",
                              (long long)x->dims[0], (long long)frames, (long long)bins);
  int64_t ce = x->dims[2];
  for (int64_t b = 0; b < x->dims[0]; b++)
    for (int64_t f = 0; f < frames; f++)
      dft1(dt, x->data, (b * len + f * step) * ce, ce, flen, cplx, win, flen, bins, 0,
           y->data, ((b * frames + f) * bins) * 2, 2);
  return DML_OK;
}

/* MelWeightMatrix (opset 17): [dft_length/2+1, num_mel_bins] triangular
 * filters between mel(lower_edge_hertz) and mel(upper_edge_hertz), mel(f) =
 * 2595 log10(1 + f/700), band edges at bin floor((dft_length+1) * f /
 * sample_rate), as the spec's reference implementation. */
dml_status_t dml_cpuk_MelWeightMatrix(const dml_cpu_call_t *c) {
  int64_t nmel, dftl, rate;
  if (dml_cpu_read_ints(&c->inputs[0], &nmel, 1) != 1 ||
      dml_cpu_read_ints(&c->inputs[1], &dftl, 1) != 1 ||
      dml_cpu_read_ints(&c->inputs[2], &rate, 1) != 1)
    return dml_cpu_error(
        c, DML_STATUS_INVALID_ARGUMENT,
        "num_mel_bins, dft_length and sample_rate must be integer scalars");
  const dml_tensor_t *lo_t = &c->inputs[3], *hi_t = &c->inputs[4];
  if (!dml_dtype_is_float(lo_t->dtype) || !dml_dtype_is_float(hi_t->dtype) ||
      dml_cpu_numel(lo_t) != 1 || dml_cpu_numel(hi_t) != 1)
    return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT,
                         "lower_edge_hertz and upper_edge_hertz must be float scalars");
  dml_tensor_t *y = &c->outputs[0];
  int64_t nspec = dftl / 2 + 1;
  if (nmel < 1 || dftl < 1 || rate < 1 || y->rank != 2 || y->dims[0] != nspec ||
      y->dims[1] != nmel)
    return dml_cpu_err_shapes(c, "output must be [%lld, %lld]", (long long)nspec,
                              (long long)nmel);
  if (y->dtype == DML_DTYPE_BOOL) return dml_cpu_err_dtype(c, "output", y->dtype);
  double lo = dml_cpu_scalar_f64(lo_t), hi = dml_cpu_scalar_f64(hi_t);
  double lo_mel = 2595 * log10(1 + lo / 700), hi_mel = 2595 * log10(1 + hi / 700);
  /* (nmel + 2) steps, as the spec's reference (not nmel + 1) */
  double step = (hi_mel - lo_mel) / (double)(nmel + 2);
  int64_t n = nspec * nmel;
  for (int64_t i = 0; i < n; i++) dml_store_f64(y->dtype, y->data, (size_t)i, 0.0);
  int64_t prev2 = 0, prev1 = 0;
  for (int64_t i = 0; i < nmel + 2; i++) {
    double hz = 700 * (pow(10, ((double)i * step + lo_mel) / 2595) - 1);
    int64_t bin = (int64_t)floor((double)(dftl + 1) * hz / (double)rate);
    if (i >= 2) {
      int64_t l = prev2, ctr = prev1, h = bin, m = i - 2;
      if (ctr - l == 0) {
        if (ctr >= 0 && ctr < nspec)
          dml_store_f64(y->dtype, y->data, (size_t)(ctr * nmel + m), 1.0);
      } else {
        for (int64_t j = l; j <= ctr; j++)
          if (j >= 0 && j < nspec)
            dml_store_f64(y->dtype, y->data, (size_t)(j * nmel + m),
                          (double)(j - l) / (double)(ctr - l));
      }
      if (h - ctr > 0)
        for (int64_t j = ctr; j < h; j++)
          if (j >= 0 && j < nspec)
            dml_store_f64(y->dtype, y->data, (size_t)(j * nmel + m),
                          (double)(h - j) / (double)(h - ctr));
    }
    prev2 = prev1;
    prev1 = bin;
  }
  return DML_OK;
}
