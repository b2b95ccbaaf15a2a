/* dml_quantize.c — post-training int8 quantization into QDQ ONNX
 * (dml_quantize.h, docs/quantize.md). */
#define _GNU_SOURCE /* open_memstream */
#include "dml_quantize.h"

#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "dml_driver.h"
#include "dml_dtype.h"
#include "dml_fake_quant.h"
#include "dml_file.h"
#include "dml_npy.h"
#include "dml_onnx_export.h"
#include "dml_rt.h"
#include "dml_train_data.h"
#include "onnx.pb-c.h"

#define OP "quantize"
#define NBINS 2048 /* calibration histogram bins (TensorRT's 2048) */

static dml_status_t oom(void) {
  return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, OP, "out of memory");
}

static char *xstrdup(const char *s) {
  return s ? strdup(s) : NULL;
}

static char *xprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *xprintf(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *s = NULL;
  if (vasprintf(&s, fmt, ap) < 0) s = NULL;
  va_end(ap);
  return s;
}

void dml_quant_options_init(dml_quant_options_t *o) {
  memset(o, 0, sizeof *o);
  o->method = DML_QUANT_MINMAX;
  o->percentile = 99.99;
  o->per_channel = 1;
}

void dml_quant_report_free(dml_quant_report_t *r) {
  if (!r) return;
  for (size_t i = 0; i < r->n_layers; i++) {
    free(r->layers[i].name);
    free(r->layers[i].op);
    free(r->layers[i].output);
  }
  free(r->layers);
  free(r->output_name);
  memset(r, 0, sizeof *r);
}

/* ------------------------------------------------------------------ */
/* Calibration data                                                    */
/* ------------------------------------------------------------------ */

static int ends_with(const char *s, const char *suf) {
  size_t a = strlen(s), b = strlen(suf);
  return a >= b && !strcmp(s + a - b, suf);
}

/* Converts `t` (owning its data) to f32 in place; u8 scaled by `scale`. */
static dml_status_t to_f32(dml_tensor_t *t, double scale, const char *spec) {
  int64_t n = dml_dims_numel(t->dims, t->rank);
  if (t->rank < 1 || n < 0)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                           "calibration data '%s' is a scalar; need rows [N, ...]", spec);
  if (t->dtype == DML_DTYPE_F32) return DML_OK;
  if (t->dtype != DML_DTYPE_F64 && t->dtype != DML_DTYPE_U8)
    return dml_status_detail(
        dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                        "calibration data '%s' is %s; need f32 (f64 and IDX u8 images "
                        "are converted)",
                        spec, dml_dtype_name(t->dtype)),
        "calibration rows are model inputs: save them as float32 (numpy: "
        "x.astype(np.float32))");
  float *f = (float *)malloc((size_t)(n ? n : 1) * sizeof(float));
  if (!f) return oom();
  for (int64_t i = 0; i < n; i++)
    f[i] = t->dtype == DML_DTYPE_F64 ? (float)((const double *)t->data)[i]
                                     : (float)(((const uint8_t *)t->data)[i] * scale);
  free(t->data);
  t->data = f;
  t->dtype = DML_DTYPE_F32;
  return DML_OK;
}

dml_status_t dml_quant_load_calib(const char *spec, double image_scale,
                                  dml_tensor_t *out) {
  if (!spec || !out)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP, "NULL argument");
  memset(out, 0, sizeof *out);
  if (image_scale == 0) image_scale = 1.0 / 255.0;
  struct stat sb;
  int pair = strchr(spec, ',') != NULL;
  if (!pair && stat(spec, &sb) != 0)
    return dml_status_make(DML_STATUS_NOT_FOUND, OP, "calibration data '%s' not found",
                           spec);
  dml_status_t st = DML_OK;
  if (pair) {
    /* X.npy,Y.npy or IMAGES,LABELS (dmlc train's --data): x, labels unused */
    dml_data_options_t o;
    dml_data_options_init(&o);
    o.image_scale = image_scale;
    dml_data_t d;
    memset(&d, 0, sizeof d);
    DML_RETURN_IF_ERROR(dml_data_load(spec, "train", &o, &d));
    *out = d.x;
    memset(&d.x, 0, sizeof d.x);
    dml_data_free(&d);
  } else if (S_ISDIR(sb.st_mode)) {
    dml_data_options_t o;
    dml_data_options_init(&o);
    o.image_scale = image_scale;
    dml_data_t d;
    memset(&d, 0, sizeof d);
    st = dml_data_load(spec, "train", &o, &d);
    if (st && dml_status_code(st) == DML_STATUS_NOT_FOUND) {
      dml_status_free(st);
      return dml_status_detail(
          dml_status_make(DML_STATUS_UNIMPLEMENTED, OP,
                          "calibration folder '%s' holds no IDX files "
                          "(train-*images*); folders of images are not supported",
                          spec),
          "dmlc has no image decoder: convert the images to one float32 .npy array "
          "[N, ...] shaped as the model's input (e.g. with numpy and Pillow)");
    }
    if (st) return st;
    *out = d.x;
    memset(&d.x, 0, sizeof d.x);
    dml_data_free(&d);
  } else if (ends_with(spec, ".npy")) {
    void *buf = NULL;
    st = dml_npy_read_file(spec, out, &buf);
    if (st) return st;
    /* own the data: copy out of the buffer */
    size_t nb = dml_tensor_bytes(out);
    void *data = malloc(nb ? nb : 1);
    if (!data) {
      free(buf);
      return oom();
    }
    if (nb) memcpy(data, out->data, nb);
    free(buf);
    out->data = data;
  } else if (ends_with(spec, ".csv")) {
    uint8_t *text = NULL;
    size_t n = 0;
    DML_RETURN_IF_ERROR(dml_file_read_all("data", spec, &text, &n));
    dml_data_t d;
    memset(&d, 0, sizeof d);
    st = dml_data_parse_csv((const char *)text, n, spec, -1, &d);
    free(text);
    if (st) return st;
    /* every column is data: put the "label" column back as the last */
    int64_t rows = d.x.dims[0], cx = d.x.dims[1], cols = cx + 1;
    float *f = (float *)malloc((size_t)(rows * cols) * sizeof(float));
    if (!f) {
      dml_data_free(&d);
      return oom();
    }
    for (int64_t r = 0; r < rows; r++) {
      memcpy(f + r * cols, (const float *)d.x.data + r * cx, (size_t)cx * sizeof(float));
      f[r * cols + cx] = d.y.dtype == DML_DTYPE_I64
                             ? (float)((const int64_t *)d.y.data)[r]
                             : ((const float *)d.y.data)[r];
    }
    dml_data_free(&d);
    out->dtype = DML_DTYPE_F32;
    out->rank = 2;
    out->dims[0] = rows;
    out->dims[1] = cols;
    out->data = f;
  } else {
    st = dml_data_read_idx(spec, out);
    if (st) return st;
  }
  st = to_f32(out, image_scale, spec);
  if (!st && out->dims[0] == 0)
    st = dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                         "calibration data '%s' is empty (0 rows)", spec);
  if (st) {
    free(out->data);
    memset(out, 0, sizeof *out);
  }
  return st;
}

/* ------------------------------------------------------------------ */
/* Model analysis                                                      */
/* ------------------------------------------------------------------ */

typedef enum { K_CONV = 1, K_GEMM, K_MATMUL, K_PASS } kind_t;

/* An activation tensor: calibrated, maybe given a QDQ pair. */
typedef struct {
  char *name;
  int graph_input, graph_output;
  int f32;    /* an f32 output of the calibration model */
  int finite; /* some finite value seen */
  double mn, mx;
  uint64_t *hist;
  float scale;
  int8_t zp;
  float rlo, rhi; /* the range the scale and zero point come from */
  int used;       /* QDQ in the model being built */
} qtensor_t;

#define MAX_ACT 8
typedef struct {
  size_t node;
  kind_t kind;
  int quantize;
  const char *why;
  int slot[MAX_ACT]; /* activation input slots */
  int tin[MAX_ACT];  /* their tensors */
  int n_act;
  int tout;     /* tensor of output[0] */
  int channels; /* weight scales (compute ops) */
  int axis;     /* weight axis, -1 per tensor */
  int bias_ok;  /* bias quantizable */
  double sig, noise;
} qlayer_t;

typedef struct {
  uint8_t *bytes; /* the f32 model */
  size_t n;
  const char *base_dir;
  Onnx__ModelProto *model; /* unpacked f32 model (analysis) */
  qtensor_t *t;
  size_t nt;
  qlayer_t *l;
  size_t nl;
  const dml_quant_options_t *o;
  int64_t opset;
  int64_t batch;
  uint64_t f32_w, q_w;
} qctx_t;

static int find_tensor(const qctx_t *c, const char *name) {
  for (size_t i = 0; i < c->nt; i++)
    if (!strcmp(c->t[i].name, name)) return (int)i;
  return -1;
}

static dml_status_t add_tensor(qctx_t *c, const char *name, int *out) {
  int k = find_tensor(c, name);
  if (k < 0) {
    qtensor_t *nt = (qtensor_t *)realloc(c->t, (c->nt + 1) * sizeof *nt);
    if (!nt) return oom();
    c->t = nt;
    memset(&c->t[c->nt], 0, sizeof c->t[0]);
    if (!(c->t[c->nt].name = strdup(name))) return oom();
    k = (int)c->nt++;
  }
  *out = k;
  return DML_OK;
}

static const Onnx__TensorProto *find_init(const Onnx__GraphProto *g, const char *name) {
  if (!name) return NULL;
  for (size_t i = 0; i < g->n_initializer; i++)
    if (g->initializer[i]->name && !strcmp(g->initializer[i]->name, name))
      return g->initializer[i];
  return NULL;
}

static int is_graph_output(const Onnx__GraphProto *g, const char *name) {
  for (size_t i = 0; i < g->n_output; i++)
    if (g->output[i]->name && !strcmp(g->output[i]->name, name)) return 1;
  return 0;
}

static int is_graph_input(const Onnx__GraphProto *g, const char *name) {
  for (size_t i = 0; i < g->n_input; i++)
    if (g->input[i]->name && !strcmp(g->input[i]->name, name)) return 1;
  return 0;
}

static const Onnx__AttributeProto *attr(const Onnx__NodeProto *n, const char *name) {
  for (size_t i = 0; i < n->n_attribute; i++)
    if (n->attribute[i]->name && !strcmp(n->attribute[i]->name, name))
      return n->attribute[i];
  return NULL;
}

static int64_t attr_i(const Onnx__NodeProto *n, const char *name, int64_t dflt) {
  const Onnx__AttributeProto *a = attr(n, name);
  return a && a->has_i ? a->i : dflt;
}

static double attr_f(const Onnx__NodeProto *n, const char *name, double dflt) {
  const Onnx__AttributeProto *a = attr(n, name);
  return a && a->has_f ? a->f : dflt;
}

/* The f32 values of initializer `t` (malloc'd) and their count, or NULL
 * when it is not f32 data held in the model (external data). */
static float *init_floats(const Onnx__TensorProto *t, size_t *n_out) {
  if (!t || t->data_type != ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT) return NULL;
  size_t n = 1;
  for (size_t d = 0; d < t->n_dims; d++) {
    if (t->dims[d] < 0) return NULL;
    n *= (size_t)t->dims[d];
  }
  float *f = (float *)malloc((n ? n : 1) * sizeof(float));
  if (!f) return NULL;
  if (t->has_raw_data && t->raw_data.len == n * sizeof(float)) {
    if (n) memcpy(f, t->raw_data.data, n * sizeof(float)); /* little-endian host */
  } else if (!t->has_raw_data && t->n_float_data == n) {
    if (n) memcpy(f, t->float_data, n * sizeof(float));
  } else {
    free(f);
    return NULL;
  }
  *n_out = n;
  return f;
}

static int is_default_domain(const char *d) {
  return !d || !d[0] || !strcmp(d, "ai.onnx");
}

static kind_t kind_of(const Onnx__NodeProto *n) {
  if (!is_default_domain(n->domain) || !n->op_type) return 0;
  const char *op = n->op_type;
  if (!strcmp(op, "Conv")) return K_CONV;
  if (!strcmp(op, "Gemm")) return K_GEMM;
  if (!strcmp(op, "MatMul")) return K_MATMUL;
  static const char *const pass[] = {
      "Add",     "Relu",    "Clip",      "MaxPool", "AveragePool", "GlobalAveragePool",
      "Flatten", "Reshape", "Transpose", "Squeeze", "Unsqueeze",   "Concat"};
  for (size_t i = 0; i < sizeof pass / sizeof pass[0]; i++)
    if (!strcmp(op, pass[i])) return K_PASS;
  return 0;
}

/* Ops of a model already quantized. */
static int is_quant_op(const char *op) {
  static const char *const q[] = {
      "QuantizeLinear",        "DequantizeLinear", "DynamicQuantizeLinear",
      "MatMulInteger",         "ConvInteger",      "QGemm",
      "DynamicQuantizeMatMul", "QAttention",       "FakeQuantize"};
  if (!op) return 0;
  if (!strncmp(op, "QLinear", 7)) return 1;
  for (size_t i = 0; i < sizeof q / sizeof q[0]; i++)
    if (!strcmp(op, q[i])) return 1;
  return 0;
}

static const char *node_label(const Onnx__NodeProto *n) {
  if (n->name && n->name[0]) return n->name;
  return n->n_output && n->output[0] ? n->output[0] : "(unnamed)";
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The names the QDQ model adds (ORT's: X_scale, X_zero_point,
 * X_QuantizeLinear_Output, X_DequantizeLinear_Output, W_quantized, ...)
 * must not be names of the model: an error naming the first that is. */
static dml_status_t check_names(const qctx_t *c) {
  const Onnx__GraphProto *g = c->model->graph;
  size_t n = g->n_initializer + g->n_input;
  for (size_t i = 0; i < g->n_node; i++) n += g->node[i]->n_output;
  const char **names = (const char **)malloc((n ? n : 1) * sizeof(char *));
  if (!names) return oom();
  size_t k = 0;
  for (size_t i = 0; i < g->n_initializer; i++)
    if (g->initializer[i]->name) names[k++] = g->initializer[i]->name;
  for (size_t i = 0; i < g->n_input; i++)
    if (g->input[i]->name) names[k++] = g->input[i]->name;
  for (size_t i = 0; i < g->n_node; i++)
    for (size_t j = 0; j < g->node[i]->n_output; j++)
      if (g->node[i]->output[j]) names[k++] = g->node[i]->output[j];
  qsort((void *)names, k, sizeof *names, cmp_str);
  static const char *const act_suffix[] = {
      "_scale", "_zero_point", "_QuantizeLinear_Output", "_DequantizeLinear_Output"};
  static const char *const w_suffix[] = {"_quantized", "_scale", "_zero_point",
                                         "_DequantizeLinear_Output"};
  dml_status_t st = DML_OK;
  size_t nw = 0;
  for (size_t i = 0; i < c->nl; i++) nw += c->l[i].kind != K_PASS;
  for (size_t i = 0; i < c->nt + nw && !st; i++) {
    const char *base = NULL;
    const char *const *suf = act_suffix;
    if (i < c->nt) {
      base = c->t[i].name;
    } else {
      size_t w = i - c->nt, j = 0;
      for (; j < c->nl; j++)
        if (c->l[j].kind != K_PASS && w-- == 0) break;
      const Onnx__NodeProto *nd = g->node[c->l[j].node];
      if (nd->n_input < 2 || !nd->input[1]) continue;
      base = nd->input[1];
      suf = w_suffix;
    }
    for (int s = 0; s < 4 && !st; s++) {
      char *want = xprintf("%s%s", base, suf[s]);
      if (!want) {
        st = oom();
        break;
      }
      if (bsearch(&want, (const void *)names, k, sizeof *names, cmp_str))
        st = dml_status_detail(
            dml_status_make(DML_STATUS_UNIMPLEMENTED, OP,
                            "the model already has a tensor named '%s', a name the QDQ "
                            "model gives to the quantization of '%s'",
                            want, base),
            "rename that tensor in the model");
      free(want);
    }
  }
  free((void *)names);
  return st;
}

/* Classifies the nodes and names the activations (before calibration). */
static dml_status_t analyze(qctx_t *c) {
  const Onnx__GraphProto *g = c->model->graph;
  const dml_quant_options_t *o = c->o;
  for (size_t i = 0; i < g->n_node; i++) {
    const Onnx__NodeProto *n = g->node[i];
    if (is_quant_op(n->op_type))
      return dml_status_detail(
          dml_status_make(DML_STATUS_FAILED_PRECONDITION, OP,
                          "the model is already quantized: node '%s' is %s",
                          node_label(n), n->op_type),
          "quantize the f32 model it was made from");
  }
  for (size_t k = 0; k < o->n_keep_f32; k++) {
    int found = 0;
    for (size_t i = 0; i < g->n_node && !found; i++) {
      const Onnx__NodeProto *n = g->node[i];
      found = (n->name && !strcmp(n->name, o->keep_f32[k])) ||
              (n->n_output && n->output[0] && !strcmp(n->output[0], o->keep_f32[k]));
    }
    if (!found)
      return dml_status_detail(
          dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                          "--keep-f32 '%s' names no node (node name or first output)",
                          o->keep_f32[k]),
          "`dmlc quantize` prints the layer names in its table");
  }
  for (size_t i = 0; i < g->n_node; i++) {
    const Onnx__NodeProto *n = g->node[i];
    kind_t k = kind_of(n);
    if (!k || !n->n_output || !n->output[0] || !n->output[0][0]) continue;
    qlayer_t L;
    memset(&L, 0, sizeof L);
    L.node = i;
    L.kind = k;
    L.quantize = 1;
    L.axis = -1;
    if (k != K_PASS) {
      if (n->n_input < 2 || find_init(g, n->input[0])) {
        L.quantize = 0, L.why = "no activation input";
      } else {
        const Onnx__TensorProto *w = find_init(g, n->input[1]);
        size_t nw = 0;
        float *wf = init_floats(w, &nw);
        free(wf);
        if (!wf) {
          L.quantize = 0, L.why = "weight is not an f32 initializer in the model";
        } else if (k == K_CONV && w->n_dims >= 3) {
          L.axis = 0;
        } else if (k == K_GEMM && w->n_dims == 2) {
          L.axis = attr_i(n, "transB", 0) ? 0 : 1;
        } else if (k == K_MATMUL && w->n_dims == 2) {
          L.axis = 1;
        } else if (k != K_MATMUL) {
          L.quantize = 0, L.why = "weight of unexpected rank";
        }
        if (wf) {
          L.channels = L.axis >= 0 && o->per_channel ? (int)w->dims[L.axis] : 1;
          if (!o->per_channel) L.axis = -1;
        }
        if (L.quantize && k != K_MATMUL && n->n_input >= 3 && n->input[2] &&
            n->input[2][0]) {
          const Onnx__TensorProto *b = find_init(g, n->input[2]);
          size_t nb = 0;
          float *bf = init_floats(b, &nb);
          free(bf);
          int64_t want = w->dims[k == K_CONV ? 0 : (attr_i(n, "transB", 0) ? 0 : 1)];
          L.bias_ok = bf && b->n_dims == 1 && (int64_t)nb == want &&
                      (k != K_GEMM ||
                       (attr_f(n, "alpha", 1.0) == 1.0 && attr_f(n, "beta", 1.0) == 1.0));
        }
      }
      L.slot[0] = 0;
      L.n_act = 1;
    } else {
      int all = !strcmp(n->op_type, "Add") || !strcmp(n->op_type, "Concat");
      size_t na = all ? n->n_input : (n->n_input ? 1 : 0);
      if (na > MAX_ACT) L.quantize = 0, L.why = "too many inputs", na = MAX_ACT;
      for (size_t s = 0; s < na; s++) {
        if (!n->input[s] || !n->input[s][0]) continue;
        if (find_init(g, n->input[s])) {
          L.quantize = 0, L.why = "a constant operand";
          continue;
        }
        L.slot[L.n_act++] = (int)s;
      }
      if (!L.n_act) L.quantize = 0, L.why = "no activation input";
    }
    /* a weight read by two layers is quantized once: along one axis */
    for (size_t j = 0; L.quantize && k != K_PASS && j < c->nl; j++) {
      const Onnx__NodeProto *pn = g->node[c->l[j].node];
      if (c->l[j].kind != K_PASS && c->l[j].quantize && pn->n_input >= 2 &&
          !strcmp(pn->input[1], n->input[1]) &&
          (c->l[j].axis != L.axis || c->l[j].channels != L.channels))
        L.quantize = 0, L.why = "weight shared with a layer quantized along another axis";
    }
    for (size_t k2 = 0; k2 < o->n_keep_f32; k2++)
      if ((n->name && !strcmp(n->name, o->keep_f32[k2])) ||
          !strcmp(n->output[0], o->keep_f32[k2]))
        L.quantize = 0, L.why = "--keep-f32";
    for (int s = 0; s < L.n_act; s++)
      DML_RETURN_IF_ERROR(add_tensor(c, n->input[L.slot[s]], &L.tin[s]));
    DML_RETURN_IF_ERROR(add_tensor(c, n->output[0], &L.tout));
    qlayer_t *nl = (qlayer_t *)realloc(c->l, (c->nl + 1) * sizeof *nl);
    if (!nl) return oom();
    c->l = nl;
    c->l[c->nl++] = L;
  }
  for (size_t i = 0; i < c->nt; i++) {
    c->t[i].graph_input = is_graph_input(g, c->t[i].name);
    c->t[i].graph_output = is_graph_output(g, c->t[i].name);
  }
  return check_names(c);
}

