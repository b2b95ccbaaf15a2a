/*
 * dml_quantize.h — post-training int8 quantization of an ONNX model into a
 * QDQ ONNX model (`dmlc quantize`, docs/quantize.md).
 *
 * The f32 model is compiled and run on the CPU runtime over a calibration
 * set; the range of every activation that a quantized layer reads or
 * writes is collected (min-max, percentile or entropy); the model is
 * rewritten in the form ONNX Runtime's quantize_static writes
 * (QuantFormat.QDQ, activation_type QInt8, weight_type QInt8):
 *
 *   - an activation X becomes X -> QuantizeLinear -> DequantizeLinear ->
 *     X_DequantizeLinear_Output, read by the quantized layers (layers left
 *     f32 keep reading X); int8, asymmetric: rmin = min(min, 0), rmax =
 *     max(max, 0), scale = (rmax - rmin) / 255, zero point = round(-128 -
 *     rmin / scale) (ORT's quant_utils.compute_scale_zp); a graph output
 *     stays f32 (its producer still reads quantized inputs);
 *   - a weight W of Conv (out-channels, axis 0), Gemm (output columns: axis
 *     1, or 0 with transB = 1) and MatMul (a rank-2 initializer B [K, N]:
 *     axis 1) becomes the int8 initializer W_quantized, symmetric in
 *     [-127, 127] with scale max|w| / 127 per channel (or per tensor), and
 *     DequantizeLinear (axis set per channel: opset >= 13);
 *   - the bias of Conv / Gemm (1-D, beta = 1) becomes the int32 initializer
 *     B_quantized with scale s_x * s_w (per channel), zero point 0.
 * A scale below FLT_MIN (all-zero data) becomes 1 with zero point 0, as in
 * ORT. Rounding is to nearest, ties to even, as QuantizeLinear's.
 *
 * Quantized ops: Conv, Gemm, MatMul (weights as above) and Add, Relu,
 * Clip, MaxPool, AveragePool, GlobalAveragePool, Flatten, Reshape,
 * Transpose, Squeeze, Unsqueeze, Concat (QDQ on their activation inputs and
 * outputs, so that DequantizeLinear -> op -> QuantizeLinear patterns can
 * become integer kernels). Other ops stay f32.
 *
 * Calibration methods (ranges of one activation over all rows):
 *   minmax      the smallest and largest finite value;
 *   percentile  P (default 99.99): the values at the (100 - P)th and Pth
 *               percentiles of a 2048-bin histogram over [min, max];
 *   entropy     the threshold T minimizing KL(P || Q) between the 2048-bin
 *               histogram of |x| cut at T (outliers added to the last bin)
 *               and its quantization into 128 levels (255 for a tensor with
 *               no negative value): Migacz, "8-bit Inference with TensorRT"
 *               (GTC 2017), as ONNX Runtime's calibrate.py (EntropyCalibrater)
 *               and MXNet's _get_optimal_threshold implement it (Q spread
 *               over P's non-zero bins, both smoothed with eps 1e-4), with
 *               the first bin's count replaced by the second's, as NVIDIA's
 *               pytorch-quantization (_compute_amax_entropy) does, so the
 *               zeros after a Relu do not dominate; the range is
 *               [max(min, -T), min(max, T)].
 * Non-finite values (NaN, +-inf) are left out of the statistics.
 *
 * Errors (op "quantize"): INVALID_ARGUMENT for calibration data whose rows
 * do not fit the model's input (shape named), of a non-float dtype, or with
 * no rows, for a --keep-f32 name that names no node; FAILED_PRECONDITION
 * for a model that is already quantized (QuantizeLinear, DequantizeLinear,
 * QLinear*, *Integer, DynamicQuantizeLinear: the node named) and for
 * per-channel weights in a model of opset < 13; UNIMPLEMENTED for a model
 * with more than one input or one of opset < 10, for a folder of images as
 * calibration data (no image decoder), for a package given as the model,
 * for a model that already has a tensor named as one the QDQ model adds
 * (X_scale, ..., W_quantized: named); those of the ONNX importer, the
 * compiler and the runtime (the f32 and the QDQ model are compiled and
 * run); RESOURCE_EXHAUSTED.
 */
#ifndef DML_QUANTIZE_H_
#define DML_QUANTIZE_H_

#include <stddef.h>
#include <stdint.h>

