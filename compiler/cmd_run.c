/* cmd_run.c — `dmlc run PKG --input NAME=FILE.npy ... [--output-dir DIR]`:
 * runs a package on .npy inputs and writes each output as DIR/<name>.npy. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "dml_file.h"
#include "dml_npy.h"
#include "dml_rt.h"
#include "dmlc_cmds.h"

#define MAX_INPUTS 256

static void usage(FILE *f) {
  fprintf(
      f,
      "usage: dmlc run PKG --input NAME=FILE.npy ... [--output-dir DIR] [--device D]\n"
      "                [--cast] [--top-k K [--labels FILE]] [--threads N]\n"
      "\n"
      "Runs the package PKG on .npy inputs and writes every output as\n"
      "DIR/<file name of the output's name>.npy, printing one line per output:\n"
      "name, dtype, shape, file, and min/max/mean of its values. On a GPU device\n"
      "a line per If branch or Loop body that ran follows (\"region: node 'N'\n"
      "(If) then, function 'F', on DEVICE: ...\"), naming where it ran and its\n"
      "device kernels.\n"
      "\n"
      "Output file names: an output's name is kept whole and reversible. Each\n"
      "byte outside [A-Za-z0-9._-], and a leading '.', is written as '%%XX' (its\n"
      "two upper-case hex digits), so \"1_minute_timer\" -> 1_minute_timer.npy,\n"
      "\"/fc/Gemm_output_0\" -> %%2Ffc%%2FGemm_output_0.npy and \"out:0\" ->\n"
      "out%%3A0.npy; percent-decoding the file name (less .npy) gives the name\n"
      "back. A name whose file name would exceed 255 bytes is an error, and so\n"
      "are two outputs that land in one file (on a case-insensitive file\n"
      "system), never an overwrite; so is an output over an --input file.\n"
      "\n"
      "flags:\n"
      "  --input NAME=FILE.npy  binds model input NAME to the array in FILE.npy;\n"
      "                         repeat for each input. A model with one input also\n"
      "                         takes --input FILE.npy. Inputs with the batch dim\n"
      "                         need the same number of rows. More rows than the\n"
      "                         compiled batch bound run in chunks of the bound, the\n"
      "                         outputs' rows concatenated, when the compiler found\n"
      "                         each output row to depend on the same input row\n"
      "                         alone (inspect's meta 'rows-independent: 1'); else\n"
      "                         (Softmax over axis 0, a reduction over the rows, a\n"
      "                         Transpose moving them, ...) it is an error naming\n"
      "                         the node: recompile with a larger --batch-bound. An\n"
      "                         array whose rows have another rank but the same\n"
      "                         element count ([N,28,28] for [batch,784]) is\n"
      "                         reshaped, with a note.\n"
      "  --cast                 convert an array of another numeric dtype to the\n"
      "                         input's dtype (with a note; floats to integers\n"
      "                         truncate toward zero; a value the dtype cannot\n"
      "                         hold is an error); without it a dtype that\n"
      "                         differs from the model input's is an error\n"
      "                         float8 inputs and outputs (f8e4m3fn, ...; NumPy\n"
      "                         has none) are uint8 arrays of their bit patterns,\n"
      "                         as ml_dtypes' .view(np.uint8); --cast converts\n"
      "                         a float array to float8 (nearest even)\n"
      "  --output-dir DIR       where outputs are written (default: the current\n"
      "                         directory; created if missing)\n"
      "  --device NAME          device to run on: cpu (default), vulkan (the default\n"
      "                         Vulkan device) or vulkan:N (see dmlc devices); Vulkan\n"
      "                         needs a package compiled with --target vulkan; cuda\n"
      "                         or cuda:N run a package compiled with --target cuda\n"
      "  --top-k K              for each output that looks like class scores (a\n"
      "                         float [N,C] or [C], C >= 2), print each row's K\n"
      "                         highest classes: index, label, score\n"
      "  --labels FILE          class names for --top-k, one per line (line i names\n"
      "                         class i; the count must equal C)\n"
      "  --threads N            CPU threads of the kernels (1..64, default 1)\n"
      "  -h, --help             this text\n"
      "\n"
      "`dmlc inspect PKG` lists the inputs and outputs with their shapes.\n");
}

/* mkdir -p. */
static dml_status_t make_dirs(const char *dir) {
  char path[4096];
  size_t n = strlen(dir);
  if (n == 0 || n >= sizeof path)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, "dmlc.run",
                           "bad output directory '%s'", dir);
  memcpy(path, dir, n + 1);
  for (size_t i = 1; i <= n; i++) {
    if (path[i] != '/' && path[i] != 0) continue;
    char c = path[i];
    path[i] = 0;
    if (mkdir(path, 0755) != 0 && errno != EEXIST)
      return dml_status_make(DML_STATUS_IO, "dmlc.run",
                             "cannot create directory '%s': %s", path, strerror(errno));
    path[i] = c;
  }
  struct stat st;
  if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
    return dml_status_make(DML_STATUS_IO, "dmlc.run", "'%s' is not a directory", dir);
  return DML_OK;
}