/* ------------------------------------------------------------------ */
/* Building models                                                     */
/* ------------------------------------------------------------------ */

static Onnx__ValueInfoProto *mk_value_info(const char *name) {
  Onnx__ValueInfoProto *v = (Onnx__ValueInfoProto *)malloc(sizeof *v);
  if (!v) return NULL;
  Onnx__ValueInfoProto init = ONNX__VALUE_INFO_PROTO__INIT;
  *v = init;
  if (!(v->name = strdup(name))) {
    free(v);
    return NULL;
  }
  return v;
}

/* Adds graph outputs named `names` (those not outputs yet). */
static int add_outputs(Onnx__GraphProto *g, char **names, size_t n) {
  Onnx__ValueInfoProto **o =
      (Onnx__ValueInfoProto **)realloc(g->output, (g->n_output + n) * sizeof *o);
  if (!o) return -1;
  g->output = o;
  for (size_t i = 0; i < n; i++) {
    if (is_graph_output(g, names[i])) continue;
    Onnx__ValueInfoProto *v = mk_value_info(names[i]);
    if (!v) return -1;
    g->output[g->n_output++] = v;
  }
  return 0;
}

static Onnx__TensorProto *mk_tensor(const char *name, int dtype, const int64_t *dims,
                                    size_t rank, const void *data, size_t nbytes) {
  Onnx__TensorProto *t = (Onnx__TensorProto *)malloc(sizeof *t);
  if (!t) return NULL;
  Onnx__TensorProto init = ONNX__TENSOR_PROTO__INIT;
  *t = init;
  t->name = strdup(name);
  t->has_data_type = 1;
  t->data_type = dtype;
  t->dims = (int64_t *)malloc((rank ? rank : 1) * sizeof(int64_t));
  t->raw_data.data = (uint8_t *)malloc(nbytes ? nbytes : 1);
  if (!t->name || !t->dims || !t->raw_data.data) {
    protobuf_c_message_free_unpacked(&t->base, NULL);
    return NULL;
  }
  t->n_dims = rank;
  if (rank) memcpy(t->dims, dims, rank * sizeof(int64_t));
  t->has_raw_data = 1;
  t->raw_data.len = nbytes;
  if (nbytes) memcpy(t->raw_data.data, data, nbytes);
  return t;
}

static int add_attr_int(Onnx__NodeProto *n, const char *name, int64_t v);

static Onnx__NodeProto *mk_node(const char *op, const char *name, const char *in0,
                                const char *in1, const char *in2, const char *out,
                                int axis) {
  Onnx__NodeProto *n = (Onnx__NodeProto *)malloc(sizeof *n);
  if (!n) return NULL;
  Onnx__NodeProto init = ONNX__NODE_PROTO__INIT;
  *n = init;
  n->input = (char **)calloc(3, sizeof(char *));
  n->output = (char **)calloc(1, sizeof(char *));
  if (!n->input || !n->output) goto fail;
  n->n_input = 3;
  n->input[0] = strdup(in0), n->input[1] = strdup(in1), n->input[2] = strdup(in2);
  n->n_output = 1;
  n->output[0] = strdup(out);
  n->name = strdup(name);
  n->op_type = strdup(op);
  if (!n->input[0] || !n->input[1] || !n->input[2] || !n->output[0] || !n->name ||
      !n->op_type)
    goto fail;
  if (axis >= 0) {
    n->attribute = (Onnx__AttributeProto **)calloc(1, sizeof *n->attribute);
    if (!n->attribute) goto fail;
    Onnx__AttributeProto *a = (Onnx__AttributeProto *)malloc(sizeof *a);
    if (!a) goto fail;
    Onnx__AttributeProto ainit = ONNX__ATTRIBUTE_PROTO__INIT;
    *a = ainit;
    n->attribute[0] = a;
    n->n_attribute = 1;
    if (!(a->name = strdup("axis"))) goto fail;
    a->has_type = 1;
    a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
    a->has_i = 1;
    a->i = axis;
  }
  return n;
fail:
  protobuf_c_message_free_unpacked(&n->base, NULL);
  return NULL;
}

/* A graph under construction: the new node list and new initializers. */
typedef struct {
  Onnx__GraphProto *g;
  Onnx__NodeProto **nodes;
  size_t n_nodes, cap_nodes;
  char **replaced; /* names of the f32 initializers given int forms */
  size_t n_replaced;
  int failed;
  int fake; /* the fake-quantized training form (options' fake_quant) */
} gb_t;

/* The name of what the quantized layers read instead of tensor `name`. */
static char *dq_out(const gb_t *b, const char *name) {
  return xprintf(b->fake ? "%s_FakeQuantize_Output" : "%s_DequantizeLinear_Output", name);
}

/* FakeQuantize (domain com.dmlc) of `in` into `out`: with `range` its
 * per-tensor int8 form, else symmetric per channel along `axis`. */
static Onnx__NodeProto *mk_fq(const char *name, const char *in, const char *range,
                              const char *out, int axis, int qmin, int qmax) {
  Onnx__NodeProto *n = mk_node("FakeQuantize", name, in, range ? range : "", "", out, -1);
  if (!n) return NULL;
  for (size_t k = range ? 2 : 1; k < n->n_input; k++) free(n->input[k]);
  n->n_input = range ? 2 : 1;
  free(n->domain);
  int bad = !(n->domain = strdup("com.dmlc"));
  if (!bad && !range) bad = add_attr_int(n, "axis", axis);
  if (!bad) bad = add_attr_int(n, "quant_min", qmin);
  if (!bad) bad = add_attr_int(n, "quant_max", qmax);
  if (bad) {
    protobuf_c_message_free_unpacked(&n->base, NULL);
    return NULL;
  }
  return n;
}

/* Takes `name` (malloc'd) into b's replaced names. */
static void note_replaced(gb_t *b, char *name) {
  char **r = (char **)realloc(b->replaced, (b->n_replaced + 1) * sizeof *r);
  if (!r) {
    free(name);
    b->failed = 1;
    return;
  }
  b->replaced = r;
  b->replaced[b->n_replaced++] = name;
}

static void push_node(gb_t *b, Onnx__NodeProto *n) {
  if (!n) {
    b->failed = 1;
    return;
  }
  if (b->n_nodes == b->cap_nodes) {
    size_t cap = b->cap_nodes ? 2 * b->cap_nodes : 64;
    Onnx__NodeProto **nn = (Onnx__NodeProto **)realloc(b->nodes, cap * sizeof *nn);
    if (!nn) {
      protobuf_c_message_free_unpacked(&n->base, NULL);
      b->failed = 1;
      return;
    }
    b->nodes = nn, b->cap_nodes = cap;
  }
  b->nodes[b->n_nodes++] = n;
}

static void push_init(gb_t *b, Onnx__TensorProto *t) {
  if (!t) {
    b->failed = 1;
    return;
  }
  Onnx__GraphProto *g = b->g;
  Onnx__TensorProto **ni =
      (Onnx__TensorProto **)realloc(g->initializer, (g->n_initializer + 1) * sizeof *ni);
  if (!ni) {
    protobuf_c_message_free_unpacked(&t->base, NULL);
    b->failed = 1;
    return;
  }
  g->initializer = ni;
  g->initializer[g->n_initializer++] = t;
}

/* FakeQuantize of activation `t` after its producer, with its range. */
static void emit_act_fq(gb_t *b, const qtensor_t *t) {
  char *rn = xprintf("%s_range", t->name), *fn = xprintf("%s_FakeQuantize", t->name);
  char *fo = dq_out(b, t->name);
  if (rn && fn && fo) {
    float r[2] = {t->rlo, t->rhi};
    int64_t two = 2;
    push_init(b,
              mk_tensor(rn, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, &two, 1, r, sizeof r));
    push_node(b, mk_fq(fn, t->name, rn, fo, 0, -128, 127));
  } else {
    b->failed = 1;
  }
  free(rn), free(fn), free(fo);
}

/* Weight `n->input[1]` of L in the fake form: FakeQuantize(W) per channel. */
static void emit_weight_fq(gb_t *b, const qlayer_t *L, Onnx__NodeProto *n) {
  char *fn = xprintf("%s_FakeQuantize", n->input[1]);
  char *fo = dq_out(b, n->input[1]);
  if (!fn || !fo) {
    b->failed = 1;
    free(fn), free(fo);
    return;
  }
  int have = 0; /* the same weight read by two layers: one node */
  for (size_t i = 0; i < b->n_nodes && !have; i++)
    have = b->nodes[i]->n_output && !strcmp(b->nodes[i]->output[0], fo);
  if (!have) push_node(b, mk_fq(fn, n->input[1], NULL, fo, L->axis, -127, 127));
  free(fn);
  free(n->input[1]);
  n->input[1] = fo;
}

/* Q and DQ of activation `t` after its producer. */
static void emit_act_qdq(gb_t *b, const qtensor_t *t) {
  if (b->fake) {
    emit_act_fq(b, t);
    return;
  }
  char *sc = xprintf("%s_scale", t->name), *zp = xprintf("%s_zero_point", t->name);
  char *qn = xprintf("%s_QuantizeLinear", t->name);
  char *qo = xprintf("%s_QuantizeLinear_Output", t->name);
  char *dn = xprintf("%s_DequantizeLinear", t->name);
  char *dq = xprintf("%s_DequantizeLinear_Output", t->name);
  if (sc && zp && qn && qo && dn && dq) {
    push_init(b, mk_tensor(sc, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, NULL, 0, &t->scale,
                           sizeof t->scale));
    push_init(b, mk_tensor(zp, ONNX__TENSOR_PROTO__DATA_TYPE__INT8, NULL, 0, &t->zp, 1));
    push_node(b, mk_node("QuantizeLinear", qn, t->name, sc, zp, qo, -1));
    push_node(b, mk_node("DequantizeLinear", dn, qo, sc, zp, dq, -1));
  } else {
    b->failed = 1;
  }
  free(sc), free(zp), free(qn), free(qo), free(dn), free(dq);
}

static int has_init_named(const Onnx__GraphProto *g, const char *name) {
  return find_init(g, name) != NULL;
}

/* Weight `n->input[1]` of compute layer L quantized: int8 initializer,
 * scales, DQ node; *w_scales (malloc'd, L->channels of them) returned for
 * the bias; the node's input renamed. */
static float *emit_weight(qctx_t *c, gb_t *b, const qlayer_t *L, Onnx__NodeProto *n) {
  Onnx__GraphProto *g = b->g;
  const Onnx__TensorProto *w = find_init(g, n->input[1]);
  size_t nw = 0;
  float *wf = init_floats(w, &nw);
  int C = L->channels;
  float *sc = (float *)calloc((size_t)C, sizeof(float));
  int8_t *q = (int8_t *)malloc(nw ? nw : 1);
  int8_t *zp = (int8_t *)calloc((size_t)C, 1);
  char *qname = NULL, *sname = NULL, *zname = NULL, *dname = NULL, *dout = NULL;
  if (!wf || !sc || !q || !zp) goto fail;
  /* element i's channel: (i / inner) % C along the axis */
  size_t inner = 1;
  if (L->axis >= 0)
    for (size_t d = (size_t)L->axis + 1; d < w->n_dims; d++) inner *= (size_t)w->dims[d];
  for (size_t i = 0; i < nw; i++) {
    size_t ch = L->axis >= 0 ? (i / inner) % (size_t)C : 0;
    float a = fabsf(wf[i]);
    if (isfinite(a) && a > sc[ch]) sc[ch] = a;
  }
  for (int ch = 0; ch < C; ch++) sc[ch] = dml_fq_weight_scale(sc[ch], 127.0f);
  for (size_t i = 0; i < nw; i++) {
    size_t ch = L->axis >= 0 ? (i / inner) % (size_t)C : 0;
    float v = nearbyintf(wf[i] / sc[ch]);
    if (isnan(v)) v = 0;
    q[i] = (int8_t)(v > 127 ? 127 : v < -127 ? -127 : v);
  }
  /* the same weight read by two layers: one int8 copy */
  qname = xprintf("%s_quantized", n->input[1]);
  sname = xprintf("%s_scale", n->input[1]);
  zname = xprintf("%s_zero_point", n->input[1]);
  dname = xprintf("%s_DequantizeLinear", n->input[1]);
  dout = xprintf("%s_DequantizeLinear_Output", n->input[1]);
  if (!qname || !sname || !zname || !dname || !dout) goto fail;
  if (!has_init_named(g, qname)) {
    int64_t cdim = C;
    push_init(b, mk_tensor(qname, ONNX__TENSOR_PROTO__DATA_TYPE__INT8, w->dims, w->n_dims,
                           q, nw));
    push_init(b, mk_tensor(sname, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, &cdim,
                           L->axis >= 0 ? 1 : 0, sc, (size_t)C * sizeof(float)));
    push_init(b, mk_tensor(zname, ONNX__TENSOR_PROTO__DATA_TYPE__INT8, &cdim,
                           L->axis >= 0 ? 1 : 0, zp, (size_t)C));
    push_node(b, mk_node("DequantizeLinear", dname, qname, sname, zname, dout, L->axis));
    c->f32_w += nw * sizeof(float);
    c->q_w += nw + (size_t)C * 5;
  }
  note_replaced(b, n->input[1]);
  n->input[1] = dout, dout = NULL;
  free(wf), free(q), free(zp), free(qname), free(sname), free(zname), free(dname);
  return sc;
fail:
  b->failed = 1;
  free(wf), free(sc), free(q), free(zp);
  free(qname), free(sname), free(zname), free(dname), free(dout);
  return NULL;
}

/* Bias `n->input[2]` of L: int32 with scale s_x * s_w[c], zero point 0. */
static void emit_bias(qctx_t *c, gb_t *b, const qlayer_t *L, Onnx__NodeProto *n,
                      float s_x, const float *s_w) {
  Onnx__GraphProto *g = b->g;
  const Onnx__TensorProto *bt = find_init(g, n->input[2]);
  size_t nb = 0;
  float *bf = init_floats(bt, &nb);
  int per_ch = L->axis >= 0;
  size_t ns = per_ch ? nb : 1;
  float *sc = (float *)malloc((ns ? ns : 1) * sizeof(float));
  int32_t *q = (int32_t *)malloc((nb ? nb : 1) * sizeof(int32_t));
  int32_t *zp = (int32_t *)calloc(ns ? ns : 1, sizeof(int32_t));
  char *qname = NULL, *sname = NULL, *zname = NULL, *dname = NULL, *dout = NULL;
  if (!bf || !sc || !q || !zp) goto done;
  for (size_t i = 0; i < ns; i++) {
    sc[i] = s_x * s_w[per_ch ? i : 0];
    if (!(sc[i] >= FLT_MIN)) sc[i] = 1.0f;
  }
  for (size_t i = 0; i < nb; i++) {
    double v = nearbyint((double)bf[i] / sc[per_ch ? i : 0]);
    if (isnan(v)) v = 0;
    q[i] = (int32_t)(v > 2147483647.0    ? 2147483647.0
                     : v < -2147483648.0 ? -2147483648.0
                                         : v);
  }
  /* a bias shared by two layers gets one copy per layer (scales differ) */
  qname = xprintf("%s_quantized", n->input[2]);
  for (int k = 1; qname && has_init_named(g, qname); k++) {
    free(qname);
    qname = xprintf("%s_quantized_%d", n->input[2], k);
  }
  if (!qname) goto done;
  sname = xprintf("%s_scale", qname);
  zname = xprintf("%s_zero_point", qname);
  dname = xprintf("%s_DequantizeLinear", qname);
  dout = xprintf("%s_DequantizeLinear_Output", qname);
  if (!sname || !zname || !dname || !dout) goto done;
  int64_t d = (int64_t)ns;
  push_init(b, mk_tensor(qname, ONNX__TENSOR_PROTO__DATA_TYPE__INT32, bt->dims,
                         bt->n_dims, q, nb * 4));
  push_init(b, mk_tensor(sname, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, &d, per_ch ? 1 : 0,
                         sc, ns * 4));
  push_init(b, mk_tensor(zname, ONNX__TENSOR_PROTO__DATA_TYPE__INT32, &d, per_ch ? 1 : 0,
                         zp, ns * 4));
  push_node(
      b, mk_node("DequantizeLinear", dname, qname, sname, zname, dout, per_ch ? 0 : -1));
  c->f32_w += nb * 4;
  c->q_w += nb * 4 + ns * 8;
  note_replaced(b, n->input[2]);
  n->input[2] = dout, dout = NULL;
done:
  if (!bf || !sc || !q || !zp || !qname || !sname || !zname || !dname) b->failed = 1;
  free(bf), free(sc), free(q), free(zp);
  free(qname), free(sname), free(zname), free(dname), free(dout);
}

