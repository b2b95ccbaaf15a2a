/*
 * conformance.c — dml_conformance: runs ONNX's backend tests (Debian's
 * libonnx-testdata: suites node, pytorch-converted, pytorch-operator, simple,
 * real) on the CPU device and checks the results against an expected-failure
 * list.
 *
 * For each test directory: model.onnx is compiled in memory (ONNX import ->
 * default pass pipeline -> package; dml_compile_onnx_memory) and loaded with
 * dml_rt_model_load_memory; every test_data_set_N/input_K.pb is bound to the
 * K-th graph input that is not an initializer, the model is run, and every
 * output_K.pb is compared with graph output K: dtype and shape exactly,
 * float values with |got - want| <= 1e-5 + 1e-3 * |want| (NaN equals NaN),
 * integer and bool values exactly.
 *
 * Symbolic dims of the declared inputs get one bound: the largest input dim
 * of the data sets, at least 64. Every graph input is bound at run time, as
 * ONNX's own runner does: shape inputs computed at run time (Reshape's
 * shape, Slice's starts, Resize's scales, ...) give data-dependent dims
 * that the kernels set per run (ir/dml_ir.h). With --specialize (an extra
 * mode, reported apart), a test whose compile fails because an output
 * shape depends on run-time data in a way dmlc cannot plan (shape
 * inference's UNIMPLEMENTED "... depends on run-time data": an output rank,
 * a Loop's trip count, a sequence position) is compiled again per data set
 * with the graph inputs that determine an output shape bound as constants
 * (the import option `bind`, dmlc compile --bind): those whose values reach
 * a shape position (table `shape_inputs` below: Reshape's shape, Expand's
 * shape, Slice's starts/ends/axes/steps, Range's start/limit/delta,
 * Resize's scales and sizes, OneHot's depth, ...), directly or through the
 * nodes computing it, whatever their dtype. Other inputs, float data
 * included, are never bound. Such a test still fails (kind "passes only
 * specialized"); it is counted apart.
 *
 * ONNX's data stores bfloat16 tensors as UINT16 bit patterns; where the
 * model declares bfloat16 they are read as such.
 *
 * ONNX's own runner feeds the data sets without checking declared input
 * shapes, and a few tests feed another shape than the one they declare
 * (CastLike's `like`: declared [3,4], fed [1]). Where every data set feeds
 * an input the same shape and that shape contradicts the declared rank or
 * a static declared dim, the input is compiled with the fed shape (import
 * option input_shapes); such inputs are listed as "redeclared" in the JSON.
 *
 * Sequence inputs and outputs (SequenceProto files of tensors): the
 * importer lowers sequences into lists of tensors (frontends/onnx/
 * onnx_seq.c), so a sequence input is compiled as tensor inputs "<name>.0",
 * "<name>.1", ... with the element count and shapes of the first data set
 * (import option sequence_inputs; every data set must agree), and every
 * tensor input of such a model is compiled with its fed shape (a symbolic
 * dim shared with the static elements would not broadcast against them). A
 * sequence output is compared element by element with the outputs
 * "<name>.0", ...; the package must have exactly as many. Positions of
 * SequenceAt/Insert/Erase and SplitToSequence's split fed as graph inputs
 * are bound as compile-time constants, like shape inputs.
 *
 * Optional inputs and outputs (OptionalProto files of a tensor, a sequence
 * of tensors or nothing): optionals are lowered at import time (frontends/
 * onnx/onnx_optional.c), so an optional input is compiled present or none
 * as the first data set has it (import option optional_inputs; every data
 * set must agree): present, a tensor input of its name or a sequence input
 * as above; none, no input. An optional output expected none must have no
 * output "<name>" or "<name>.0"; a present one is compared as a tensor or a
 * sequence. An If whose outputs are sequences or optionals is imported only
 * when its cond is known at compile time, so a cond fed as a graph input is
 * bound like a shape input. Map values are refused ("sequence inputs
 * unsupported", the kind's old name).
 *
 * Random-output tests (Bernoulli, training-mode Dropout with a ratio > 0)
 * are checked by shape, dtype, value set and a statistic instead of values
 * (dmlc draws from its own Philox streams, not NumPy's generator):
 *  - Bernoulli: every value is 0 or 1, and the mean of the output is within
 *    4 sigma + 1/n of the mean input probability, sigma^2 = sum p(1-p) / n^2
 *    (the standard deviation of the mean of n independent draws);
 *  - Dropout: output 0 is 0 or x/(1-ratio) (within the value tolerance),
 *    the mask (output 1) is 1 exactly where the element was kept, and the
 *    kept fraction (over elements with x != 0) is within 4 sigma + 1/n of
 *    1 - ratio, sigma^2 = ratio (1 - ratio) / n.
 * 4 sigma is wide for the node suite's small tensors (n = 10 and 60) but
 * stated; with the fixed default seed the outcome is deterministic anyway.
 * Tests whose reference output is deterministic (ratio 0, training_mode
 * false) are compared exactly.
 *
 * Each test runs in a forked child with a time limit (alarm), so a crash or
 * hang in one kernel is a failure of that test ("runtime error: crashed:
 * SIGSEGV"), not of the runner. Children run in parallel (-j).
 *
 * With --emit DIR --target LIST (a machine without the compiler, e.g. the
 * CUDA machine, runs the tests): every test is compiled for LIST as above
 * and, instead of running, written with its data sets to DIR (emit_test,
 * emit_index) for dml_conformance_run (conformance_run.c), which links the
 * runtime alone; compile failures are recorded in DIR/manifest.txt as the
 * results they are. The comparison, the scheduling, the lists and the JSON
 * are shared with it (conf_common.c).
 *
 * The expected-failure list has one line per test, "<suite>/<test> <reason>".
 * Exit status 1 when a test outside the list fails, a listed test passes,
 * or a test is skipped without being listed; 0 otherwise.
 */
#define _GNU_SOURCE /* strsignal, strdup */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "conf_common.h"
#include "dml_driver.h"
#include "dml_npy.h"
#include "dml_onnx.h"
#include "dml_rt.h"

#define MIN_BOUND 64
#define MAX_BINDINGS 16

/* --specialize: retry with shape inputs bound at compile time (above). */
static int specialize = 0;

/* ==== the child: one test =============================================== */

/* Inputs at these (op, input index) positions determine the shape of an
 * output, whatever their dtype (Range's float start/limit/delta, Resize's
 * float scales, OneHot's depth): graph inputs whose values reach one are the
 * only ones the runner binds at compile time (see shape_determining). */
static const struct {
  const char *op;
  unsigned mask; /* bit i: input i */
} shape_inputs[] = {
    {"Reshape", 1u << 1},
    {"Expand", 1u << 1},
    {"Tile", 1u << 1},
    {"ConstantOfShape", 1u << 0},
    {"Range", 7u},
    {"Slice", 0x1eu},
    {"Pad", 1u << 1},
    {"Resize", (1u << 2) | (1u << 3)}, /* scales, sizes (opset 10: see below) */
    {"Upsample", 1u << 1},
    {"Squeeze", 1u << 1},
    {"Unsqueeze", 1u << 1},
    {"ReduceSum", 1u << 1},
    {"ReduceMean", 1u << 1},
    {"ReduceMax", 1u << 1},
    {"ReduceMin", 1u << 1},
    {"ReduceProd", 1u << 1},
    {"ReduceL1", 1u << 1},
    {"ReduceL2", 1u << 1},
    {"ReduceLogSum", 1u << 1},
    {"ReduceLogSumExp", 1u << 1},
    {"ReduceSumSquare", 1u << 1},
    {"Split", 1u << 1},
    {"TopK", 1u << 1},
    {"OneHot", 1u << 1},
    {"CenterCropPad", 1u << 1},
    {"Col2Im", 6u},
    {"MaxUnpool", 1u << 2},
    {"BlackmanWindow", 1u << 0},
    {"HannWindow", 1u << 0},
    {"HammingWindow", 1u << 0},
    {"DFT", 1u << 1},
    {"STFT", (1u << 1) | (1u << 3)},
    {"MelWeightMatrix", 3u},
    /* Sequences are lowered at import time: positions and splits are
     * compile-time values, like shapes. */
    {"SequenceAt", 1u << 1},
    {"SequenceInsert", 1u << 2},
    {"SequenceErase", 1u << 1},
    {"SplitToSequence", 1u << 1},
    /* Loop is unrolled at import time: its trip count M and cond decide the
     * number of iterations, hence the length of its scan outputs. */
    {"Loop", 3u},
    /* An If with sequence or optional outputs needs its cond at compile time
     * (only the taken branch is imported). */
    {"If", 1u << 0},
};

/* Bit mask of node n's inputs that determine an output shape. */
static unsigned shape_input_mask(const dml_onnx_node_desc_t *n) {
  if (n->domain[0]) return 0;
  /* Resize-10 is (X, scales); from opset 11 it is (X, roi, scales, sizes). */
  if (!strcmp(n->op_type, "Resize") && n->n_inputs == 2) return 1u << 1;
  for (size_t t = 0; t < sizeof(shape_inputs) / sizeof(shape_inputs[0]); t++)
    if (!strcmp(shape_inputs[t].op, n->op_type)) return shape_inputs[t].mask;
  return 0;
}

#define MAX_SHAPE_NAMES 1024

static int name_in(const char *const *set, size_t n, const char *name) {
  for (size_t i = 0; i < n; i++)
    if (!strcmp(set[i], name)) return 1;
  return 0;
}

/* Whether the values of tensor `name` determine an output shape: it feeds a
 * shape position (shape_inputs) directly, or through nodes computing it
 * (Cast, Sub, Concat, Gather, ...). Shape and Size read only the shape of
 * their input, so a chain stops there. The float size of HannWindow's
 * expansion, Cast(size) -> Range(0, size, 1), is such an input. */
static int shape_determining(const dml_onnx_model_desc_t *d, const char *name) {
  const char *set[MAX_SHAPE_NAMES];
  size_t n = 0;
  for (uint32_t i = 0; i < d->n_nodes; i++) {
    const dml_onnx_node_desc_t *nd = &d->nodes[i];
    unsigned mask = shape_input_mask(nd);
    for (uint32_t k = 0; k < nd->n_inputs && k < 32; k++)
      if ((mask >> k & 1u) && nd->inputs[k][0] && n < MAX_SHAPE_NAMES &&
          !name_in(set, n, nd->inputs[k]))
        set[n++] = nd->inputs[k];
  }
  for (int grew = 1; grew;) {
    grew = 0;
    for (uint32_t i = 0; i < d->n_nodes; i++) {
      const dml_onnx_node_desc_t *nd = &d->nodes[i];
      if (!strcmp(nd->op_type, "Shape") || !strcmp(nd->op_type, "Size")) continue;
      int feeds = 0;
      for (uint32_t o = 0; o < nd->n_outputs && !feeds; o++)
        feeds = nd->outputs[o][0] && name_in(set, n, nd->outputs[o]);
      for (uint32_t k = 0; feeds && k < nd->n_inputs; k++)
        if (nd->inputs[k][0] && n < MAX_SHAPE_NAMES && !name_in(set, n, nd->inputs[k])) {
          set[n++] = nd->inputs[k];
          grew = 1;
        }
    }
  }
  return name_in(set, n, name);
}

/* A sequence value of a data set (a SequenceProto file). */
typedef struct seqval {
  int is_seq; /* read from a SequenceProto file (n may be 0) */
  int is_opt; /* read from an OptionalProto file: present says whether it
                 holds a value (a tensor in the data set's in/out, or a
                 sequence here with is_seq set) */
  int present;
  size_t n;
  dml_tensor_t *t;
  void **buf;
} seqval_t;