/* An output name as a file name (documented in usage()): bytes outside
 * [A-Za-z0-9._-], and a leading '.', become "%XX" (upper-case hex), so the
 * mapping is one-to-one and percent-decoding reverses it. Returns 0, or -1
 * when the file name (with ".npy") would not fit `cap`. */
static int file_name(const char *name, char *buf, size_t cap) {
  static const char hex[] = "0123456789ABCDEF";
  size_t k = 0;
  for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
    unsigned char c = *p;
    int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
             c == '_' || c == '-' || (c == '.' && p != (const unsigned char *)name);
    if (k + (ok ? 1 : 3) + 5 > cap) return -1; /* + ".npy" and NUL */
    if (ok) {
      buf[k++] = (char)c;
    } else {
      buf[k++] = '%';
      buf[k++] = hex[c >> 4];
      buf[k++] = hex[c & 15];
    }
  }
  memcpy(buf + k, ".npy", 5);
  return 0;
}

/* Converts t (dtype != want) into a new buffer of dtype `want` (--cast):
 * C conversion semantics (a float to an integer truncates toward zero),
 * but a value the target cannot hold is an error naming its index and
 * value, never a wrapped or saturated number: NaN or an infinity to an
 * integer, an integer out of the target's range (read back differently),
 * a finite float that becomes infinite in a narrower float. */
static dml_status_t convert(const dml_tensor_t *t, dml_dtype_t want, dml_tensor_t *out,
                            void **out_buf) {
  size_t es = dml_dtype_size(want);
  int64_t n = dml_dims_numel(t->dims, t->rank);
  if (n < 0 || es == 0 || (uint64_t)n > SIZE_MAX / es)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, "dmlc.run",
                           "cannot convert to %s", dml_dtype_name(want));
  void *buf = malloc(n ? (size_t)n * es : 1);
  if (!buf)
    return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, "dmlc.run", "out of memory");
  int want_f8 = dml_dtype_is_float8(want);
  int as_int = !dml_dtype_is_float(want) && !want_f8 && !dml_dtype_is_float(t->dtype) &&
               !dml_dtype_is_float8(t->dtype);
  int to_bool = want == DML_DTYPE_BOOL;
  for (int64_t i = 0; i < n; i++) {
    size_t k = (size_t)i;
    int fits;
    if (as_int) {
      int64_t v = dml_load_i64(t->dtype, t->data, k);
      dml_store_i64(want, buf, k, v);
      /* a negative value into an unsigned type, a u64 above INT64_MAX (read
       * as negative) into anything but u64: the bits would survive the
       * round trip but not the value */
      int sign_lost =
          v < 0 && ((t->dtype == DML_DTYPE_U64) != (want == DML_DTYPE_U64) ||
                    (!dml_dtype_is_signed_int(want) && want != DML_DTYPE_U64));
      fits = to_bool || (dml_load_i64(want, buf, k) == v && !sign_lost);
    } else {
      double v = dml_load_f64(t->dtype, t->data, k);
      dml_store_f64(want, buf, k, v);
      double back = dml_load_f64(want, buf, k);
      if (want_f8) /* saturates (ONNX's default): beyond the largest is an error */
        fits = isnan(v) || fabs(v) <= dml_f8_max(want);
      else if (dml_dtype_is_float(want))
        fits = isnan(v) || isinf(v) || !isinf(back);
      else
        fits = to_bool || (isfinite(v) && back == trunc(v));
    }
    if (!fits) {
      double v = dml_load_f64(t->dtype, t->data, k);
      free(buf);
      return dml_status_make(DML_STATUS_OUT_OF_RANGE, "dmlc.run",
                             "--cast: element %" PRId64 " (%.17g) does not fit %s", i, v,
                             dml_dtype_name(want));
    }
  }
  *out = *t;
  out->dtype = want;
  out->data = buf;
  *out_buf = buf;
  return DML_OK;
}