/* 1 when a node of `g` or of a subgraph in it (If/Loop/Scan bodies read
 * outer names) reads `name`, or `g` outputs it. */
static int name_read(const Onnx__GraphProto *g, const char *name) {
  for (size_t i = 0; i < g->n_node; i++) {
    const Onnx__NodeProto *n = g->node[i];
    for (size_t k = 0; k < n->n_input; k++)
      if (n->input[k] && !strcmp(n->input[k], name)) return 1;
    for (size_t a = 0; a < n->n_attribute; a++) {
      const Onnx__AttributeProto *at = n->attribute[a];
      if (at->g && name_read(at->g, name)) return 1;
      for (size_t k = 0; k < at->n_graphs; k++)
        if (name_read(at->graphs[k], name)) return 1;
    }
  }
  return is_graph_output(g, name);
}

/* Removes the f32 initializers whose int8 / int32 forms replaced them
 * (`replaced`, n of them) when nothing reads them any more, and their
 * graph-input entries (models of IR version < 4 list them). */
static void drop_unread(Onnx__GraphProto *g, char **replaced, size_t n) {
  size_t w = 0;
  for (size_t i = 0; i < g->n_initializer; i++) {
    Onnx__TensorProto *t = g->initializer[i];
    int was = 0;
    for (size_t k = 0; t->name && k < n && !was; k++) was = !strcmp(replaced[k], t->name);
    if (was && t->data_type == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT &&
        !name_read(g, t->name)) {
      size_t wi = 0;
      for (size_t k = 0; k < g->n_input; k++) {
        if (g->input[k]->name && !strcmp(g->input[k]->name, t->name))
          protobuf_c_message_free_unpacked(&g->input[k]->base, NULL);
        else
          g->input[wi++] = g->input[k];
      }
      g->n_input = wi;
      protobuf_c_message_free_unpacked(&t->base, NULL);
      continue;
    }
    g->initializer[w++] = t;
  }
  g->n_initializer = w;
}

/* Adds the opset import of domain com.dmlc (version 1) unless there. */
static int add_dmlc_opset(Onnx__ModelProto *m) {
  for (size_t i = 0; i < m->n_opset_import; i++)
    if (m->opset_import[i]->domain && !strcmp(m->opset_import[i]->domain, "com.dmlc"))
      return 0;
  Onnx__OperatorSetIdProto **no = (Onnx__OperatorSetIdProto **)realloc(
      m->opset_import, (m->n_opset_import + 1) * sizeof *no);
  if (!no) return -1;
  m->opset_import = no;
  Onnx__OperatorSetIdProto *o = (Onnx__OperatorSetIdProto *)malloc(sizeof *o);
  if (!o) return -1;
  Onnx__OperatorSetIdProto init = ONNX__OPERATOR_SET_ID_PROTO__INIT;
  *o = init;
  if (!(o->domain = strdup("com.dmlc"))) {
    free(o);
    return -1;
  }
  o->has_version = 1;
  o->version = 1;
  m->opset_import[m->n_opset_import++] = o;
  return 0;
}

/* The QDQ model for the current decisions (c->l[].quantize); with
 * `extra_outputs`, every layer's f32 output is a graph output too. */
static dml_status_t build_qdq(qctx_t *c, int extra_outputs, uint8_t **out,
                              size_t *out_n) {
  Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, c->n, c->bytes);
  if (!m || !m->graph) {
    if (m) onnx__model_proto__free_unpacked(m, NULL);
    return oom();
  }
  Onnx__GraphProto *g = m->graph;
  for (size_t i = 0; i < c->nt; i++) c->t[i].used = 0;
  for (size_t i = 0; i < c->nl; i++) {
    const qlayer_t *L = &c->l[i];
    if (!L->quantize) continue;
    for (int s = 0; s < L->n_act; s++) c->t[L->tin[s]].used = 1;
  }
  c->f32_w = c->q_w = 0;
  gb_t b;
  memset(&b, 0, sizeof b);
  b.g = g;
  b.fake = c->o->fake_quant;
  if (b.fake && add_dmlc_opset(m)) {
    onnx__model_proto__free_unpacked(m, NULL);
    return oom();
  }
  for (size_t i = 0; i < c->nt; i++)
    if (c->t[i].used && c->t[i].graph_input) emit_act_qdq(&b, &c->t[i]);
  size_t li = 0;
  for (size_t i = 0; i < g->n_node && !b.failed; i++) {
    Onnx__NodeProto *n = g->node[i];
    g->node[i] = NULL;
    while (li < c->nl && c->l[li].node < i) li++;
    const qlayer_t *L = li < c->nl && c->l[li].node == i ? &c->l[li] : NULL;
    if (L && L->quantize) {
      if (L->kind != K_PASS && b.fake) {
        emit_weight_fq(&b, L, n);
      } else if (L->kind != K_PASS) {
        float *sw = emit_weight(c, &b, L, n);
        if (sw && L->bias_ok) emit_bias(c, &b, L, n, c->t[L->tin[0]].scale, sw);
        free(sw);
      }
      for (int s = 0; s < L->n_act && !b.failed; s++) {
        char *dq = dq_out(&b, c->t[L->tin[s]].name);
        if (!dq) {
          b.failed = 1;
          break;
        }
        free(n->input[L->slot[s]]);
        n->input[L->slot[s]] = dq;
      }
    }
    push_node(&b, n);
    for (size_t k = 0; k < n->n_output && !b.failed; k++) {
      if (!n->output[k] || !n->output[k][0]) continue;
      int t = find_tensor(c, n->output[k]);
      if (t >= 0 && c->t[t].used) emit_act_qdq(&b, &c->t[t]);
    }
  }
  /* nodes not moved (after a failure) are freed with the graph */
  size_t rest = 0;
  for (size_t i = 0; i < g->n_node; i++)
    if (g->node[i]) g->node[rest++] = g->node[i];
  if (b.failed) {
    for (size_t i = 0; i < b.n_nodes; i++)
      protobuf_c_message_free_unpacked(&b.nodes[i]->base, NULL);
    free(b.nodes);
    for (size_t i = 0; i < b.n_replaced; i++) free(b.replaced[i]);
    free((void *)b.replaced);
    g->n_node = rest;
    onnx__model_proto__free_unpacked(m, NULL);
    return oom();
  }
  free(g->node);
  g->node = b.nodes;
  g->n_node = b.n_nodes;
  drop_unread(g, b.replaced, b.n_replaced);
  for (size_t i = 0; i < b.n_replaced; i++) free(b.replaced[i]);
  free((void *)b.replaced);
  if (extra_outputs) {
    char **names = (char **)malloc((c->nl ? c->nl : 1) * sizeof(char *));
    size_t nn = 0;
    if (names)
      for (size_t i = 0; i < c->nl; i++)
        if (c->t[c->l[i].tout].f32) names[nn++] = c->t[c->l[i].tout].name;
    int bad = !names || add_outputs(g, names, nn);
    free((void *)names);
    if (bad) {
      onnx__model_proto__free_unpacked(m, NULL);
      return oom();
    }
  }
  size_t size = onnx__model_proto__get_packed_size(m);
  uint8_t *bytes = (uint8_t *)malloc(size ? size : 1);
  if (!bytes) {
    onnx__model_proto__free_unpacked(m, NULL);
    return oom();
  }
  onnx__model_proto__pack(m, bytes);
  onnx__model_proto__free_unpacked(m, NULL);
  *out = bytes;
  *out_n = size;
  return DML_OK;
}

/* The f32 model with every calibrated tensor as a graph output. */
static dml_status_t build_calib(qctx_t *c, uint8_t **out, size_t *out_n) {
  Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, c->n, c->bytes);
  if (!m || !m->graph) {
    if (m) onnx__model_proto__free_unpacked(m, NULL);
    return oom();
  }
  char **names = (char **)malloc((c->nt ? c->nt : 1) * sizeof(char *));
  size_t nn = 0;
  if (names)
    for (size_t i = 0; i < c->nt; i++)
      if (!c->t[i].graph_input) names[nn++] = c->t[i].name;
  int bad = !names || add_outputs(m->graph, names, nn);
  free((void *)names);
  size_t size = bad ? 0 : onnx__model_proto__get_packed_size(m);
  uint8_t *bytes = bad ? NULL : (uint8_t *)malloc(size ? size : 1);
  if (bytes) onnx__model_proto__pack(m, bytes);
  onnx__model_proto__free_unpacked(m, NULL);
  if (!bytes) return oom();
  *out = bytes;
  *out_n = size;
  return DML_OK;
}

/* ------------------------------------------------------------------ */
/* Running                                                             */
/* ------------------------------------------------------------------ */

typedef struct {
  dml_rt_model_t *m;
  dml_rt_session_t *s;
} runner_t;

static void runner_close(runner_t *r) {
  dml_rt_session_release(r->s);
  dml_rt_model_release(r->m);
  memset(r, 0, sizeof *r);
}

static dml_status_t runner_open(const qctx_t *c, const uint8_t *bytes, size_t n,
                                const char *what, runner_t *r) {
  memset(r, 0, sizeof *r);
  dml_compile_options_t co;
  memset(&co, 0, sizeof co);
  co.targets = "cpu";
  co.batch_bound = c->batch;
  void *pkg = NULL;
  size_t pn = 0;
  dml_status_t st =
      dml_compile_onnx_memory(bytes, n, c->base_dir, what, &co, &pkg, &pn, NULL);
  if (!st) st = dml_rt_model_load_memory(pkg, pn, &r->m);
  free(pkg);
  if (!st) st = dml_rt_session_create(r->m, "cpu", &r->s);
  if (st) {
    runner_close(r);
    return dml_status_annotate(st, "compiling and running %s", what);
  }
  return DML_OK;
}

/* Calibration rows in chunks the model's input takes. */
typedef struct {
  const float *data;
  int64_t rows, row_elems; /* after dropping a label column */
  float *owned;            /* when a column was dropped */
  dml_rt_io_info_t in;
  int64_t chunk;
} feed_t;

static dml_status_t feed_init(const qctx_t *c, const runner_t *r, const dml_tensor_t *x,
                              feed_t *f) {
  memset(f, 0, sizeof *f);
  if (dml_rt_model_num_inputs(r->m) != 1)
    return dml_status_make(DML_STATUS_UNIMPLEMENTED, OP,
                           "the model has %u inputs; dmlc quantize calibrates models "
                           "of one input",
                           dml_rt_model_num_inputs(r->m));
  DML_RETURN_IF_ERROR(dml_rt_model_input_info(r->m, 0, &f->in));
  char buf[256];
  dml_rt_io_info_str(&f->in, buf, sizeof buf);
  if (f->in.dtype != DML_DTYPE_F32 || f->in.rank < 1)
    return dml_status_make(DML_STATUS_UNIMPLEMENTED, OP,
                           "the model's input '%s' is %s; dmlc quantize calibrates "
                           "an f32 input with a batch dim",
                           f->in.name, buf);
  int64_t need = 1;
  for (int d = 1; d < f->in.rank; d++) {
    if (f->in.dims[d] < 0)
      return dml_status_make(DML_STATUS_UNIMPLEMENTED, OP,
                             "the model's input '%s' is %s: only dim 0 (the batch) may "
                             "be symbolic for calibration",
                             f->in.name, buf);
    need *= f->in.dims[d];
  }
  int64_t rows = x->dims[0], n = dml_dims_numel(x->dims, x->rank);
  if (rows <= 0 || n <= 0)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                           "the calibration set is empty (0 rows)");
  int64_t re = n / rows;
  if (c->o->max_rows > 0 && rows > c->o->max_rows) rows = c->o->max_rows;
  f->rows = rows;
  f->row_elems = need;
  if (re == need) {
    f->data = (const float *)x->data;
  } else if (re == need + 1 && x->rank == 2) {
    /* a CSV row with a label column: dropped */
    f->owned = (float *)malloc((size_t)(rows * need) * sizeof(float));
    if (!f->owned) return oom();
    for (int64_t i = 0; i < rows; i++)
      memcpy(f->owned + i * need, (const float *)x->data + i * re,
             (size_t)need * sizeof(float));
    f->data = f->owned;
  } else {
    char xs[128];
    int at = snprintf(xs, sizeof xs, "[");
    for (int d = 0; d < x->rank && at < (int)sizeof xs - 24; d++)
      at += snprintf(xs + at, sizeof xs - (size_t)at, "%s%" PRId64, d ? "," : "",
                     x->dims[d]);
    snprintf(xs + at, sizeof xs - (size_t)at, "]");
    return dml_status_detail(
        dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                        "calibration rows of shape %s (%" PRId64
                        " values each) do not fit the model's input '%s' %s (%" PRId64
                        " values a row)",
                        xs, re, f->in.name, buf, need),
        "give rows [N, ...] holding the model input's values of one sample each");
  }
  f->chunk = f->in.dims[0] > 0
                 ? f->in.dims[0]
                 : (c->batch < f->in.dim_bound[0] ? c->batch : f->in.dim_bound[0]);
  if (f->chunk < 1) f->chunk = 1;
  if (f->in.dims[0] > 0) f->rows -= f->rows % f->chunk; /* a static batch: whole ones */
  if (f->rows == 0)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                           "%" PRId64
                           " calibration rows; the model's input '%s' %s "
                           "takes %" PRId64 " at a time",
                           x->dims[0], f->in.name, buf, f->chunk);
  return DML_OK;
}

static dml_status_t feed_set(const feed_t *f, runner_t *r, int64_t row0) {
  dml_tensor_t t;
  memset(&t, 0, sizeof t);
  t.dtype = DML_DTYPE_F32;
  t.rank = f->in.rank;
  for (int d = 1; d < t.rank; d++) t.dims[d] = f->in.dims[d];
  int64_t nrow = f->rows - row0 < f->chunk ? f->rows - row0 : f->chunk;
  t.dims[0] = nrow;
  t.data = (void *)(f->data + row0 * f->row_elems);
  return dml_rt_session_set_input(r->s, 0, &t);
}

/* Output index of every tensor in runner r (-1: none, or not f32). */
static dml_status_t map_outputs(const qctx_t *c, const runner_t *r, int32_t *idx,
                                int mark_f32) {
  for (size_t i = 0; i < c->nt; i++) {
    idx[i] = dml_rt_model_find_output(r->m, c->t[i].name);
    if (idx[i] < 0) continue;
    dml_rt_io_info_t oi;
    DML_RETURN_IF_ERROR(dml_rt_model_output_info(r->m, (uint32_t)idx[i], &oi));
    if (oi.dtype != DML_DTYPE_F32) idx[i] = -1;
    if (mark_f32) c->t[i].f32 = idx[i] >= 0;
  }
  return DML_OK;
}

/* pass 0: min/max; pass 1: histograms (percentile: over [min, max];
 * entropy: of |x| over [0, max |x|]). */
static dml_status_t calib_pass(qctx_t *c, runner_t *r, const feed_t *f,
                               const int32_t *idx, const dml_tensor_t *input_view,
                               int pass) {
  for (int64_t row = 0; row < f->rows; row += f->chunk) {
    DML_RETURN_IF_ERROR(feed_set(f, r, row));
    DML_RETURN_IF_ERROR(dml_rt_session_run(r->s));
    for (size_t i = 0; i < c->nt; i++) {
      qtensor_t *t = &c->t[i];
      dml_tensor_t v;
      if (t->graph_input) {
        v = *input_view;
        int64_t nrow = f->rows - row < f->chunk ? f->rows - row : f->chunk;
        v.rank = 1;
        v.dims[0] = nrow * f->row_elems;
        v.data = (void *)(f->data + row * f->row_elems);
      } else {
        if (idx[i] < 0) continue;
        DML_RETURN_IF_ERROR(dml_rt_session_get_output(r->s, (uint32_t)idx[i], &v));
      }
      int64_t n = dml_dims_numel(v.dims, v.rank);
      const float *p = (const float *)v.data;
      if (pass == 0) {
        for (int64_t k = 0; k < n; k++) {
          float x = p[k];
          if (!isfinite(x)) continue;
          if (!t->finite) t->mn = t->mx = x, t->finite = 1;
          if (x < t->mn) t->mn = x;
          if (x > t->mx) t->mx = x;
        }
      } else if (t->finite && t->hist) {
        int ent = c->o->method == DML_QUANT_ENTROPY;
        double lo = ent ? 0 : t->mn;
        double hi = ent ? fmax(fabs(t->mn), fabs(t->mx)) : t->mx;
        double w = (hi - lo) / NBINS;
        for (int64_t k = 0; k < n; k++) {
          float x = p[k];
          if (!isfinite(x)) continue;
          double y = ent ? fabs(x) : x;
          int b = w > 0 ? (int)((y - lo) / w) : 0;
          if (b >= NBINS) b = NBINS - 1;
          if (b < 0) b = 0;
          t->hist[b]++;
        }
      }
    }
  }
  return DML_OK;
}

/* MXNet's _smooth_distribution: zero bins get eps, the others lose as much
 * in total. Returns 0 when every bin is zero. */
static int smooth(double *p, int n) {
  const double eps = 1e-4;
  int nz = 0;
  for (int i = 0; i < n; i++) nz += p[i] == 0;
  if (nz == n) return 0;
  double eps1 = eps * nz / (n - nz);
  for (int i = 0; i < n; i++) p[i] += p[i] == 0 ? eps : -eps1;
  return 1;
}

/* Entropy calibration (see dml_quantize.h): the |x| threshold, as a bin
 * count of the 2048-bin histogram `h`, minimizing KL(P || Q) with Q the
 * quantization of the clipped histogram into `nq` levels. */