typedef struct dataset {
  uint32_t n_in, n_out;
  dml_tensor_t *in, *out;
  void **in_buf, **out_buf;
  seqval_t *in_seq, *out_seq; /* per input/output; is_seq 0: a tensor */
  char *err;                  /* reading failed: why */
} dataset_t;

static void dataset_free(dataset_t *ds) {
  for (uint32_t i = 0; i < ds->n_in; i++) free(ds->in_buf[i]);
  for (uint32_t i = 0; i < ds->n_out; i++) free(ds->out_buf[i]);
  for (uint32_t i = 0; ds->in_seq && i < ds->n_in; i++)
    dml_onnx_sequence_free(ds->in_seq[i].n, ds->in_seq[i].t, ds->in_seq[i].buf);
  for (uint32_t i = 0; ds->out_seq && i < ds->n_out; i++)
    dml_onnx_sequence_free(ds->out_seq[i].n, ds->out_seq[i].t, ds->out_seq[i].buf);
  free(ds->in_seq);
  free(ds->out_seq);
  free(ds->in);
  free(ds->out);
  free(ds->in_buf);
  free(ds->out_buf);
  free(ds->err);
}

/* Reads input_K.pb / output_K.pb of one data set directory; in_seq[K] /
 * out_seq[K] (NULL: none) say which are SequenceProto files, in_opt[K] /
 * out_opt[K] which are OptionalProto files. */
static void dataset_read(const char *dir, dataset_t *ds, const int *in_seq,
                         const int *out_seq, const int *in_opt, const int *out_opt) {
  memset(ds, 0, sizeof(*ds));
  char path[4096];
  for (int pass = 0; pass < 2; pass++) {
    const char *what = pass ? "output" : "input";
    uint32_t n = 0;
    for (;; n++) {
      if (snprintf(path, sizeof(path), "%s/%s_%u.pb", dir, what, n) >=
              (int)sizeof(path) ||
          !conf_file_exists(path))
        break;
    }
    dml_tensor_t *t = (dml_tensor_t *)conf_xcalloc(n, sizeof(*t));
    void **bufs = (void **)conf_xcalloc(n, sizeof(void *));
    seqval_t *sq = (seqval_t *)conf_xcalloc(n, sizeof(*sq));
    const int *is_seq = pass ? out_seq : in_seq;
    const int *is_opt = pass ? out_opt : in_opt;
    for (uint32_t i = 0; i < n && !ds->err; i++) {
      if (snprintf(path, sizeof(path), "%s/%s_%u.pb", dir, what, i) >= (int)sizeof(path))
        break;
      if (is_opt && i < 256 && is_opt[i]) {
        dml_onnx_optional_value_t ov;
        dml_status_t s = dml_onnx_optional_read_file(path, &ov);
        if (s) {
          ds->err = conf_status_text(s);
          dml_status_free(s);
          continue;
        }
        sq[i].is_opt = 1;
        sq[i].present = ov.kind != DML_ONNX_OPTIONAL_NONE;
        if (ov.kind == DML_ONNX_OPTIONAL_TENSOR) {
          t[i] = ov.tensor;
          bufs[i] = ov.buffer;
        } else if (ov.kind == DML_ONNX_OPTIONAL_SEQUENCE) {
          sq[i].is_seq = 1;
          sq[i].n = ov.n;
          sq[i].t = ov.elems;
          sq[i].buf = ov.buffers;
        }
        continue;
      }
      dml_status_t s =
          is_seq && i < 256 && is_seq[i]
              ? dml_onnx_sequence_read_file(path, &sq[i].n, &sq[i].t, &sq[i].buf)
              : dml_onnx_tensor_read_file(path, &t[i], &bufs[i]);
      if (!s && is_seq && i < 256 && is_seq[i]) sq[i].is_seq = 1;
      if (s) {
        ds->err = conf_status_text(s);
        dml_status_free(s);
      }
    }
    if (pass) {
      ds->out = t, ds->out_buf = bufs, ds->n_out = n, ds->out_seq = sq;
    } else {
      ds->in = t, ds->in_buf = bufs, ds->n_in = n, ds->in_seq = sq;
    }
  }
}

/* The op names of an importer error "model uses N unsupported op(s) (opset
 * K): A, B[; and ...]", or NULL. */
static char *unsupported_ops_of(const char *reason) {
  const char *p = strstr(reason, " unsupported op");
  if (!p || !(p[15] == ' ' || p[15] == 's')) return NULL;
  const char *c = strstr(p, "): ");
  if (!c) return NULL;
  c += 3;
  size_t n = strcspn(c, ";");
  char *r = (char *)conf_xcalloc(n + 1, 1);
  memcpy(r, c, n);
  return r;
}

typedef struct test_ctx {
  const char *dir;
  const char *name;
  const dml_onnx_model_desc_t *desc;
  const uint8_t *model;
  size_t model_len;
  int64_t bound;
  const dml_onnx_input_shape_t *shapes; /* declared shapes replaced */
  size_t n_shapes;
  const dml_onnx_sequence_input_t *seq_inputs; /* sequence inputs' structure */
  size_t n_seq_inputs;
  const int *out_is_seq;                       /* per graph output */
  const int *out_is_opt;                       /* per graph output */
  const dml_onnx_optional_input_t *opt_inputs; /* optional inputs: present? */
  size_t n_opt_inputs;
  conf_sbuf_t *out;
} test_ctx_t;

/* The device every test runs on (--device): "cpu", or "vulkan[:N]", for
 * which packages are compiled with --target cpu,vulkan. */
static const char *g_device = "cpu";
/* --no-cpu-fallback: GPU packages without the CPU fall-back (a function the
 * target cannot emit is a compile error): the native GPU figure. */
static int g_no_cpu_fallback = 0;

/* --emit DIR: write packages and data sets instead of running (see
 * emit_test); --target: the targets they are compiled for. */
static const char *g_emit = NULL;
static const char *g_targets = NULL;
/* --emit-max-mib: a test whose files exceed it is skipped, not emitted. */
static double g_emit_max_mib = 16;

/* Compiles with `n_bind` bindings and loads the package; with --emit the
 * package's bytes are kept in *out_pkg / *out_size (the caller frees). */
static dml_status_t compile_and_load(const test_ctx_t *t, const dml_onnx_binding_t *bind,
                                     size_t n_bind, dml_rt_model_t **out_model,
                                     void **out_pkg, size_t *out_size) {
  dml_compile_options_t o;
  memset(&o, 0, sizeof(o));
  o.batch_bound = t->bound;
  o.bind = bind;
  o.n_bind = n_bind;
  o.input_shapes = t->shapes;
  o.n_input_shapes = t->n_shapes;
  o.sequence_inputs = t->seq_inputs;
  o.n_sequence_inputs = t->n_seq_inputs;
  o.optional_inputs = t->opt_inputs;
  o.n_optional_inputs = t->n_opt_inputs;
  if (strncmp(g_device, "vulkan", 6) == 0) o.targets = "cpu,vulkan";
  if (g_targets) o.targets = g_targets;
  o.no_cpu_fallback = g_no_cpu_fallback;
  void *pkg = NULL;
  size_t size = 0;
  DML_RETURN_IF_ERROR(dml_compile_onnx_memory(t->model, t->model_len, t->dir,
                                              "model.onnx", &o, &pkg, &size, NULL));
  dml_status_t s = dml_rt_model_load_memory(pkg, size, out_model);
  if (!s && out_pkg) {
    *out_pkg = pkg;
    *out_size = size;
  } else {
    free(pkg);
  }
  return s;
}

/* Runs data set `ds` on `model`; the inputs named in `bound_names` are
 * compiled in and not bound. Fills *v on failure; returns 0 on success. */
static int run_dataset(const test_ctx_t *t, dml_rt_model_t *model, const dataset_t *ds,
                       const char *const *real_inputs, uint32_t n_real,
                       const char *const *bound_names, size_t n_bound,
                       conf_verdict_t *v) {
  dml_rt_session_t *s = NULL;
  dml_status_t st = dml_rt_session_create(model, g_device, &s);
  if (st) goto runtime_error;
  for (uint32_t i = 0; i < ds->n_in && i < n_real; i++) {
    int skip = 0;
    for (size_t b = 0; b < n_bound; b++)
      skip |= strcmp(bound_names[b], real_inputs[i]) == 0;
    if (skip) continue;
    if (ds->in_seq[i].is_opt && !ds->in_seq[i].present) continue; /* none */
    if (ds->in_seq[i].is_seq) {
      /* A sequence input: its elements are inputs "<name>.0", ... */
      for (size_t j = 0; j < ds->in_seq[i].n && !st; j++) {
        char ename[1024];
        snprintf(ename, sizeof(ename), "%s.%zu", real_inputs[i], j);
        st = dml_rt_session_set_input_by_name(s, ename, &ds->in_seq[i].t[j]);
      }
      if (st) goto runtime_error;
      continue;
    }
    st = dml_rt_session_set_input_by_name(s, real_inputs[i], &ds->in[i]);
    if (st) goto runtime_error;
  }
  st = dml_rt_session_run(s);
  if (st) goto runtime_error;
  const dml_onnx_model_desc_t *d = t->desc;
  dml_tensor_t out0;
  memset(&out0, 0, sizeof(out0));
  double ratio = 0.5;
  if (ds->n_in > 1 && ds->in[1].data && dml_dtype_is_float(ds->in[1].dtype))
    ratio = dml_load_f64(ds->in[1].dtype, ds->in[1].data, 0);
  for (uint32_t i = 0; i < ds->n_out && i < d->n_outputs && !v->kind; i++) {
    if (t->out_is_opt[i] && !ds->out_seq[i].present) {
      /* An optional output expected none: the package has no result for it
       * (neither "<name>" nor "<name>.0"). */
      char ename[1024];
      snprintf(ename, sizeof(ename), "%s.0", d->outputs[i].name);
      if (dml_rt_model_find_output(model, d->outputs[i].name) >= 0 ||
          dml_rt_model_find_output(model, ename) >= 0) {
        v->kind = "wrong values";
        v->output = conf_xstrdup(d->outputs[i].name);
        v->message = conf_xprintf(
            "optional output %u '%s': none expected, the package has "
            "a value",
            i, d->outputs[i].name);
        break;
      }
      continue;
    }
    if (t->out_is_seq[i] || ds->out_seq[i].is_seq) {
      /* A sequence output: outputs "<name>.0", ..., element by element. */
      const seqval_t *want = &ds->out_seq[i];
      char ename[1024];
      snprintf(ename, sizeof(ename), "%s.%zu", d->outputs[i].name, want->n);
      if (dml_rt_model_find_output(model, ename) >= 0) {
        v->kind = "wrong shape/dtype";
        v->output = conf_xstrdup(d->outputs[i].name);
        v->message = conf_xprintf("sequence output %u '%s': more than %zu elements", i,
                                  d->outputs[i].name, want->n);
        break;
      }
      for (size_t j = 0; j < want->n && !v->kind; j++) {
        snprintf(ename, sizeof(ename), "%s.%zu", d->outputs[i].name, j);
        int32_t k = dml_rt_model_find_output(model, ename);
        if (k < 0) {
          v->kind = "wrong shape/dtype";
          v->output = conf_xstrdup(d->outputs[i].name);
          v->message = conf_xprintf(
              "sequence output %u '%s': %zu elements expected, the "
              "package has no output '%s'",
              i, d->outputs[i].name, want->n, ename);
          break;
        }
        dml_tensor_t got;
        st = dml_rt_session_get_output(s, (uint32_t)k, &got);
        if (st) goto runtime_error;
        conf_compare_output(t->name, ename, i, &got, &want->t[j], NULL, ratio, NULL, v);
      }
      continue;
    }
    int32_t k = dml_rt_model_find_output(model, d->outputs[i].name);
    if (k < 0) {
      v->kind = "runtime error";
      v->message = conf_xprintf("the package has no output '%s'", d->outputs[i].name);
      break;
    }
    dml_tensor_t got;
    st = dml_rt_session_get_output(s, (uint32_t)k, &got);
    if (st) goto runtime_error;
    if (i == 0) out0 = got;
    conf_compare_output(t->name, d->outputs[i].name, i, &got, &ds->out[i],
                        ds->n_in ? &ds->in[0] : NULL, ratio, i ? &out0 : NULL, v);
    if (v->kind) break;
  }
  dml_rt_session_release(s);
  return v->kind ? -1 : 0;
runtime_error:
  v->kind = "runtime error";
  v->message = conf_status_text(st);
  dml_status_free(st);
  dml_rt_session_release(s);
  return -1;
}