/* "(min -12.3, max 9.8, mean 0.01)" of t's values. */
static void value_summary(const dml_tensor_t *t, char *buf, size_t cap) {
  int64_t n = dml_dims_numel(t->dims, t->rank);
  if (n <= 0) {
    snprintf(buf, cap, "(empty)");
    return;
  }
  if (t->dtype == DML_DTYPE_STRING) { /* string lengths in bytes */
    uint64_t lo = UINT64_MAX, hi = 0;
    for (int64_t i = 0; i < n; i++) {
      uint64_t l = ((const dml_str_t *)t->data)[i].len;
      lo = l < lo ? l : lo;
      hi = l > hi ? l : hi;
    }
    snprintf(buf, cap, "(strings of %" PRIu64 "..%" PRIu64 " bytes)", lo, hi);
    return;
  }
  double mn = INFINITY, mx = -INFINITY, sum = 0;
  int64_t nan = 0;
  for (int64_t i = 0; i < n; i++) {
    double v = dml_load_f64(t->dtype, t->data, (size_t)i);
    if (isnan(v)) {
      nan++;
      continue;
    }
    if (v < mn) mn = v;
    if (v > mx) mx = v;
    sum += v;
  }
  if (nan == n) {
    snprintf(buf, cap, "(all %" PRId64 " values NaN)", n);
    return;
  }
  int k = snprintf(buf, cap, "(min %.6g, max %.6g, mean %.6g", mn, mx,
                   sum / (double)(n - nan));
  if (nan && k > 0 && (size_t)k < cap)
    k += snprintf(buf + k, cap - (size_t)k, ", %" PRId64 " NaN", nan);
  if (k > 0 && (size_t)k < cap) snprintf(buf + k, cap - (size_t)k, ")");
}

/* One --input, read and adapted to its model input. */
typedef struct {
  const char *spec, *file;
  dml_tensor_t t; /* data in buf */
  void *buf;
  int batched; /* dims[0] is the batch symbol (multiplier 1) */
  size_t row_bytes;
} bound_input_t;

/* dims[0] of `io` is a symbol with multiplier 1: the batch dim. */
static int batch_major(const dml_rt_io_info_t *io) {
  return io->rank >= 1 && io->dim_symbol[0] && io->dim_multiplier[0] == 1;
}

/* Reads --input `spec` for model input `info` into `b`: dtype checked (or
 * converted with --cast), rows of another rank but the same element count
 * reshaped to the model's row shape. */
static dml_status_t read_input(const char *spec, const char *file,
                               const dml_rt_io_info_t *info, int cast, bound_input_t *b) {
  dml_tensor_t t, conv;
  void *buf = NULL, *cbuf = NULL;
  DML_RETURN_IF_ERROR(dml_npy_read_file(file, &t, &buf));
  char ts[256], ms[256];
  /* NumPy has no float8: a uint8 array holds a float8 input's bit patterns
   * (as ONNX's test data and ml_dtypes' .view(np.uint8) have them) */
  if (dml_dtype_is_float8(info->dtype) && t.dtype == DML_DTYPE_U8) t.dtype = info->dtype;
  if (t.dtype != info->dtype) {
    if (!cast) {
      free(buf);
      return dml_status_detail(
          dml_status_make(DML_STATUS_INVALID_ARGUMENT, "dmlc.run",
                          "input '%s': '%s' holds %s values, the model input is %s",
                          info->name, file, dml_dtype_name(t.dtype),
                          dml_dtype_name(info->dtype)),
          "convert the array, or pass --cast to convert it to %s",
          dml_dtype_name(info->dtype));
    }
    dml_status_t st = convert(&t, info->dtype, &conv, &cbuf);
    if (st) {
      free(buf);
      return st;
    }
    fprintf(stderr, "note: input '%s': converted %s values from '%s' to %s (--cast)\n",
            info->name, dml_dtype_name(t.dtype), file, dml_dtype_name(info->dtype));
    free(buf);
    buf = cbuf;
    t = conv;
  }
  /* [N,28,28] for [batch,784]: rows of another rank, same element count. */
  if (batch_major(info) && t.rank >= 1 && t.rank != info->rank && t.dims[0] > 0) {
    int64_t want = 1;
    int fixed = 1;
    for (int32_t d = 1; d < info->rank; d++) {
      if (info->dim_symbol[d]) fixed = 0;
      want *= info->dims[d];
    }
    if (fixed && dml_dims_numel(t.dims + 1, t.rank - 1) == want) {
      dml_dims_str(t.dims, t.rank, ts, sizeof ts);
      t.rank = info->rank;
      for (int32_t d = 1; d < info->rank; d++) t.dims[d] = info->dims[d];
      fprintf(stderr,
              "note: input '%s': reshaped %s%s from '%s' to %s%s (%" PRId64
              " values per row)\n",
              info->name, dml_dtype_name(t.dtype), ts, file, dml_dtype_name(t.dtype),
              dml_dims_str(t.dims, t.rank, ms, sizeof ms), want);
    }
  }
  b->spec = spec;
  b->file = file;
  b->t = t;
  b->buf = buf;
  b->batched = batch_major(info) && t.rank == info->rank && t.rank >= 1;
  b->row_bytes =
      b->batched && t.dims[0] > 0 ? dml_tensor_bytes(&t) / (size_t)t.dims[0] : 0;
  return DML_OK;
}