static int entropy_bins(const uint64_t *h, int nq) {
  double *p = (double *)malloc(NBINS * sizeof(double));
  double *q = (double *)malloc(NBINS * sizeof(double));
  int best = NBINS;
  double best_kl = INFINITY;
  if (!p || !q) {
    free(p), free(q);
    return NBINS;
  }
  for (int i = nq; i <= NBINS; i++) {
    double outliers = 0;
    for (int k = i; k < NBINS; k++) outliers += (double)h[k];
    for (int k = 0; k < i; k++) p[k] = (double)h[k];
    p[i - 1] += outliers;
    /* Q: h[0, i) merged into nq groups (the last takes the remainder),
     * each group's count spread evenly over its bins where P is not 0 */
    int per = i / nq;
    for (int j = 0; j < nq; j++) {
      int a = j * per, e = j == nq - 1 ? i : a + per;
      double s = 0;
      int nzb = 0;
      for (int k = a; k < e; k++) s += (double)h[k], nzb += p[k] != 0;
      for (int k = a; k < e; k++) q[k] = p[k] != 0 && nzb ? s / nzb : 0;
    }
    if (!smooth(p, i) || !smooth(q, i)) continue;
    double sp = 0, sq = 0;
    for (int k = 0; k < i; k++) sp += p[k], sq += q[k];
    double kl = 0;
    for (int k = 0; k < i; k++) {
      double pk = p[k] / sp, qk = q[k] / sq;
      if (pk > 0 && qk > 0) kl += pk * log(pk / qk);
    }
    if (kl < best_kl) best_kl = kl, best = i;
  }
  free(p), free(q);
  return best;
}

/* The range of tensor t by the method, then its int8 scale and zero point
 * (ORT's compute_scale_zp with qmin -128, qmax 127, asymmetric). */
static void choose_qparams(const qctx_t *c, qtensor_t *t) {
  double lo = t->finite ? t->mn : 0, hi = t->finite ? t->mx : 0;
  if (t->finite && t->hist && c->o->method == DML_QUANT_PERCENTILE) {
    uint64_t total = 0;
    for (int b = 0; b < NBINS; b++) total += t->hist[b];
    double w = (t->mx - t->mn) / NBINS;
    double want_lo = (double)total * (1 - c->o->percentile / 100);
    double want_hi = (double)total * (c->o->percentile / 100);
    double cum = 0;
    int blo = 0, bhi = NBINS - 1;
    for (int b = 0; b < NBINS; b++) {
      if (cum + (double)t->hist[b] > want_lo) {
        blo = b;
        break;
      }
      cum += (double)t->hist[b];
    }
    cum = 0;
    for (int b = 0; b < NBINS; b++) {
      cum += (double)t->hist[b];
      if (cum >= want_hi) {
        bhi = b;
        break;
      }
    }
    lo = fmax(t->mn, t->mn + blo * w);
    hi = fmin(t->mx, t->mn + (bhi + 1) * w);
  } else if (t->finite && t->hist && c->o->method == DML_QUANT_ENTROPY) {
    double amax = fmax(fabs(t->mn), fabs(t->mx));
    int nq = t->mn >= 0 ? 255 : 128;
    /* the first bin (the exact zeros after a Relu: up to half the values)
     * counts as much as the second, as pytorch-quantization's
     * _compute_amax_entropy does (bins[0] = bins[1]); without it the zeros
     * dominate P and the threshold clips (LeNet-5: 61% for 82.5%) */
    uint64_t hh[NBINS];
    memcpy(hh, t->hist, sizeof hh);
    hh[0] = hh[1];
    double thr = entropy_bins(hh, nq) * (amax / NBINS);
    lo = fmax(t->mn, -thr);
    hi = fmin(t->mx, thr);
  }
  for (size_t i = 0; i < c->o->n_ranges; i++)
    if (c->o->range_names[i] && !strcmp(c->o->range_names[i], t->name)) {
      lo = c->o->ranges[2 * i];
      hi = c->o->ranges[2 * i + 1];
    }
  int32_t zp;
  dml_fq_act_qparams(lo, hi, &t->scale, &zp);
  t->zp = (int8_t)zp;
  t->rlo = (float)lo;
  t->rhi = (float)hi;
}

/* Layer output SQNR: runs the f32 and the QDQ model side by side. */
static dml_status_t measure_sqnr(qctx_t *c, runner_t *rf, const int32_t *idx_f,
                                 const feed_t *f, dml_quant_report_t *rep) {
  uint8_t *bytes = NULL;
  size_t n = 0;
  DML_RETURN_IF_ERROR(build_qdq(c, 1, &bytes, &n));
  runner_t rq;
  dml_status_t st = runner_open(c, bytes, n, "the QDQ model", &rq);
  free(bytes);
  if (st) return st;
  int32_t *idx_q = (int32_t *)malloc((c->nt ? c->nt : 1) * sizeof(int32_t));
  if (!idx_q) st = oom();
  if (!st) st = map_outputs(c, &rq, idx_q, 0);
  const Onnx__GraphProto *g = c->model->graph;
  const char *out0 = g->n_output ? g->output[0]->name : NULL;
  int32_t of = out0 ? dml_rt_model_find_output(rf->m, out0) : -1;
  int32_t oq = out0 ? dml_rt_model_find_output(rq.m, out0) : -1;
  double osig = 0, onoise = 0;
  for (size_t i = 0; i < c->nl; i++) c->l[i].sig = c->l[i].noise = 0;
  for (int64_t row = 0; row < f->rows && !st; row += f->chunk) {
    st = feed_set(f, rf, row);
    if (!st) st = dml_rt_session_run(rf->s);
    if (!st) st = feed_set(f, &rq, row);
    if (!st) st = dml_rt_session_run(rq.s);
    for (size_t i = 0; i <= c->nl && !st; i++) {
      int32_t a, b;
      if (i < c->nl) {
        a = idx_f[c->l[i].tout], b = idx_q[c->l[i].tout];
      } else {
        a = of, b = oq;
      }
      if (a < 0 || b < 0) continue;
      dml_tensor_t va, vb;
      st = dml_rt_session_get_output(rf->s, (uint32_t)a, &va);
      if (!st) st = dml_rt_session_get_output(rq.s, (uint32_t)b, &vb);
      if (st) break;
      if (va.dtype != DML_DTYPE_F32 || vb.dtype != DML_DTYPE_F32) continue;
      int64_t na = dml_dims_numel(va.dims, va.rank),
              nb = dml_dims_numel(vb.dims, vb.rank);
      if (na != nb) continue;
      double s = 0, e = 0;
      for (int64_t k = 0; k < na; k++) {
        double x = ((const float *)va.data)[k], y = ((const float *)vb.data)[k];
        if (!isfinite(x)) continue;
        s += x * x;
        e += (x - y) * (x - y);
      }
      if (i < c->nl)
        c->l[i].sig += s, c->l[i].noise += e;
      else
        osig += s, onoise += e;
    }
  }
  free(idx_q);
  runner_close(&rq);
  if (st) return st;
  for (size_t i = 0; i < c->nl; i++) {
    int measured = idx_f[c->l[i].tout] >= 0;
    qlayer_t *L = &c->l[i];
    rep->layers[i].sqnr_db = !measured       ? NAN
                             : L->noise == 0 ? INFINITY
                                             : 10 * log10(L->sig / L->noise);
  }
  rep->output_sqnr_db = of < 0 || oq < 0 ? NAN
                        : onoise == 0    ? INFINITY
                                         : 10 * log10(osig / onoise);
  return DML_OK;
}

static dml_status_t fill_report(const qctx_t *c, dml_quant_report_t *rep) {
  const Onnx__GraphProto *g = c->model->graph;
  if (!rep->layers) {
    rep->layers = (dml_quant_layer_t *)calloc(c->nl ? c->nl : 1, sizeof *rep->layers);
    if (!rep->layers) return oom();
    rep->n_layers = c->nl;
    for (size_t i = 0; i < c->nl; i++) {
      const Onnx__NodeProto *n = g->node[c->l[i].node];
      dml_quant_layer_t *r = &rep->layers[i];
      r->name = xstrdup(node_label(n));
      r->op = xstrdup(n->op_type);
      r->output = xstrdup(n->output[0]);
      if (!r->name || !r->op || !r->output) return oom();
      r->sqnr_db = NAN;
    }
    if (g->n_output && !(rep->output_name = xstrdup(g->output[0]->name))) return oom();
  }
  size_t na = 0;
  for (size_t i = 0; i < c->nt; i++) na += c->t[i].used;
  rep->n_activations = na;
  for (size_t i = 0; i < c->nl; i++) {
    rep->layers[i].quantized = c->l[i].quantize;
    rep->layers[i].why_f32 = c->l[i].quantize ? NULL : c->l[i].why;
    rep->layers[i].weight_channels = c->l[i].kind == K_PASS ? 0 : c->l[i].channels;
  }
  rep->f32_weight_bytes = c->f32_w;
  rep->q_weight_bytes = c->q_w;
  return DML_OK;
}

static char *dir_of(const char *path) {
  const char *s = strrchr(path, '/');
  if (!s) return strdup(".");
  if (s == path) return strdup("/");
  return strndup(path, (size_t)(s - path));
}

dml_status_t dml_quantize_onnx(const char *onnx_path, const dml_tensor_t *calib,
                               const dml_quant_options_t *opts, void **out_model,
                               size_t *out_size, dml_quant_report_t *report) {
  if (!onnx_path || !calib || !out_model || !out_size)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP, "NULL argument");
  dml_quant_options_t dflt;
  dml_quant_options_init(&dflt);
  const dml_quant_options_t *o = opts ? opts : &dflt;
  if (o->method == DML_QUANT_PERCENTILE && !(o->percentile > 50 && o->percentile <= 100))
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                           "percentile %g outside (50, 100]", o->percentile);
  if (o->method > DML_QUANT_ENTROPY)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP, "unknown method %d",
                           (int)o->method);
  if (calib->dtype != DML_DTYPE_F32)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                           "calibration data is %s; need f32",
                           dml_dtype_name(calib->dtype));
  if (calib->rank < 1 || calib->dims[0] <= 0)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                           "the calibration set is empty (0 rows)");
  if (o->fake_quant && !o->per_channel)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                           "the fake-quantized (QAT) form has per-channel weights only");
  if (o->n_ranges && (!o->range_names || !o->ranges))
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP, "n_ranges without ranges");
  dml_quant_report_t rep_local;
  dml_quant_report_t *rep = report ? report : &rep_local;
  memset(rep, 0, sizeof *rep);
  qctx_t c;
  memset(&c, 0, sizeof c);
  c.o = o;
  c.batch = o->batch > 0 ? o->batch : 64;
  size_t pl = strlen(onnx_path);
  if (pl >= 7 && !strcmp(onnx_path + pl - 7, ".dmlpkg"))
    return dml_status_detail(
        dml_status_make(DML_STATUS_UNIMPLEMENTED, OP,
                        "'%s' is a package; dmlc quantize reads the ONNX model",
                        onnx_path),
        "quantize the ONNX model the package was compiled from; -o X.dmlpkg compiles "
        "the result");
  char *base = dir_of(onnx_path);
  if (!base) return oom();
  c.base_dir = base;
  dml_status_t st = dml_file_read_all(OP, onnx_path, &c.bytes, &c.n);
  if (!st) {
    c.model = onnx__model_proto__unpack(NULL, c.n, c.bytes);
    if (!c.model || !c.model->graph)
      st = dml_status_make(DML_STATUS_DATA_LOSS, OP, "'%s' is not a valid ONNX model",
                           onnx_path);
  }
  if (!st) {
    c.opset = -1;
    for (size_t i = 0; i < c.model->n_opset_import; i++)
      if (is_default_domain(c.model->opset_import[i]->domain))
        c.opset = c.model->opset_import[i]->version;
    if (c.opset < 10)
      st = dml_status_make(
          DML_STATUS_UNIMPLEMENTED, OP,
          "the model's opset is %" PRId64 "; QuantizeLinear needs opset >= 10", c.opset);
    else if (c.opset < 13 && o->per_channel)
      st = dml_status_detail(
          dml_status_make(DML_STATUS_FAILED_PRECONDITION, OP,
                          "per-channel weights need opset >= 13 (DequantizeLinear's "
                          "axis); the model's opset is %" PRId64,
                          c.opset),
          "quantize with --per-tensor, or convert the model to opset 13");
  }
  if (!st) st = analyze(&c);
  uint8_t *cb = NULL;
  size_t cn = 0;
  runner_t rf;
  memset(&rf, 0, sizeof rf);
  feed_t f;
  memset(&f, 0, sizeof f);
  int32_t *idx = NULL;
  if (!st) st = build_calib(&c, &cb, &cn);
  if (!st) st = runner_open(&c, cb, cn, "the f32 model (calibration)", &rf);
  free(cb);
  if (!st) st = feed_init(&c, &rf, calib, &f);
  if (!st && !(idx = (int32_t *)malloc((c.nt ? c.nt : 1) * sizeof(int32_t)))) st = oom();
  if (!st) st = map_outputs(&c, &rf, idx, 1);
  dml_tensor_t in_view;
  memset(&in_view, 0, sizeof in_view);
  in_view.dtype = DML_DTYPE_F32;
  if (!st) {
    for (size_t i = 0; i < c.nt; i++)
      if (c.t[i].graph_input) c.t[i].f32 = 1;
    st = calib_pass(&c, &rf, &f, idx, &in_view, 0);
  }
  if (!st && o->method != DML_QUANT_MINMAX) {
    for (size_t i = 0; i < c.nt && !st; i++)
      if (c.t[i].f32 && c.t[i].finite &&
          !(c.t[i].hist = (uint64_t *)calloc(NBINS, sizeof(uint64_t))))
        st = oom();
    if (!st) st = calib_pass(&c, &rf, &f, idx, &in_view, 1);
  }
  if (!st) {
    for (size_t i = 0; i < c.nt; i++) choose_qparams(&c, &c.t[i]);
    /* a layer whose activation input is not f32 stays f32 */
    for (size_t i = 0; i < c.nl; i++)
      for (int s = 0; s < c.l[i].n_act; s++)
        if (c.l[i].quantize && !c.t[c.l[i].tin[s]].f32)
          c.l[i].quantize = 0, c.l[i].why = "an input that is not f32";
    rep->calib_rows = f.rows;
    rep->method = o->method == DML_QUANT_MINMAX       ? "minmax"
                  : o->method == DML_QUANT_PERCENTILE ? "percentile"
                                                      : "entropy";
    rep->percentile = o->percentile;
    rep->sqnr_rule_db = o->keep_f32_below_sqnr;
    st = fill_report(&c, rep);
  }
  if (!st) st = measure_sqnr(&c, &rf, idx, &f, rep);
  /* --keep-f32-below-sqnr: the first layer (graph order) below the bound
   * is left f32 and the model measured again, until none is below */
  for (size_t round = 0; !st && o->keep_f32_below_sqnr > 0 && round < c.nl; round++) {
    size_t i = 0;
    while (i < c.nl &&
           !(c.l[i].quantize && rep->layers[i].sqnr_db < o->keep_f32_below_sqnr))
      i++;
    if (i == c.nl) break;
    c.l[i].quantize = 0, c.l[i].why = "SQNR below --keep-f32-below-sqnr";
    st = fill_report(&c, rep);
    if (!st) st = measure_sqnr(&c, &rf, idx, &f, rep);
  }
  uint8_t *qb = NULL;
  size_t qn = 0;
  if (!st) st = build_qdq(&c, 0, &qb, &qn);
  if (!st) st = fill_report(&c, rep);
  if (!st) {
    *out_model = qb;
    *out_size = qn;
  } else {
    free(qb);
  }
  free(idx);
  free(f.owned);
  runner_close(&rf);
  for (size_t i = 0; i < c.nt; i++) free(c.t[i].name), free(c.t[i].hist);
  free(c.t);
  free(c.l);
  if (c.model) onnx__model_proto__free_unpacked(c.model, NULL);
  free(c.bytes);
  free(base);
  if (st || !report) dml_quant_report_free(rep);
  return st;
}

dml_status_t dml_quantize_qat_export(const char *onnx_path, const char *tmp_prefix,
                                     const dml_rt_model_t *m, dml_rt_session_t *s,
                                     const dml_tensor_t *calib,
                                     const dml_quant_options_t *opts, void **out_model,
                                     size_t *out_size, dml_quant_report_t *report,
                                     uint32_t *out_weights, uint32_t *out_ranges) {
  if (!onnx_path || !tmp_prefix || !m || !s || !calib || !out_model || !out_size)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP, "NULL argument");
  char *tmp = xprintf("%s.f32-trained.tmp.onnx", tmp_prefix);
  if (!tmp) return oom();
  uint32_t nrep = 0, ndrop = 0;
  dml_status_t st = dml_onnx_export_trained(onnx_path, tmp, m, s, &nrep, &ndrop);
  if (st) {
    free(tmp);
    return st;
  }
  uint32_t ng = dml_rt_model_num_globals(m), nr = 0;
  const char **names = (const char **)calloc(ng ? ng : 1, sizeof(char *));
  char **owned = (char **)calloc(ng ? ng : 1, sizeof(char *));
  float *ranges = (float *)calloc(2 * (size_t)(ng ? ng : 1), sizeof(float));
  if (!names || !owned || !ranges) st = oom();
  for (uint32_t i = 0; !st && i < ng; i++) {
    dml_rt_global_info_t info;
    dml_tensor_t v;
    st = dml_rt_model_global_info(m, i, &info);
    if (st) break;
    size_t l = strlen(info.name);
    if (!(info.flags & DML_RT_GLOBAL_STATE) || l <= 6 ||
        strcmp(info.name + l - 6, "_range") || info.dtype != DML_DTYPE_F32 ||
        info.rank != 1 || info.dims[0] != 2)
      continue;
    st = dml_rt_session_global(s, i, &v);
    if (st) break;
    owned[nr] = (char *)malloc(l - 5);
    if (!owned[nr]) {
      st = oom();
      break;
    }
    memcpy(owned[nr], info.name, l - 6);
    owned[nr][l - 6] = 0;
    names[nr] = owned[nr];
    memcpy(&ranges[2 * nr], v.data, 2 * sizeof(float));
    nr++;
  }
  if (!st) {
    dml_quant_options_t qo;
    if (opts)
      qo = *opts;
    else
      dml_quant_options_init(&qo);
    qo.fake_quant = 0;
    qo.range_names = names;
    qo.ranges = ranges;
    qo.n_ranges = nr;
    st = dml_quantize_onnx(tmp, calib, &qo, out_model, out_size, report);
    if (st) st = dml_status_annotate(st, "writing the QDQ model of the trained weights");
  }
  remove(tmp);
  free(tmp);
  for (uint32_t i = 0; owned && i < nr; i++) free(owned[i]);
  free((void *)names);
  free((void *)owned);
  free(ranges);
  if (!st && out_weights) *out_weights = nrep;
  if (!st && out_ranges) *out_ranges = nr;
  return st;
}

/* ------------------------------------------------------------------ */
/* JSON report                                                         */
/* ------------------------------------------------------------------ */