/* ==== --emit: packages and data sets for dml_conformance_run ============ */

/* Bytes a tensor's .npy file takes, about (the header is at most 256). */
static size_t npy_bytes(const dml_tensor_t *t) {
  return dml_tensor_bytes(t) + 256;
}

/* Writes `t` as <dir>/<file> (.npy; bf16 and the float8 dtypes, which
 * NumPy lacks, as their uint16 / uint8 bit patterns) and the manifest fields
 * "<file>\t<bf16|f8e4m3fn|...|->". 0 or -1 with *err set. */
static int emit_npy(const char *dir, const char *file, const dml_tensor_t *t,
                    conf_sbuf_t *m, char **err) {
  dml_tensor_t c = *t;
  int bf16 = c.dtype == DML_DTYPE_BF16 || dml_dtype_is_float8(c.dtype);
  if (bf16) c.dtype = c.dtype == DML_DTYPE_BF16 ? DML_DTYPE_U16 : DML_DTYPE_U8;
  char *path = conf_xprintf("%s/%s", dir, file);
  dml_status_t s = dml_npy_write_file(path, &c);
  free(path);
  if (s) {
    char *st = conf_status_text(s);
    *err = conf_xprintf("writing %s: %s", file, st);
    free(st);
    dml_status_free(s);
    return -1;
  }
  conf_sb_add(m, "\t%s\t%s", file, bf16 ? dml_dtype_name(t->dtype) : "-");
  return 0;
}

/* Writes test t into <emit>/<suite>/<name>/: model.dmlpkg, every data set's
 * inputs and expected outputs as .npy files, and test.txt, which says what
 * dml_conformance_run binds and compares, in run_dataset's order (one
 * tab-separated record a line; names as the package has them):
 *   dmlc-conformance-test 1 / suite S / name N / package model.dmlpkg
 *   set K                          a data set: a new session
 *   in NAME FILE BF16              bind input NAME (a sequence input's
 *                                  elements are NAME.0, ...; an optional
 *                                  input that is none has no line)
 *   x FILE BF16 / ratio R          random tests: input 0 and Dropout's ratio
 *   out I NAME FILE BF16           compare graph output I, package output NAME
 *   seqlen I NAME N                sequence output I has N elements: the
 *                                  package must have no output NAME.N
 *   elem I NAME FILE BF16          element NAME (= <output>.J) of it
 *   none I NAME                    optional output I is none: the package has
 *                                  neither NAME nor NAME.0
 *   end
 * Reports "emitted" (or a skip when the files would exceed --emit-max-mib)
 * on `out`. */
static void emit_test(const test_ctx_t *t, const void *pkg, size_t pkg_size,
                      const dataset_t *ds, size_t n_sets, const char *const *real_inputs,
                      uint32_t n_real, conf_sbuf_t *out) {
  const dml_onnx_model_desc_t *d = t->desc;
  /* The suite is the name of the test directory's parent. */
  const char *end = t->dir + strlen(t->dir);
  while (end > t->dir && end[-1] == '/') end--;
  const char *nm = end;
  while (nm > t->dir && nm[-1] != '/') nm--;
  const char *sp = nm > t->dir ? nm - 1 : nm;
  const char *su = sp;
  while (su > t->dir && su[-1] != '/') su--;
  char *suite = conf_xprintf("%.*s", (int)(sp - su), su);
  /* Size first: a test too large to carry is skipped, saying so. */
  size_t total = pkg_size;
  for (size_t k = 0; k < n_sets; k++) {
    for (uint32_t i = 0; i < ds[k].n_in; i++) {
      total += ds[k].in[i].data ? npy_bytes(&ds[k].in[i]) : 0;
      for (size_t j = 0; j < ds[k].in_seq[i].n; j++)
        total += npy_bytes(&ds[k].in_seq[i].t[j]);
    }
    for (uint32_t i = 0; i < ds[k].n_out; i++) {
      total += ds[k].out[i].data ? npy_bytes(&ds[k].out[i]) : 0;
      for (size_t j = 0; j < ds[k].out_seq[i].n; j++)
        total += npy_bytes(&ds[k].out_seq[i].t[j]);
    }
  }
  if ((double)total > g_emit_max_mib * 1048576.0) {
    conf_emit_kv(out, "kind", "too large to carry");
    char *m = conf_xprintf(
        "package and data sets take %.1f MiB, over --emit-max-mib %g; run it with "
        "dml_conformance on a machine with the compiler",
        (double)total / 1048576.0, g_emit_max_mib);
    conf_emit_kv(out, "message", m);
    conf_emit_kv(out, "skipped", "1");
    free(m);
    free(suite);
    return;
  }
  char *dir = conf_xprintf("%s/%s/%s", g_emit, suite, t->name);
  char *err = NULL;
  conf_sbuf_t m = {0};
  conf_sb_add(&m,
              "dmlc-conformance-test\t1\nsuite\t%s\nname\t%s\npackage\tmodel.dmlpkg\n",
              suite, t->name);
  if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
    err = conf_xprintf("cannot create %s: %s", dir, strerror(errno));
  } else {
    char *path = conf_xprintf("%s/model.dmlpkg", dir);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(pkg, 1, pkg_size, f) != pkg_size)
      err = conf_xprintf("cannot write %s", path);
    if (f && fclose(f) != 0 && !err) err = conf_xprintf("cannot write %s", path);
    free(path);
  }
  char file[256];
  for (size_t k = 0; k < n_sets && !err; k++) {
    conf_sb_add(&m, "set\t%zu\n", k);
    for (uint32_t i = 0; i < ds[k].n_in && i < n_real && !err; i++) {
      const seqval_t *sq = &ds[k].in_seq[i];
      if (sq->is_opt && !sq->present) continue; /* none: not bound */
      if (sq->is_seq) {
        for (size_t j = 0; j < sq->n && !err; j++) {
          conf_sb_add(&m, "in\t%s.%zu", real_inputs[i], j);
          snprintf(file, sizeof(file), "%zu_in%u_%zu.npy", k, i, j);
          if (!emit_npy(dir, file, &sq->t[j], &m, &err)) conf_sb_add(&m, "\n");
        }
        continue;
      }
      conf_sb_add(&m, "in\t%s", real_inputs[i]);
      snprintf(file, sizeof(file), "%zu_in%u.npy", k, i);
      if (!emit_npy(dir, file, &ds[k].in[i], &m, &err)) conf_sb_add(&m, "\n");
    }
    if (conf_is_random_test(t->name) && ds[k].n_in && ds[k].in[0].data && !err) {
      double ratio = 0.5;
      if (ds[k].n_in > 1 && ds[k].in[1].data && dml_dtype_is_float(ds[k].in[1].dtype))
        ratio = dml_load_f64(ds[k].in[1].dtype, ds[k].in[1].data, 0);
      conf_sb_add(&m, "x");
      snprintf(file, sizeof(file), "%zu_in0.npy", k);
      if (!emit_npy(dir, file, &ds[k].in[0], &m, &err))
        conf_sb_add(&m, "\nratio\t%.17g\n", ratio);
    }
    for (uint32_t i = 0; i < ds[k].n_out && i < d->n_outputs && !err; i++) {
      const seqval_t *want = &ds[k].out_seq[i];
      const char *oname = d->outputs[i].name;
      if (t->out_is_opt[i] && !want->present) {
        conf_sb_add(&m, "none\t%u\t%s\n", i, oname);
        continue;
      }
      if (t->out_is_seq[i] || want->is_seq) {
        conf_sb_add(&m, "seqlen\t%u\t%s\t%zu\n", i, oname, want->n);
        for (size_t j = 0; j < want->n && !err; j++) {
          conf_sb_add(&m, "elem\t%u\t%s.%zu", i, oname, j);
          snprintf(file, sizeof(file), "%zu_out%u_%zu.npy", k, i, j);
          if (!emit_npy(dir, file, &want->t[j], &m, &err)) conf_sb_add(&m, "\n");
        }
        continue;
      }
      conf_sb_add(&m, "out\t%u\t%s", i, oname);
      snprintf(file, sizeof(file), "%zu_out%u.npy", k, i);
      if (!emit_npy(dir, file, &ds[k].out[i], &m, &err)) conf_sb_add(&m, "\n");
    }
  }
  conf_sb_add(&m, "end\n");
  if (!err) {
    char *path = conf_xprintf("%s/test.txt", dir);
    FILE *f = fopen(path, "w");
    if (!f || fwrite(m.s, 1, m.len, f) != m.len)
      err = conf_xprintf("cannot write %s", path);
    if (f && fclose(f) != 0 && !err) err = conf_xprintf("cannot write %s", path);
    free(path);
  }
  if (err) {
    conf_emit_kv(out, "kind", "emit error");
    conf_emit_kv(out, "message", err);
  } else {
    char num[32];
    snprintf(num, sizeof(num), "%zu", total);
    conf_emit_kv(out, "emitted", num);
  }
  free(err);
  free(m.s);
  free(dir);
  free(suite);
}