#include "dml_rt.h"
#include "dml_status.h"
#include "dml_types.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum dml_quant_method {
  DML_QUANT_MINMAX = 0,
  DML_QUANT_PERCENTILE = 1,
  DML_QUANT_ENTROPY = 2,
} dml_quant_method_t;

typedef struct dml_quant_options {
  dml_quant_method_t method; /* default minmax */
  double percentile;         /* for DML_QUANT_PERCENTILE, in (50, 100]; default 99.99 */
  int per_channel;           /* weights per output channel (1, default) or per tensor */
  /* Nodes left f32, by node name or by the name of their first output;
   * lent for the call. */
  const char *const *keep_f32;
  size_t n_keep_f32;
  /* When > 0: the layers are walked in graph order; the first whose output
   * SQNR (dB, in the quantized model, on the calibration set; upstream
   * error included) is below this is left f32 and the SQNRs are measured
   * again, until no quantized layer is below (at most one round per layer;
   * the report is of the final model). */
  double keep_f32_below_sqnr;
  int64_t max_rows; /* calibration rows used (the first ones); 0: all */
  int64_t batch;    /* rows per run of the model; 0: 64 */
  /* 1: write the fake-quantized training form of quantization-aware
   * training (`dmlc train --qat`) instead of QDQ: an activation X becomes
   * X -> FakeQuantize(X, X_range) -> X_FakeQuantize_Output with X_range
   * (f32 [2]) the calibrated [min, max] (a state global when imported:
   * train_step tracks it as an exponential moving average), a weight W
   * becomes FakeQuantize(W) (axis = its channel axis, quant_min -127,
   * quant_max 127: symmetric per-channel scales computed from W at every
   * run) feeding the layer, W itself stays an f32 initializer (trainable)
   * and biases stay f32. FakeQuantize is dmlc's op of domain "com.dmlc"
   * (version 1; runtime/base/dml_fake_quant.h has its formulas); the model
   * gets that opset import. Same placement as the QDQ form. Per-channel
   * weights only (per_channel 0 is INVALID_ARGUMENT). */
  int fake_quant;
  /* Activation ranges given instead of calibrated (QAT's trained ranges,
   * for the QDQ export): range_names[i] (an activation tensor's name) gets
   * [ranges[2i], ranges[2i+1]]; names that are not a quantized activation
   * are ignored. Lent for the call; n_ranges 0: all calibrated. */
  const char *const *range_names;
  const float *ranges;
  size_t n_ranges;
} dml_quant_options_t;

void dml_quant_options_init(dml_quant_options_t *o);

/* One quantizable layer (a node of the quantized ops above). */
typedef struct dml_quant_layer {
  char *name;          /* node name, or its first output's when unnamed */
  char *op;            /* ONNX op type */
  char *output;        /* first output tensor */
  int quantized;       /* 1: in QDQ form; 0: left f32 (why_f32 says why) */
  const char *why_f32; /* static string, NULL when quantized */
  int weight_channels; /* per-channel weight scales (Conv/Gemm/MatMul), 1 per
                          tensor, 0 no weight */
  /* 10 log10(sum x^2 / sum (x - x_q)^2) of the layer's output in the QDQ
   * model (x_q; upstream quantization included) against the f32 model (x)
   * over the calibration rows; +inf when they are equal, NaN when not
   * measured (the output is not f32). */
  double sqnr_db;
} dml_quant_layer_t;

typedef struct dml_quant_report {
  dml_quant_layer_t *layers; /* in graph order */
  size_t n_layers;
  size_t n_activations;      /* activation tensors with a QDQ pair */
  int64_t calib_rows;        /* rows run */
  char *output_name;         /* the first graph output */
  double output_sqnr_db;     /* its SQNR, as a layer's */
  uint64_t f32_weight_bytes; /* bytes of the f32 weights that were quantized */
  uint64_t q_weight_bytes;   /* bytes of their int8 / int32 replacements */
  double sqnr_rule_db;       /* the options' keep_f32_below_sqnr */
  const char *method;        /* "minmax", "percentile", "entropy" */
  double percentile;
} dml_quant_report_t;

void dml_quant_report_free(dml_quant_report_t *r);