static void json_str(FILE *f, const char *s) {
  if (!s) {
    fputs("null", f);
    return;
  }
  fputc('"', f);
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p == '"' || *p == '\\')
      fprintf(f, "\\%c", *p);
    else if (*p < 0x20)
      fprintf(f, "\\u%04x", *p);
    else
      fputc(*p, f);
  }
  fputc('"', f);
}

static void json_db(FILE *f, double v) {
  if (isnan(v))
    fputs("null", f);
  else if (isinf(v))
    fputs(v > 0 ? "\"inf\"" : "\"-inf\"", f);
  else
    fprintf(f, "%.3f", v);
}

dml_status_t dml_quant_report_write_json(const dml_quant_report_t *r, const char *path) {
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  if (!f) return oom();
  fprintf(f, "{\n  \"method\": ");
  json_str(f, r->method);
  fprintf(f,
          ",\n  \"percentile\": %.6g,\n  \"calibration_rows\": %" PRId64
          ",\n  \"activations\": %zu,\n  \"weight_bytes_f32\": %" PRIu64
          ",\n  \"weight_bytes_q\": %" PRIu64 ",\n  \"keep_f32_below_sqnr\": ",
          r->percentile, r->calib_rows, r->n_activations, r->f32_weight_bytes,
          r->q_weight_bytes);
  if (r->sqnr_rule_db > 0)
    fprintf(f, "%.3f", r->sqnr_rule_db);
  else
    fputs("null", f);
  fprintf(f, ",\n  \"output\": {\"name\": ");
  json_str(f, r->output_name);
  fprintf(f, ", \"sqnr_db\": ");
  json_db(f, r->output_sqnr_db);
  fprintf(f, "},\n  \"layers\": [");
  for (size_t i = 0; i < r->n_layers; i++) {
    const dml_quant_layer_t *l = &r->layers[i];
    fprintf(f, "%s\n    {\"name\": ", i ? "," : "");
    json_str(f, l->name);
    fprintf(f, ", \"op\": ");
    json_str(f, l->op);
    fprintf(f, ", \"output\": ");
    json_str(f, l->output);
    fprintf(f, ", \"quantized\": %s, \"why_f32\": ", l->quantized ? "true" : "false");
    json_str(f, l->why_f32);
    fprintf(f, ", \"weight_channels\": %d, \"sqnr_db\": ", l->weight_channels);
    json_db(f, l->sqnr_db);
    fputc('}', f);
  }
  fprintf(f, "\n  ]\n}\n");
  if (fclose(f) != 0) {
    free(text);
    return oom();
  }
  const void *parts[1] = {text};
  size_t sizes[1] = {len};
  dml_status_t st = dml_file_write_atomic(OP, path, parts, sizes, 1);
  free(text);
  return st;
}

/* ------------------------------------------------------------------ */
/* Weight-only quantization (dml_quantize_weights_onnx)                */
/* ------------------------------------------------------------------ */

/* TensorProto.INT4 (onnx.proto of ONNX 1.16+; Debian's onnx.proto, from
 * which onnx.pb-c.h is generated, predates it). */
#define ONNX_INT4 22
#define ONNX_UINT4 21

void dml_wq_options_init(dml_wq_options_t *o) {
  memset(o, 0, sizeof *o);
  o->bits = 8;
  o->group_size = 32;
  o->damp = 0.01;
}

void dml_wq_report_free(dml_wq_report_t *r) {
  if (!r) return;
  for (size_t i = 0; i < r->n_layers; i++)
    free(r->layers[i].name), free(r->layers[i].op), free(r->layers[i].weight);
  free(r->layers);
  memset(r, 0, sizeof *r);
}

/* An attribute of `n`, appended (n->attribute grown). 0 on success. */
static int add_attr_int(Onnx__NodeProto *n, const char *name, int64_t v) {
  Onnx__AttributeProto **na =
      (Onnx__AttributeProto **)realloc(n->attribute, (n->n_attribute + 1) * sizeof *na);
  if (!na) return -1;
  n->attribute = na;
  Onnx__AttributeProto *a = (Onnx__AttributeProto *)malloc(sizeof *a);
  if (!a) return -1;
  Onnx__AttributeProto ainit = ONNX__ATTRIBUTE_PROTO__INIT;
  *a = ainit;
  if (!(a->name = strdup(name))) {
    free(a);
    return -1;
  }
  a->has_type = 1;
  a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
  a->has_i = 1;
  a->i = v;
  n->attribute[n->n_attribute++] = a;
  return 0;
}

/* A node op(in[0..nin)) -> out named `name` (no attributes). */
static Onnx__NodeProto *mk_plain_node(const char *op, const char *name,
                                      const char *const *in, size_t nin,
                                      const char *out) {
  Onnx__NodeProto *n = (Onnx__NodeProto *)malloc(sizeof *n);
  if (!n) return NULL;
  Onnx__NodeProto init = ONNX__NODE_PROTO__INIT;
  *n = init;
  n->input = (char **)calloc(nin, sizeof(char *));
  n->output = (char **)calloc(1, sizeof(char *));
  if (!n->input || !n->output) goto fail;
  n->n_input = nin;
  for (size_t i = 0; i < nin; i++)
    if (!(n->input[i] = strdup(in[i]))) goto fail;
  n->n_output = 1;
  n->output[0] = strdup(out);
  n->name = strdup(name);
  n->op_type = strdup(op);
  if (!n->output[0] || !n->name || !n->op_type) goto fail;
  return n;
fail:
  protobuf_c_message_free_unpacked(&n->base, NULL);
  return NULL;
}

/* DequantizeLinear(q, s [, zp]) with axis and block_size (zp NULL: none). */
static Onnx__NodeProto *mk_block_dq(const char *name, const char *q, const char *s,
                                    const char *zp, const char *out, int64_t axis,
                                    int64_t block) {
  const char *in[3] = {q, s, zp};
  Onnx__NodeProto *n = mk_plain_node("DequantizeLinear", name, in, zp ? 3 : 2, out);
  if (n && (add_attr_int(n, "axis", axis) || add_attr_int(n, "block_size", block))) {
    protobuf_c_message_free_unpacked(&n->base, NULL);
    return NULL;
  }
  return n;
}

void dml_wq_grid(const double *v, int64_t n, int bits, int asym, int clip, float *s,
                 int *z) {
  const double qmax = bits == 8 ? 127.0 : 7.0, umax = bits == 8 ? 255.0 : 15.0;
  double lo = 0, hi = 0, m = 0;
  for (int64_t i = 0; i < n; i++) {
    if (!isfinite(v[i])) continue;
    lo = fmin(lo, v[i]), hi = fmax(hi, v[i]), m = fmax(m, fabs(v[i]));
  }
  double best = INFINITY;
  *s = 1.0f, *z = 0;
  for (int i = 0; i <= (clip ? 20 : 0); i++) {
    const double r = 1.0 - i / 40.0;
    float sf = (float)(asym ? (hi - lo) * r / umax : m * r / qmax);
    int zi = 0;
    if (!(sf >= FLT_MIN)) {
      sf = 1.0f;
    } else if (asym) {
      double zz = nearbyint(-lo * r / (double)sf);
      zi = (int)(zz < 0 ? 0 : zz > umax ? umax : zz);
    }
    if (!clip) {
      *s = sf, *z = zi;
      return;
    }
    double e = 0;
    for (int64_t k = 0; k < n; k++) {
      if (!isfinite(v[k])) continue;
      double d =
          v[k] - (double)(dml_wq_grid_q(v[k], sf, zi, bits, asym) - zi) * (double)sf;
      e += d * d;
    }
    if (e < best) best = e, *s = sf, *z = zi;
  }
}

int dml_wq_grid_q(double x, float s, int z, int bits, int asym) {
  const double lo = asym        ? 0.0
                    : bits == 8 ? -127.0
                                : -7.0,
               hi = asym        ? (bits == 8 ? 255.0 : 15.0)
                    : bits == 8 ? 127.0
                                : 7.0;
  double v = nearbyint(x / (double)s) + z;
  return (int)(v > hi ? hi : v < lo ? lo : v); /* NaN: lo */
}

/* Packs the int value iv of element e (int8 / uint8 bytes, or 4-bit
 * nibbles two per byte, low nibble first; q zeroed before for 4 bits). */
static void wq_pack(uint8_t *q, int64_t e, int bits, int iv) {
  if (bits == 8)
    q[e] = (uint8_t)iv;
  else
    q[e / 2] |= (uint8_t)(((unsigned)iv & 0xFu) << (e % 2 ? 4 : 0));
}

/* Quantizes w [d0, d1] (K along `axis`) in groups of g: packed values
 * (int8 bytes, or int4 two per byte, low nibble first; uint4 with asym)
 * into *q, scales ([ceil(d0/g), d1] or [d0, ceil(d1/g)]) into sc and, with
 * asym, the zero points (one byte each, same shape) into zp; returns the
 * weight's SQNR in dB. Without asym and clip, the scale is max |w| / qmax
 * in f32 and q = round(w / s) in f32 (dml_wq_grid otherwise). */
static double wq_quantize(const float *w, int64_t d0, int64_t d1, int axis, int64_t g,
                          int bits, int asym, int clip, uint8_t *q, float *sc,
                          uint8_t *zp) {
  const int64_t K = axis == 0 ? d0 : d1, nb = (K + g - 1) / g;
  const float qmax = bits == 8 ? 127.0f : 7.0f;
  const int64_t ns = axis == 0 ? nb * d1 : d0 * nb;
  const int grid = asym || clip;
  for (int64_t i = 0; i < ns; i++) sc[i] = 0.0f;
  if (zp) memset(zp, 0, (size_t)ns);
  if (grid) {
    const int64_t N = axis == 0 ? d1 : d0;
    double *v = (double *)malloc((size_t)(g < K ? g : K) * sizeof(double));
    if (!v) return NAN;
    for (int64_t b = 0; b < nb; b++)
      for (int64_t n = 0; n < N; n++) {
        int64_t k0 = b * g, k1 = k0 + g < K ? k0 + g : K;
        for (int64_t k = k0; k < k1; k++)
          v[k - k0] = axis == 0 ? w[k * d1 + n] : w[n * d1 + k];
        int z = 0;
        int64_t si = axis == 0 ? b * d1 + n : n * nb + b;
        dml_wq_grid(v, k1 - k0, bits, asym, clip, &sc[si], &z);
        if (zp) zp[si] = (uint8_t)z;
      }
    free(v);
  } else {
    for (int64_t i = 0; i < d0; i++)
      for (int64_t j = 0; j < d1; j++) {
        int64_t s = axis == 0 ? (i / g) * d1 + j : i * nb + j / g;
        float a = fabsf(w[i * d1 + j]);
        if (isfinite(a) && a > sc[s]) sc[s] = a;
      }
    for (int64_t i = 0; i < ns; i++) {
      sc[i] /= qmax;
      if (!(sc[i] >= FLT_MIN)) sc[i] = 1.0f;
    }
  }
  const int64_t nq = d0 * d1;
  if (bits == 4 && nq > 0) memset(q, 0, (size_t)((nq + 1) / 2));
  double sig = 0, noise = 0;
  for (int64_t i = 0; i < d0; i++)
    for (int64_t j = 0; j < d1; j++) {
      int64_t e = i * d1 + j;
      int64_t s = axis == 0 ? (i / g) * d1 + j : i * nb + j / g;
      int iv, z = zp ? zp[s] : 0;
      if (grid) {
        iv = dml_wq_grid_q(w[e], sc[s], z, bits, asym);
      } else {
        float v = nearbyintf(w[e] / sc[s]);
        iv = (int)(v > qmax ? qmax : v < -qmax ? -qmax : v);
      }
      wq_pack(q, e, bits, iv);
      double d = (double)w[e] - (double)((float)(iv - z) * sc[s]);
      sig += (double)w[e] * w[e];
      noise += d * d;
    }
  return noise > 0 ? 10.0 * log10(sig / noise) : INFINITY;
}

/* ---- GPTQ (dml_gptq_quantize; Frantar et al. 2022) ---- */

/* In-place lower Cholesky factor of the SPD matrix a [n, n] (upper part
 * zeroed). 0 on success, -1 when not positive definite. */
static int chol_lower(double *a, int64_t n) {
  for (int64_t j = 0; j < n; j++) {
    double d = a[j * n + j];
    for (int64_t k = 0; k < j; k++) d -= a[j * n + k] * a[j * n + k];
    if (!(d > 0)) return -1;
    d = sqrt(d);
    a[j * n + j] = d;
    for (int64_t i = j + 1; i < n; i++) {
      double s = a[i * n + j];
      const double *ri = a + i * n, *rj = a + j * n;
      for (int64_t k = 0; k < j; k++) s -= ri[k] * rj[k];
      a[i * n + j] = s / d;
    }
    for (int64_t k = j + 1; k < n; k++) a[j * n + k] = 0;
  }
  return 0;
}

/* U, the upper Cholesky factor of H^-1 (H^-1 = U^T U), into u [n, n] from
 * the lower Cholesky factor l of H (H = L L^T): H^-1 = L^-T L^-1, whose
 * factor is found as GPTQ's torch.linalg.cholesky(cholesky_inverse(L),
 * upper=True). l is overwritten. */
static int gptq_hinv_upper(double *l, int64_t n, double *u) {
  /* l <- L^-1 (lower), column by column of the identity */
  for (int64_t j = 0; j < n; j++) {
    l[j * n + j] = 1.0 / l[j * n + j];
    for (int64_t i = j + 1; i < n; i++) {
      double s = 0;
      for (int64_t k = j; k < i; k++) s -= l[i * n + k] * l[k * n + j];
      l[i * n + j] = s / l[i * n + i];
    }
  }
  /* u <- H^-1 = L^-T L^-1: (i, j) = sum_k Li[k, i] Li[k, j], k >= max(i, j) */
  for (int64_t i = 0; i < n; i++) memset(u + i * n, 0, (size_t)n * sizeof(double));
  for (int64_t k = 0; k < n; k++) {
    const double *r = l + k * n;
    for (int64_t i = 0; i <= k; i++) {
      double a = r[i];
      if (a == 0) continue;
      double *ui = u + i * n;
      for (int64_t j = 0; j <= i; j++) ui[j] += a * r[j];
    }
  }
  for (int64_t i = 0; i < n; i++)
    for (int64_t j = i + 1; j < n; j++) u[i * n + j] = u[j * n + i];
  /* upper Cholesky of H^-1: the transpose of its lower factor */
  if (chol_lower(u, n)) return -1;
  for (int64_t i = 0; i < n; i++)
    for (int64_t j = i + 1; j < n; j++) {
      u[i * n + j] = u[j * n + i];
      u[j * n + i] = 0;
    }
  return 0;
}

typedef struct {
  double d;
  int64_t i;
} gptq_diag_t;

/* decreasing diag H, then increasing index */
static int gptq_diag_cmp(const void *a, const void *b) {
  const gptq_diag_t *x = (const gptq_diag_t *)a, *y = (const gptq_diag_t *)b;
  if (x->d != y->d) return x->d > y->d ? -1 : 1;
  return x->i < y->i ? -1 : x->i > y->i;
}

dml_status_t dml_gptq_quantize(const float *w, int64_t K, int64_t N, const double *h,
                               int64_t group_size, int bits, double damp, int act_order,
                               int8_t *q, float *scales) {
  return dml_gptq_quantize_grid(w, K, N, h, group_size, bits, 0, 0, damp, act_order, q,
                                scales, NULL);
}

/* The grids of rows [k0, k1) of W [., N] (double) into s / z [N]. */
static void gptq_group_grid(const double *W, int64_t N, int64_t k0, int64_t k1, int bits,
                            int asym, int clip, double *col, float *s, uint8_t *z) {
  for (int64_t n = 0; n < N; n++) {
    for (int64_t j = k0; j < k1; j++) col[j - k0] = W[j * N + n];
    int zi = 0;
    dml_wq_grid(col, k1 - k0, bits, asym, clip, &s[n], &zi);
    if (z) z[n] = (uint8_t)zi;
  }
}