/* The child's whole job; writes key/value lines to t->out. */
static void run_test(test_ctx_t *t) {
  conf_sbuf_t *out = t->out;
  const dml_onnx_model_desc_t *d = t->desc;
  /* Data sets. */
  size_t n_sets = 0;
  char **sets = conf_list_dir(t->dir, "test_data_set_", &n_sets);
  dataset_t *ds = (dataset_t *)conf_xcalloc(n_sets, sizeof(*ds));
  char path[4096];
  const char *real_inputs[256];
  uint32_t n_real = 0;
  int non_tensor = 0;
  int in_is_seq[256] = {0},
      *out_is_seq = (int *)conf_xcalloc(d->n_outputs + 1, sizeof(int));
  int in_is_opt[256] = {0},
      *out_is_opt = (int *)conf_xcalloc(d->n_outputs + 1, sizeof(int));
  for (uint32_t i = 0; i < d->n_inputs; i++) {
    if (d->inputs[i].is_initializer) continue;
    if (d->inputs[i].kind == DML_ONNX_VALUE_SEQUENCE && n_real < 256)
      in_is_seq[n_real] = 1;
    else if (d->inputs[i].kind == DML_ONNX_VALUE_OPTIONAL && n_real < 256)
      in_is_opt[n_real] = 1;
    else if (d->inputs[i].kind != DML_ONNX_VALUE_TENSOR)
      non_tensor = 1;
    if (n_real < 256) real_inputs[n_real++] = d->inputs[i].name;
  }
  for (uint32_t i = 0; i < d->n_outputs; i++) {
    if (d->outputs[i].kind == DML_ONNX_VALUE_SEQUENCE)
      out_is_seq[i] = 1;
    else if (d->outputs[i].kind == DML_ONNX_VALUE_OPTIONAL)
      out_is_opt[i] = 1;
    else if (d->outputs[i].kind != DML_ONNX_VALUE_TENSOR)
      non_tensor = 1;
  }
  t->out_is_seq = out_is_seq;
  t->out_is_opt = out_is_opt;

  /* Compile once with the declared shapes (bound from the data). */
  int64_t bound = MIN_BOUND;
  if (!non_tensor)
    for (size_t k = 0; k < n_sets; k++) {
      snprintf(path, sizeof(path), "%s/%s", t->dir, sets[k]);
      dataset_read(path, &ds[k], in_is_seq, d->n_outputs <= 256 ? out_is_seq : NULL,
                   in_is_opt, d->n_outputs <= 256 ? out_is_opt : NULL);
      for (uint32_t i = 0; i < ds[k].n_in; i++)
        for (int32_t r = 0; r < ds[k].in[i].rank; r++)
          if (ds[k].in[i].dims[r] > bound) bound = ds[k].in[i].dims[r];
    }
  t->bound = bound;
  /* ONNX's test data stores bfloat16 tensors as UINT16 bit patterns (NumPy
   * has no bfloat16): read them as the bf16 the model declares. */
  for (size_t k = 0; k < n_sets; k++) {
    for (uint32_t i = 0; i < ds[k].n_in && i < n_real; i++)
      for (uint32_t j = 0; j < d->n_inputs; j++)
        if (d->inputs[j].name == real_inputs[i] && d->inputs[j].dtype == DML_DTYPE_BF16 &&
            ds[k].in[i].dtype == DML_DTYPE_U16)
          ds[k].in[i].dtype = DML_DTYPE_BF16;
    for (uint32_t i = 0; i < ds[k].n_out && i < d->n_outputs; i++)
      if (d->outputs[i].dtype == DML_DTYPE_BF16 && ds[k].out[i].dtype == DML_DTYPE_U16)
        ds[k].out[i].dtype = DML_DTYPE_BF16;
  }
  /* Inputs fed one shape by every data set, contradicting the declaration
   * (see the top): compiled with the fed shape. */
  dml_onnx_input_shape_t shapes[MAX_BINDINGS];
  size_t n_shapes = 0;
  conf_sbuf_t redeclared = {0};
  for (uint32_t i = 0; i < n_real && n_sets && n_shapes < MAX_BINDINGS; i++) {
    const dml_onnx_value_desc_t *vd = NULL;
    for (uint32_t j = 0; j < d->n_inputs; j++)
      if (d->inputs[j].name == real_inputs[i]) vd = &d->inputs[j];
    if (!vd || vd->rank < 0 || vd->rank > DML_MAX_RANK) continue;
    int same = 1, contradicts = 0;
    int any_seq = 0;
    for (uint32_t j = 0; j < n_real; j++)
      any_seq |= in_is_seq[j] || (!ds[0].err && j < ds[0].n_in && ds[0].in_seq[j].is_seq);
    for (size_t k = 0; k < n_sets && same; k++) {
      const dml_tensor_t *a = &ds[0].in[i], *b = &ds[k].in[i];
      if (ds[k].err || i >= ds[k].n_in || a->rank != b->rank ||
          memcmp(a->dims, b->dims, sizeof(int64_t) * (size_t)a->rank) != 0)
        same = 0;
    }
    if (!same) continue;
    const dml_tensor_t *fed = &ds[0].in[i];
    /* With sequence inputs (static element shapes) every tensor input is
     * compiled with its fed shape: a symbolic dim it shares with the
     * elements would not broadcast against their static dims. */
    contradicts = fed->rank != vd->rank || any_seq;
    for (int32_t r = 0; !contradicts && r < vd->rank; r++)
      contradicts = vd->dims[r] >= 0 && vd->dims[r] != fed->dims[r];
    if (!contradicts) continue;
    shapes[n_shapes].name = real_inputs[i];
    shapes[n_shapes].rank = fed->rank;
    shapes[n_shapes].dims = fed->dims;
    conf_sb_add(&redeclared, "%s%s", n_shapes ? "," : "", real_inputs[i]);
    n_shapes++;
  }
  t->shapes = shapes;
  t->n_shapes = n_shapes;
  /* Sequence inputs: element count and shapes from the first data set (the
   * importer expands them into inputs "<name>.0", ...); every data set must
   * agree. */
  dml_onnx_sequence_input_t seq_in[MAX_BINDINGS];
  dml_onnx_input_shape_t *seq_shapes[MAX_BINDINGS];
  size_t n_seq_in = 0;
  int seq_mismatch = 0;
  for (uint32_t i = 0; i < n_real && n_sets && n_seq_in < MAX_BINDINGS; i++) {
    if (ds[0].err || i >= ds[0].n_in || !ds[0].in_seq[i].is_seq) continue;
    const seqval_t *a = &ds[0].in_seq[i];
    for (size_t k = 1; k < n_sets; k++) {
      const seqval_t *b = i < ds[k].n_in ? &ds[k].in_seq[i] : NULL;
      int same = b && !ds[k].err && b->n == a->n;
      for (size_t j = 0; same && j < a->n; j++)
        same =
            a->t[j].rank == b->t[j].rank &&
            !memcmp(a->t[j].dims, b->t[j].dims, sizeof(int64_t) * (size_t)a->t[j].rank);
      if (!same) seq_mismatch = 1;
    }
    dml_onnx_input_shape_t *sh =
        (dml_onnx_input_shape_t *)conf_xcalloc(a->n + 1, sizeof(*sh));
    for (size_t j = 0; j < a->n; j++) {
      sh[j].name = real_inputs[i];
      sh[j].rank = a->t[j].rank;
      sh[j].dims = a->t[j].dims;
    }
    seq_shapes[n_seq_in] = sh;
    seq_in[n_seq_in].name = real_inputs[i];
    seq_in[n_seq_in].n_elems = a->n;
    seq_in[n_seq_in].elems = sh;
    n_seq_in++;
  }
  t->seq_inputs = seq_in;
  t->n_seq_inputs = n_seq_in;
  /* Optional inputs: present or none as the first data set has them; every
   * data set must agree. */
  dml_onnx_optional_input_t opt_in[MAX_BINDINGS];
  size_t n_opt_in = 0;
  for (uint32_t i = 0; i < n_real && n_sets && n_opt_in < MAX_BINDINGS; i++) {
    if (!in_is_opt[i] || ds[0].err || i >= ds[0].n_in) continue;
    for (size_t k = 1; k < n_sets; k++)
      if (!ds[k].err && i < ds[k].n_in &&
          ds[k].in_seq[i].present != ds[0].in_seq[i].present)
        seq_mismatch = 1;
    opt_in[n_opt_in].name = real_inputs[i];
    opt_in[n_opt_in].present = ds[0].in_seq[i].present;
    n_opt_in++;
  }
  t->opt_inputs = opt_in;
  t->n_opt_inputs = n_opt_in;
  if (n_shapes) conf_emit_kv(out, "redeclared", redeclared.s);
  free(redeclared.s);
  dml_rt_model_t *model = NULL;
  void *pkg = NULL;
  size_t pkg_size = 0;
  dml_status_t st = compile_and_load(t, NULL, 0, &model, g_emit ? &pkg : NULL,
                                     g_emit ? &pkg_size : NULL);
  conf_verdict_t v;
  memset(&v, 0, sizeof(v));
  const char *bound_names[MAX_BINDINGS];
  size_t n_bound = 0;
  char *unspecialized = NULL; /* the compile error without binding */
  if (st) {
    const char *reason = dml_status_reason(st);
    char *bad = unsupported_ops_of(reason ? reason : "");
    if (bad) {
      conf_emit_kv(out, "kind", "unsupported op");
      conf_emit_kv(out, "bad_ops", bad);
      char *m = conf_status_text(st);
      conf_emit_kv(out, "message", m);
      free(m);
      free(bad);
      goto done;
    }
    if (non_tensor) {
      conf_emit_kv(out, "kind", "sequence inputs unsupported");
      char *m = conf_status_text(st);
      conf_emit_kv(out, "message", m);
      free(m);
      goto done;
    }
    if (specialize && dml_status_code(st) == DML_STATUS_UNIMPLEMENTED && reason &&
        strstr(reason, "depends on run-time data")) {
      for (uint32_t i = 0; i < n_real && n_bound < MAX_BINDINGS; i++) {
        dml_dtype_t dt = DML_DTYPE_INVALID;
        for (uint32_t j = 0; j < d->n_inputs; j++)
          if (d->inputs[j].name == real_inputs[i]) dt = d->inputs[j].dtype;
        if ((dml_dtype_is_int(dt) || dml_dtype_is_float(dt) || dt == DML_DTYPE_BOOL) &&
            shape_determining(d, real_inputs[i]))
          bound_names[n_bound++] = real_inputs[i];
      }
    }
    if (!n_bound) {
      conf_emit_kv(out, "kind", "compile error");
      char *m = conf_status_text(st);
      conf_emit_kv(out, "message", m);
      free(m);
      goto done;
    }
    unspecialized = conf_status_text(st);
    dml_status_free(st);
    st = DML_OK;
  }
  if (non_tensor) {
    conf_emit_kv(out, "kind", "sequence inputs unsupported");
    conf_emit_kv(out, "message",
                 "the model has map, optional or sparse inputs or outputs");
    goto done;
  }
  if (!n_sets) {
    conf_emit_kv(out, "kind", "compile error");
    conf_emit_kv(out, "message", "no test_data_set_* directory");
    goto done;
  }
  if (seq_mismatch) {
    conf_emit_kv(out, "kind", "compile error");
    conf_emit_kv(
        out, "message",
        "the data sets feed a sequence input different element counts or shapes, "
        "or an optional input a value in some and none in others");
    goto done;
  }
  if (g_emit) {
    for (size_t k = 0; k < n_sets && !v.kind; k++)
      if (ds[k].err) {
        v.kind = "runtime error";
        v.message = conf_xprintf("reading %s: %s", sets[k], ds[k].err);
      }
    if (!v.kind) {
      emit_test(t, pkg, pkg_size, ds, n_sets, real_inputs, n_real, out);
      goto done;
    }
  }
  for (size_t k = 0; k < n_sets && !v.kind; k++) {
    if (ds[k].err) {
      v.kind = "runtime error";
      v.message = conf_xprintf("reading %s: %s", sets[k], ds[k].err);
      break;
    }
    if (n_bound) {
      /* Specialize on this data set's values of the shape inputs. */
      dml_onnx_binding_t bind[MAX_BINDINGS];
      size_t nb = 0;
      for (size_t b = 0; b < n_bound; b++)
        for (uint32_t i = 0; i < n_real && i < ds[k].n_in; i++)
          if (strcmp(real_inputs[i], bound_names[b]) == 0) {
            bind[nb].name = bound_names[b];
            bind[nb].value = &ds[k].in[i];
            nb++;
          }
      dml_rt_model_release(model);
      model = NULL;
      st = compile_and_load(t, bind, nb, &model, NULL, NULL);
      if (st) {
        v.kind = "compile error";
        char *m = conf_status_text(st);
        v.message = conf_xprintf("with shape inputs bound: %s", m);
        free(m);
        break;
      }
    }
    if (run_dataset(t, model, &ds[k], real_inputs, n_real, bound_names, n_bound, &v))
      break;
  }
  if (v.kind) {
    conf_emit_kv(out, "kind", v.kind);
    conf_emit_kv(out, "message", v.message);
    if (v.output) conf_emit_kv(out, "output", v.output);
    if (!strcmp(v.kind, "wrong values")) {
      char num[64];
      snprintf(num, sizeof(num), "%.9g", v.max_err);
      conf_emit_kv(out, "max_err", num);
      snprintf(num, sizeof(num), "%lld", v.index);
      conf_emit_kv(out, "index", num);
    }
  } else if (n_bound) {
    /* Passing only specialized is a failure, reported apart. */
    conf_sbuf_t names = {0};
    for (size_t b = 0; b < n_bound; b++)
      conf_sb_add(&names, "%s%s", b ? "," : "", bound_names[b]);
    /* The compile error without binding, then how it passes. */
    const char *u = unspecialized ? unspecialized : "";
    const char *semi = strstr(u, "; ");
    int head = semi ? (int)(semi - u) : (int)strlen(u);
    char *m = conf_xprintf(
        "%.*s (passes with shape inputs %s bound as compile-time constants, "
        "--specialize)%s",
        head, u, names.s, semi ? semi : "");
    conf_emit_kv(out, "kind", CONF_KIND_SPECIALIZED);
    conf_emit_kv(out, "message", m);
    free(m);
    free(names.s);
  } else {
    conf_emit_kv(out, "pass", "1");
    if (conf_is_random_test(t->name)) conf_emit_kv(out, "statistical", "1");
  }
  if (n_bound) {
    conf_sbuf_t names = {0};
    for (size_t b = 0; b < n_bound; b++)
      conf_sb_add(&names, "%s%s", b ? "," : "", bound_names[b]);
    conf_emit_kv(out, "special", names.s);
    free(names.s);
  }
  free(v.message);
  free(v.output);
done:
  free(pkg);
  free(unspecialized);
  for (size_t i = 0; i < n_seq_in; i++) free(seq_shapes[i]);
  free(out_is_seq);
  free(out_is_opt);
  dml_status_free(st);
  dml_rt_model_release(model);
  for (size_t k = 0; k < n_sets; k++) dataset_free(&ds[k]);
  free(ds);
  conf_free_list(sets, n_sets);
}