/* Reads calibration data from `spec`: a .npy file (f32, or f64 converted),
 * an IDX file (.gz or not; u8 images are multiplied by `image_scale`, 0
 * meaning 1/255), a folder of IDX files (its train-*images* file, as
 * `dmlc train` reads it), two files X.npy,Y.npy or IMAGES,LABELS (as
 * `dmlc train --data`; the labels unused), or a .csv file (numeric rows; every column is
 * data: a label column is dropped later when a row holds one value more
 * than the model's input). *out is f32 [N, ...] owning its data (free()).
 * Errors (op "quantize"): INVALID_ARGUMENT for a dtype other than
 * f32/f64/u8 or no rows; UNIMPLEMENTED for a folder without IDX files (a
 * folder of images); those of the readers (ops "npy", "data"). */
dml_status_t dml_quant_load_calib(const char *spec, double image_scale,
                                  dml_tensor_t *out);

/* Calibration rows of quantization-aware training: `dmlc train --qat` and
 * the Python package's compile(qat=True) calibrate the fake quantization's
 * initial activation ranges, and the QDQ export's SQNR report, on the
 * first this many rows (dml_quant_options_t.max_rows). */
#define DML_QAT_CALIB_ROWS 1000

/* Quantizes the ONNX model at `onnx_path` with calibration rows `calib`
 * (f32 [N, ...]: each row reshaped to the model's input, of the same
 * element count, or one more, then the last is dropped). On success
 * *out_model (malloc'd, the caller free()s it) holds the QDQ ONNX model of
 * *out_size bytes and *report (may be NULL; dml_quant_report_free) the
 * per-layer report. Errors: see the top of this file. */
dml_status_t dml_quantize_onnx(const char *onnx_path, const dml_tensor_t *calib,
                               const dml_quant_options_t *opts, void **out_model,
                               size_t *out_size, dml_quant_report_t *report);

/* The int8 QDQ model after quantization-aware training (`dmlc train --qat
 * --export-onnx`, docs/quantize.md): the trained f32 parameters of session
 * `s` of model `m` (a package compiled from the fake-quantized form that
 * fake_quant writes from `onnx_path`, then trained) are written into the
 * f32 model at `onnx_path` (dml_onnx_export_trained, into a temporary file
 * "<tmp_prefix>.f32-trained.tmp.onnx", removed after), whose QDQ model is
 * then made as dml_quantize_onnx does with `opts` (fake_quant and the
 * given ranges of `opts` ignored) and the activation ranges of the
 * trained state globals "<X>_range" (f32 [2]) in place of calibrated ones:
 * the QDQ model quantizes as the trained model did. `calib` as for
 * dml_quantize_onnx (the report's SQNRs are measured on it against the
 * trained f32 weights). On success *out_model (malloc'd) holds the model,
 * *report (may be NULL) the report, *out_weights (may be NULL) the number
 * of initializers replaced by trained values and *out_ranges (may be
 * NULL) the number of trained ranges used. Errors: those of
 * dml_onnx_export_trained and dml_quantize_onnx; RESOURCE_EXHAUSTED. */
dml_status_t dml_quantize_qat_export(const char *onnx_path, const char *tmp_prefix,
                                     const dml_rt_model_t *m, dml_rt_session_t *s,
                                     const dml_tensor_t *calib,
                                     const dml_quant_options_t *opts, void **out_model,
                                     size_t *out_size, dml_quant_report_t *report,
                                     uint32_t *out_weights, uint32_t *out_ranges);

/* Writes `r` as JSON to `path` (atomically): {"method", "percentile",
 * "calibration_rows", "activations", "weight_bytes_f32", "weight_bytes_q",
 * "keep_f32_below_sqnr", "output": {"name", "sqnr_db"}, "layers": [{"name",
 * "op", "output", "quantized", "why_f32", "weight_channels", "sqnr_db"}]};
 * an SQNR of +inf is written as the string "inf", NaN as null. */
dml_status_t dml_quant_report_write_json(const dml_quant_report_t *r, const char *path);

