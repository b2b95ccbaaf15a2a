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

#include "dml_driver.h"
#include "dml_onnx.h"
#include "dml_rt.h"

#define REL_TOL 1e-3
#define ABS_TOL 1e-5
#define MIN_BOUND 64
#define MAX_BINDINGS 16
#define MAX_MSG 600
#define KIND_SPECIALIZED "passes only specialized"

/* --specialize: retry with shape inputs bound at compile time (above). */
static int specialize = 0;

/* ==== small helpers ===================================================== */

static void *xcalloc(size_t n, size_t size) {
  void *p = calloc(n ? n : 1, size ? size : 1);
  if (!p) {
    fprintf(stderr, "dml_conformance: out of memory\n");
    exit(2);
  }
  return p;
}

static char *xstrdup(const char *s) {
  size_t n = strlen(s ? s : "");
  char *p = (char *)xcalloc(n + 1, 1);
  memcpy(p, s ? s : "", n);
  return p;
}

static char *xprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *xprintf(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  char *p = (char *)xcalloc((size_t)(n > 0 ? n : 0) + 1, 1);
  va_start(ap, fmt);
  vsnprintf(p, (size_t)n + 1, fmt, ap);
  va_end(ap);
  return p;
}

/* A growing string. */
typedef struct sbuf {
  char *s;
  size_t len, cap;
} sbuf_t;