/* ONNX ops (opsets 7..17) from onnx_ops_7_17.txt: name and versions. */
typedef struct op_entry {
  char *name;
  char *versions;
} op_entry_t;

static op_entry_t *load_ops(const char *path, size_t *out_n) {
  FILE *f = fopen(path, "r");
  if (!f) return NULL;
  size_t n = 0, cap = 256;
  op_entry_t *v = (op_entry_t *)conf_xcalloc(cap, sizeof(*v));
  char line[1024];
  while (fgets(line, sizeof(line), f)) {
    line[strcspn(line, "\r\n")] = 0;
    if (!line[0] || line[0] == '#') continue;
    char *sp = strchr(line, ' ');
    if (sp) *sp = 0;
    if (n == cap) {
      cap *= 2;
      op_entry_t *nv = (op_entry_t *)realloc(v, cap * sizeof(*v));
      if (!nv) exit(2);
      v = nv;
    }
    v[n].name = conf_xstrdup(line);
    v[n].versions = conf_xstrdup(sp ? sp + 1 : "");
    n++;
  }
  fclose(f);
  *out_n = n;
  return v;
}

/* Failures charged to op `op`: a test that uses it fails, unless the failure
 * is an unsupported op other than it. */
static int charged_to(const conf_result_t *r, const char *op) {
  if (!conf_is_fail(r->status)) return 0;
  if (r->bad_ops) return conf_list_has(r->bad_ops, op);
  return 1;
}

typedef struct tally {
  char *key;
  int n;
} tally_t;

static void tally_add(tally_t **t, size_t *n, size_t *cap, const char *key) {
  for (size_t i = 0; i < *n; i++)
    if (!strcmp((*t)[i].key, key)) {
      (*t)[i].n++;
      return;
    }
  if (*n == *cap) {
    *cap = *cap ? *cap * 2 : 64;
    tally_t *nt = (tally_t *)realloc(*t, *cap * sizeof(tally_t));
    if (!nt) exit(2);
    *t = nt;
  }
  (*t)[*n].key = conf_xstrdup(key);
  (*t)[*n].n = 1;
  (*n)++;
}

static int cmp_tally(const void *a, const void *b) {
  const tally_t *x = (const tally_t *)a, *y = (const tally_t *)b;
  if (x->n != y->n) return y->n - x->n;
  return strcmp(x->key, y->key);
}

/* Counts unsupported ops over failing tests (one per test and op). */
static tally_t *unsupported_tally(const conf_result_t *rs, size_t n, size_t *out_n) {
  tally_t *t = NULL;
  size_t tn = 0, cap = 0;
  for (size_t i = 0; i < n; i++) {
    if (!conf_is_fail(rs[i].status) || !rs[i].bad_ops) continue;
    const char *p = rs[i].bad_ops;
    while (*p) {
      while (*p == ' ') p++;
      size_t k = strcspn(p, ",");
      char *op = (char *)conf_xcalloc(k + 1, 1);
      memcpy(op, p, k);
      tally_add(&t, &tn, &cap, op);
      free(op);
      p += k;
      if (*p == ',') p++;
    }
  }
  if (tn) qsort(t, tn, sizeof(*t), cmp_tally);
  *out_n = tn;
  return t;
}

static tally_t *kind_tally(const conf_result_t *rs, size_t n, size_t *out_n) {
  tally_t *t = NULL;
  size_t tn = 0, cap = 0;
  for (size_t i = 0; i < n; i++)
    if (conf_is_fail(rs[i].status) || rs[i].status == CONF_ST_SKIP)
      tally_add(&t, &tn, &cap, rs[i].kind);
  if (tn) qsort(t, tn, sizeof(*t), cmp_tally);
  *out_n = tn;
  return t;
}

/* ==== a node suite's section of the page ================================ */

/* A section of the conformance page written by --write-doc-section from the
 * run of one node suite (ONNX 1.23's, generated by scripts/
 * onnx_node_suite.sh) on one device: "<!-- node-suite KEY -->" ... "<!--
 * /node-suite KEY -->", KEY = "<basename of --data> <device>". write_doc
 * keeps the sections of the page it replaces. */
#define SECTION_OPEN "<!-- node-suite "
#define SECTION_CLOSE "<!-- /node-suite "

/* The page's existing sections (a malloc'd string, "" when none). */
static char *doc_sections(const char *path) {
  uint8_t *bytes = NULL;
  size_t len = 0;
  conf_sbuf_t out = {0};
  conf_sb_add(&out, "%s", "");
  if (conf_read_file(path, &bytes, &len) != 0) return out.s;
  char *text = (char *)conf_xcalloc(len + 1, 1);
  memcpy(text, bytes, len);
  free(bytes);
  const char *p = text;
  while ((p = strstr(p, SECTION_OPEN)) != NULL) {
    const char *e = strstr(p, SECTION_CLOSE);
    if (!e) break;
    e = strchr(e, '\n');
    e = e ? e + 1 : p + strlen(p);
    conf_sb_add(&out, "%.*s\n", (int)(e - p), p);
    p = e;
  }
  free(text);
  return out.s;
}

/* Opset ranges of the section's table: a node test's model imports its
 * op's since_version, so the range is when the op's form was introduced or
 * last changed. */
static const struct {
  int lo, hi;
  const char *label;
} opset_ranges[] = {
    {0, 17, "<= 17"},
    {18, 23, "18..23"},
    {24, 1000, ">= 24"},
};

static void section_row(conf_sbuf_t *b, const char *label, const conf_result_t *rs,
                        size_t n, int lo, int hi) {
  int total = 0, pass = 0;
  for (size_t i = 0; i < n; i++) {
    if (rs[i].opset < lo || rs[i].opset > hi) continue;
    total++;
    pass += conf_is_pass(rs[i].status);
  }
  if (!total) return;
  conf_sb_add(b, "| %s | %d | %d | %d | %.1f%% |\n", label, total, pass, total - pass,
              100.0 * pass / total);
}

/* Writes (or replaces) the section of this run in the page at `path`. */
static int write_doc_section(const char *path, const char *data, const char *expected,
                             const conf_result_t *rs, size_t n) {
  char key[512];
  const char *base = strrchr(data, '/');
  base = base && base[1] ? base + 1 : data;
  snprintf(key, sizeof(key), "%s %s", base, g_device);
  conf_sbuf_t b = {0};
  conf_sb_add(&b, "%s%s -->\n### Node tests of %s on %s\n\n", SECTION_OPEN, key, base,
              g_device);
  conf_sb_add(
      &b,
      "Written by `dml_conformance --data %s --device %s --write-doc-section "
      "docs/conformance.md`\n(expected failures: `%s`). Per default-domain opset of "
      "the test's model (ONNX's\ngenerators write each node test at its op's "
      "`since_version`: the opset that introduced or last\nchanged the op):\n\n"
      "| model opset | tests | passed | failed | pass rate |\n"
      "| --- | ---: | ---: | ---: | ---: |\n",
      data, g_device, expected ? expected : "(none)");
  for (size_t r = 0; r < sizeof(opset_ranges) / sizeof(opset_ranges[0]); r++)
    section_row(&b, opset_ranges[r].label, rs, n, opset_ranges[r].lo, opset_ranges[r].hi);
  section_row(&b, "**<= 23**", rs, n, 0, 23);
  section_row(&b, "**all**", rs, n, 0, 1000);
  size_t nk = 0, nu = 0;
  tally_t *kt = kind_tally(rs, n, &nk);
  tally_t *ut = unsupported_tally(rs, n, &nu);
  conf_sb_add(&b, "\nFailure reasons: ");
  for (size_t i = 0; i < nk; i++)
    conf_sb_add(&b, "%s%s (%d)", i ? ", " : "", kt[i].key, kt[i].n);
  conf_sb_add(&b,
              "%s.\nUnsupported ops (failing tests that use them): ", nk ? "" : "none");
  for (size_t i = 0; i < nu; i++)
    conf_sb_add(&b, "%s%s (%d)", i ? ", " : "", ut[i].key, ut[i].n);
  conf_sb_add(&b, "%s.\n%s%s -->\n", nu ? "" : "none", SECTION_CLOSE, key);
  for (size_t i = 0; i < nk; i++) free(kt[i].key);
  for (size_t i = 0; i < nu; i++) free(ut[i].key);
  free(kt);
  free(ut);

  /* Replace the old section of this key, or add the new one at the end of
   * the page's sections (before "## Failure reasons"). */
  uint8_t *bytes = NULL;
  size_t len = 0;
  if (conf_read_file(path, &bytes, &len) != 0) {
    free(b.s);
    return -1;
  }
  char *text = (char *)conf_xcalloc(len + 1, 1);
  memcpy(text, bytes, len);
  free(bytes);
  char open[600], close[600];
  snprintf(open, sizeof(open), "%s%s -->", SECTION_OPEN, key);
  snprintf(close, sizeof(close), "%s%s -->\n", SECTION_CLOSE, key);
  char *s = strstr(text, open), *e = s ? strstr(s, close) : NULL;
  size_t head, tail;
  if (s && e) {
    head = (size_t)(s - text);
    tail = (size_t)(e - text) + strlen(close);
  } else {
    char *at = strstr(text, "## Failure reasons");
    head = tail = at ? (size_t)(at - text) : len;
    conf_sb_add(&b, "\n");
  }
  FILE *f = fopen(path, "w");
  int rc = -1;
  if (f) {
    fwrite(text, 1, head, f);
    fputs(b.s, f);
    fputs(text + tail, f);
    rc = fclose(f);
  }
  free(text);
  free(b.s);
  return rc;
}