dml_status_t dml_gptq_quantize_grid(const float *w, int64_t K, int64_t N, const double *h,
                                    int64_t group_size, int bits, int asym, int clip,
                                    double damp, int act_order, int8_t *q, float *scales,
                                    uint8_t *zp) {
  if (!w || !h || !q || !scales || K < 1 || N < 1 || group_size < 1 ||
      (bits != 4 && bits != 8) || (asym && (bits != 4 || !zp)) || !(damp >= 0) ||
      K > ((int64_t)1 << 20))
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                           "GPTQ of a weight [%" PRId64 ", %" PRId64 "], group %" PRId64
                           ", %d bits, damp %g: bad arguments",
                           K, N, group_size, bits, damp);
  for (int64_t i = 0; i < K * N; i++)
    if (!isfinite(w[i]))
      return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                             "GPTQ: the weight holds NaN or infinity");
  for (int64_t i = 0; i < K * K; i++)
    if (!isfinite(h[i]))
      return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                             "GPTQ: the Hessian holds NaN or infinity (calibration "
                             "inputs too large or not finite)");
  const double qmax = bits == 8 ? 127.0 : 7.0;
  double *H = (double *)malloc((size_t)(K * K) * sizeof(double));
  /* U is also the scratch of the act-order permutation of W */
  double *U = (double *)malloc((size_t)(K * (K > N ? K : N)) * sizeof(double));
  double *W = (double *)malloc((size_t)(K * N) * sizeof(double));
  double *err = (double *)malloc((size_t)N * sizeof(double));
  gptq_diag_t *perm = (gptq_diag_t *)malloc((size_t)K * sizeof *perm);
  const int grid = asym || clip;
  double *col =
      (double *)malloc((size_t)(group_size < K ? group_size : K) * sizeof(double));
  if (!H || !U || !W || !err || !perm || !col) {
    free(H), free(U), free(W), free(err), free(perm), free(col);
    return oom();
  }
  memcpy(H, h, (size_t)(K * K) * sizeof(double));
  for (int64_t i = 0; i < K * N; i++) W[i] = w[i];
  double mean = 0;
  for (int64_t k = 0; k < K; k++) {
    if (H[k * K + k] == 0) { /* dead input: always 0 on the calibration set */
      H[k * K + k] = 1;
      for (int64_t n = 0; n < N; n++) W[k * N + n] = 0;
    }
    mean += H[k * K + k];
  }
  mean /= (double)K;
  for (int64_t k = 0; k < K; k++) perm[k] = (gptq_diag_t){H[k * K + k], k};
  if (act_order) {
    /* static group scales from the weight (round to nearest's), then the
     * rows in order of decreasing H[k,k]: H and W permuted */
    for (int64_t k0 = 0; k0 < K; k0 += group_size) {
      int64_t k1 = k0 + group_size < K ? k0 + group_size : K;
      if (grid) {
        int64_t b = k0 / group_size;
        gptq_group_grid(W, N, k0, k1, bits, asym, clip, col, scales + b * N,
                        zp ? zp + b * N : NULL);
        continue;
      }
      for (int64_t n = 0; n < N; n++) {
        double m = 0;
        for (int64_t j = k0; j < k1; j++) m = fmax(m, fabs(W[j * N + n]));
        float sf = (float)(m / qmax);
        scales[(k0 / group_size) * N + n] = sf >= FLT_MIN ? sf : 1.0f;
      }
    }
    qsort(perm, (size_t)K, sizeof *perm, gptq_diag_cmp);
    for (int64_t i = 0; i < K; i++)
      for (int64_t j = 0; j < K; j++) U[i * K + j] = H[perm[i].i * K + perm[j].i];
    memcpy(H, U, (size_t)(K * K) * sizeof(double));
    for (int64_t i = 0; i < K; i++)
      for (int64_t n = 0; n < N; n++) U[i * N + n] = W[perm[i].i * N + n];
    memcpy(W, U, (size_t)(K * N) * sizeof(double));
  }
  for (int64_t k = 0; k < K; k++) H[k * K + k] += damp * mean;
  dml_status_t st = DML_OK;
  if (chol_lower(H, K) || gptq_hinv_upper(H, K, U)) {
    st = dml_status_detail(
        dml_status_make(DML_STATUS_FAILED_PRECONDITION, OP,
                        "GPTQ: the damped Hessian of a [%" PRId64 ", %" PRId64
                        "] weight is not positive definite",
                        K, N),
        "raise the dampening or give more calibration rows");
  }
  for (int64_t k = 0; k < K && !st; k++) {
    const int64_t row = perm[k].i; /* k itself without act_order */
    float *s = scales + (row / group_size) * N;
    uint8_t *z = zp ? zp + (row / group_size) * N : NULL;
    if (!act_order && k % group_size == 0 && grid) {
      int64_t k1 = k + group_size < K ? k + group_size : K;
      gptq_group_grid(W, N, k, k1, bits, asym, clip, col, s, z);
    } else if (!act_order && k % group_size == 0) {
      int64_t k1 = k + group_size < K ? k + group_size : K;
      for (int64_t n = 0; n < N; n++) {
        double m = 0;
        for (int64_t j = k; j < k1; j++) m = fmax(m, fabs(W[j * N + n]));
        float sf = (float)(m / qmax);
        s[n] = sf >= FLT_MIN ? sf : 1.0f;
      }
    }
    const double d = U[k * K + k];
    for (int64_t n = 0; n < N; n++) {
      double x = W[k * N + n];
      if (grid) {
        int zi = z ? z[n] : 0, iv = dml_wq_grid_q(x, s[n], zi, bits, asym);
        q[row * N + n] = (int8_t)iv;
        err[n] = (x - (double)(iv - zi) * (double)s[n]) / d;
        continue;
      }
      double v = nearbyint(x / (double)s[n]);
      v = v > qmax ? qmax : v < -qmax ? -qmax : v;
      q[row * N + n] = (int8_t)v;
      err[n] = (x - v * (double)s[n]) / d;
    }
    for (int64_t j = k + 1; j < K; j++) {
      const double c = U[k * K + j];
      if (c == 0) continue;
      double *wj = W + j * N;
      for (int64_t n = 0; n < N; n++) wj[n] -= c * err[n];
    }
  }
  free(H), free(U), free(W), free(err), free(perm), free(col);
  return st;
}

double dml_gptq_out_sqnr(const float *w, const float *dq, int64_t K, int64_t N,
                         const double *h) {
  /* tr(A^T H A) = sum_{i,j} H[i,j] <A[i,:], A[j,:]> */
  double sig = 0, noise = 0;
  double *d = (double *)malloc((size_t)(K * N) * sizeof(double));
  double *a = (double *)malloc((size_t)(K * N) * sizeof(double));
  if (!d || !a) {
    free(d), free(a);
    return NAN;
  }
  for (int64_t i = 0; i < K * N; i++) a[i] = w[i], d[i] = (double)w[i] - (double)dq[i];
  for (int64_t i = 0; i < K; i++)
    for (int64_t j = 0; j <= i; j++) {
      double hij = h[i * K + j];
      if (hij == 0) continue;
      double f = i == j ? hij : 2 * hij, ss = 0, sn = 0;
      const double *ai = a + i * N, *aj = a + j * N, *di = d + i * N, *dj = d + j * N;
      for (int64_t n = 0; n < N; n++) ss += ai[n] * aj[n], sn += di[n] * dj[n];
      sig += f * ss, noise += f * sn;
    }
  free(d), free(a);
  return noise > 0 ? 10.0 * log10(sig / noise) : INFINITY;
}

/* The int value of element e of packed q (int8 bytes, or int4 nibbles;
 * unsigned with asym). */
static int wq_unpack(const uint8_t *q, int64_t e, int bits, int asym) {
  if (bits == 8) return asym ? q[e] : (int8_t)q[e];
  int u = (q[e / 2] >> (e % 2 ? 4 : 0)) & 0xF;
  return asym || u < 8 ? u : u - 16;
}

/* dq [K, N] of the packed q / scales (/ zero points: NULL for none) of a
 * weight [d0, d1] with K along `axis` (the layout wq_quantize writes). */
static void wq_dequant_kn(const uint8_t *q, const float *sc, const uint8_t *zp,
                          int64_t d0, int64_t d1, int axis, int64_t g, int bits,
                          float *dq) {
  const int64_t K = axis == 0 ? d0 : d1, N = axis == 0 ? d1 : d0, nb = (K + g - 1) / g;
  for (int64_t k = 0; k < K; k++)
    for (int64_t n = 0; n < N; n++) {
      int64_t e = axis == 0 ? k * d1 + n : n * d1 + k;
      int64_t s = axis == 0 ? (k / g) * d1 + n : n * nb + k / g;
      int z = zp ? zp[s] : 0;
      dq[k * N + n] = (float)(wq_unpack(q, e, bits, zp != NULL) - z) * sc[s];
    }
}

/* AWQ's scale of alpha (dml_awq_scales) into s [K]. */
static void awq_scale_of(const double *xabs, int64_t K, double alpha, double *s) {
  double mx = 0, mn = INFINITY;
  for (int64_t k = 0; k < K; k++) {
    s[k] = xabs[k] > 0 && isfinite(xabs[k]) ? pow(xabs[k], alpha) : 0;
    if (s[k] > 0) mx = fmax(mx, s[k]), mn = fmin(mn, s[k]);
  }
  double norm = mx > 0 ? sqrt(mx * mn) : 1;
  for (int64_t k = 0; k < K; k++) {
    s[k] = s[k] > 0 ? s[k] / norm : 1;
    if (!(s[k] > 0 && isfinite(s[k]) && (float)s[k] >= FLT_MIN)) s[k] = 1;
  }
}

/* diag(1/s) dq(diag(s) w) of round to nearest (w, dq [K, N]); s NULL: 1.
 * q / sc / zp: scratch of wq_quantize's sizes for [K, N] (zp with asym). */
static void awq_rtn_dq(const float *w, int64_t K, int64_t N, const double *s, int64_t g,
                       int bits, int asym, int clip, float *ws, uint8_t *q, float *sc,
                       uint8_t *zp, float *dq) {
  for (int64_t k = 0; k < K; k++)
    for (int64_t n = 0; n < N; n++)
      ws[k * N + n] = (float)(w[k * N + n] * (s ? s[k] : 1));
  wq_quantize(ws, K, N, 0, g, bits, asym, clip, q, sc, asym ? zp : NULL);
  wq_dequant_kn(q, sc, asym ? zp : NULL, K, N, 0, g, bits, dq);
  if (s)
    for (int64_t k = 0; k < K; k++)
      for (int64_t n = 0; n < N; n++) dq[k * N + n] = (float)(dq[k * N + n] / s[k]);
}

dml_status_t dml_awq_scales(const float *w, int64_t K, int64_t N, const double *h,
                            const double *xabs, int64_t group_size, int bits, int asym,
                            int clip, double *s, double *alpha) {
  if (!w || !h || !xabs || !s || K < 1 || N < 1 || group_size < 1 ||
      (bits != 4 && bits != 8) || (asym && bits != 4))
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                           "AWQ of a weight [%" PRId64 ", %" PRId64 "], group %" PRId64
                           ", %d bits: bad arguments",
                           K, N, group_size, bits);
  const int64_t nb = (K + group_size - 1) / group_size;
  float *ws = (float *)malloc((size_t)(K * N) * sizeof(float));
  float *dq = (float *)malloc((size_t)(K * N) * sizeof(float));
  uint8_t *q = (uint8_t *)malloc((size_t)(K * N));
  float *sc = (float *)malloc((size_t)(nb * N) * sizeof(float));
  uint8_t *zp = (uint8_t *)malloc((size_t)(nb * N));
  double *cand = (double *)malloc((size_t)K * sizeof(double));
  if (!ws || !dq || !q || !sc || !zp || !cand) {
    free(ws), free(dq), free(q), free(sc), free(zp), free(cand);
    return oom();
  }
  double best = INFINITY;
  for (int64_t k = 0; k < K; k++) s[k] = 1;
  if (alpha) *alpha = 0;
  for (int i = 0; i <= 10; i++) {
    awq_scale_of(xabs, K, i / 10.0, cand);
    awq_rtn_dq(w, K, N, cand, group_size, bits, asym, clip, ws, q, sc, zp, dq);
    /* tr(D^T H D) = sum_{i,j} H[i,j] <D[i,:], D[j,:]> (dml_gptq_out_sqnr's) */
    for (int64_t e = 0; e < K * N; e++) ws[e] = (float)((double)w[e] - (double)dq[e]);
    double err = 0;
    for (int64_t a = 0; a < K; a++) {
      const float *da = ws + a * N;
      for (int64_t b = 0; b <= a; b++) {
        double hab = h[a * K + b];
        if (hab == 0) continue;
        const float *db = ws + b * N;
        double dot = 0;
        for (int64_t n = 0; n < N; n++) dot += (double)da[n] * db[n];
        err += (a == b ? 1 : 2) * hab * dot;
      }
    }
    if (err < best) {
      best = err;
      memcpy(s, cand, (size_t)K * sizeof(double));
      if (alpha) *alpha = i / 10.0;
    }
  }
  free(ws), free(dq), free(q), free(sc), free(zp), free(cand);
  return DML_OK;
}

/* One weight w [d0, d1] (K along axis) to packed q, scales sc and (asym)
 * zero points zp (the layout of wq_quantize): round to nearest without H;
 * with H, AWQ's scales first (o->awq with xabs: into awq_s [K], else
 * awq_s is all 1) and GPTQ (unless o->no_gptq) on diag(s) w; sets L's
 * SQNRs (of the effective weight diag(1/s) dq, against w). */
static dml_status_t wq_layer_quant(const float *w, int64_t d0, int64_t d1, int axis,
                                   int64_t g, int bits, const double *H,
                                   const double *xabs, const dml_wq_options_t *o,
                                   uint8_t *q, float *sc, uint8_t *zp, double *awq_s,
                                   dml_wq_layer_t *L) {
  const int asym = o->asym && bits == 4, clip = o->clip_search;
  const double damp = o->damp > 0 ? o->damp : 0.01;
  L->rtn_out_sqnr_db = L->out_sqnr_db = NAN;
  L->bits = bits;
  L->awq_alpha = NAN;
  L->sqnr_db = wq_quantize(w, d0, d1, axis, g, bits, asym, clip, q, sc, asym ? zp : NULL);
  const int64_t K = axis == 0 ? d0 : d1, N = axis == 0 ? d1 : d0, nb = (K + g - 1) / g;
  for (int64_t k = 0; awq_s && k < K; k++) awq_s[k] = 1;
  if (!H) return DML_OK;
  float *wk = (float *)calloc((size_t)(K * N) + 1, sizeof(float));
  float *ws = (float *)malloc((size_t)(K * N) * sizeof(float));
  float *dq = (float *)malloc((size_t)(K * N) * sizeof(float));
  int8_t *qi = (int8_t *)malloc((size_t)(K * N));
  float *skn = (float *)malloc((size_t)(nb * N) * sizeof(float));
  uint8_t *zkn = (uint8_t *)malloc((size_t)(nb * N));
  double *hs = NULL;
  if (!wk || !ws || !dq || !qi || !skn || !zkn) {
    free(wk), free(ws), free(dq), free(qi), free(skn), free(zkn);
    return oom();
  }
  for (int64_t k = 0; k < K; k++)
    for (int64_t n = 0; n < N; n++)
      wk[k * N + n] = axis == 0 ? w[k * d1 + n] : w[n * d1 + k];
  wq_dequant_kn(q, sc, asym ? zp : NULL, d0, d1, axis, g, bits,
                dq); /* round to nearest */
  L->rtn_out_sqnr_db = dml_gptq_out_sqnr(wk, dq, K, N, H);
  dml_status_t st = DML_OK;
  const double *hq = H;
  if (o->awq && xabs && awq_s) {
    st = dml_awq_scales(wk, K, N, H, xabs, g, bits, asym, clip, awq_s, &L->awq_alpha);
    hs = st ? NULL : (double *)malloc((size_t)(K * K) * sizeof(double));
    if (!st && !hs) st = oom();
    for (int64_t i = 0; !st && i < K; i++)
      for (int64_t j = 0; j < K; j++)
        hs[i * K + j] = H[i * K + j] / (awq_s[i] * awq_s[j]);
    hq = hs;
  }
  for (int64_t k = 0; k < K; k++)
    for (int64_t n = 0; n < N; n++)
      ws[k * N + n] = (float)(wk[k * N + n] * (awq_s && o->awq ? awq_s[k] : 1));
  if (!st && !o->no_gptq) {
    st = dml_gptq_quantize_grid(ws, K, N, hq, g, bits, asym, clip, damp, o->act_order, qi,
                                skn, asym ? zkn : NULL);
  } else if (!st) { /* round to nearest of diag(s) w */
    uint8_t *qb = (uint8_t *)malloc((size_t)(K * N));
    if (!qb) st = oom();
    if (!st) {
      wq_quantize(ws, K, N, 0, g, bits, asym, clip, qb, skn, asym ? zkn : NULL);
      for (int64_t e = 0; e < K * N; e++) qi[e] = (int8_t)wq_unpack(qb, e, bits, asym);
    }
    free(qb);
  }
  if (!st) {
    /* into the packed layout */
    if (bits == 4) memset(q, 0, (size_t)((d0 * d1 + 1) / 2));
    for (int64_t k = 0; k < K; k++)
      for (int64_t n = 0; n < N; n++)
        wq_pack(q, axis == 0 ? k * d1 + n : n * d1 + k, bits, qi[k * N + n]);
    for (int64_t b = 0; b < nb; b++)
      for (int64_t n = 0; n < N; n++) {
        int64_t si = axis == 0 ? b * d1 + n : n * nb + b;
        sc[si] = skn[b * N + n];
        if (asym) zp[si] = zkn[b * N + n];
      }
    wq_dequant_kn(q, sc, asym ? zp : NULL, d0, d1, axis, g, bits, dq);
    double sig = 0, noise = 0;
    for (int64_t k = 0; k < K; k++)
      for (int64_t n = 0; n < N; n++) {
        if (o->awq && awq_s) dq[k * N + n] = (float)(dq[k * N + n] / awq_s[k]);
        double d = (double)wk[k * N + n] - dq[k * N + n];
        sig += (double)wk[k * N + n] * wk[k * N + n];
        noise += d * d;
      }
    L->sqnr_db = noise > 0 ? 10.0 * log10(sig / noise) : INFINITY;
    L->out_sqnr_db = dml_gptq_out_sqnr(wk, dq, K, N, H);
  }
  free(wk), free(ws), free(dq), free(qi), free(skn), free(zkn), free(hs);
  return st;
}

/* ---- GPTQ calibration: H = 2 X^T X of each quantized layer's input ---- */

typedef struct {
  char **names;  /* activation tensors (a layer's input 0), distinct */
  int64_t *k;    /* their last dim (the weight's K) */
  double **h;    /* K x K each (NULL until measured) */
  double **xabs; /* [K] each: mean |x_k| over the rows summed into h (AWQ) */
  size_t n;
  int64_t *xrows; /* rows summed into h[i] */
  int64_t rows;   /* model input rows run */
  int64_t hrows;  /* layer-input rows summed (per activation: the first's) */
} wq_calib_t;

static void wq_calib_free(wq_calib_t *c) {
  for (size_t i = 0; i < c->n; i++) free(c->names[i]), free(c->h[i]), free(c->xabs[i]);
  free((void *)c->names), free(c->k), free((void *)c->h), free((void *)c->xabs);
  free(c->xrows);
  memset(c, 0, sizeof *c);
}

static const double *wq_calib_h(const wq_calib_t *c, const char *name, int64_t k) {
  if (!c) return NULL;
  for (size_t i = 0; i < c->n; i++)
    if (!strcmp(c->names[i], name) && c->k[i] == k) return c->h[i];
  return NULL;
}

static const double *wq_calib_xabs(const wq_calib_t *c, const char *name, int64_t k) {
  if (!c) return NULL;
  for (size_t i = 0; i < c->n; i++)
    if (!strcmp(c->names[i], name) && c->k[i] == k) return c->xabs[i];
  return NULL;
}

static dml_dtype_t onnx_elem_dtype(int32_t t) {
  switch (t) {
    case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT: return DML_DTYPE_F32;
    case ONNX__TENSOR_PROTO__DATA_TYPE__INT64: return DML_DTYPE_I64;
    case ONNX__TENSOR_PROTO__DATA_TYPE__INT32: return DML_DTYPE_I32;
    default: return DML_DTYPE_INVALID;
  }
}

/* The model's real inputs (graph inputs that are not initializers). */
static size_t wq_real_inputs(const Onnx__GraphProto *g, const Onnx__ValueInfoProto **out,
                             size_t cap) {
  size_t n = 0;
  for (size_t i = 0; i < g->n_input; i++) {
    if (find_init(g, g->input[i]->name)) continue;
    if (n < cap) out[n] = g->input[i];
    n++;
  }
  return n;
}

/* Runs the f32 model `m` over the calibration files of o->calib and fills
 * c->h for c->names. */