static void sb_add(sbuf_t *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_add(sbuf_t *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n <= 0) return;
  if (b->len + (size_t)n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap : 256;
    while (b->len + (size_t)n + 1 > cap) cap *= 2;
    char *s = (char *)realloc(b->s, cap);
    if (!s) {
      fprintf(stderr, "dml_conformance: out of memory\n");
      exit(2);
    }
    b->s = s;
    b->cap = cap;
  }
  va_start(ap, fmt);
  vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
  va_end(ap);
  b->len += (size_t)n;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Sorted names of the entries of `dir` starting with `prefix` (NULL: all
 * but dot files). */
static char **list_dir(const char *dir, const char *prefix, size_t *out_n) {
  DIR *d = opendir(dir);
  size_t n = 0, cap = 16;
  char **v = (char **)xcalloc(cap, sizeof(char *));
  if (d) {
    struct dirent *e;
    while ((e = readdir(d))) {
      if (e->d_name[0] == '.') continue;
      if (prefix && strncmp(e->d_name, prefix, strlen(prefix)) != 0) continue;
      if (n + 1 >= cap) {
        cap *= 2;
        char **nv = (char **)realloc(v, cap * sizeof(char *));
        if (!nv) exit(2);
        v = nv;
      }
      v[n++] = xstrdup(e->d_name);
    }
    closedir(d);
  }
  qsort(v, n, sizeof(char *), cmp_str);
  *out_n = n;
  return v;
}

static void free_list(char **v, size_t n) {
  for (size_t i = 0; i < n; i++) free(v[i]);
  free(v);
}

static int file_exists(const char *p) {
  struct stat st;
  return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static int read_file(const char *path, uint8_t **out, size_t *out_len) {
  FILE *f = fopen(path, "rb");
  if (!f) return -1;
  struct stat st;
  if (fstat(fileno(f), &st) != 0 || st.st_size < 0) {
    fclose(f);
    return -1;
  }
  size_t n = (size_t)st.st_size;
  uint8_t *b = (uint8_t *)xcalloc(n + 1, 1);
  if (n && fread(b, 1, n, f) != n) {
    free(b);
    fclose(f);
    return -1;
  }
  fclose(f);
  *out = b;
  *out_len = n;
  return 0;
}

/* One line of text: newlines and tabs become spaces, cut at `max` bytes. */
static void one_line(char *s, size_t max) {
  for (char *p = s; *p; p++)
    if (*p == '\n' || *p == '\t' || *p == '\r') *p = ' ';
  if (strlen(s) > max) strcpy(s + max - 3, "...");
}

/* ==== results =========================================================== */

enum { ST_PASS, ST_FAIL, ST_SKIP, ST_XFAIL, ST_XPASS };
static const char *const status_names[] = {"pass", "fail", "skip", "xfail", "xpass"};

typedef struct result {
  const char *suite;
  char *name;
  int status;      /* ST_* (xfail/xpass once the list is applied) */
  char *kind;      /* failure or skip reason kind; NULL on pass */
  char *message;   /* details (one line) */
  char *bad_ops;   /* "unsupported op": the op names, comma-separated */
  char *output;    /* "wrong values": the output's name */
  double max_err;  /* "wrong values": max abs error */
  long long index; /* "wrong values": flat index of the first failing element */
  char *special;   /* specialized input names, comma-separated; NULL when none */
  /* inputs compiled with their fed shape, comma-separated; NULL when none */
  char *redeclared;
  int statistical; /* checked by shape/dtype/value set (random outputs) */
  char **ops;      /* op types of the model's top-level nodes (unique, sorted) */
  size_t n_ops;
  const char *expected; /* the list's reason, when listed */
  double seconds;
} result_t;

/* What a child sends back: "key\tvalue\n" lines, values one-lined. */
static void emit_kv(sbuf_t *b, const char *k, const char *v) {
  char *c = xstrdup(v ? v : "");
  one_line(c, 4000);
  sb_add(b, "%s\t%s\n", k, c);
  free(c);
}

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

/* A status as one line: "op: reason; detail; detail" (no "error: "). */
static char *status_text(dml_status_t s) {
  char *m = dml_status_format(s);
  const char *p = m ? m : "?";
  if (!strncmp(p, "error: ", 7)) p += 7;
  sbuf_t b = {0};
  while (*p) {
    size_t n = strcspn(p, "\n");
    const char *q = p;
    while (n && (*q == ' ' || *q == '\t')) q++, n--;
    if (n) sb_add(&b, "%s%.*s", b.len ? "; " : "", (int)n, q);
    p = q + n;
    if (*p == '\n') p++;
  }
  free(m);
  char *r = b.s ? b.s : xstrdup("?");
  one_line(r, MAX_MSG);
  return r;
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
          !file_exists(path))
        break;
    }
    dml_tensor_t *t = (dml_tensor_t *)xcalloc(n, sizeof(*t));
    void **bufs = (void **)xcalloc(n, sizeof(void *));
    seqval_t *sq = (seqval_t *)xcalloc(n, sizeof(*sq));
    const int *is_seq = pass ? out_seq : in_seq;
    const int *is_opt = pass ? out_opt : in_opt;
    for (uint32_t i = 0; i < n && !ds->err; i++) {
      if (snprintf(path, sizeof(path), "%s/%s_%u.pb", dir, what, i) >= (int)sizeof(path))
        break;
      if (is_opt && i < 256 && is_opt[i]) {
        dml_onnx_optional_value_t ov;
        dml_status_t s = dml_onnx_optional_read_file(path, &ov);
        if (s) {
          ds->err = status_text(s);
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
        ds->err = status_text(s);
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

static int is_random_test(const char *name) {
  return strncmp(name, "test_bernoulli", 14) == 0 ||
         (strncmp(name, "test_training_dropout", 21) == 0 && !strstr(name, "zero_ratio"));
}

static void dims_str(const dml_tensor_t *t, char *buf, size_t cap) {
  size_t k = (size_t)snprintf(buf, cap, "%s[", dml_dtype_name(t->dtype));
  for (int32_t i = 0; i < t->rank && k < cap; i++)
    k +=
        (size_t)snprintf(buf + k, cap - k, "%s%lld", i ? "," : "", (long long)t->dims[i]);
  if (k < cap) snprintf(buf + k, cap - k, "]");
}

typedef struct verdict {
  const char *kind; /* NULL: ok */
  char *message;
  char *output;
  double max_err;
  long long index;
} verdict_t;

/* Compares one output. `x`/`ratio` are the Dropout input and ratio for the
 * random check (NULL otherwise). */
static void compare_output(const char *test, const char *oname, uint32_t oi,
                           const dml_tensor_t *got, const dml_tensor_t *want,
                           const dml_tensor_t *x, double ratio, const dml_tensor_t *out0,
                           verdict_t *v) {
  char g[200], w[200];
  dims_str(got, g, sizeof(g));
  dims_str(want, w, sizeof(w));
  int same = got->dtype == want->dtype && got->rank == want->rank;
  for (int32_t i = 0; same && i < got->rank; i++) same = got->dims[i] == want->dims[i];
  if (!same) {
    v->kind = "wrong shape/dtype";
    v->output = xstrdup(oname);
    v->message = xprintf("output %u '%s': got %s, want %s", oi, oname, g, w);
    return;
  }
  int64_t n = dml_dims_numel(want->dims, want->rank);
  size_t es = dml_dtype_size(want->dtype);
  double max_err = 0;
  long long bad = -1;
  const char *why = NULL;
  if (is_random_test(test)) {
    /* Bernoulli: every value is 0 or 1. Dropout: output 0 is 0 or x/(1-ratio),
     * the mask (output 1) agrees with output 0. */
    double scale = ratio < 1 ? 1.0 / (1.0 - ratio) : 0;
    int bern = strncmp(test, "test_bernoulli", 14) == 0;
    double s_got = 0, s_want = 0, s_var = 0; /* statistic, see the top */
    int64_t n_stat = 0;
    for (int64_t i = 0; i < n && bad < 0; i++) {
      double a = dml_load_f64(got->dtype, got->data, (size_t)i);
      if (bern) {
        if (a != 0 && a != 1) bad = i, why = "a value other than 0 and 1";
        double p = x ? dml_load_f64(x->dtype, x->data, (size_t)i) : 0.5;
        p = p < 0 ? 0 : p > 1 ? 1 : p;
        s_got += a, s_want += p, s_var += p * (1 - p), n_stat++;
      } else if (oi == 0 && x) {
        double xi = dml_load_f64(x->dtype, x->data, (size_t)i), kept = xi * scale;
        if (a != 0 && fabs(a - kept) > ABS_TOL + REL_TOL * fabs(kept))
          bad = i, why = "a value neither 0 nor x/(1-ratio)";
        if (xi != 0)
          s_got += a != 0, s_want += 1 - ratio, s_var += ratio * (1 - ratio), n_stat++;
      } else if (oi == 1 && out0 && x) {
        double o = dml_load_f64(out0->dtype, out0->data, (size_t)i);
        double xi = dml_load_f64(x->dtype, x->data, (size_t)i);
        if ((a != 0) != (o != 0 || xi == 0) && !(a == 0 && o == 0))
          bad = i, why = "a mask that disagrees with the output";
      }
    }
    if (bad < 0 && n_stat > 0) {
      double mg = s_got / (double)n_stat, mw = s_want / (double)n_stat;
      double bound = 4 * sqrt(s_var) / (double)n_stat + 1.0 / (double)n_stat;
      if (fabs(mg - mw) > bound) {
        v->kind = "wrong values";
        v->output = xstrdup(oname);
        v->message = xprintf(
            "output %u '%s' (random; checked by statistics): %s %.4g, "
            "expected %.4g +- %.4g over %lld elements",
            oi, oname, bern ? "mean" : "kept fraction", mg, mw, bound, (long long)n_stat);
        return;
      }
    }
    if (bad >= 0) {
      v->kind = "wrong values";
      v->output = xstrdup(oname);
      v->index = bad;
      v->message =
          xprintf("output %u '%s' (random; checked by value set): %s at index %lld", oi,
                  oname, why, bad);
    }
    return;
  }
  if (dml_dtype_is_float(want->dtype)) {
    for (int64_t i = 0; i < n; i++) {
      double a = dml_load_f64(got->dtype, got->data, (size_t)i);
      double b = dml_load_f64(want->dtype, want->data, (size_t)i);
      if (a == b || (isnan(a) && isnan(b))) continue;
      double e = fabs(a - b);
      if (isnan(e)) e = INFINITY;
      if (!(e <= ABS_TOL + REL_TOL * fabs(b))) {
        if (bad < 0) bad = i;
        if (e > max_err) max_err = e;
      }
    }
  } else {
    for (int64_t i = 0; i < n; i++) {
      if (memcmp((const char *)got->data + (size_t)i * es,
                 (const char *)want->data + (size_t)i * es, es) == 0)
        continue;
      double e = fabs((double)dml_load_i64(got->dtype, got->data, (size_t)i) -
                      (double)dml_load_i64(want->dtype, want->data, (size_t)i));
      if (bad < 0) bad = i;
      if (e > max_err) max_err = e;
    }
  }
  if (bad >= 0) {
    v->kind = "wrong values";
    v->output = xstrdup(oname);
    v->max_err = max_err;
    v->index = bad;
    v->message = xprintf(
        "output %u '%s': max abs error %.6g, first mismatch at index %lld (got %.9g, "
        "want "
        "%.9g)",
        oi, oname, max_err, bad, dml_load_f64(got->dtype, got->data, (size_t)bad),
        dml_load_f64(want->dtype, want->data, (size_t)bad));
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
  char *r = (char *)xcalloc(n + 1, 1);
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
  sbuf_t *out;
} test_ctx_t;

/* The device every test runs on (--device): "cpu", or "vulkan[:N]", for
 * which packages are compiled with --target cpu,vulkan. */
static const char *g_device = "cpu";

/* Compiles with `n_bind` bindings and loads the package. */
static dml_status_t compile_and_load(const test_ctx_t *t, const dml_onnx_binding_t *bind,
                                     size_t n_bind, dml_rt_model_t **out_model) {
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
  void *pkg = NULL;
  size_t size = 0;
  DML_RETURN_IF_ERROR(dml_compile_onnx_memory(t->model, t->model_len, t->dir,
                                              "model.onnx", &o, &pkg, &size, NULL));
  dml_status_t s = dml_rt_model_load_memory(pkg, size, out_model);
  free(pkg);
  return s;
}

/* Runs data set `ds` on `model`; the inputs named in `bound_names` are
 * compiled in and not bound. Fills *v on failure; returns 0 on success. */
static int run_dataset(const test_ctx_t *t, dml_rt_model_t *model, const dataset_t *ds,
                       const char *const *real_inputs, uint32_t n_real,
                       const char *const *bound_names, size_t n_bound, verdict_t *v) {
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
        v->output = xstrdup(d->outputs[i].name);
        v->message = xprintf(
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
        v->output = xstrdup(d->outputs[i].name);
        v->message = xprintf("sequence output %u '%s': more than %zu elements", i,
                             d->outputs[i].name, want->n);
        break;
      }
      for (size_t j = 0; j < want->n && !v->kind; j++) {
        snprintf(ename, sizeof(ename), "%s.%zu", d->outputs[i].name, j);
        int32_t k = dml_rt_model_find_output(model, ename);
        if (k < 0) {
          v->kind = "wrong shape/dtype";
          v->output = xstrdup(d->outputs[i].name);
          v->message = xprintf(
              "sequence output %u '%s': %zu elements expected, the "
              "package has no output '%s'",
              i, d->outputs[i].name, want->n, ename);
          break;
        }
        dml_tensor_t got;
        st = dml_rt_session_get_output(s, (uint32_t)k, &got);
        if (st) goto runtime_error;
        compare_output(t->name, ename, i, &got, &want->t[j], NULL, ratio, NULL, v);
      }
      continue;
    }
    int32_t k = dml_rt_model_find_output(model, d->outputs[i].name);
    if (k < 0) {
      v->kind = "runtime error";
      v->message = xprintf("the package has no output '%s'", d->outputs[i].name);
      break;
    }
    dml_tensor_t got;
    st = dml_rt_session_get_output(s, (uint32_t)k, &got);
    if (st) goto runtime_error;
    if (i == 0) out0 = got;
    compare_output(t->name, d->outputs[i].name, i, &got, &ds->out[i],
                   ds->n_in ? &ds->in[0] : NULL, ratio, i ? &out0 : NULL, v);
    if (v->kind) break;
  }
  dml_rt_session_release(s);
  return v->kind ? -1 : 0;
runtime_error:
  v->kind = "runtime error";
  v->message = status_text(st);
  dml_status_free(st);
  dml_rt_session_release(s);
  return -1;
}

/* The child's whole job; writes key/value lines to t->out. */
static void run_test(test_ctx_t *t) {
  sbuf_t *out = t->out;
  const dml_onnx_model_desc_t *d = t->desc;
  /* Data sets. */
  size_t n_sets = 0;
  char **sets = list_dir(t->dir, "test_data_set_", &n_sets);
  dataset_t *ds = (dataset_t *)xcalloc(n_sets, sizeof(*ds));
  char path[4096];
  const char *real_inputs[256];
  uint32_t n_real = 0;
  int non_tensor = 0;
  int in_is_seq[256] = {0}, *out_is_seq = (int *)xcalloc(d->n_outputs + 1, sizeof(int));
  int in_is_opt[256] = {0}, *out_is_opt = (int *)xcalloc(d->n_outputs + 1, sizeof(int));
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
  sbuf_t redeclared = {0};
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
    sb_add(&redeclared, "%s%s", n_shapes ? "," : "", real_inputs[i]);
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
    dml_onnx_input_shape_t *sh = (dml_onnx_input_shape_t *)xcalloc(a->n + 1, sizeof(*sh));
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
  if (n_shapes) emit_kv(out, "redeclared", redeclared.s);
  free(redeclared.s);
  dml_rt_model_t *model = NULL;
  dml_status_t st = compile_and_load(t, NULL, 0, &model);
  verdict_t v;
  memset(&v, 0, sizeof(v));
  const char *bound_names[MAX_BINDINGS];
  size_t n_bound = 0;
  char *unspecialized = NULL; /* the compile error without binding */
  if (st) {
    const char *reason = dml_status_reason(st);
    char *bad = unsupported_ops_of(reason ? reason : "");
    if (bad) {
      emit_kv(out, "kind", "unsupported op");
      emit_kv(out, "bad_ops", bad);
      char *m = status_text(st);
      emit_kv(out, "message", m);
      free(m);
      free(bad);
      goto done;
    }
    if (non_tensor) {
      emit_kv(out, "kind", "sequence inputs unsupported");
      char *m = status_text(st);
      emit_kv(out, "message", m);
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
      emit_kv(out, "kind", "compile error");
      char *m = status_text(st);
      emit_kv(out, "message", m);
      free(m);
      goto done;
    }
    unspecialized = status_text(st);
    dml_status_free(st);
    st = DML_OK;
  }
  if (non_tensor) {
    emit_kv(out, "kind", "sequence inputs unsupported");
    emit_kv(out, "message", "the model has map, optional or sparse inputs or outputs");
    goto done;
  }
  if (!n_sets) {
    emit_kv(out, "kind", "compile error");
    emit_kv(out, "message", "no test_data_set_* directory");
    goto done;
  }
  if (seq_mismatch) {
    emit_kv(out, "kind", "compile error");
    emit_kv(out, "message",
            "the data sets feed a sequence input different element counts or shapes, "
            "or an optional input a value in some and none in others");
    goto done;
  }
  for (size_t k = 0; k < n_sets && !v.kind; k++) {
    if (ds[k].err) {
      v.kind = "runtime error";
      v.message = xprintf("reading %s: %s", sets[k], ds[k].err);
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
      st = compile_and_load(t, bind, nb, &model);
      if (st) {
        v.kind = "compile error";
        char *m = status_text(st);
        v.message = xprintf("with shape inputs bound: %s", m);
        free(m);
        break;
      }
    }
    if (run_dataset(t, model, &ds[k], real_inputs, n_real, bound_names, n_bound, &v))
      break;
  }
  if (v.kind) {
    emit_kv(out, "kind", v.kind);
    emit_kv(out, "message", v.message);
    if (v.output) emit_kv(out, "output", v.output);
    if (!strcmp(v.kind, "wrong values")) {
      char num[64];
      snprintf(num, sizeof(num), "%.9g", v.max_err);
      emit_kv(out, "max_err", num);
      snprintf(num, sizeof(num), "%lld", v.index);
      emit_kv(out, "index", num);
    }
  } else if (n_bound) {
    /* Passing only specialized is a failure, reported apart. */
    sbuf_t names = {0};
    for (size_t b = 0; b < n_bound; b++)
      sb_add(&names, "%s%s", b ? "," : "", bound_names[b]);
    /* The compile error without binding, then how it passes. */
    const char *u = unspecialized ? unspecialized : "";
    const char *semi = strstr(u, "; ");
    int head = semi ? (int)(semi - u) : (int)strlen(u);
    char *m = xprintf(
        "%.*s (passes with shape inputs %s bound as compile-time constants, "
        "--specialize)%s",
        head, u, names.s, semi ? semi : "");
    emit_kv(out, "kind", KIND_SPECIALIZED);
    emit_kv(out, "message", m);
    free(m);
    free(names.s);
  } else {
    emit_kv(out, "pass", "1");
    if (is_random_test(t->name)) emit_kv(out, "statistical", "1");
  }
  if (n_bound) {
    sbuf_t names = {0};
    for (size_t b = 0; b < n_bound; b++)
      sb_add(&names, "%s%s", b ? "," : "", bound_names[b]);
    emit_kv(out, "special", names.s);
    free(names.s);
  }
  free(v.message);
  free(v.output);
done:
  free(unspecialized);
  for (size_t i = 0; i < n_seq_in; i++) free(seq_shapes[i]);
  free(out_is_seq);
  free(out_is_opt);
  dml_status_free(st);
  dml_rt_model_release(model);
  for (size_t k = 0; k < n_sets; k++) dataset_free(&ds[k]);
  free(ds);
  free_list(sets, n_sets);
}

/* ==== the parent: scheduling ============================================ */

typedef struct job {
  result_t *r;
  char *dir;
  pid_t pid;
  int fd;
  sbuf_t buf;
  double t0;
} job_t;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int timeout_s = 20;

static void start_job(job_t *j) {
  int p[2];
  if (pipe(p) != 0) {
    perror("pipe");
    exit(2);
  }
  fflush(stdout);
  fflush(stderr);
  j->t0 = now_s();
  pid_t pid = fork();
  if (pid < 0) {
    perror("fork");
    exit(2);
  }
  if (pid == 0) {
    close(p[0]);
    alarm((unsigned)timeout_s);
    sbuf_t out = {0};
    char path[4096];
    snprintf(path, sizeof(path), "%s/model.onnx", j->dir);
    uint8_t *bytes = NULL;
    size_t len = 0;
    dml_onnx_model_desc_t *d = NULL;
    if (read_file(path, &bytes, &len) != 0) {
      emit_kv(&out, "kind", "compile error");
      emit_kv(&out, "message", "cannot read model.onnx");
    } else {
      dml_status_t s = dml_onnx_model_describe(bytes, len, &d);
      if (s) {
        emit_kv(&out, "kind", "compile error");
        char *m = status_text(s);
        emit_kv(&out, "message", m);
        free(m);
        dml_status_free(s);
      } else {
        test_ctx_t t;
        memset(&t, 0, sizeof(t));
        t.dir = j->dir;
        t.name = j->r->name;
        t.desc = d;
        t.model = bytes;
        t.model_len = len;
        t.out = &out;
        run_test(&t);
      }
    }
    size_t done = 0;
    while (done < out.len) {
      ssize_t w = write(p[1], out.s + done, out.len - done);
      if (w <= 0) break;
      done += (size_t)w;
    }
    _exit(0);
  }
  close(p[1]);
  j->pid = pid;
  j->fd = p[0];
  memset(&j->buf, 0, sizeof(j->buf));
}

static const char *sig_name(int sig) {
  switch (sig) {
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL";
    case SIGABRT: return "SIGABRT";
    case SIGALRM: return "SIGALRM";
    case SIGKILL: return "SIGKILL";
    case SIGTERM: return "SIGTERM";
    default: return "signal";
  }
}

/* Parses the child's lines into r. */
static void finish_job(job_t *j, int wstatus) {
  result_t *r = j->r;
  r->seconds = now_s() - j->t0;
  int got_any = 0;
  char *line = j->buf.s;
  while (line && *line) {
    char *nl = strchr(line, '\n');
    if (nl) *nl = 0;
    char *tab = strchr(line, '\t');
    if (tab) {
      *tab = 0;
      const char *k = line, *val = tab + 1;
      got_any = 1;
      if (!strcmp(k, "pass"))
        r->status = ST_PASS;
      else if (!strcmp(k, "kind"))
        r->kind = xstrdup(val), r->status = ST_FAIL;
      else if (!strcmp(k, "message"))
        r->message = xstrdup(val);
      else if (!strcmp(k, "bad_ops"))
        r->bad_ops = xstrdup(val);
      else if (!strcmp(k, "output"))
        r->output = xstrdup(val);
      else if (!strcmp(k, "max_err"))
        r->max_err = strtod(val, NULL);
      else if (!strcmp(k, "index"))
        r->index = strtoll(val, NULL, 10);
      else if (!strcmp(k, "special"))
        r->special = xstrdup(val);
      else if (!strcmp(k, "redeclared"))
        r->redeclared = xstrdup(val);
      else if (!strcmp(k, "statistical"))
        r->statistical = 1;
    }
    line = nl ? nl + 1 : NULL;
  }
  if (WIFSIGNALED(wstatus)) {
    int sig = WTERMSIG(wstatus);
    free(r->kind);
    free(r->message);
    r->status = ST_FAIL;
    r->kind = xstrdup("runtime error");
    r->message = sig == SIGALRM
                     ? xprintf("timed out after %d s (SIGALRM)", timeout_s)
                     : xprintf("crashed: %s (%s)", sig_name(sig), strsignal(sig));
  } else if (!got_any) {
    r->status = ST_FAIL;
    r->kind = xstrdup("runtime error");
    r->message = xprintf("the test process exited with status %d and no result",
                         WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1);
  }
  free(j->buf.s);
  memset(&j->buf, 0, sizeof(j->buf));
}

/* Runs every result whose dir is set, `jobs` at a time. */
static void run_all(result_t **todo, char **dirs, size_t n, int jobs, int verbose) {
  job_t *slots = (job_t *)xcalloc((size_t)jobs, sizeof(job_t));
  size_t next = 0, running = 0;
  while (next < n || running) {
    while (next < n && running < (size_t)jobs) {
      for (int s = 0; s < jobs; s++)
        if (!slots[s].pid) {
          slots[s].r = todo[next];
          slots[s].dir = dirs[next];
          next++;
          start_job(&slots[s]);
          running++;
          break;
        }
    }
    /* Drain every running child's pipe until one finishes (results are
     * small; reading keeps a large one from blocking its writer). */
    int wstatus = 0;
    pid_t pid = waitpid(-1, &wstatus, WNOHANG);
    if (pid == 0) {
      fd_set fds;
      FD_ZERO(&fds);
      int maxfd = -1;
      for (int s = 0; s < jobs; s++)
        if (slots[s].pid && slots[s].fd >= 0) {
          FD_SET(slots[s].fd, &fds);
          if (slots[s].fd > maxfd) maxfd = slots[s].fd;
        }
      struct timeval tv = {0, 20000};
      if (maxfd >= 0 && select(maxfd + 1, &fds, NULL, NULL, &tv) > 0)
        for (int s = 0; s < jobs; s++)
          if (slots[s].pid && slots[s].fd >= 0 && FD_ISSET(slots[s].fd, &fds)) {
            char tmp[4096];
            ssize_t k = read(slots[s].fd, tmp, sizeof(tmp));
            if (k > 0)
              sb_add(&slots[s].buf, "%.*s", (int)k, tmp);
            else {
              close(slots[s].fd);
              slots[s].fd = -1;
            }
          }
      continue;
    }
    if (pid < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int s = 0; s < jobs; s++) {
      if (slots[s].pid != pid) continue;
      if (slots[s].fd >= 0) {
        char tmp[4096];
        ssize_t k;
        while ((k = read(slots[s].fd, tmp, sizeof(tmp))) > 0)
          sb_add(&slots[s].buf, "%.*s", (int)k, tmp);
        close(slots[s].fd);
        slots[s].fd = -1;
      }
      finish_job(&slots[s], wstatus);
      if (verbose)
        fprintf(stderr, "%-6s %s/%s (%.2f s)%s%s\n", status_names[slots[s].r->status],
                slots[s].r->suite, slots[s].r->name, slots[s].r->seconds,
                slots[s].r->kind ? ": " : "", slots[s].r->kind ? slots[s].r->kind : "");
      slots[s].pid = 0;
      running--;
    }
  }
  free(slots);
}

/* ==== expected-failure list ============================================= */

typedef struct expected {
  char **keys; /* "suite/test" */
  char **reasons;
  int *used;
  size_t n;
} expected_t;

static int load_expected(const char *path, expected_t *e) {
  memset(e, 0, sizeof(*e));
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  size_t cap = 64;
  e->keys = (char **)xcalloc(cap, sizeof(char *));
  e->reasons = (char **)xcalloc(cap, sizeof(char *));
  char line[8192];
  int lineno = 0, bad = 0;
  while (fgets(line, sizeof(line), f)) {
    lineno++;
    line[strcspn(line, "\r\n")] = 0;
    if (!line[0] || line[0] == '#') continue;
    char *sp = strchr(line, ' ');
    char *reason = sp ? sp + 1 : NULL;
    while (reason && *reason == ' ') reason++;
    if (!sp || !reason || !*reason || !strchr(line, '/')) {
      fprintf(stderr, "%s:%d: entry without a reason: '%s'\n", path, lineno, line);
      bad = 1;
      continue;
    }
    *sp = 0;
    if (e->n == cap) {
      cap *= 2;
      char **k = (char **)realloc(e->keys, cap * sizeof(char *));
      char **r = (char **)realloc(e->reasons, cap * sizeof(char *));
      if (!k || !r) exit(2);
      e->keys = k, e->reasons = r;
    }
    e->keys[e->n] = xstrdup(line);
    e->reasons[e->n] = xstrdup(reason);
    e->n++;
  }
  fclose(f);
  e->used = (int *)xcalloc(e->n, sizeof(int));
  return bad ? -2 : 0;
}

static long find_expected(const expected_t *e, const char *suite, const char *name) {
  size_t ls = strlen(suite);
  for (size_t i = 0; i < e->n; i++)
    if (!strncmp(e->keys[i], suite, ls) && e->keys[i][ls] == '/' &&
        !strcmp(e->keys[i] + ls + 1, name))
      return (long)i;
  return -1;
}

/* The reason written to the list for a failure or skip. */
static char *generated_reason(const result_t *r) {
  char *s;
  if (r->bad_ops) {
    s = xprintf("unsupported op: %s", r->bad_ops);
  } else if (r->kind && r->message) {
    /* The message's first part: the reason without its details. */
    size_t n = strlen(r->message);
    const char *semi = strstr(r->message, "; ");
    if (semi && strcmp(r->kind, "wrong values") != 0) n = (size_t)(semi - r->message);
    s = xprintf("%s: %.*s", r->kind, (int)n, r->message);
  } else {
    s = xstrdup(r->kind ? r->kind : "fails");
  }
  one_line(s, 240);
  return s;
}

/* ==== reports =========================================================== */

static void json_str(FILE *f, const char *s) {
  fputc('"', f);
  for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
    switch (*p) {
      case '"': fputs("\\\"", f); break;
      case '\\': fputs("\\\\", f); break;
      case '\n': fputs("\\n", f); break;
      case '\r': fputs("\\r", f); break;
      case '\t': fputs("\\t", f); break;
      default:
        if (*p < 0x20)
          fprintf(f, "\\u%04x", *p);
        else
          fputc(*p, f);
    }
  }
  fputc('"', f);
}

/* Writes a comma-separated list as a JSON array of strings. */
static void json_list(FILE *f, const char *csv) {
  fputc('[', f);
  const char *p = csv;
  int first = 1;
  while (p && *p) {
    while (*p == ' ') p++;
    size_t n = strcspn(p, ",");
    char *item = (char *)xcalloc(n + 1, 1);
    memcpy(item, p, n);
    if (!first) fputs(", ", f);
    json_str(f, item);
    free(item);
    first = 0;
    p += n;
    if (*p == ',') p++;
  }
  fputc(']', f);
}

static int write_json(const char *path, result_t *rs, size_t n) {
  FILE *f = fopen(path, "w");
  if (!f) return -1;
  fprintf(f,
          "{\n  \"tolerance\": {\"relative\": %g, \"absolute\": %g},\n  \"tests\": [\n",
          REL_TOL, ABS_TOL);
  for (size_t i = 0; i < n; i++) {
    const result_t *r = &rs[i];
    fputs("    {\"suite\": ", f);
    json_str(f, r->suite);
    fputs(", \"name\": ", f);
    json_str(f, r->name);
    fprintf(f, ", \"status\": \"%s\", \"specialized\": ", status_names[r->status]);
    json_list(f, r->special);
    if (r->redeclared) {
      fputs(", \"redeclared\": ", f);
      json_list(f, r->redeclared);
    }
    if (r->statistical)
      fputs(", \"checked_by\": \"shape, dtype, value set and statistics\"", f);
    fputs(", \"ops\": [", f);
    for (size_t k = 0; k < r->n_ops; k++) {
      if (k) fputs(", ", f);
      json_str(f, r->ops[k]);
    }
    fputc(']', f);
    if (r->kind) {
      fputs(", \"reason\": {\"kind\": ", f);
      json_str(f, r->kind);
      if (r->bad_ops) {
        fputs(", \"ops\": ", f);
        json_list(f, r->bad_ops);
      }
      if (r->output) {
        fputs(", \"output\": ", f);
        json_str(f, r->output);
      }
      if (r->kind && !strcmp(r->kind, "wrong values"))
        fprintf(f, ", \"max_abs_error\": %.9g, \"index\": %lld",
                isfinite(r->max_err) ? r->max_err : 1e308, r->index);
      fputs(", \"message\": ", f);
      json_str(f, r->message);
      fputc('}', f);
    }
    if (r->expected) {
      fputs(", \"expected_failure\": ", f);
      json_str(f, r->expected);
    }
    fprintf(f, ", \"seconds\": %.3f}%s\n", r->seconds, i + 1 < n ? "," : "");
  }
  fputs("  ]\n}\n", f);
  return fclose(f);
}

static int is_fail(int st) {
  return st == ST_FAIL || st == ST_XFAIL;
}
static int is_pass(int st) {
  return st == ST_PASS || st == ST_XPASS;
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
  op_entry_t *v = (op_entry_t *)xcalloc(cap, sizeof(*v));
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
    v[n].name = xstrdup(line);
    v[n].versions = xstrdup(sp ? sp + 1 : "");
    n++;
  }
  fclose(f);
  *out_n = n;
  return v;
}

static int list_has(const char *csv, const char *name) {
  size_t ln = strlen(name);
  const char *p = csv;
  while (p && *p) {
    while (*p == ' ') p++;
    size_t n = strcspn(p, ",");
    if (n == ln && !strncmp(p, name, n)) return 1;
    p += n;
    if (*p == ',') p++;
  }
  return 0;
}

/* Failures charged to op `op`: a test that uses it fails, unless the failure
 * is an unsupported op other than it. */
static int charged_to(const result_t *r, const char *op) {
  if (!is_fail(r->status)) return 0;
  if (r->bad_ops) return list_has(r->bad_ops, op);
  return 1;
}

static const char *const suite_names[] = {"node", "pytorch-converted", "pytorch-operator",
                                          "simple", "real"};
#define N_SUITES (sizeof(suite_names) / sizeof(suite_names[0]))

typedef struct counts {
  int pass, special, fail, skip, total;
} counts_t;

static void count(const result_t *rs, size_t n, const char *suite, counts_t *c) {
  memset(c, 0, sizeof(*c));
  for (size_t i = 0; i < n; i++) {
    if (suite && strcmp(rs[i].suite, suite) != 0) continue;
    c->total++;
    if (is_pass(rs[i].status)) {
      c->pass++;
    } else if (is_fail(rs[i].status)) {
      c->fail++;
      if (rs[i].kind && !strcmp(rs[i].kind, KIND_SPECIALIZED)) c->special++;
    } else {
      c->skip++;
    }
  }
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
  (*t)[*n].key = xstrdup(key);
  (*t)[*n].n = 1;
  (*n)++;
}

static int cmp_tally(const void *a, const void *b) {
  const tally_t *x = (const tally_t *)a, *y = (const tally_t *)b;
  if (x->n != y->n) return y->n - x->n;
  return strcmp(x->key, y->key);
}

/* Counts unsupported ops over failing tests (one per test and op). */
static tally_t *unsupported_tally(const result_t *rs, size_t n, size_t *out_n) {
  tally_t *t = NULL;
  size_t tn = 0, cap = 0;
  for (size_t i = 0; i < n; i++) {
    if (!is_fail(rs[i].status) || !rs[i].bad_ops) continue;
    const char *p = rs[i].bad_ops;
    while (*p) {
      while (*p == ' ') p++;
      size_t k = strcspn(p, ",");
      char *op = (char *)xcalloc(k + 1, 1);
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

static tally_t *kind_tally(const result_t *rs, size_t n, size_t *out_n) {
  tally_t *t = NULL;
  size_t tn = 0, cap = 0;
  for (size_t i = 0; i < n; i++)
    if (is_fail(rs[i].status) || rs[i].status == ST_SKIP)
      tally_add(&t, &tn, &cap, rs[i].kind);
  if (tn) qsort(t, tn, sizeof(*t), cmp_tally);
  *out_n = tn;
  return t;
}

static int write_doc(const char *path, const result_t *rs, size_t n,
                     const char *ops_path) {
  size_t n_ops = 0;
  op_entry_t *ops = load_ops(ops_path, &n_ops);
  if (!ops) {
    fprintf(stderr, "dml_conformance: cannot read the op list '%s'\n", ops_path);
    return -1;
  }
  FILE *f = fopen(path, "w");
  if (!f) return -1;
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
      "(NaN equals NaN; integers and bools exactly).\nTests whose outputs are random "
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
  counts_t c;
  for (size_t s = 0; s < N_SUITES; s++) {
    count(rs, n, suite_names[s], &c);
    if (!c.total) continue;
    fprintf(f, "| %s | %d | %d | %d | %d | %d |\n", suite_names[s], c.total, c.pass,
            c.fail, c.special, c.skip);
  }
  count(rs, n, NULL, &c);
  fprintf(f, "| **total** | %d | %d | %d | %d | %d |\n\n", c.total, c.pass, c.fail,
          c.special, c.skip);
  counts_t nc;
  count(rs, n, "node", &nc);
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
  sbuf_t rows = {0};
  for (size_t o = 0; o < n_ops; o++) {
    const char *op = ops[o].name;
    int imports = 0;
    sbuf_t opsets = {0};
    int first_ok = 0, last_ok = 0;
    for (int v = 7; v <= 17; v++)
      if (dml_onnx_op_is_supported(op, v)) {
        if (!imports) first_ok = v;
        last_ok = v;
        imports++;
      }
    if (imports && imports < 11)
      sb_add(&opsets, "imports at opsets %d..%d", first_ok, last_ok);
    int tests = 0, failing = 0;
    sbuf_t fails = {0};
    for (size_t i = 0; i < n; i++) {
      if (strcmp(rs[i].suite, "node") != 0) continue;
      int uses = 0;
      for (size_t k = 0; k < rs[i].n_ops && !uses; k++) uses = !strcmp(rs[i].ops[k], op);
      if (!uses) continue;
      tests++;
      if (charged_to(&rs[i], op)) {
        if (failing < 8)
          sb_add(&fails, "%s`%s` (%s)", failing ? ", " : "", rs[i].name, rs[i].kind);
        failing++;
      }
    }
    if (failing > 8) sb_add(&fails, ", and %d more", failing - 8);
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
    sb_add(&rows, "| %s | %s | %d/%d | ", op, status, tests - failing, tests);
    if (opsets.s) sb_add(&rows, "%s%s", opsets.s, fails.s ? "; " : "");
    if (fails.s) sb_add(&rows, "fails: %s", fails.s);
    if (!tests && imports) sb_add(&rows, "%sno node test", opsets.s ? "; " : "");
    sb_add(&rows, " |\n");
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
  if (n_dops) qsort(dops, n_dops, sizeof(char *), cmp_str);
  fputs(
      "\n## Ops of other domains\n\n"
      "Ops of non-default domains that the tests use (`ai.onnx.preview.training`: "
      "version 1), with the tests\nof every suite that use them.\n\n"
      "| op | status | tests passing | notes |\n| --- | --- | ---: | --- |\n",
      f);
  for (size_t o = 0; o < n_dops; o++) {
    const char *dot = strrchr(dops[o], '.');
    char *domain = (char *)xcalloc((size_t)(dot - dops[o]) + 1, 1);
    memcpy(domain, dops[o], (size_t)(dot - dops[o]));
    int imports = 0;
    for (int v = 1; v <= 20 && !imports; v++)
      imports = dml_onnx_domain_op_is_supported(domain, dot + 1, v);
    int tests = 0, failing = 0;
    sbuf_t fails = {0};
    for (size_t i = 0; i < n; i++) {
      int uses = 0;
      for (size_t k = 0; k < rs[i].n_ops && !uses; k++)
        uses = !strcmp(rs[i].ops[k], dops[o]);
      if (!uses) continue;
      tests++;
      if (charged_to(&rs[i], dops[o])) {
        if (failing < 8)
          sb_add(&fails, "%s`%s/%s` (%s)", failing ? ", " : "", rs[i].suite, rs[i].name,
                 rs[i].kind);
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
  free(ops);
  return fclose(f);
}

static int write_expected(const char *path, const result_t *rs, size_t n,
                          const expected_t *old) {
  char tmp[4096];
  snprintf(tmp, sizeof(tmp), "%s.tmp", path);
  FILE *f = fopen(tmp, "w");
  if (!f) return -1;
  /* The list's own leading comment stays (each list says how to refresh
   * it); a new list gets the CPU list's. */
  int kept = 0;
  FILE *in = fopen(path, "r");
  if (in) {
    char line[4096];
    while (fgets(line, sizeof line, in) && line[0] == '#') {
      fputs(line, f);
      kept = 1;
    }
    fclose(in);
  }
  if (!kept)
    fputs(
        "# Expected failures of the ONNX backend tests (tests/conformance):\n"
        "# one line per test, \"<suite>/<test> <reason>\". The onnx_conformance test\n"
        "# fails when a test outside this list fails or is skipped, and when a listed\n"
        "# test passes. Refresh after adding ops (keeps reasons of still-failing "
        "tests):\n"
        "#   build/tests/conformance/dml_conformance --update-expected --specialize \\\n"
        "#       --expected tests/conformance/expected_failures.txt \\\n"
        "#       --ops tests/conformance/onnx_ops_7_17.txt --write-doc "
        "docs/conformance.md\n",
        f);
  for (size_t i = 0; i < n; i++) {
    const result_t *r = &rs[i];
    if (is_pass(r->status)) continue;
    long k = find_expected(old, r->suite, r->name);
    if (k >= 0) {
      fprintf(f, "%s/%s %s\n", r->suite, r->name, old->reasons[k]);
    } else {
      char *reason = generated_reason(r);
      fprintf(f, "%s/%s %s\n", r->suite, r->name, reason);
      free(reason);
    }
  }
  if (fclose(f) != 0) return -1;
  return rename(tmp, path);
}

/* ==== main ============================================================== */

static void usage(FILE *f) {
  fprintf(
      f,
      "usage: dml_conformance [--data DIR] [--suites a,b] [--expected FILE]\n"
      "                       [--json FILE] [--write-doc FILE] [--ops FILE]\n"
      "                       [--update-expected] [--filter SUBSTR] [-j N]\n"
      "                       [--timeout S] [--specialize] [-v]\n\n"
      "Runs ONNX's backend tests (libonnx-testdata) on the CPU and checks them\n"
      "against the expected-failure list.\n\n"
      "  --data DIR         test data root (default "
      "/usr/share/libonnx-testdata/data)\n"
      "  --suites LIST      comma-separated suites (default: all: node,\n"
      "                     pytorch-converted, pytorch-operator, simple, real)\n"
      "  --expected FILE    the expected-failure list\n"
      "  --update-expected  rewrite --expected from this run (keeps the reasons of\n"
      "                     tests still failing)\n"
      "  --json FILE        every test's result as JSON\n"
      "  --write-doc FILE   write the conformance page (docs/conformance.md)\n"
      "  --ops FILE         ONNX op list for the page (onnx_ops_7_17.txt)\n"
      "  --filter SUBSTR    only tests whose name contains SUBSTR\n"
      "  --device D         run on D: cpu (default), vulkan or vulkan:N (packages\n"
      "                     are then compiled with --target cpu,vulkan; a model with\n"
      "                     ops the vulkan target lacks fails to compile); without a\n"
      "                     Vulkan device the run is skipped (exit 77)\n"
      "  --expect-device S  skip (exit 77) unless the default Vulkan device's name\n"
      "                     contains S (expected failures are per device)\n"
      "  -j N               tests run in parallel (default 2)\n"
      "  --timeout S        per-test time limit in seconds (default 20)\n"
      "  --specialize       extra mode: retry a test whose compile fails because an\n"
      "                     output shape depends on run-time data with its shape\n"
      "                     inputs bound as constants; a test passing only so still\n"
      "                     fails, counted apart\n"
      "  -v                 one line per test on stderr\n");
}

int main(int argc, char **argv) {
  const char *data = "/usr/share/libonnx-testdata/data", *suites = NULL;
  const char *expected_path = NULL, *json_path = NULL, *doc_path = NULL, *ops_path = NULL;
  const char *filter = NULL, *expect_device = NULL;
  int update = 0, jobs = 2, verbose = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *next = i + 1 < argc ? argv[i + 1] : NULL;
#define TAKE(flag, var)           \
  if (!strcmp(a, flag) && next) { \
    var = next;                   \
    i++;                          \
    continue;                     \
  }
    TAKE("--data", data);
    TAKE("--suites", suites);
    TAKE("--expected", expected_path);
    TAKE("--json", json_path);
    TAKE("--write-doc", doc_path);
    TAKE("--ops", ops_path);
    TAKE("--filter", filter);
    TAKE("--device", g_device);
    TAKE("--expect-device", expect_device);
#undef TAKE
    if (!strcmp(a, "-j") && next) {
      jobs = atoi(next);
      i++;
    } else if (!strcmp(a, "--timeout") && next) {
      timeout_s = atoi(next);
      i++;
    } else if (!strcmp(a, "--specialize")) {
      specialize = 1;
    } else if (!strcmp(a, "--update-expected")) {
      update = 1;
    } else if (!strcmp(a, "-v")) {
      verbose = 1;
    } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      usage(stdout);
      return 0;
    } else {
      fprintf(stderr, "dml_conformance: unknown or incomplete flag '%s'\n", a);
      usage(stderr);
      return 2;
    }
  }
  if (jobs < 1) jobs = 1;
  if (timeout_s < 1) timeout_s = 1;
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
    if (expect_device && !strstr(name, expect_device)) {
      printf(
          "SKIP: the expected failures are for a Vulkan device named '*%s*'; the default "
          "device here is '%s'\n",
          expect_device, name);
      return 77;
    }
  }
  if (update && !expected_path) {
    fprintf(stderr, "dml_conformance: --update-expected needs --expected FILE\n");
    return 2;
  }
  expected_t exp;
  memset(&exp, 0, sizeof(exp));
  if (expected_path) {
    int r = load_expected(expected_path, &exp);
    if (r == -1 && !update) {
      fprintf(stderr, "dml_conformance: cannot read '%s'\n", expected_path);
      return 2;
    }
    if (r == -2 && !update) return 1;
  }
  if (!ops_path && doc_path) {
    fprintf(stderr, "dml_conformance: --write-doc needs --ops FILE\n");
    return 2;
  }

  /* Collect the tests. */
  size_t cap = 2048, n = 0;
  result_t *rs = (result_t *)xcalloc(cap, sizeof(result_t));
  char **dirs = (char **)xcalloc(cap, sizeof(char *));
  for (size_t s = 0; s < N_SUITES; s++) {
    if (suites && !list_has(suites, suite_names[s])) continue;
    char sdir[4096];
    snprintf(sdir, sizeof(sdir), "%s/%s", data, suite_names[s]);
    size_t nt = 0;
    char **tests = list_dir(sdir, "test_", &nt);
    for (size_t t = 0; t < nt; t++) {
      if (filter && !strstr(tests[t], filter)) continue;
      if (n == cap) {
        fprintf(stderr, "dml_conformance: more than %zu tests\n", cap);
        return 2;
      }
      result_t *r = &rs[n];
      r->suite = suite_names[s];
      r->name = xstrdup(tests[t]);
      dirs[n] = xprintf("%s/%s", sdir, tests[t]);
      char model[4200];
      snprintf(model, sizeof(model), "%s/model.onnx", dirs[n]);
      uint8_t *bytes = NULL;
      size_t len = 0;
      if (!file_exists(model)) {
        r->status = ST_SKIP;
        r->kind = xstrdup("model not shipped");
        r->message = xstrdup("no model.onnx (data.json only)");
      } else if (read_file(model, &bytes, &len) == 0) {
        dml_onnx_model_desc_t *d = NULL;
        dml_status_t st = dml_onnx_model_describe(bytes, len, &d);
        if (!st) {
          r->ops = (char **)xcalloc(d->n_nodes, sizeof(char *));
          for (uint32_t k = 0; k < d->n_nodes; k++) {
            /* Ops of other domains as "domain.Op" (the importer's spelling). */
            const char *dom = d->nodes[k].domain;
            char *op = dom[0] && strcmp(dom, "ai.onnx") != 0
                           ? xprintf("%s.%s", dom, d->nodes[k].op_type)
                           : xstrdup(d->nodes[k].op_type);
            int dup = 0;
            for (size_t q = 0; q < r->n_ops && !dup; q++) dup = !strcmp(r->ops[q], op);
            if (dup)
              free(op);
            else
              r->ops[r->n_ops++] = op;
          }
          qsort(r->ops, r->n_ops, sizeof(char *), cmp_str);
          dml_onnx_model_desc_release(d);
        }
        dml_status_free(st);
        free(bytes);
      }
      n++;
    }
    free_list(tests, nt);
  }
  if (!n) {
    fprintf(stderr, "dml_conformance: no tests found under '%s'\n", data);
    return 2;
  }

  /* Run them. */
  double t0 = now_s();
  result_t **todo = (result_t **)xcalloc(n, sizeof(result_t *));
  char **todo_dirs = (char **)xcalloc(n, sizeof(char *));
  size_t nt = 0;
  for (size_t i = 0; i < n; i++)
    if (rs[i].status != ST_SKIP) todo[nt] = &rs[i], todo_dirs[nt++] = dirs[i];
  run_all(todo, todo_dirs, nt, jobs, verbose);
  double elapsed = now_s() - t0;

  /* Apply the list. */
  int unexpected = 0;
  for (size_t i = 0; i < n; i++) {
    result_t *r = &rs[i];
    long k = find_expected(&exp, r->suite, r->name);
    if (k >= 0) {
      exp.used[k] = 1;
      r->expected = exp.reasons[k];
    }
    if (r->status == ST_PASS && k >= 0) r->status = ST_XPASS;
    if (r->status == ST_FAIL && k >= 0) r->status = ST_XFAIL;
    int bad =
        r->status == ST_XPASS || r->status == ST_FAIL || (r->status == ST_SKIP && k < 0);
    if (bad && !update) {
      if (!unexpected) printf("unexpected results:\n");
      unexpected++;
      char *why = generated_reason(r);
      printf("  %s %s/%s%s%s\n",
             r->status == ST_XPASS
                 ? "XPASS (listed, now passes; remove it from the list):"
             : r->status == ST_SKIP ? "SKIP (not listed):"
                                    : "FAIL:",
             r->suite, r->name, r->status == ST_XPASS ? "" : ": ",
             r->status == ST_XPASS ? "" : why);
      free(why);
    }
  }
  for (size_t i = 0; i < exp.n; i++)
    if (!exp.used[i] && !suites && !filter)
      printf("note: expected-failure entry '%s' names no test\n", exp.keys[i]);

  counts_t c;
  for (size_t s = 0; s < N_SUITES; s++) {
    count(rs, n, suite_names[s], &c);
    if (!c.total) continue;
    printf("%s: %d passed, %d failed, %d skipped\n", suite_names[s], c.pass, c.fail,
           c.skip);
  }
  count(rs, n, NULL, &c);
  if (specialize)
    printf(
        "%d passed without specialization, %d failed (of which %d pass with shape "
        "inputs bound at compile time, --specialize: %d would pass so), %d skipped in "
        "%.1f s\n",
        c.pass, c.fail, c.special, c.pass + c.special, c.skip, elapsed);
  else
    printf("%d passed without specialization, %d failed, %d skipped in %.1f s\n", c.pass,
           c.fail, c.skip, elapsed);
  if (expected_path && !update)
    printf(
        "%d unexpected (failing or skipped without being listed, or listed and "
        "passing)\n",
        unexpected);
  printf("%d passed, %d failed, %d skipped\n", c.pass, c.fail, c.skip);

  int rc = 0;
  if (json_path && write_json(json_path, rs, n) != 0) {
    fprintf(stderr, "dml_conformance: cannot write '%s'\n", json_path);
    rc = 2;
  }
  if (doc_path && write_doc(doc_path, rs, n, ops_path) != 0) {
    fprintf(stderr, "dml_conformance: cannot write '%s'\n", doc_path);
    rc = 2;
  }
  if (update) {
    if (suites || filter) {
      fprintf(stderr,
              "dml_conformance: --update-expected needs a run over every test (no "
              "--suites or --filter)\n");
      rc = 2;
    } else if (write_expected(expected_path, rs, n, &exp) != 0) {
      fprintf(stderr, "dml_conformance: cannot write '%s'\n", expected_path);
      rc = 2;
    } else {
      printf("wrote %s\n", expected_path);
    }
  } else if (unexpected && !rc) {
    rc = 1;
  }
  for (size_t i = 0; i < n; i++) {
    free(rs[i].name);
    free(rs[i].kind);
    free(rs[i].message);
    free(rs[i].bad_ops);
    free(rs[i].output);
    free(rs[i].special);
    free(rs[i].redeclared);
    for (size_t k = 0; k < rs[i].n_ops; k++) free(rs[i].ops[k]);
    free(rs[i].ops);
    free(dirs[i]);
  }
  for (size_t i = 0; i < exp.n; i++) free(exp.keys[i]), free(exp.reasons[i]);
  free(exp.keys);
  free(exp.reasons);
  free(exp.used);
  free(rs);
  free(dirs);
  free(todo);
  free(todo_dirs);
  return rc;
}