/* ---- Weight-only quantization (`dmlc quantize --weight-only`) ----
 * Round to nearest without calibration data, or GPTQ with it (the
 * options' `calib`; dml_gptq_quantize: other values on the same grid).
 * Every MatMul whose B (input 1) is an f32 rank-2 initializer [K, N],
 * and every Gemm whose B is one ([K, N], or [N, K] with transB = 1), gets
 * that weight quantized symmetrically per output column in groups of
 * `group_size` consecutive elements along K:
 *   s[g, n] = max |w[k, n]| over the group's finite values / qmax,
 *   q[k, n] = clamp(round_half_even(w[k, n] / s[g, n]), -qmax, qmax)
 * with qmax 127 (int8) or 7 (int4: -8 is never written); a group whose
 * s is below FLT_MIN (all zero, or only denormals) gets s = 1 (its values
 * become 0). The options asym (uint4 with a zero point per scale, the
 * zero point W_zero_point a UINT4 initializer given to DequantizeLinear),
 * clip_search (dml_wq_grid) and awq (dml_awq_scales: a Mul(x, 1 / s) node
 * W_awq_Mul with W_awq_scale [K] before the MatMul / Gemm) change this. K need not be a
 * multiple of group_size: the last group is shorter (ONNX's blocked quantization: ceil(K
 * / group_size) scales). The model written uses ONNX's own form (opset 21): the weight
 * becomes the int8 / int4 initializer W_quantized (int4 packed two per byte, low nibble
 * first, as ONNX stores INT4), the f32 scale W_scale of shape [ceil(K/g), N] ([N,
 * ceil(K/g)] with transB = 1), no zero point, and DequantizeLinear(axis = the K axis,
 * block_size = group_size) feeding the MatMul / Gemm (ONNX Runtime runs it). A model of
 * opset < 21 is moved to opset 21 (IR version >= 10); the ops whose meaning changed in
 * between are rewritten (Reduce* of opset < 18 with an `axes` attribute: axes becomes an
 * int64 input) or refused (GroupNormalization < 21, DFT < 20, GridSample < 20:
 * UNIMPLEMENTED naming the node). Weights left f32 (the report says why): nodes named in
 * `exclude` (node name or first output name), weights with a NaN or infinity, weights
 * held as external data, B of another rank. Gather embeddings are not quantized. Errors
 * (op "quantize"): INVALID_ARGUMENT for group_size outside [2, 2^20], bits other than 4
 * or 8, an exclude name that names no node, a model with no MatMul / Gemm weight to
 * quantize; FAILED_PRECONDITION for a model already quantized (the node named);
 * UNIMPLEMENTED for a package as the model, a model with a tensor already named as one
 * this adds, the ops above; DATA_LOSS for a file that is not ONNX; RESOURCE_EXHAUSTED. */
typedef struct dml_wq_options {
  int bits;                   /* 8 or 4 */
  int64_t group_size;         /* elements along K per scale; default 32 */
  const char *const *exclude; /* nodes left f32 (node or first output name); lent */
  size_t n_exclude;
  /* GPTQ (dml_gptq_quantize below) when `calib` is set: a comma-separated
   * list of .npy files, one per model input in the model's order, each
   * [N, ...] of that input's dtype (f32, i64, i32: token ids and attention
   * masks of a text model), the same N in all; dims after the first must
   * equal the input's static dims (symbolic ones: any size). The f32 model
   * is compiled for the CPU with every quantized layer's input as an extra
   * output and run over the first `calib_rows` rows (0: all), `batch` rows
   * at a time (0: 16); H = 2 X^T X of each layer's input X (rows: all
   * positions of the leading dims), then GPTQ on each weight. */
  const char *calib;
  int64_t calib_rows;
  int64_t batch;
  /* When set, the name of a model input [N, S] (an attention mask): the
   * rows of a layer input [N, S, K] whose mask value is 0 (padding) are
   * left out of H. Lent. */
  const char *calib_mask;
  double damp; /* GPTQ's dampening: this fraction of mean(diag H) added to
                  the diagonal; default 0.01 */
  /* With calib: the `int8_layers` layers of the worst int4 output SQNR
   * (the `out_sqnr_db` below) are quantized to int8 (GPTQ too) instead;
   * 0: none. Only with bits 4. */
  int64_t int8_layers;
  int act_order; /* GPTQ's act-order with static groups (dml_gptq_quantize) */
  /* int4 only: asymmetric groups with zero points (the grid of
   * dml_wq_grid below): values UINT4 in [0, 15] with one UINT4 zero point
   * per scale, written as DequantizeLinear's third input. */
  int asym;
  /* Each group's scale (and zero point) by the least squared error over
   * clipping ratios (dml_wq_grid), for round to nearest and GPTQ alike. */
  int clip_search;
  /* With calib: AWQ's activation-aware scaling (dml_awq_scales) before the
   * rounding; each quantized layer's input gets Mul(x, 1 / s) in front of
   * the MatMul / Gemm (W_awq_scale, [K] f32). */
  int awq;
  /* With calib: no GPTQ, round to nearest (the calibration feeds AWQ and
   * the report's output SQNR only). */
  int no_gptq;
} dml_wq_options_t;