static int write_doc(const char *path, const conf_result_t *rs, size_t n,
                     const char *ops_path) {
  size_t n_ops = 0;
  op_entry_t *ops = load_ops(ops_path, &n_ops);
  if (!ops) {
    fprintf(stderr, "dml_conformance: cannot read the op list '%s'\n", ops_path);
    return -1;
  }
  char *sections = doc_sections(path);
  FILE *f = fopen(path, "w");
  if (!f) {
    free(sections);
    return -1;
  }
  fputs(
      "# ONNX conformance\n\n"
      "Generated by `dml_conformance --write-doc docs/conformance.md` "
      "(tests/conformance/conformance.c) from a run of ONNX's backend tests\n"
      "(Debian's `libonnx-testdata`) on the CPU device; do not edit by hand. "
      "Refresh it together with\n"
      "`tests/conformance/expected_failures.txt`:\n\n"
      "```sh\n"
      "build/tests/conformance/dml_conformance --update-expected --specialize \\\n"
      "    --expected tests/conformance/expected_failures.txt \\\n"
      "    --ops tests/conformance/onnx_ops_7_17.txt --write-doc docs/conformance.md\n"
      "```\n\n"
      "A test passes when every output of every data set has the reference dtype and "
      "shape and its values\nare within `|got - want| <= 1e-5 + 1e-3 * |want|` "
      "(NaN equals NaN; integers and bools exactly; strings byte for byte).\nTests whose "
      "outputs are random "
      "(Bernoulli, training-mode Dropout with ratio > 0) are checked by shape,\n"
      "dtype, value set and a statistic, since dmlc draws from its own Philox "
      "streams (seed, step,\nnode, element; runtime/base/dml_philox.h): Bernoulli's "
      "values are 0 or 1 and their mean is within\n4 sigma + 1/n of the mean input "
      "probability (sigma^2 = sum p(1-p) / n^2); Dropout's output is 0 or\n"
      "x/(1-ratio), its mask is 1 exactly where x was kept, and the kept fraction "
      "is within\n4 sigma + 1/n of 1 - ratio (sigma^2 = ratio (1-ratio) / n). "
      "Deterministic cases (ratio 0,\ntraining_mode false) are compared exactly.\n\n"
      "Every graph input is bound at run time, in order, as ONNX's own runner "
      "does. Shape inputs\ncomputed at run time (Reshape's shape, Expand's shape, "
      "Tile's repeats, Slice's starts/ends/axes/steps,\nPad's pads, Resize's "
      "scales/sizes, reduction/Squeeze/Unsqueeze axes, Split's split, TopK's k,\n"
      "OneHot's depth, Range's start/limit/delta, window sizes, ConstantOfShape's "
      "input) give the dims\nthey decide a data-dependent symbol with an upper "
      "bound (proven from shapes where possible, else\n`dmlc compile "
      "--dynamic-dim-bound`, default 4096; a value's memory is capped by\n"
      "`--dynamic-max-elements`, default 2^24 elements); the kernel sets the actual "
      "dims each run\n(ir/dml_ir.h, docs/package-format.md). The figures below "
      "are without specialization. In the\nextra mode `--specialize`, a test "
      "whose compile fails because a shape depends on run-time data\nin a way "
      "dmlc cannot plan (an output rank, a Loop's trip count, a sequence position) "
      "is retried\nwith its shape inputs bound as compile-time constants "
      "(`dmlc compile --bind`); such a test still\ncounts as failing "
      "(\"passes only specialized\"), in a column of its own. A shape input is a "
      "graph\ninput whose values determine an output shape, whatever its dtype: "
      "it feeds a shape position\ndirectly or through the nodes computing it "
      "(`Cast(size) -> Range` in HannWindow's expansion).\nOther inputs, float "
      "data included, are never bound. "
      "Like ONNX's own runner, this one does not hold the data to the declared "
      "input shapes:\nan input that every data set feeds with one shape "
      "contradicting its declaration (CastLike's\n`like`: declared [3,4], fed [1]) "
      "is compiled with the fed shape (`redeclared` in the JSON).\n\n"
      "Sequences are lowered at import time into lists of tensors "
      "(frontends/onnx/onnx_seq.c), so their\nstructure must be static: a "
      "sequence input (a SequenceProto file) is compiled as tensor inputs\n"
      "`<name>.0`, `<name>.1`, ... with the element count and shapes of the data "
      "(import option\n`sequence_inputs`), every tensor input of such a model with "
      "its fed shape, and a sequence output\nis compared element by element with "
      "the outputs `<name>.0`, ... (the count must match).\nSequenceAt/Insert/Erase "
      "positions and SplitToSequence's split fed as graph inputs are bound like\n"
      "shape inputs. Loop and Scan are unrolled at import time "
      "(frontends/onnx/onnx_loop.c): Loop's\ntrip count and cond fed as graph "
      "inputs are bound like shape inputs. Optionals are lowered at import "
      "time\n(frontends/onnx/onnx_optional.c): an optional input (an OptionalProto "
      "file) is compiled present\nor none as the data has it (import option "
      "`optional_inputs`), an optional output expected none\nmust have no output, "
      "and an If cond fed as a graph input is bound like a shape input when\nthe "
      "If's outputs are sequences or optionals. Map values are not supported.\n\n"
      "## Results per suite\n\n"
      "| suite | tests | passed | failed | of which pass only specialized | skipped |\n"
      "| --- | ---: | ---: | ---: | ---: | ---: |\n",
      f);
  conf_counts_t c;
  for (size_t s = 0; s < CONF_N_SUITES; s++) {
    conf_count(rs, n, conf_suite_names[s], &c);
    if (!c.total) continue;
    fprintf(f, "| %s | %d | %d | %d | %d | %d |\n", conf_suite_names[s], c.total, c.pass,
            c.fail, c.special, c.skip);
  }
  conf_count(rs, n, NULL, &c);
  fprintf(f, "| **total** | %d | %d | %d | %d | %d |\n\n", c.total, c.pass, c.fail,
          c.special, c.skip);
  conf_counts_t nc;
  conf_count(rs, n, "node", &nc);
  fprintf(f,
          "Node suite: **%d / %d** pass without specialization; the target is 880 / 932 "
          "(%d to go).%s\n\n"
          "The `real` suite's models are not shipped by Debian (only URLs in "
          "`data.json`); its tests are skipped\nand listed.\n\n",
          nc.pass, nc.total, nc.pass >= 880 ? 0 : 880 - nc.pass,
          specialize ? "" : " (This run did not try --specialize.)");
  if (specialize)
    fprintf(f,
            "With `--specialize` (shape inputs bound at compile time, per data set) "
            "%d more would pass:\n%d / %d.\n\n",
            nc.special, nc.pass + nc.special, nc.total);
  /* The node suites of other ONNX versions (--write-doc-section). */
  if (sections[0])
    fprintf(f,
            "## Node tests of later ONNX versions\n\n"
            "The onnx wheels ship no test data, only its generators: "
            "`bash scripts/onnx_node_suite.sh`\nwrites ONNX 1.23.2's node tests into "
            "`.cache/onnx-1.23.2/node` (a venv of pinned wheels from PyPI;\nrun by "
            "scripts/test.sh). The CTest tests `onnx_conformance_123` (CPU) and\n"
            "`onnx_conformance_123_vulkan` (lavapipe) run them against their own lists. "
            "Refresh a list and its\nsection below:\n\n"
            "```sh\n"
            "build/tests/conformance/dml_conformance --data .cache/onnx-1.23.2 \\\n"
            "    --expected tests/conformance/expected_failures_onnx123.txt "
            "--update-expected \\\n"
            "    --write-doc-section docs/conformance.md\n"
            "build/tests/conformance/dml_conformance --data .cache/onnx-1.23.2 \\\n"
            "    --device vulkan --expect-device llvmpipe --update-expected \\\n"
            "    --expected "
            "tests/conformance/expected_failures_onnx123_vulkan_lavapipe.txt \\\n"
            "    --write-doc-section docs/conformance.md\n"
            "```\n\n%s",
            sections);
  free(sections);

  fputs("## Failure reasons\n\n| reason | tests |\n| --- | ---: |\n", f);
  size_t nk = 0;
  tally_t *kt = kind_tally(rs, n, &nk);
  for (size_t i = 0; i < nk; i++) fprintf(f, "| %s | %d |\n", kt[i].key, kt[i].n);
  fputs(
      "\nUnsupported ops by the number of failing tests (all suites) that use them:\n\n",
      f);
  size_t nu = 0;
  tally_t *ut = unsupported_tally(rs, n, &nu);
  for (size_t i = 0; i < nu; i++)
    fprintf(f, "%s%s (%d)", i ? ", " : "", ut[i].key, ut[i].n);
  fputs(nu ? "\n\n" : "none\n\n", f);

  /* The op table. */
  int n_sup = 0, n_part = 0, n_uns = 0;
  conf_sbuf_t rows = {0};
  for (size_t o = 0; o < n_ops; o++) {
    const char *op = ops[o].name;
    int imports = 0;
    conf_sbuf_t opsets = {0};
    int first_ok = 0, last_ok = 0;
    for (int v = 7; v <= 17; v++)
      if (dml_onnx_op_is_supported(op, v)) {
        if (!imports) first_ok = v;
        last_ok = v;
        imports++;
      }
    if (imports && imports < 11)
      conf_sb_add(&opsets, "imports at opsets %d..%d", first_ok, last_ok);
    int tests = 0, failing = 0;
    conf_sbuf_t fails = {0};
    for (size_t i = 0; i < n; i++) {
      if (strcmp(rs[i].suite, "node") != 0) continue;
      int uses = 0;
      for (size_t k = 0; k < rs[i].n_ops && !uses; k++) uses = !strcmp(rs[i].ops[k], op);
      if (!uses) continue;
      tests++;
      if (charged_to(&rs[i], op)) {
        if (failing < 8)
          conf_sb_add(&fails, "%s`%s` (%s)", failing ? ", " : "", rs[i].name, rs[i].kind);
        failing++;
      }
    }
    if (failing > 8) conf_sb_add(&fails, ", and %d more", failing - 8);
    const char *status;
    if (!imports) {
      status = "unsupported";
      n_uns++;
    } else if (failing) {
      status = "partial";
      n_part++;
    } else {
      status = "supported";
      n_sup++;
    }
    conf_sb_add(&rows, "| %s | %s | %d/%d | ", op, status, tests - failing, tests);
    if (opsets.s) conf_sb_add(&rows, "%s%s", opsets.s, fails.s ? "; " : "");
    if (fails.s) conf_sb_add(&rows, "fails: %s", fails.s);
    if (!tests && imports) conf_sb_add(&rows, "%sno node test", opsets.s ? "; " : "");
    conf_sb_add(&rows, " |\n");
    free(opsets.s);
    free(fails.s);
  }
  fprintf(f,
          "## Ops\n\n"
          "Every op of ONNX's default domain in opsets 7..17 "
          "(`tests/conformance/onnx_ops_7_17.txt`, from\n`scripts/gen_onnx_op_list.py`): "
          "**%d supported, %d partial, %d unsupported**. *Supported*: the importer maps "
          "it\nand all node tests that use it pass; *partial*: it imports but some of "
          "those tests fail (an unsupported-op\nfailure counts only against the ops it "
          "names); *unsupported*: the importer has no mapping. Node tests\nare mapped to "
          "ops by the op types of their models' nodes, so `_expanded` tests count for "
          "every op they use.\n\n"
          "| op | status | node tests passing | notes |\n| --- | --- | ---: | --- |\n",
          n_sup, n_part, n_uns);
  fputs(rows.s ? rows.s : "", f);
  free(rows.s);

  /* Ops of other domains: those the tests use, spelled "domain.Op". */
  char **dops = NULL;
  size_t n_dops = 0;
  for (size_t i = 0; i < n; i++)
    for (size_t k = 0; k < rs[i].n_ops; k++) {
      if (!strchr(rs[i].ops[k], '.')) continue;
      int dup = 0;
      for (size_t q = 0; q < n_dops && !dup; q++) dup = !strcmp(dops[q], rs[i].ops[k]);
      if (dup) continue;
      char **nd = (char **)realloc(dops, (n_dops + 1) * sizeof(char *));
      if (!nd) exit(2);
      dops = nd;
      dops[n_dops++] = rs[i].ops[k];
    }
  if (n_dops) qsort(dops, n_dops, sizeof(char *), conf_cmp_str);
  fputs(
      "\n## Ops of other domains\n\n"
      "Ops of non-default domains that the tests use (`ai.onnx.preview.training`: "
      "version 1), with the tests\nof every suite that use them.\n\n"
      "| op | status | tests passing | notes |\n| --- | --- | ---: | --- |\n",
      f);
  for (size_t o = 0; o < n_dops; o++) {
    const char *dot = strrchr(dops[o], '.');
    char *domain = (char *)conf_xcalloc((size_t)(dot - dops[o]) + 1, 1);
    memcpy(domain, dops[o], (size_t)(dot - dops[o]));
    int imports = 0;
    for (int v = 1; v <= 20 && !imports; v++)
      imports = dml_onnx_domain_op_is_supported(domain, dot + 1, v);
    int tests = 0, failing = 0;
    conf_sbuf_t fails = {0};
    for (size_t i = 0; i < n; i++) {
      int uses = 0;
      for (size_t k = 0; k < rs[i].n_ops && !uses; k++)
        uses = !strcmp(rs[i].ops[k], dops[o]);
      if (!uses) continue;
      tests++;
      if (charged_to(&rs[i], dops[o])) {
        if (failing < 8)
          conf_sb_add(&fails, "%s`%s/%s` (%s)", failing ? ", " : "", rs[i].suite,
                      rs[i].name, rs[i].kind);
        failing++;
      }
    }
    fprintf(f, "| %s | %s | %d/%d | %s%s |\n", dops[o],
            !imports  ? "unsupported"
            : failing ? "partial"
                      : "supported",
            tests - failing, tests, fails.s ? "fails: " : "", fails.s ? fails.s : "");
    free(fails.s);
    free(domain);
  }
  if (!n_dops) fputs("| (none) | | | |\n", f);
  free(dops);
  for (size_t i = 0; i < nk; i++) free(kt[i].key);
  for (size_t i = 0; i < nu; i++) free(ut[i].key);
  free(kt);
  free(ut);
  for (size_t o = 0; o < n_ops; o++) free(ops[o].name), free(ops[o].versions);
  fputs(
      "\n"
      "## Split runs: GPU machines without the compiler\n"
      "\n"
      "A machine without Debian's packages (the NVIDIA machine of the CUDA backend has "
      "no\n"
      "`libonnx-testdata`, clang-16 or protobuf-c) cannot compile the tests, so the run "
      "is split.\n"
      "On the build machine, `dml_conformance --emit DIR --target cpu,cuda` compiles "
      "every test\n"
      "as above (the cuda target's op coverage decides which compile) and writes, per "
      "test that\n"
      "compiles, `DIR/<suite>/<test>/`: `model.dmlpkg`, every data set's inputs and "
      "expected\n"
      "outputs as `.npy` files (bf16 as its uint16 bit patterns) and `test.txt`, which "
      "says what\n"
      "to bind and compare in the order of the direct run; `DIR/manifest.txt` lists "
      "every test\n"
      "with its state (`emitted`, or `fail`/`skip` with the reason the direct run would "
      "report:\n"
      "compile errors, unsupported ops, models not shipped), the targets and the "
      "tolerance. A test\n"
      "whose files exceed `--emit-max-mib` (default 16) is skipped, saying so; none does "
      "today\n"
      "(the largest, pytorch-operator/test_operator_conv, takes 4.3 MiB; all of them "
      "about 18 MiB\n"
      "for cpu,cuda). On the device machine `dml_conformance_run DIR --device cuda "
      "--expected\n"
      "FILE`, which links the runtime alone (it builds with `-DDMLC_RUNTIME_ONLY=ON`), "
      "runs each\n"
      "emitted test in a forked child with a time limit and compares with the same code "
      "and\n"
      "tolerances as `dml_conformance` (tests/conformance/conf_common.c), then checks "
      "the list\n"
      "as above (`--update-expected` rewrites it, `--json` as here). The packages are "
      "compiled\n"
      "without `--allow-tf32`. The CTest tests `conformance_split_cpu` and\n"
      "`conformance_split_vulkan` (lavapipe, standing in for a GPU) check on a subset "
      "that the\n"
      "split run's JSON equals the direct run's, and that a wrong expected output is "
      "caught.\n"
      "\n"
      "```sh\n"
      "bash scripts/gpu_conformance_prepare.sh          # build machine: .gpu-conf/\n"
      "bash scripts/gpu_conformance_check.sh            # GPU machine, .gpu-conf "
      "carried:\n"
      "                                                 # $OUT/conformance_cuda.json and "
      ".log\n"
      "UPDATE=1 bash scripts/gpu_conformance_check.sh   # rewrites the list into $OUT\n"
      "```\n"
      "\n"
      "The CUDA list is `tests/conformance/expected_failures_cuda.txt` (an NVIDIA "
      "H200).\n",
      f);
  free(ops);
  return fclose(f);
}