/* An output gathered over the chunks of a run. */
typedef struct {
  dml_tensor_t t;
  void *buf; /* owned when the run had several chunks */
  size_t row_bytes;
} gathered_t;

/* Index order of row `v` (c values) by descending score, NaN last; the
 * first k of `idx` are set. */
static void top_k(dml_dtype_t dt, const void *data, size_t off, int64_t c, int64_t k,
                  int64_t *idx) {
  for (int64_t j = 0; j < k; j++) {
    int64_t best = -1;
    double bv = 0;
    for (int64_t i = 0; i < c; i++) {
      int taken = 0;
      for (int64_t q = 0; q < j && !taken; q++) taken = idx[q] == i;
      if (taken) continue;
      double v = dml_load_f64(dt, data, off + (size_t)i);
      if (best < 0 || (isnan(bv) && !isnan(v)) || (!isnan(v) && v > bv)) {
        best = i;
        bv = v;
      }
    }
    idx[j] = best;
  }
}

/* The lines of `path` (trailing blank lines ignored, "\r" stripped), in
 * one malloc'd buffer `*out_buf` pointed into by `*out_lines`. */
static dml_status_t read_labels(const char *path, char **out_buf, char ***out_lines,
                                int64_t *out_n) {
  uint8_t *bytes;
  size_t n;
  DML_RETURN_IF_ERROR(dml_file_read_all("dmlc.run", path, &bytes, &n));
  char *b = (char *)realloc(bytes, n + 1);
  if (!b) {
    free(bytes);
    return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, "dmlc.run", "out of memory");
  }
  b[n] = 0;
  int64_t lines = 0;
  for (size_t i = 0; i < n; i++) lines += b[i] == '\n';
  if (n && b[n - 1] != '\n') lines++;
  char **v = (char **)malloc(sizeof(char *) * (size_t)(lines + 1));
  if (!v) {
    free(b);
    return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, "dmlc.run", "out of memory");
  }
  int64_t k = 0;
  for (char *p = b; *p && k < lines; k++) {
    v[k] = p;
    char *e = strchr(p, '\n');
    if (e) *e = 0;
    size_t l = strlen(p);
    if (l && p[l - 1] == '\r') p[l - 1] = 0;
    p = e ? e + 1 : p + l;
  }
  /* trailing blank lines (empty or spaces/tabs only) name no class */
  while (k > 0 && v[k - 1][strspn(v[k - 1], " \t")] == 0) k--;
  *out_buf = b;
  *out_lines = v;
  *out_n = k;
  return DML_OK;
}

/* Prints each row's k highest classes of a class-score output. */
static void print_top_k(const dml_tensor_t *t, int64_t k, char **labels) {
  int64_t c = t->dims[t->rank - 1], rows = t->rank == 2 ? t->dims[0] : 1;
  if (k > c) k = c;
  int64_t idx[64];
  if (k > 64) k = 64;
  for (int64_t r = 0; r < rows; r++) {
    top_k(t->dtype, t->data, (size_t)(r * c), c, k, idx);
    printf("  row %" PRId64 ":", r);
    for (int64_t j = 0; j < k; j++) {
      double v = dml_load_f64(t->dtype, t->data, (size_t)(r * c + idx[j]));
      printf("%s %" PRId64 "%s%s: %.6g", j ? "," : "", idx[j], labels ? " " : "",
             labels ? labels[idx[j]] : "", v);
    }
    printf("\n");
  }
}