static dml_status_t wq_calibrate(const Onnx__ModelProto *m, const char *base_dir,
                                 const dml_wq_options_t *o, wq_calib_t *c) {
  const Onnx__GraphProto *g = m->graph;
  enum { MAXIN = 16 };
  const Onnx__ValueInfoProto *gin[MAXIN];
  size_t nin = wq_real_inputs(g, gin, MAXIN);
  if (nin > MAXIN)
    return dml_status_make(DML_STATUS_UNIMPLEMENTED, OP,
                           "the model has %zu inputs; GPTQ calibration takes at most %d",
                           nin, (int)MAXIN);
  dml_tensor_t x[MAXIN];
  void *buf[MAXIN];
  memset(x, 0, sizeof x), memset(buf, 0, sizeof buf);
  size_t nf = 0;
  dml_status_t st = DML_OK;
  char *spec = xstrdup(o->calib);
  if (!spec) return oom();
  int64_t rows = -1, mask_in = -1;
  char *save = NULL;
  for (char *p = strtok_r(spec, ",", &save); p && !st; p = strtok_r(NULL, ",", &save)) {
    if (nf == nin) {
      st = dml_status_detail(
          dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                          "--calib names more than the model's %zu inputs", nin),
          "give one .npy per model input, in the model's input order");
      break;
    }
    const Onnx__ValueInfoProto *vi = gin[nf];
    st = dml_npy_read_file(p, &x[nf], &buf[nf]);
    if (st) {
      st = dml_status_annotate(st, "reading calibration data '%s'", p);
      break;
    }
    const Onnx__TypeProto__Tensor *tt =
        vi->type && vi->type->tensor_type ? vi->type->tensor_type : NULL;
    dml_dtype_t want = tt ? onnx_elem_dtype(tt->elem_type) : DML_DTYPE_INVALID;
    if (want == DML_DTYPE_INVALID) {
      st = dml_status_make(DML_STATUS_UNIMPLEMENTED, OP,
                           "the model's input '%s' is not an f32 / i64 / i32 tensor; "
                           "GPTQ calibration feeds those",
                           vi->name);
      nf++;
      break;
    }
    const dml_tensor_t *t = &x[nf++];
    if (t->dtype != want) {
      st = dml_status_detail(
          dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                          "calibration data '%s' is %s; the model's input '%s' is %s", p,
                          dml_dtype_name(t->dtype), vi->name, dml_dtype_name(want)),
          "give rows of the input's dtype (token ids: int64 .npy)");
      break;
    }
    const Onnx__TensorShapeProto *sh = tt->shape;
    int ok = sh && (int32_t)sh->n_dim == t->rank && t->rank >= 1;
    for (int32_t d = 1; ok && d < t->rank; d++)
      if (sh->dim[d]->value_case ==
              ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE &&
          sh->dim[d]->dim_value != t->dims[d])
        ok = 0;
    if (!ok) {
      char xs[160];
      int at = snprintf(xs, sizeof xs, "[");
      for (int32_t d = 0; d < t->rank && at < (int)sizeof xs - 24; d++)
        at += snprintf(xs + at, sizeof xs - (size_t)at, "%s%" PRId64, d ? "," : "",
                       t->dims[d]);
      snprintf(xs + at, sizeof xs - (size_t)at, "]");
      char is[160];
      at = snprintf(is, sizeof is, "[");
      for (size_t d = 0; sh && d < sh->n_dim && at < (int)sizeof is - 40; d++) {
        const Onnx__TensorShapeProto__Dimension *dd = sh->dim[d];
        if (dd->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE)
          at += snprintf(is + at, sizeof is - (size_t)at, "%s%" PRId64, d ? "," : "",
                         dd->dim_value);
        else
          at += snprintf(is + at, sizeof is - (size_t)at, "%s%.24s", d ? "," : "",
                         dd->dim_param ? dd->dim_param : "?");
      }
      snprintf(is + at, sizeof is - (size_t)at, "]");
      st = dml_status_detail(
          dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                          "calibration data '%s' of shape %s does not fit the model's "
                          "input '%s' %s",
                          p, xs, vi->name, is),
          "give rows [N, ...] of the input's rank whose static dims are the input's");
      break;
    }
    if (rows >= 0 && t->dims[0] != rows) {
      st = dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                           "calibration data '%s' has %" PRId64
                           " rows, the one before %" PRId64,
                           p, t->dims[0], rows);
      break;
    }
    rows = t->dims[0];
    if (o->calib_mask && !strcmp(o->calib_mask, vi->name)) mask_in = (int64_t)nf - 1;
  }
  free(spec);
  if (!st && nf != nin)
    st = dml_status_detail(
        dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                        "--calib gives %zu .npy files; the model has %zu inputs", nf,
                        nin),
        "give one .npy per model input, comma separated, in the model's input order");
  if (!st && rows <= 0)
    st = dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                         "the calibration set is empty (0 rows)");
  if (!st && o->calib_mask &&
      (mask_in < 0 || x[mask_in].rank != 2 || x[mask_in].dtype == DML_DTYPE_F32))
    st = dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                         "--calib-mask '%s' names no integer model input [N, S]",
                         o->calib_mask);
  const int64_t batch = o->batch > 0 ? o->batch : 16;
  if (!st && o->calib_rows > 0 && rows > o->calib_rows) rows = o->calib_rows;
  /* the f32 model with the layer inputs as outputs; symbolic dims bounded
   * by the calibration data's */
  dml_onnx_dim_bound_t bounds[64];
  size_t nbound = 0;
  int64_t maxb = batch;
  for (size_t i = 0; i < nin && !st; i++) {
    const Onnx__TensorShapeProto *sh = gin[i]->type->tensor_type->shape;
    for (size_t d = 0; d < sh->n_dim; d++) {
      if (sh->dim[d]->value_case !=
              ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM ||
          !sh->dim[d]->dim_param)
        continue;
      int64_t b = d == 0 ? batch : x[i].dims[d];
      if (b > maxb) maxb = b;
      size_t k = 0;
      while (k < nbound && strcmp(bounds[k].name, sh->dim[d]->dim_param)) k++;
      if (k == nbound && nbound < 64)
        bounds[nbound++] = (dml_onnx_dim_bound_t){sh->dim[d]->dim_param, b};
      else if (k < nbound && b > bounds[k].bound)
        bounds[k].bound = b;
    }
  }
  uint8_t *mb = NULL;
  size_t mn = 0;
  if (!st) {
    size_t size = onnx__model_proto__get_packed_size(m);
    uint8_t *bytes = (uint8_t *)malloc(size ? size : 1);
    Onnx__ModelProto *cp = NULL;
    if (bytes) {
      onnx__model_proto__pack(m, bytes);
      cp = onnx__model_proto__unpack(NULL, size, bytes);
    }
    free(bytes);
    if (!cp || add_outputs(cp->graph, c->names, c->n)) {
      st = oom();
    } else {
      mn = onnx__model_proto__get_packed_size(cp);
      mb = (uint8_t *)malloc(mn ? mn : 1);
      if (!mb)
        st = oom();
      else
        onnx__model_proto__pack(cp, mb);
    }
    if (cp) onnx__model_proto__free_unpacked(cp, NULL);
  }
  dml_rt_model_t *rm = NULL;
  dml_rt_session_t *rs = NULL;
  if (!st) {
    dml_compile_options_t co;
    memset(&co, 0, sizeof co);
    co.targets = "cpu";
    co.batch_bound = maxb;
    co.dim_bounds = bounds;
    co.n_dim_bounds = nbound;
    void *pkg = NULL;
    size_t pn = 0;
    st = dml_compile_onnx_memory(mb, mn, base_dir, "the f32 model with its layer inputs",
                                 &co, &pkg, &pn, NULL);
    if (!st) st = dml_rt_model_load_memory(pkg, pn, &rm);
    free(pkg);
    if (!st) st = dml_rt_session_create(rm, "cpu", &rs);
    if (st) st = dml_status_annotate(st, "compiling and running the f32 model for GPTQ");
  }
  free(mb);
  int32_t in_idx[MAXIN];
  int32_t *out_idx = (int32_t *)calloc(c->n ? c->n : 1, sizeof(int32_t));
  if (!st && !out_idx) st = oom();
  for (size_t i = 0; i < nin && !st; i++) {
    in_idx[i] = dml_rt_model_find_input(rm, gin[i]->name);
    if (in_idx[i] < 0)
      st = dml_status_make(DML_STATUS_INTERNAL, OP, "input '%s' not in the package",
                           gin[i]->name);
  }
  for (size_t i = 0; i < c->n && !st; i++) {
    out_idx[i] = dml_rt_model_find_output(rm, c->names[i]);
    c->h[i] = (double *)calloc((size_t)(c->k[i] * c->k[i]), sizeof(double));
    c->xabs[i] = (double *)calloc((size_t)c->k[i], sizeof(double));
    if (!c->h[i] || !c->xabs[i])
      st = oom();
    else if (out_idx[i] < 0)
      st = dml_status_make(DML_STATUS_INTERNAL, OP, "layer input '%s' not in the package",
                           c->names[i]);
  }
  for (int64_t r0 = 0; r0 < rows && !st; r0 += batch) {
    int64_t nr = rows - r0 < batch ? rows - r0 : batch;
    dml_rt_session_clear_inputs(rs); /* a shorter last chunk: rebound at its size */
    for (size_t i = 0; i < nin && !st; i++) {
      dml_tensor_t t = x[i];
      int64_t re = dml_dims_numel(t.dims + 1, t.rank - 1);
      t.dims[0] = nr;
      t.data = (uint8_t *)x[i].data + (size_t)(r0 * re) * dml_dtype_size(t.dtype);
      st = dml_rt_session_set_input(rs, (uint32_t)in_idx[i], &t);
    }
    if (!st) st = dml_rt_session_run(rs);
    for (size_t a = 0; a < c->n && !st; a++) {
      dml_tensor_t v;
      st = dml_rt_session_get_output(rs, (uint32_t)out_idx[a], &v);
      if (st) break;
      const int64_t K = c->k[a], n = dml_dims_numel(v.dims, v.rank);
      if (v.dtype != DML_DTYPE_F32 || v.rank < 1 || v.dims[v.rank - 1] != K) {
        st = dml_status_make(DML_STATUS_UNIMPLEMENTED, OP,
                             "layer input '%s' is not f32 [..., %" PRId64 "]",
                             c->names[a], K);
        break;
      }
      const float *p = (const float *)v.data;
      const int use_mask = mask_in >= 0 && v.rank == 3 && v.dims[0] == nr &&
                           v.dims[1] == x[mask_in].dims[1];
      double *H = c->h[a], *xa = c->xabs[a];
      int64_t used = 0;
      for (int64_t r = 0; r < n / K; r++) {
        if (use_mask) {
          int64_t mi = (r0 + r / v.dims[1]) * x[mask_in].dims[1] + r % v.dims[1];
          int64_t mv = x[mask_in].dtype == DML_DTYPE_I64
                           ? ((const int64_t *)x[mask_in].data)[mi]
                           : ((const int32_t *)x[mask_in].data)[mi];
          if (mv == 0) continue;
        }
        const float *xr = p + r * K;
        int fin = 1;
        for (int64_t i = 0; i < K && fin; i++) fin = isfinite(xr[i]);
        if (!fin) continue; /* a row with NaN / inf would poison H */
        used++;
        for (int64_t i = 0; i < K; i++) xa[i] += fabs((double)xr[i]);
        for (int64_t i = 0; i < K; i++) {
          double xi = xr[i];
          if (xi == 0) continue;
          double *hi = H + i * K;
          for (int64_t j = 0; j <= i; j++) hi[j] += xi * (double)xr[j];
        }
      }
      if (a == 0) c->hrows += used;
      c->xrows[a] += used;
    }
  }
  for (size_t a = 0; a < c->n && !st; a++) {
    const int64_t K = c->k[a];
    double *H = c->h[a];
    for (int64_t i = 0; i < K; i++)
      for (int64_t j = 0; j <= i; j++) H[i * K + j] = H[j * K + i] = 2 * H[i * K + j];
    for (int64_t i = 0; i < K; i++)
      c->xabs[a][i] /= c->xrows[a] > 0 ? (double)c->xrows[a] : 1;
  }
  c->rows = st ? 0 : rows;
  free(out_idx);
  dml_rt_session_release(rs);
  dml_rt_model_release(rm);
  for (size_t i = 0; i < nf; i++) free(buf[i]);
  return st;
}

/* Opset 21 for the blocked DequantizeLinear: the ops of `g` (and its
 * subgraphs) whose meaning changed since `opset` are rewritten or
 * refused. */
static dml_status_t wq_upgrade_graph(Onnx__GraphProto *g, int64_t opset) {
  static const char *const reduce18[] = {
      "ReduceMean", "ReduceMax",    "ReduceMin",       "ReduceProd",     "ReduceL1",
      "ReduceL2",   "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"};
  for (size_t i = 0; i < g->n_node; i++) {
    Onnx__NodeProto *n = g->node[i];
    for (size_t a = 0; a < n->n_attribute; a++) {
      Onnx__AttributeProto *at = n->attribute[a];
      if (at->g) DML_RETURN_IF_ERROR(wq_upgrade_graph(at->g, opset));
      for (size_t k = 0; k < at->n_graphs; k++)
        DML_RETURN_IF_ERROR(wq_upgrade_graph(at->graphs[k], opset));
    }
    if (!is_default_domain(n->domain) || !n->op_type) continue;
    const char *op = n->op_type;
    if ((opset < 21 && !strcmp(op, "GroupNormalization")) ||
        (opset < 20 && (!strcmp(op, "DFT") || !strcmp(op, "GridSample"))))
      return dml_status_detail(
          dml_status_make(DML_STATUS_UNIMPLEMENTED, OP,
                          "node '%s' (%s-%" PRId64
                          ") changed meaning by opset 21, which the blocked "
                          "DequantizeLinear of --weight-only needs",
                          node_label(n), op, opset),
          "convert the model to opset 21 first (onnx.version_converter)");
    int red = 0;
    for (size_t k = 0; k < sizeof reduce18 / sizeof reduce18[0]; k++)
      red |= !strcmp(op, reduce18[k]);
    if (!red || opset >= 18) continue;
    /* axes attribute -> int64 initializer input 1 */
    size_t ai = n->n_attribute;
    for (size_t a = 0; a < n->n_attribute; a++)
      if (n->attribute[a]->name && !strcmp(n->attribute[a]->name, "axes")) ai = a;
    if (ai == n->n_attribute) continue; /* all axes: the same at 18 */
    Onnx__AttributeProto *ax = n->attribute[ai];
    char *an = xprintf("%s_axes_opset18", node_label(n));
    if (!an) return oom();
    int64_t na = (int64_t)ax->n_ints;
    Onnx__TensorProto *t = mk_tensor(an, ONNX__TENSOR_PROTO__DATA_TYPE__INT64, &na, 1,
                                     ax->ints, ax->n_ints * sizeof(int64_t));
    char **ni = (char **)realloc(n->input, 2 * sizeof(char *));
    Onnx__TensorProto **gi = (Onnx__TensorProto **)realloc(
        g->initializer, (g->n_initializer + 1) * sizeof *gi);
    if (ni) n->input = ni;
    if (gi) g->initializer = gi;
    if (!t || !ni || !gi || n->n_input != 1) {
      if (t) protobuf_c_message_free_unpacked(&t->base, NULL);
      free(an);
      return !t || !ni || !gi ? oom()
                              : dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                                                "node '%s' (%s) has %zu inputs",
                                                node_label(n), op, n->n_input);
    }
    n->input[n->n_input++] = an;
    g->initializer[g->n_initializer++] = t;
    protobuf_c_message_free_unpacked(&ax->base, NULL);
    for (size_t a = ai + 1; a < n->n_attribute; a++)
      n->attribute[a - 1] = n->attribute[a];
    n->n_attribute--;
  }
  return DML_OK;
}

static int wq_name_taken(const Onnx__GraphProto *g, const char *name) {
  if (find_init(g, name) || is_graph_input(g, name) || is_graph_output(g, name)) return 1;
  for (size_t i = 0; i < g->n_node; i++)
    for (size_t k = 0; k < g->node[i]->n_output; k++)
      if (g->node[i]->output[k] && !strcmp(g->node[i]->output[k], name)) return 1;
  return 0;
}

/* Refuses a model already quantized and --exclude names of no node. */
static dml_status_t wq_check_model(const Onnx__GraphProto *g, const dml_wq_options_t *o) {
  for (size_t i = 0; i < g->n_node; i++)
    if (is_quant_op(g->node[i]->op_type))
      return dml_status_detail(
          dml_status_make(DML_STATUS_FAILED_PRECONDITION, OP,
                          "the model is already quantized: node '%s' is %s",
                          node_label(g->node[i]), g->node[i]->op_type),
          "quantize the f32 model it was made from");
  for (size_t e = 0; e < o->n_exclude; e++) {
    size_t i = 0;
    for (; i < g->n_node; i++) {
      const Onnx__NodeProto *n = g->node[i];
      if ((n->name && !strcmp(n->name, o->exclude[e])) ||
          (n->n_output && n->output[0] && !strcmp(n->output[0], o->exclude[e])))
        break;
    }
    if (i == g->n_node)
      return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                             "--exclude '%s' names no node of the model", o->exclude[e]);
  }
  return DML_OK;
}

static int wq_excluded(const Onnx__NodeProto *n, const dml_wq_options_t *o) {
  for (size_t e = 0; e < o->n_exclude; e++)
    if (!strcmp(o->exclude[e], n->name ? n->name : "") ||
        (n->n_output && n->output[0] && !strcmp(o->exclude[e], n->output[0])))
      return 1;
  return 0;
}

/* The layer inputs GPTQ needs: input 0 of each MatMul / Gemm with an f32
 * rank-2 initializer B, not excluded (distinct by name and K). */
static dml_status_t wq_calib_names(const Onnx__GraphProto *g, const dml_wq_options_t *o,
                                   wq_calib_t *c) {
  for (size_t i = 0; i < g->n_node; i++) {
    const Onnx__NodeProto *n = g->node[i];
    int mm = is_default_domain(n->domain) && n->op_type && !strcmp(n->op_type, "MatMul");
    int gemm = is_default_domain(n->domain) && n->op_type && !strcmp(n->op_type, "Gemm");
    if ((!mm && !gemm) || n->n_input < 2 || !n->input[0] || !n->input[1]) continue;
    const Onnx__TensorProto *w = find_init(g, n->input[1]);
    if (!w || is_graph_input(g, n->input[1]) || w->n_dims != 2 ||
        w->data_type != ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT || wq_excluded(n, o))
      continue;
    if (gemm && attr_i(n, "transA", 0)) continue;
    int64_t k = w->dims[gemm && attr_i(n, "transB", 0) ? 1 : 0];
    if (wq_calib_h(c, n->input[0], k) || k < 1 || k > 65536) continue;
    int dup = 0;
    for (size_t j = 0; j < c->n; j++) dup |= !strcmp(c->names[j], n->input[0]);
    if (dup) continue; /* the same tensor with another K: not a layer input */
    char **nn = (char **)realloc((void *)c->names, (c->n + 1) * sizeof *nn);
    if (nn) c->names = nn;
    int64_t *nk = (int64_t *)realloc(c->k, (c->n + 1) * sizeof *nk);
    if (nk) c->k = nk;
    double **nh = (double **)realloc((void *)c->h, (c->n + 1) * sizeof *nh);
    if (nh) c->h = nh;
    double **nx = (double **)realloc((void *)c->xabs, (c->n + 1) * sizeof *nx);
    if (nx) c->xabs = nx;
    int64_t *nr = (int64_t *)realloc(c->xrows, (c->n + 1) * sizeof *nr);
    if (nr) c->xrows = nr;
    if (!nn || !nk || !nh || !nx || !nr || !(c->names[c->n] = xstrdup(n->input[0])))
      return oom();
    c->k[c->n] = k;
    c->xabs[c->n] = NULL;
    c->xrows[c->n] = 0;
    c->h[c->n++] = NULL;
  }
  return DML_OK;
}