void dml_wq_options_init(dml_wq_options_t *o);

typedef struct dml_wq_layer {
  char *name;          /* node name, or its first output's */
  char *op;            /* "MatMul" or "Gemm" */
  char *weight;        /* the weight initializer's name */
  int64_t k, n;        /* the weight's reduction and output sizes */
  int quantized;       /* 0: left f32 (why_f32) */
  const char *why_f32; /* static string */
  /* 10 log10(sum w^2 / sum (w - dq(q(w)))^2) over the weight; +inf when
   * exact, NaN when not quantized */
  double sqnr_db;
  /* With calibration data: the layer's output SQNR on the calibration
   * inputs X of this layer (f32 model's), 10 log10(tr(W^T H W) / tr(D^T H
   * D)) with D = W - dq(q(W)) and H = 2 X^T X (no upstream error), for
   * round-to-nearest (rtn) and for the quantization written (out); NaN
   * without calibration data. */
  double rtn_out_sqnr_db, out_sqnr_db;
  int bits;         /* the bits written (4 or 8; int8_layers) */
  double awq_alpha; /* AWQ's alpha chosen (dml_awq_scales); NaN without AWQ */
} dml_wq_layer_t;

typedef struct dml_wq_report {
  dml_wq_layer_t *layers; /* graph order */
  size_t n_layers;
  uint64_t f32_weight_bytes; /* of the weights quantized */
  uint64_t q_weight_bytes;   /* their packed values + f32 scales */
  int64_t opset_in, opset_out;
  int64_t calib_rows;   /* model input rows run (0: no calibration) */
  int64_t hessian_rows; /* layer-input rows summed into each H (after the mask) */
} dml_wq_report_t;

void dml_wq_report_free(dml_wq_report_t *r);

/* Weight-only quantization of the ONNX model at `onnx_path` (above). On
 * success *out_model (malloc'd) holds the ONNX model of *out_size bytes and
 * *report (may be NULL; dml_wq_report_free) the per-weight report. */
dml_status_t dml_quantize_weights_onnx(const char *onnx_path,
                                       const dml_wq_options_t *opts, void **out_model,
                                       size_t *out_size, dml_wq_report_t *report);

/* GPTQ: Frantar, Ashkboos, Hoefler, Alistarh, "GPTQ: Accurate Post-Training
 * Quantization for Generative Pre-trained Transformers" (arXiv 2210.17323,
 * 2022), Algorithm 1, one column at a time, in double precision.
 * w: f32 [K, N] (x [., K] @ w); h: the K x K matrix 2 X^T X of the layer's
 * calibration inputs (row major, read only). Steps: a k whose H[k,k] is 0
 * (an input that is always 0) gets H[k,k] = 1 and w[k, :] = 0; H += damp *
 * mean(diag H) * I; U = the upper Cholesky factor of H^-1 (H^-1 = U^T U);
 * then for k = 0..K-1 in order: at the first k of each group of
 * `group_size` along K, the group's scales from the current (error
 * compensated) rows: s[n] = max |w[k', n]| / qmax (qmax 7 or 127; below
 * FLT_MIN: 1), q[k, n] = clamp(round_half_even(w[k, n] / s[n]), +-qmax),
 * e[n] = (w[k, n] - q[k, n] s[n]) / U[k, k], and w[j, n] -= U[k, j] e[n] for
 * j > k. Outputs q [K, N] (int values) and scales [ceil(K/g), N] (f32), the
 * same grid and format as the round-to-nearest quantizer above.
 * act_order (GPTQ's "act-order" / desc_act with static groups, as in the
 * authors' repository): every group's scales are taken first from w
 * itself (the round-to-nearest scales) and the rows are processed in
 * order of decreasing H[k,k] (ties: lower k first), H and w permuted
 * alike; the output stays in the original order.
 * Errors (op "quantize"): INVALID_ARGUMENT for sizes < 1, bits other than
 * 4 / 8, group_size < 1, damp < 0, NaN / inf in w or h;
 * FAILED_PRECONDITION when the damped H is not positive definite;
 * RESOURCE_EXHAUSTED. */