/* A float [N,C] or [C] with C >= 2: what --top-k reads as class scores. */
static int class_scores(const dml_tensor_t *t) {
  return dml_dtype_is_float(t->dtype) && (t->rank == 1 || t->rank == 2) &&
         t->dims[t->rank - 1] >= 2;
}

int dmlc_cmd_run(int argc, char **argv) {
  const char *pkg = NULL, *out_dir = ".", *device = "cpu", *labels_path = NULL;
  const char *inputs[MAX_INPUTS];
  int n_inputs = 0, cast = 0;
  int64_t topk = 0;
  for (int i = 1; i < argc; i++) {
    const char *v;
    if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
      usage(stdout);
      return 0;
    } else if ((v = dmlc_flag_value(argc, argv, &i, "--input"))) {
      if (!*v || n_inputs == MAX_INPUTS)
        return dmlc_usage_error("run", "--input needs NAME=FILE.npy");
      inputs[n_inputs++] = v;
    } else if ((v = dmlc_flag_value(argc, argv, &i, "--output-dir"))) {
      if (!*v) return dmlc_usage_error("run", "--output-dir needs a directory");
      out_dir = v;
    } else if ((v = dmlc_flag_value(argc, argv, &i, "--device"))) {
      device = v;
    } else if ((v = dmlc_flag_value(argc, argv, &i, "--threads"))) {
      if (!dmlc_set_threads("run", v)) return 2;
    } else if (!strcmp(argv[i], "--cast")) {
      cast = 1;
    } else if ((v = dmlc_flag_value(argc, argv, &i, "--top-k"))) {
      char *end;
      errno = 0;
      long long k = strtoll(v, &end, 10);
      if (!*v || *end || errno || k < 1 || k > 64)
        return dmlc_usage_error("run", "--top-k needs an integer in [1, 64], not '%s'",
                                v);
      topk = k;
    } else if ((v = dmlc_flag_value(argc, argv, &i, "--labels"))) {
      if (!*v) return dmlc_usage_error("run", "--labels needs a file");
      labels_path = v;
    } else if (argv[i][0] == '-' && argv[i][1]) {
      return dmlc_usage_error("run", "unknown flag '%s'", argv[i]);
    } else if (!pkg) {
      pkg = argv[i];
    } else {
      return dmlc_usage_error("run", "more than one package given ('%s', '%s')", pkg,
                              argv[i]);
    }
  }
  if (!pkg) return dmlc_usage_error("run", "no package given");
  if (labels_path && !topk) return dmlc_usage_error("run", "--labels needs --top-k");

  dml_rt_model_t *model = NULL;
  dml_rt_session_t *sess = NULL;
  char *label_buf = NULL;
  char **labels = NULL;
  int64_t n_labels = 0;
  dml_status_t st = DML_OK;
  if (labels_path) st = read_labels(labels_path, &label_buf, &labels, &n_labels);
  if (!st) st = dml_rt_model_load_file(pkg, &model);
  if (!st) st = dml_rt_session_create(model, device, &sess);
  if (!st && dml_rt_session_fallback(sess)) /* the CPU fall-back, said once */
    fprintf(stderr, "note: %s\n", dml_rt_session_fallback(sess));
  if (!st) dmlc_regions_note(sess); /* If/Loop regions on the CPU of a GPU session */
  uint32_t n_model_in = model ? dml_rt_model_num_inputs(model) : 0;
  uint32_t n_out = model ? dml_rt_model_num_outputs(model) : 0;
  bound_input_t *in = (bound_input_t *)calloc(n_model_in + 1, sizeof *in);
  gathered_t *outs = (gathered_t *)calloc(n_out + 1, sizeof *outs);
  if (!st && (!in || !outs))
    st = dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, "dmlc.run", "out of memory");
  for (int k = 0; k < n_inputs && !st; k++) {
    /* NAME=FILE when NAME is an input; else FILE for a one-input model. */
    const char *spec = inputs[k], *eq = strchr(spec, '=');
    char name[512];
    const char *file = spec;
    int32_t idx = -1;
    if (eq && (size_t)(eq - spec) < sizeof name) {
      memcpy(name, spec, (size_t)(eq - spec));
      name[eq - spec] = 0;
      idx = dml_rt_model_find_input(model, name);
      if (idx >= 0) file = eq + 1;
    }
    if (idx < 0) {
      struct stat sb;
      if (n_model_in == 1 && (!eq || stat(spec, &sb) == 0)) {
        idx = 0;
      } else {
        char list[1024];
        size_t l = 0;
        list[0] = 0;
        for (uint32_t j = 0; j < n_model_in && l < sizeof list; j++) {
          dml_rt_io_info_t io;
          dml_rt_model_input_info(model, j, &io);
          l +=
              (size_t)snprintf(list + l, sizeof list - l, "%s%s", j ? ", " : "", io.name);
        }
        if (eq)
          st = dml_status_make(DML_STATUS_INVALID_ARGUMENT, "dmlc.run",
                               "--input '%s': the model has no input named '%.*s'", spec,
                               (int)(eq - spec), spec);
        else
          st = dml_status_make(DML_STATUS_INVALID_ARGUMENT, "dmlc.run",
                               "--input '%s' needs NAME=FILE.npy: the model has %" PRIu32
                               " inputs",
                               spec, n_model_in);
        st = dml_status_detail(st, "inputs: %s", list);
        break;
      }
    }
    dml_rt_io_info_t info;
    dml_rt_model_input_info(model, (uint32_t)idx, &info);
    if (in[idx].spec) {
      st = dml_status_make(DML_STATUS_INVALID_ARGUMENT, "dmlc.run",
                           "input '%s' is given twice", info.name);
      break;
    }
    st = read_input(spec, file, &info, cast, &in[idx]);
    if (st) st = dml_status_annotate(st, "binding --input '%s'", spec);
  }
  if (!st) {
    for (uint32_t j = 0; j < n_model_in; j++) {
      if (in[j].spec) continue;
      dml_rt_io_info_t io;
      char ts[256];
      dml_rt_model_input_info(model, j, &io);
      if (!st)
        st = dml_status_make(DML_STATUS_INVALID_ARGUMENT, "dmlc.run",
                             "input '%s' (%s) is not given: add --input %s=FILE.npy",
                             io.name, dml_rt_io_info_str(&io, ts, sizeof ts), io.name);
      else
        st = dml_status_detail(st, "input '%s' (%s) is not given either", io.name,
                               dml_rt_io_info_str(&io, ts, sizeof ts));
    }
  }
  /* Rows beyond the batch bound: when every batch-major input has the same
   * symbol and row count N > bound, run chunks of `bound` rows. */
  int64_t rows = -1, chunk = -1;
  const char *batch_sym = NULL;
  uint32_t first_in = 0;
  for (uint32_t j = 0; !st && j < n_model_in; j++) {
    dml_rt_io_info_t io;
    dml_rt_model_input_info(model, j, &io);
    if (!in[j].batched) continue;
    if (!batch_sym) {
      batch_sym = io.dim_symbol[0];
      rows = in[j].t.dims[0];
      chunk = io.dim_bound[0];
      first_in = j;
    } else if (strcmp(batch_sym, io.dim_symbol[0])) {
      rows = -1; /* other symbols: set_input reports any disagreement */
      break;
    } else if (rows != in[j].t.dims[0]) {
      /* Before the bound check: a count over the bound is not the cause. */
      dml_rt_io_info_t io0;
      dml_rt_model_input_info(model, first_in, &io0);
      st = dml_status_detail(
          dml_status_make(DML_STATUS_INVALID_ARGUMENT, "dmlc.run",
                          "input '%s' has %" PRId64 " rows, input '%s' %" PRId64, io.name,
                          in[j].t.dims[0], io0.name, rows),
          "inputs sharing the batch dim '%s' need the same number of rows ('%s' from "
          "'%s', '%s' from '%s')",
          batch_sym, io.name, in[j].file, io0.name, in[first_in].file);
    }
  }
  int chunked = !st && rows > 0 && chunk > 0 && rows > chunk;
  /* A node that mixes rows is the cause to name, before any output's. */
  char mixed[16];
  if (chunked && dml_rt_model_meta_get(model, "rows-mixed-by", mixed, sizeof mixed) &&
      (!strncmp(mixed, "node ", 5) || !strncmp(mixed, "the node ", 9)))
    st = dml_rt_model_check_chunks(model, "dmlc.run", rows, chunk);
  for (uint32_t j = 0; !st && chunked && j < n_out; j++) {
    dml_rt_io_info_t io;
    char ts[256];
    dml_rt_model_output_info(model, j, &io);
    if (!batch_major(&io) || strcmp(io.dim_symbol[0], batch_sym))
      st = dml_status_detail(
          dml_status_make(DML_STATUS_INVALID_ARGUMENT, "dmlc.run",
                          "%" PRId64 " rows exceed the batch bound %" PRId64
                          " and output '%s' (%s) has no '%s' rows to concatenate over "
                          "chunks",
                          rows, chunk, io.name, dml_rt_io_info_str(&io, ts, sizeof ts),
                          batch_sym),
          "recompile with --batch-bound %" PRId64 " to run them at once", rows);
  }
  /* Chunks equal one run only when rows are independent (the compiler's
   * verdict in the meta section). */
  if (!st && chunked) st = dml_rt_model_check_chunks(model, "dmlc.run", rows, chunk);
  if (!st && chunked)
    fprintf(stderr,
            "note: %" PRId64 " rows exceed the batch bound %" PRId64 ": running %" PRId64
            " chunks and concatenating the outputs\n",
            rows, chunk, (rows + chunk - 1) / chunk);
  for (int64_t start = 0; !st; start += chunk) {
    int64_t r = chunked ? (rows - start < chunk ? rows - start : chunk) : rows;
    dml_rt_session_clear_inputs(sess);
    for (uint32_t j = 0; !st && j < n_model_in; j++) {
      dml_tensor_t v = in[j].t;
      if (chunked && in[j].batched) {
        v.dims[0] = r;
        v.data = (char *)in[j].t.data + (size_t)start * in[j].row_bytes;
      }
      st = dml_rt_session_set_input(sess, j, &v);
      if (st) st = dml_status_annotate(st, "binding --input '%s'", in[j].spec);
    }
    if (!st) st = dml_rt_session_run(sess);
    for (uint32_t j = 0; !st && j < n_out; j++) {
      dml_tensor_t o;
      st = dml_rt_session_get_output(sess, j, &o);
      if (st) break;
      if (!chunked) {
        outs[j].t = o;
        continue;
      }
      gathered_t *g = &outs[j];
      size_t ob = dml_tensor_bytes(&o);
      if (start == 0) {
        g->row_bytes = o.dims[0] > 0 ? ob / (size_t)o.dims[0] : 0;
        g->t = o;
        g->t.dims[0] = rows;
        g->buf = malloc(g->row_bytes * (size_t)rows + 1);
        g->t.data = g->buf;
        if (!g->buf) {
          st =
              dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, "dmlc.run", "out of memory");
          break;
        }
      }
      int same = o.dtype == g->t.dtype && o.rank == g->t.rank && o.dims[0] == r;
      for (int32_t d = 1; same && d < o.rank; d++) same = o.dims[d] == g->t.dims[d];
      if (!same) {
        char a[128], b[128];
        dml_rt_io_info_t io;
        dml_rt_model_output_info(model, j, &io);
        st = dml_status_make(DML_STATUS_INVALID_ARGUMENT, "dmlc.run",
                             "output '%s' is %s in the chunk at row %" PRId64
                             " but %s in the first: cannot concatenate",
                             io.name, dml_dims_str(o.dims, o.rank, a, sizeof a), start,
                             dml_dims_str(g->t.dims, g->t.rank, b, sizeof b));
        break;
      }
      if (ob) memcpy((char *)g->buf + (size_t)start * g->row_bytes, o.data, ob);
    }
    if (!chunked || start + r >= rows) break;
  }
  if (!st) st = make_dirs(out_dir);
  /* Files written by this run (device, inode): a later output landing on
   * one of them (case-insensitive file system) is an error. */
  dev_t *wdev = (dev_t *)calloc(n_out + 1, sizeof *wdev);
  ino_t *wino = (ino_t *)calloc(n_out + 1, sizeof *wino);
  if (!st && (!wdev || !wino))
    st = dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, "dmlc.run", "out of memory");
  char(*fnames)[256] = (char(*)[256])calloc(n_out + 1, 256);
  for (uint32_t j = 0; !st && j < n_out; j++) {
    dml_rt_io_info_t io;
    dml_rt_model_output_info(model, j, &io);
    if (!fnames || file_name(io.name, fnames[j], 256) != 0) {
      st = dml_status_detail(
          dml_status_make(DML_STATUS_INVALID_ARGUMENT, "dmlc.run",
                          "output '%.200s...' (%zu bytes) is too long for a file name",
                          io.name, strlen(io.name)),
          "its file name would exceed 255 bytes");
      break;
    }
  }
  /* An output must not replace an --input file ("--input x=out/y.npy
   * --output-dir out" with an output named y). */
  for (uint32_t j = 0; !st && j < n_out; j++) {
    char path[4352];
    size_t dl = strlen(out_dir);
    snprintf(path, sizeof path, "%s%s%s", out_dir,
             dl && out_dir[dl - 1] == '/' ? "" : "/", fnames[j]);
    for (uint32_t k = 0; !st && k < n_model_in; k++)
      if (in[k].file && dml_file_same(path, in[k].file)) {
        dml_rt_io_info_t io;
        dml_rt_model_output_info(model, j, &io);
        st = dml_status_detail(
            dml_status_make(DML_STATUS_INVALID_ARGUMENT, "dmlc.run",
                            "output '%s' would be written to '%s', which is the file of "
                            "--input '%s'",
                            io.name, path, in[k].spec),
            "choose another --output-dir");
      }
  }
  /* --labels against each class-score output, before any file is written */
  for (uint32_t j = 0; !st && topk && labels && j < n_out; j++) {
    if (!class_scores(&outs[j].t)) continue;
    int64_t c = outs[j].t.dims[outs[j].t.rank - 1];
    if (n_labels != c) {
      dml_rt_io_info_t io;
      dml_rt_model_output_info(model, j, &io);
      st = dml_status_make(DML_STATUS_INVALID_ARGUMENT, "dmlc.run",
                           "--labels '%s' has %" PRId64 " lines, output '%s' has %" PRId64
                           " classes",
                           labels_path, n_labels, io.name, c);
    }
  }
  int shown = 0;
  for (uint32_t j = 0; !st && j < n_out; j++) {
    dml_rt_io_info_t io;
    dml_rt_model_output_info(model, j, &io);
    dml_tensor_t out = outs[j].t;
    char path[4352], dims[256], summary[160];
    size_t dl = strlen(out_dir);
    snprintf(path, sizeof path, "%s%s%s", out_dir,
             dl && out_dir[dl - 1] == '/' ? "" : "/", fnames[j]);
    struct stat sb;
    if (lstat(path, &sb) == 0)
      for (uint32_t q = 0; q < j; q++)
        if (wdev[q] == sb.st_dev && wino[q] == sb.st_ino) {
          dml_rt_io_info_t oq;
          dml_rt_model_output_info(model, q, &oq);
          st = dml_status_detail(
              dml_status_make(DML_STATUS_INVALID_ARGUMENT, "dmlc.run",
                              "outputs '%s' and '%s' would both be written to one file: "
                              "'%s' is '%s%s%s' on this file system",
                              oq.name, io.name, path, out_dir,
                              dl && out_dir[dl - 1] == '/' ? "" : "/", fnames[q]),
              "the file system does not tell the two names apart (case-insensitive?)");
        }
    if (!st) { /* a float8 output as its bit patterns (uint8; NumPy has no float8) */
      dml_tensor_t bits = out;
      if (dml_dtype_is_float8(out.dtype)) bits.dtype = DML_DTYPE_U8;
      st = dml_npy_write_file(path, &bits);
    }
    if (st) break;
    if (lstat(path, &sb) == 0) {
      wdev[j] = sb.st_dev;
      wino[j] = sb.st_ino;
    }
    value_summary(&out, summary, sizeof summary);
    printf("%s: %s%s -> %s %s\n", io.name, dml_dtype_name(out.dtype),
           dml_dims_str(out.dims, out.rank, dims, sizeof dims), path, summary);
    if (topk && class_scores(&out)) {
      print_top_k(&out, topk, labels);
      shown++;
    }
  }
  if (!st && topk && !shown)
    st = dml_status_make(DML_STATUS_INVALID_ARGUMENT, "dmlc.run",
                         "--top-k: no output looks like class scores (a float [N,C] or "
                         "[C] with C >= 2)");
  /* asked for a GPU device: where each If branch / Loop body that ran ran */
  if (!st && device && strcmp(device, "cpu")) dmlc_regions_text(stdout, sess, 1, 0);
  for (uint32_t j = 0; j < n_model_in && in; j++) free(in[j].buf);
  for (uint32_t j = 0; j < n_out && outs; j++) free(outs[j].buf);
  free(in);
  free(outs);
  free(fnames);
  free(wdev);
  free(wino);
  free(labels);
  free(label_buf);
  dml_rt_session_release(sess);
  dml_rt_model_release(model);
  return dmlc_report(st);
}