/* How many inputs of g's nodes (not subgraphs) read `name`. */
static size_t wq_readers(const Onnx__GraphProto *g, const char *name) {
  size_t c = 0;
  for (size_t i = 0; i < g->n_node; i++)
    for (size_t k = 0; k < g->node[i]->n_input; k++)
      c += g->node[i]->input[k] && !strcmp(g->node[i]->input[k], name);
  return c;
}

static dml_status_t wq_model(Onnx__ModelProto *m, const dml_wq_options_t *o,
                             dml_wq_report_t *rep, const wq_calib_t *cal,
                             char *const *int8_set, size_t n_int8) {
  Onnx__GraphProto *g = m->graph;
  DML_RETURN_IF_ERROR(wq_check_model(g, o));
  int64_t opset = -1;
  Onnx__OperatorSetIdProto *def = NULL;
  for (size_t i = 0; i < m->n_opset_import; i++)
    if (is_default_domain(m->opset_import[i]->domain))
      opset = m->opset_import[i]->version, def = m->opset_import[i];
  rep->opset_in = opset;
  rep->opset_out = opset < 21 ? 21 : opset;
  /* the layers */
  gb_t b;
  memset(&b, 0, sizeof b);
  b.g = g;
  char **done = NULL; /* weights quantized (shared by two nodes: once) */
  size_t n_done = 0;
  /* AWQ: Mul(x, 1 / s) nodes, each to go right before graph node pre_at[i] */
  Onnx__NodeProto **pre = NULL;
  size_t *pre_at = NULL, n_pre = 0;
  dml_status_t st = DML_OK;
  for (size_t i = 0; i < g->n_node && !st; i++) {
    Onnx__NodeProto *n = g->node[i];
    int mm = is_default_domain(n->domain) && n->op_type && !strcmp(n->op_type, "MatMul");
    int gemm = is_default_domain(n->domain) && n->op_type && !strcmp(n->op_type, "Gemm");
    if ((!mm && !gemm) || n->n_input < 2 || !n->input[1]) continue;
    const Onnx__TensorProto *w = find_init(g, n->input[1]);
    if (!w || is_graph_input(g, n->input[1])) continue; /* not a constant weight */
    dml_wq_layer_t *nl =
        (dml_wq_layer_t *)realloc(rep->layers, (rep->n_layers + 1) * sizeof *nl);
    if (!nl) {
      st = oom();
      break;
    }
    rep->layers = nl;
    dml_wq_layer_t *L = &rep->layers[rep->n_layers++];
    memset(L, 0, sizeof *L);
    L->sqnr_db = L->awq_alpha = NAN;
    L->name = xstrdup(node_label(n));
    L->op = xstrdup(n->op_type);
    L->weight = xstrdup(n->input[1]);
    if (!L->name || !L->op || !L->weight) {
      st = oom();
      break;
    }
    int trans = gemm && attr_i(n, "transB", 0) != 0;
    int axis = trans ? 1 : 0;
    if (w->n_dims == 2) {
      L->k = w->dims[axis];
      L->n = w->dims[1 - axis];
    }
    L->sqnr_db = L->rtn_out_sqnr_db = L->out_sqnr_db = NAN;
    if (wq_excluded(n, o)) L->why_f32 = "--exclude";
    if (!L->why_f32 && w->data_type != ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT)
      L->why_f32 = "the weight is not f32";
    if (!L->why_f32 && w->n_dims != 2) L->why_f32 = "the weight is not rank 2";
    if (L->why_f32) continue;
    size_t nw = 0;
    float *wf = init_floats(w, &nw);
    if (!wf) {
      L->why_f32 = "the weight's data is not in the model (external data)";
      continue;
    }
    int finite = 1;
    for (size_t e = 0; e < nw && finite; e++) finite = isfinite(wf[e]);
    if (!finite) {
      free(wf);
      L->why_f32 = "the weight holds NaN or infinity";
      continue;
    }
    int bits = o->bits;
    for (size_t k = 0; k < n_int8; k++)
      if (!strcmp(int8_set[k], L->name)) bits = 8;
    const double *H =
        gemm && attr_i(n, "transA", 0) ? NULL : wq_calib_h(cal, n->input[0], L->k);
    /* AWQ scales a weight read by this node only (its Mul is on this input) */
    const double *xabs = H && o->awq && wq_readers(g, n->input[1]) == 1
                             ? wq_calib_xabs(cal, n->input[0], L->k)
                             : NULL;
    const int asym = o->asym && bits == 4;
    const int64_t d0 = w->dims[0], d1 = w->dims[1], gs = o->group_size;
    const int64_t nb = (L->k + gs - 1) / gs;
    int64_t sdims[2] = {axis == 0 ? nb : d0, axis == 0 ? d1 : nb};
    size_t ns = (size_t)(sdims[0] * sdims[1]);
    size_t qbytes = bits == 8 ? nw : (nw + 1) / 2;
    char *qname = xprintf("%s_quantized", n->input[1]);
    char *sname = xprintf("%s_scale", n->input[1]);
    char *dname = xprintf("%s_DequantizeLinear", n->input[1]);
    char *dout = xprintf("%s_DequantizeLinear_Output", n->input[1]);
    char *zname = xprintf("%s_zero_point", n->input[1]);
    char *aname = xprintf("%s_awq_scale", n->input[1]);
    char *mname = xprintf("%s_awq_Mul", n->input[1]);
    char *mout = xprintf("%s_awq_Output", n->input[1]);
    uint8_t *q = (uint8_t *)malloc(qbytes ? qbytes : 1);
    float *sc = (float *)malloc((ns ? ns : 1) * sizeof(float));
    uint8_t *zp = (uint8_t *)malloc(ns ? ns : 1);
    double *awq_s = (double *)malloc((size_t)(L->k > 0 ? L->k : 1) * sizeof(double));
    int again = 0;
    for (size_t k = 0; k < n_done && !again; k++) again = !strcmp(done[k], n->input[1]);
    if (!qname || !sname || !dname || !dout || !zname || !aname || !mname || !mout ||
        !q || !sc || !zp || !awq_s) {
      st = oom();
    } else if (!again) {
      const char *taken = wq_name_taken(g, qname)           ? qname
                          : wq_name_taken(g, sname)         ? sname
                          : wq_name_taken(g, dout)          ? dout
                          : asym && wq_name_taken(g, zname) ? zname
                          : xabs && wq_name_taken(g, aname) ? aname
                          : xabs && wq_name_taken(g, mout)  ? mout
                                                            : NULL;
      if (taken) {
        st = dml_status_detail(
            dml_status_make(DML_STATUS_UNIMPLEMENTED, OP,
                            "the model already has a tensor named '%s', a name "
                            "--weight-only gives to the quantization of '%s'",
                            taken, n->input[1]),
            "rename that tensor in the model");
      } else if (!(st = wq_layer_quant(wf, d0, d1, axis, gs, bits, H, xabs, o, q, sc, zp,
                                       awq_s, L))) {
        push_init(&b, mk_tensor(qname,
                                bits == 8 ? ONNX__TENSOR_PROTO__DATA_TYPE__INT8
                                : asym    ? ONNX_UINT4
                                          : ONNX_INT4,
                                w->dims, 2, q, qbytes));
        push_init(&b, mk_tensor(sname, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, sdims, 2, sc,
                                ns * sizeof(float)));
        if (asym) { /* UINT4 zero points, packed two per byte */
          uint8_t *zb = (uint8_t *)calloc((ns + 1) / 2, 1);
          if (!zb) {
            b.failed = 1;
          } else {
            for (size_t e = 0; e < ns; e++) wq_pack(zb, (int64_t)e, 4, zp[e]);
            push_init(&b, mk_tensor(zname, ONNX_UINT4, sdims, 2, zb, (ns + 1) / 2));
          }
          free(zb);
        }
        push_node(&b,
                  mk_block_dq(dname, qname, sname, asym ? zname : NULL, dout, axis, gs));
        if (xabs) { /* AWQ: x / s in front of the MatMul / Gemm */
          float *inv = (float *)malloc((size_t)L->k * sizeof(float));
          const char *in[2] = {n->input[0], aname};
          Onnx__NodeProto *mul = mk_plain_node("Mul", mname, in, 2, mout);
          Onnx__NodeProto **np =
              (Onnx__NodeProto **)realloc((void *)pre, (n_pre + 1) * sizeof *np);
          if (np) pre = np;
          size_t *na = (size_t *)realloc(pre_at, (n_pre + 1) * sizeof *na);
          if (na) pre_at = na;
          if (!inv || !mul || !np || !na) {
            b.failed = 1;
            if (mul) protobuf_c_message_free_unpacked(&mul->base, NULL);
          } else {
            for (int64_t k = 0; k < L->k; k++) inv[k] = (float)(1.0 / awq_s[k]);
            push_init(&b, mk_tensor(aname, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, &L->k, 1,
                                    inv, (size_t)L->k * sizeof(float)));
            pre[n_pre] = mul, pre_at[n_pre++] = i;
            free(n->input[0]);
            n->input[0] = mout, mout = NULL;
          }
          free(inv);
          rep->q_weight_bytes += (uint64_t)L->k * sizeof(float);
        }
        char **nd = (char **)realloc(done, (n_done + 1) * sizeof *nd);
        if (nd) done = nd;
        if (!nd || !(done[n_done] = xstrdup(n->input[1])))
          b.failed = 1;
        else
          n_done++;
        rep->f32_weight_bytes += nw * sizeof(float);
        rep->q_weight_bytes += qbytes + ns * sizeof(float) + (asym ? (ns + 1) / 2 : 0);
      }
    } else {
      st = wq_layer_quant(wf, d0, d1, axis, gs, bits, H, NULL, o, q, sc, zp, NULL, L);
    }
    if (!st && !b.failed) {
      L->quantized = 1;
      note_replaced(&b, n->input[1]);
      n->input[1] = dout, dout = NULL;
    }
    free(wf), free(q), free(sc), free(qname), free(sname), free(dname), free(dout);
    free(zp), free(awq_s), free(zname), free(aname), free(mname), free(mout);
    if (!st && b.failed) st = oom();
  }
  for (size_t k = 0; k < n_done; k++) free(done[k]);
  free((void *)done);
  size_t nq = 0;
  for (size_t i = 0; i < rep->n_layers; i++) nq += rep->layers[i].quantized;
  if (!st && !nq)
    st = dml_status_detail(
        dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                        "the model has no MatMul / Gemm weight to quantize (%zu with a "
                        "constant weight, none quantized)",
                        rep->n_layers),
        "--weight-only quantizes MatMul / Gemm nodes whose B is an f32 rank-2 "
        "initializer");
  if (!st && opset < 21) st = wq_upgrade_graph(g, opset);
  if (!st) {
    /* the DQ nodes first (they read initializers only), then the model's */
    Onnx__NodeProto **all =
        (Onnx__NodeProto **)malloc((b.n_nodes + g->n_node + 1) * sizeof *all);
    if (!all) {
      st = oom();
    } else {
      if (b.n_nodes) memcpy((void *)all, (const void *)b.nodes, b.n_nodes * sizeof *all);
      /* the model's nodes, each AWQ Mul right before its MatMul / Gemm */
      Onnx__NodeProto **grown =
          n_pre ? (Onnx__NodeProto **)realloc(
                      (void *)all, (b.n_nodes + g->n_node + n_pre + 1) * sizeof *all)
                : all;
      if (!grown) {
        free((void *)all);
        st = oom();
      }
      all = grown;
      size_t at = b.n_nodes, p = 0;
      for (size_t i = 0; i < g->n_node && !st; i++) {
        while (p < n_pre && pre_at[p] == i) all[at++] = pre[p++];
        all[at++] = g->node[i];
      }
      if (!st) {
        n_pre = 0;
        free(g->node);
        g->node = all;
        g->n_node = at;
        b.n_nodes = 0;
      }
    }
    if (!st) {
      drop_unread(g, b.replaced, b.n_replaced);
      if (opset < 21) def->version = 21;
      if (!m->has_ir_version || m->ir_version < 10)
        m->has_ir_version = 1, m->ir_version = 10;
    }
  }
  for (size_t i = 0; i < b.n_nodes; i++)
    protobuf_c_message_free_unpacked(&b.nodes[i]->base, NULL);
  for (size_t i = 0; i < n_pre; i++)
    protobuf_c_message_free_unpacked(&pre[i]->base, NULL);
  free((void *)pre), free(pre_at);
  free(b.nodes);
  for (size_t i = 0; i < b.n_replaced; i++) free(b.replaced[i]);
  free((void *)b.replaced);
  return st;
}

dml_status_t dml_quantize_weights_onnx(const char *onnx_path,
                                       const dml_wq_options_t *opts, void **out_model,
                                       size_t *out_size, dml_wq_report_t *report) {
  if (!onnx_path || !out_model || !out_size)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP, "NULL argument");
  dml_wq_options_t dflt;
  dml_wq_options_init(&dflt);
  const dml_wq_options_t *o = opts ? opts : &dflt;
  if (o->bits != 8 && o->bits != 4)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                           "weight-only bits %d (int8 or int4)", o->bits);
  if (o->group_size < 2 || o->group_size > ((int64_t)1 << 20))
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                           "group size %" PRId64 " outside [2, 1048576]", o->group_size);
  if (o->int8_layers < 0 || (o->int8_layers > 0 && (!o->calib || o->bits != 4)))
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                           "int8 layers %" PRId64
                           ": a count >= 0, with int4 GPTQ (calibration data)",
                           o->int8_layers);
  if (o->damp < 0 || !(o->damp < 1e6))
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP, "GPTQ dampening %g", o->damp);
  if (o->calib_mask && !o->calib)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                           "a calibration mask without calibration data");
  if (o->asym && o->bits != 4)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                           "asymmetric weight-only groups are int4 only");
  if ((o->awq || o->no_gptq) && !o->calib)
    return dml_status_make(
        DML_STATUS_INVALID_ARGUMENT, OP,
        "AWQ / round to nearest with calibration without calibration data");
  size_t pl = strlen(onnx_path);
  if (pl >= 7 && !strcmp(onnx_path + pl - 7, ".dmlpkg"))
    return dml_status_detail(
        dml_status_make(DML_STATUS_UNIMPLEMENTED, OP,
                        "'%s' is a package; dmlc quantize reads the ONNX model",
                        onnx_path),
        "quantize the ONNX model the package was compiled from");
  dml_wq_report_t rep_local;
  dml_wq_report_t *rep = report ? report : &rep_local;
  memset(rep, 0, sizeof *rep);
  uint8_t *bytes = NULL;
  size_t n = 0;
  Onnx__ModelProto *m = NULL;
  dml_status_t st = dml_file_read_all(OP, onnx_path, &bytes, &n);
  if (!st) {
    m = onnx__model_proto__unpack(NULL, n, bytes);
    if (!m || !m->graph)
      st = dml_status_make(DML_STATUS_DATA_LOSS, OP, "'%s' is not a valid ONNX model",
                           onnx_path);
  }
  wq_calib_t cal;
  memset(&cal, 0, sizeof cal);
  char **int8_set = NULL;
  size_t n_int8 = 0;
  if (!st && o->calib) {
    st = wq_check_model(m->graph, o);
    if (!st) st = wq_calib_names(m->graph, o, &cal);
    char *base = dir_of(onnx_path);
    if (!st && !base) st = oom();
    if (!st && cal.n) st = wq_calibrate(m, base, o, &cal);
    free(base);
  }
  if (!st && o->calib && o->int8_layers > 0) {
    /* the int4 GPTQ pass on a copy ranks the layers by output SQNR */
    Onnx__ModelProto *m2 = onnx__model_proto__unpack(NULL, n, bytes);
    dml_wq_report_t r2;
    memset(&r2, 0, sizeof r2);
    if (!m2) st = oom();
    if (!st) st = wq_model(m2, o, &r2, &cal, NULL, 0);
    for (int64_t k = 0; !st && k < o->int8_layers; k++) {
      size_t worst = r2.n_layers;
      for (size_t i = 0; i < r2.n_layers; i++) {
        const dml_wq_layer_t *l = &r2.layers[i];
        int taken = 0;
        for (size_t j = 0; j < n_int8; j++) taken |= !strcmp(int8_set[j], l->name);
        if (!l->quantized || taken || !(l->out_sqnr_db < INFINITY)) continue;
        if (worst == r2.n_layers || l->out_sqnr_db < r2.layers[worst].out_sqnr_db)
          worst = i;
      }
      if (worst == r2.n_layers) break;
      char **ns = (char **)realloc((void *)int8_set, (n_int8 + 1) * sizeof *ns);
      if (ns) int8_set = ns;
      if (!ns || !(int8_set[n_int8] = xstrdup(r2.layers[worst].name)))
        st = oom();
      else
        n_int8++;
    }
    dml_wq_report_free(&r2);
    if (m2) onnx__model_proto__free_unpacked(m2, NULL);
  }
  free(bytes);
  if (!st) st = wq_model(m, o, rep, o->calib ? &cal : NULL, int8_set, n_int8);
  rep->calib_rows = cal.rows;
  rep->hessian_rows = cal.hrows;
  wq_calib_free(&cal);
  for (size_t k = 0; k < n_int8; k++) free(int8_set[k]);
  free((void *)int8_set);
  if (!st) {
    size_t size = onnx__model_proto__get_packed_size(m);
    uint8_t *ob = (uint8_t *)malloc(size ? size : 1);
    if (!ob) {
      st = oom();
    } else {
      onnx__model_proto__pack(m, ob);
      *out_model = ob;
      *out_size = size;
    }
  }
  if (m) onnx__model_proto__free_unpacked(m, NULL);
  if (st || !report) dml_wq_report_free(rep);
  return st;
}