dml_status_t dml_gptq_quantize(const float *w, int64_t K, int64_t N, const double *h,
                               int64_t group_size, int bits, double damp, int act_order,
                               int8_t *q, float *scales);

/* The grid of one group column: its n values v (any order; NaN and +-inf
 * are skipped), `bits` 4 or 8. Writes the scale *s and zero point *z.
 *   symmetric (asym 0): s = max |v| / qmax (qmax 7 or 127), z = 0;
 *     q = clamp(round_half_even(v / s), -qmax, qmax).
 *   asymmetric (asym 1): lo = min(min v, 0), hi = max(max v, 0),
 *     s = (hi - lo) / umax (umax 15 or 255), z = clamp(round(-lo / s), 0,
 *     umax); q = clamp(round_half_even(v / s) + z, 0, umax) (GPTQ's and
 *     AWQ's asymmetric quantizer; ONNX's uint4 / uint8 with zero point).
 *   dq = (q - z) s. A scale below FLT_MIN is 1 (z 0).
 * clip: the extrema are first multiplied by r = 1 - i/40, i = 0..20 (1 to
 * 0.5), and the r of the least sum (v - dq)^2 is kept (the first on
 * ties): the MSE clipping search of GPTQ's and AWQ's reference code. The
 * division s = m / qmax is done in double and rounded to f32. */
void dml_wq_grid(const double *v, int64_t n, int bits, int asym, int clip, float *s,
                 int *z);

/* dml_wq_grid's quantized value of x (an int in [-qmax, qmax], or [0, umax]
 * with asym). */
int dml_wq_grid_q(double x, float s, int z, int bits, int asym);

/* GPTQ with dml_wq_grid's grids: as dml_gptq_quantize, with every group
 * scale (and zero point) from dml_wq_grid(asym, clip) on the current
 * (compensated) rows, or on w itself with act_order. q holds the ints of
 * dml_wq_grid_q ([0, 15] with asym: int4 only); zp [ceil(K/g), N] the zero
 * points (NULL when asym is 0). dml_gptq_quantize is this with asym = clip
 * = 0. Errors: those of dml_gptq_quantize; asym with bits 8 is
 * INVALID_ARGUMENT. */
dml_status_t dml_gptq_quantize_grid(const float *w, int64_t K, int64_t N, const double *h,
                                    int64_t group_size, int bits, int asym, int clip,
                                    double damp, int act_order, int8_t *q, float *scales,
                                    uint8_t *zp);

/* AWQ's per-input-channel scales: Lin, Tang, Tang, Yang, Dang, Gan, Han,
 * "AWQ: Activation-aware Weight Quantization for LLM Compression and
 * Acceleration" (MLSys 2024), section 3.2, as its reference code
 * (auto_scale.py) searches them. w f32 [K, N]; h the K x K matrix 2 X^T X
 * of the layer's calibration inputs; xabs [K] the mean |x_k| over those
 * rows. For alpha = i / 10, i = 0..10: s_k = xabs_k^alpha / sqrt(max_k
 * xabs^alpha * min_k xabs^alpha) (an xabs of 0 or a result that is not
 * finite and positive: s_k = 1), W' = diag(s) W rounded to nearest on
 * dml_wq_grid's grid (group_size, bits, asym, clip) and D = W -
 * diag(1/s) dq(W'); the alpha of the least tr(D^T H D) (the layer's
 * output error on its calibration inputs; the first on ties; alpha 0 is
 * s = 1, plain rounding) is kept. Writes s [K] and *alpha (may be NULL).
 * Errors: INVALID_ARGUMENT for sizes < 1, bits other than 4 / 8, asym with
 * bits 8; RESOURCE_EXHAUSTED. */
dml_status_t dml_awq_scales(const float *w, int64_t K, int64_t N, const double *h,
                            const double *xabs, int64_t group_size, int bits, int asym,
                            int clip, double *s, double *alpha);

/* The output SQNR of a quantized weight on H = 2 X^T X: 10 log10(tr(W^T H
 * W) / tr(D^T H D)), D = W - dq (w, dq [K, N] f32; h K x K); +inf when D
 * is 0. */
double dml_gptq_out_sqnr(const float *w, const float *dq, int64_t K, int64_t N,
                         const double *h);

#ifdef __cplusplus
}
#endif
#endif /* DML_QUANTIZE_H_ */