/* The child of one test (conf_run_all): describes model.onnx and runs it. */
static void test_child(const char *dir, const conf_result_t *r, conf_sbuf_t *out) {
  char path[4096];
  snprintf(path, sizeof(path), "%s/model.onnx", dir);
  uint8_t *bytes = NULL;
  size_t len = 0;
  dml_onnx_model_desc_t *d = NULL;
  if (conf_read_file(path, &bytes, &len) != 0) {
    conf_emit_kv(out, "kind", "compile error");
    conf_emit_kv(out, "message", "cannot read model.onnx");
  } else {
    dml_status_t s = dml_onnx_model_describe(bytes, len, &d);
    if (s) {
      conf_emit_kv(out, "kind", "compile error");
      char *m = conf_status_text(s);
      conf_emit_kv(out, "message", m);
      free(m);
      dml_status_free(s);
    } else {
      test_ctx_t t;
      memset(&t, 0, sizeof(t));
      t.dir = dir;
      t.name = r->name;
      t.desc = d;
      t.model = bytes;
      t.model_len = len;
      t.out = out;
      run_test(&t);
    }
  }
}

/* --emit DIR: DIR must not exist or be empty (a stale test would be run
 * again); creates it and its suite folders. */
static int emit_prepare(const char *dir) {
  size_t n = 0;
  char **v = conf_list_dir(dir, NULL, &n);
  conf_free_list(v, n);
  if (n) {
    fprintf(stderr,
            "dml_conformance: --emit %s: the folder is not empty; remove it first\n",
            dir);
    return -1;
  }
  if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
    fprintf(stderr, "dml_conformance: cannot create %s: %s\n", dir, strerror(errno));
    return -1;
  }
  for (size_t s = 0; s < CONF_N_SUITES; s++) {
    char *p = conf_xprintf("%s/%s", dir, conf_suite_names[s]);
    int bad = mkdir(p, 0777) != 0 && errno != EEXIST;
    free(p);
    if (bad) {
      fprintf(stderr, "dml_conformance: cannot create %s/%s: %s\n", dir,
              conf_suite_names[s], strerror(errno));
      return -1;
    }
  }
  return 0;
}

/* A manifest field: the value one-lined (no tabs), "-" when empty. */
static void index_field(FILE *f, const char *v) {
  char *c = conf_xstrdup(v && *v ? v : "-");
  conf_one_line(c, 4000);
  fprintf(f, "\t%s", c);
  free(c);
}

/* --emit: writes DIR/manifest.txt, one line per test:
 *   test SUITE NAME STATE KIND BAD_OPS OPS REDECLARED MESSAGE
 * (tab-separated; "-" for an empty field) with STATE "emitted" (its folder
 * SUITE/NAME holds test.txt, see emit_test), "fail" (it did not compile
 * for the targets, or its data could not be read: KIND and MESSAGE say
 * why, as dml_conformance would report it) or "skip" (model not shipped,
 * too large to carry). "selection partial" when --suites or --filter chose
 * some tests. Prints a summary. 0, or 2 when it cannot write. */
static int emit_index(const char *dir, const conf_result_t *rs, size_t n, double elapsed,
                      int partial) {
  char *path = conf_xprintf("%s/manifest.txt", dir);
  FILE *f = fopen(path, "w");
  if (!f) {
    fprintf(stderr, "dml_conformance: cannot write %s\n", path);
    free(path);
    return 2;
  }
  fprintf(
      f,
      "# ONNX backend tests compiled by dml_conformance --emit for dml_conformance_run\n"
      "# (tests/conformance/conformance_run.c, docs/conformance.md): one line per test,\n"
      "# test SUITE NAME emitted|fail|skip KIND BAD_OPS OPS REDECLARED MESSAGE.\n"
      "dmlc-conformance-emit\t1\ntargets\t%s\ntolerance\t%g\t%g\nselection\t%s\n",
      g_targets ? g_targets : "cpu", CONF_REL_TOL, CONF_ABS_TOL,
      partial ? "partial" : "all");
  int emitted = 0, failed = 0, skipped = 0;
  long long bytes = 0;
  for (size_t i = 0; i < n; i++) {
    const conf_result_t *r = &rs[i];
    const char *state = r->emitted                  ? "emitted"
                        : r->status == CONF_ST_SKIP ? "skip"
                                                    : "fail";
    emitted += r->emitted;
    bytes += r->emitted_bytes;
    skipped += !r->emitted && r->status == CONF_ST_SKIP;
    failed += !r->emitted && r->status != CONF_ST_SKIP;
    fprintf(f, "test\t%s\t%s\t%s", r->suite, r->name, state);
    index_field(f, r->emitted ? NULL : r->kind ? r->kind : "runtime error");
    index_field(f, r->emitted ? NULL : r->bad_ops);
    conf_sbuf_t ops = {0};
    for (size_t k = 0; k < r->n_ops; k++)
      conf_sb_add(&ops, "%s%s", k ? "," : "", r->ops[k]);
    index_field(f, ops.s);
    free(ops.s);
    index_field(f, r->redeclared);
    index_field(f, r->emitted ? NULL : r->message);
    fputc('\n', f);
  }
  int rc = fclose(f) != 0 ? 2 : 0;
  if (rc) fprintf(stderr, "dml_conformance: cannot write %s\n", path);
  printf(
      "emitted %d tests (%.1f MiB) into %s for targets %s; %d failed to compile or read, "
      "%d skipped, in %.1f s\n",
      emitted, (double)bytes / 1048576.0, dir, g_targets ? g_targets : "cpu", failed,
      skipped, elapsed);
  free(path);
  return rc;
}

/* The leading comment of a new expected-failure list. */
static const char cpu_list_header[] =
    "# Expected failures of the ONNX backend tests (tests/conformance):\n"
    "# one line per test, \"<suite>/<test> <reason>\". The onnx_conformance test\n"
    "# fails when a test outside this list fails or is skipped, and when a listed\n"
    "# test passes. Refresh after adding ops (keeps reasons of still-failing "
    "tests):\n"
    "#   build/tests/conformance/dml_conformance --update-expected --specialize \\\n"
    "#       --expected tests/conformance/expected_failures.txt \\\n"
    "#       --ops tests/conformance/onnx_ops_7_17.txt --write-doc "
    "docs/conformance.md\n";

/* ==== main ============================================================== */

static void usage(FILE *f) {
  fprintf(
      f,
      "usage: dml_conformance [--data DIR] [--suites a,b] [--expected FILE]\n"
      "                       [--json FILE] [--write-doc FILE] [--ops FILE]\n"
      "                       [--update-expected] [--filter SUBSTR] [-j N]\n"
      "                       [--timeout S] [--specialize] [-v]\n"
      "                       [--emit DIR --target LIST [--emit-max-mib M]]\n\n"
      "Runs ONNX's backend tests (libonnx-testdata) on the CPU (or --device) and\n"
      "checks them against the expected-failure list.\n\n"
      "  --data DIR         test data root (default "
      "/usr/share/libonnx-testdata/data)\n"
      "  --suites LIST      comma-separated suites (default: all: node,\n"
      "                     pytorch-converted, pytorch-operator, simple, real)\n"
      "  --expected FILE    the expected-failure list\n"
      "  --update-expected  rewrite --expected from this run (keeps the reasons of\n"
      "                     tests still failing the same way)\n"
      "  --json FILE        every test's result as JSON\n"
      "  --write-doc FILE   write the conformance page (docs/conformance.md)\n"
      "  --ops FILE         ONNX op list for the page (onnx_ops_7_17.txt)\n"
      "  --write-doc-section FILE\n"
      "                     write (or replace) this run's section of the page: pass\n"
      "                     figures per model opset range (node suites of later\n"
      "                     ONNX versions, scripts/onnx_node_suite.sh)\n"
      "  --filter SUBSTR    only tests whose name contains SUBSTR (a comma-separated\n"
      "                     list: any of them)\n"
      "  --device D         run on D: cpu (default), vulkan or vulkan:N (packages\n"
      "                     are then compiled with --target cpu,vulkan; a function\n"
      "                     the vulkan target cannot emit runs on the host: the CPU\n"
      "                     fall-back); without a Vulkan device the run is skipped\n"
      "                     (exit 77)\n"
      "  --no-cpu-fallback  GPU packages without the CPU fall-back (dmlc compile\n"
      "                     --no-cpu-fallback): the native GPU figure\n"
      "  --expect-device S  skip (exit 77) unless the default Vulkan device's name\n"
      "                     contains S (expected failures are per device)\n"
      "  -j N               tests run in parallel (default 2)\n"
      "  --timeout S        per-test time limit in seconds (default 20)\n"
      "  --specialize       extra mode: retry a test whose compile fails because an\n"
      "                     output shape depends on run-time data with its shape\n"
      "                     inputs bound as constants; a test passing only so still\n"
      "                     fails, counted apart\n"
      "  --emit DIR         compile only: write every test that compiles for\n"
      "                     --target as a package with its data sets (.npy) and a\n"
      "                     manifest into DIR (new or empty) for\n"
      "                     dml_conformance_run, which needs only the runtime;\n"
      "                     compile failures are recorded there as results\n"
      "  --target LIST      with --emit: the package targets (default cpu), e.g.\n"
      "                     cpu,cuda or cpu,vulkan\n"
      "  --emit-max-mib M   with --emit: skip (and record) a test whose files take\n"
      "                     more than M MiB (default 16)\n"
      "  -v                 one line per test on stderr\n");
}

int main(int argc, char **argv) {
  const char *data = "/usr/share/libonnx-testdata/data", *doc_path = NULL,
             *ops_path = NULL, *section_path = NULL;
  conf_opts_t o = {.prog = "dml_conformance", .device = "cpu", .jobs = 2};
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *next = i + 1 < argc ? argv[i + 1] : NULL;
    if (conf_take_flag(&o, argc, argv, &i)) continue;
#define TAKE(flag, var)           \
  if (!strcmp(a, flag) && next) { \
    var = next;                   \
    i++;                          \
    continue;                     \
  }
    TAKE("--data", data);
    TAKE("--write-doc", doc_path);
    TAKE("--write-doc-section", section_path);
    TAKE("--ops", ops_path);
    TAKE("--emit", g_emit);
    TAKE("--target", g_targets);
#undef TAKE
    if (!strcmp(a, "--emit-max-mib") && next) {
      g_emit_max_mib = atof(next);
      i++;
    } else if (!strcmp(a, "--specialize")) {
      specialize = 1;
    } else if (!strcmp(a, "--no-cpu-fallback")) {
      g_no_cpu_fallback = 1;
    } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      usage(stdout);
      return 0;
    } else {
      fprintf(stderr, "dml_conformance: unknown or incomplete flag '%s'\n", a);
      usage(stderr);
      return 2;
    }
  }
  g_device = o.device;
  const char *suites = o.suites, *filter = o.filter;
  if (strncmp(g_device, "vulkan", 6) == 0) {
    /* No device, or another device than the expectations were made on:
     * skipped (exit 77), saying so. */
    dml_rt_device_info_t dv[16];
    uint32_t nd = 0;
    dml_status_t ds = dml_rt_vulkan_devices(dv, 16, &nd);
    if (ds) {
      char *msg = dml_status_format(ds);
      printf("SKIP: --device %s: %s\n", g_device, msg ? msg : "?");
      free(msg);
      dml_status_free(ds);
      return 77;
    }
    const char *name = "";
    for (uint32_t i = 0; i < nd && i < 16; i++)
      if (dv[i].is_default) name = dv[i].name;
    if (o.expect_device && !strstr(name, o.expect_device)) {
      printf(
          "SKIP: the expected failures are for a Vulkan device named '*%s*'; the default "
          "device here is '%s'\n",
          o.expect_device, name);
      return 77;
    }
  }
  if (g_emit && (specialize || o.update || doc_path || section_path ||
                 strcmp(g_device, "cpu") != 0)) {
    fprintf(stderr,
            "dml_conformance: --emit compiles only: no --specialize, --update-expected, "
            "--write-doc or --device (dml_conformance_run runs what it writes)\n");
    return 2;
  }
  if (g_targets && !g_emit) {
    fprintf(stderr,
            "dml_conformance: --target goes with --emit (--device picks the "
            "targets of a run)\n");
    return 2;
  }
  if (g_emit && emit_prepare(g_emit) != 0) return 2;
  conf_expected_t exp;
  int rc = conf_opts_check(&o, &exp);
  if (rc) return rc;
  if (!ops_path && doc_path) {
    fprintf(stderr, "dml_conformance: --write-doc needs --ops FILE\n");
    return 2;
  }

  /* Collect the tests. */
  size_t cap = 2048, n = 0;
  conf_result_t *rs = (conf_result_t *)conf_xcalloc(cap, sizeof(conf_result_t));
  char **dirs = (char **)conf_xcalloc(cap, sizeof(char *));
  for (size_t s = 0; s < CONF_N_SUITES; s++) {
    if (suites && !conf_list_has(suites, conf_suite_names[s])) continue;
    char sdir[4096];
    snprintf(sdir, sizeof(sdir), "%s/%s", data, conf_suite_names[s]);
    size_t nt = 0;
    char **tests = conf_list_dir(sdir, "test_", &nt);
    for (size_t t = 0; t < nt; t++) {
      if (!conf_filter_match(filter, tests[t])) continue;
      if (n == cap) {
        fprintf(stderr, "dml_conformance: more than %zu tests\n", cap);
        return 2;
      }
      conf_result_t *r = &rs[n];
      r->suite = conf_suite_names[s];
      r->name = conf_xstrdup(tests[t]);
      dirs[n] = conf_xprintf("%s/%s", sdir, tests[t]);
      char model[4200];
      snprintf(model, sizeof(model), "%s/model.onnx", dirs[n]);
      uint8_t *bytes = NULL;
      size_t len = 0;
      if (!conf_file_exists(model)) {
        r->status = CONF_ST_SKIP;
        r->kind = conf_xstrdup("model not shipped");
        r->message = conf_xstrdup("no model.onnx (data.json only)");
      } else if (conf_read_file(model, &bytes, &len) == 0) {
        dml_onnx_model_desc_t *d = NULL;
        dml_status_t st = dml_onnx_model_describe(bytes, len, &d);
        if (!st) {
          r->ops = (char **)conf_xcalloc(d->n_nodes, sizeof(char *));
          for (uint32_t k = 0; k < d->n_nodes; k++) {
            /* Ops of other domains as "domain.Op" (the importer's spelling). */
            const char *dom = d->nodes[k].domain;
            char *op = dom[0] && strcmp(dom, "ai.onnx") != 0
                           ? conf_xprintf("%s.%s", dom, d->nodes[k].op_type)
                           : conf_xstrdup(d->nodes[k].op_type);
            int dup = 0;
            for (size_t q = 0; q < r->n_ops && !dup; q++) dup = !strcmp(r->ops[q], op);
            if (dup)
              free(op);
            else
              r->ops[r->n_ops++] = op;
          }
          qsort(r->ops, r->n_ops, sizeof(char *), conf_cmp_str);
          r->opset = (int)d->opset;
          dml_onnx_model_desc_release(d);
        }
        dml_status_free(st);
        free(bytes);
      }
      n++;
    }
    conf_free_list(tests, nt);
  }
  if (!n) {
    if (suites || filter)
      fprintf(stderr, "dml_conformance: no test under '%s' matches%s%s%s%s\n", data,
              suites ? " --suites " : "", suites ? suites : "",
              filter ? " --filter " : "", filter ? filter : "");
    else
      fprintf(stderr, "dml_conformance: no tests found under '%s'\n", data);
    return 2;
  }

  /* Run them. */
  double t0 = conf_now_s();
  conf_result_t **pending = (conf_result_t **)conf_xcalloc(n, sizeof(conf_result_t *));
  char **pending_dirs = (char **)conf_xcalloc(n, sizeof(char *));
  size_t nt = 0;
  for (size_t i = 0; i < n; i++)
    if (rs[i].status != CONF_ST_SKIP) pending[nt] = &rs[i], pending_dirs[nt++] = dirs[i];
  conf_run_all(pending, pending_dirs, nt, o.jobs, o.verbose, test_child);
  double elapsed = conf_now_s() - t0;

  free(pending);
  free(pending_dirs);
  if (g_emit) {
    rc = emit_index(g_emit, rs, n, elapsed, suites || filter);
    conf_free_run(rs, dirs, n, &exp);
    return rc;
  }

  /* Apply the list. */
  int unexpected = conf_apply_expected(rs, n, &exp, o.update, !suites && !filter);
  conf_print_suite_counts(rs, n);
  conf_counts_t c;
  conf_count(rs, n, NULL, &c);
  if (specialize)
    printf(
        "%d passed without specialization, %d failed (of which %d pass with shape "
        "inputs bound at compile time, --specialize: %d would pass so), %d skipped in "
        "%.1f s\n",
        c.pass, c.fail, c.special, c.pass + c.special, c.skip, elapsed);
  else
    printf("%d passed without specialization, %d failed, %d skipped in %.1f s\n", c.pass,
           c.fail, c.skip, elapsed);
  if (doc_path && write_doc(doc_path, rs, n, ops_path) != 0) {
    fprintf(stderr, "dml_conformance: cannot write '%s'\n", doc_path);
    rc = 2;
  }
  if (section_path &&
      write_doc_section(section_path, data, o.expected_path, rs, n) != 0) {
    fprintf(stderr, "dml_conformance: cannot write '%s'\n", section_path);
    rc = 2;
  }
  rc = conf_finish_run(&o, rs, n, &exp, unexpected, cpu_list_header, rc);
  conf_free_run(rs, dirs, n, &exp);
  return rc;
}
