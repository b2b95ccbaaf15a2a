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

#include "dml_npy.h"
#include "dml_rt.h"
#include "dmlc_cmds.h"

#define MAX_INPUTS 256

static void usage(FILE *f) {
  fprintf(
      f,
      "usage: dmlc run PKG --input NAME=FILE.npy ... [--output-dir DIR] [--device D]\n"
      "\n"
      "Runs the package PKG on .npy inputs and writes every output as\n"
      "DIR/<output name>.npy, printing one line per output: name, dtype, shape,\n"
      "file, and min/max/mean of its values.\n"
      "\n"
      "flags:\n"
      "  --input NAME=FILE.npy  binds model input NAME to the array in FILE.npy;\n"
      "                         repeat for each input. A model with one input also\n"
      "                         takes --input FILE.npy. Any batch size up to the\n"
      "                         compiled bound works. An array of another numeric\n"
      "                         dtype is converted to the input's dtype (with a note).\n"
      "  --output-dir DIR       where outputs are written (default: the current\n"
      "                         directory; created if missing)\n"
      "  --device NAME          device to run on: cpu (default), vulkan (the default\n"
      "                         Vulkan device) or vulkan:N (see dmlc devices); Vulkan\n"
      "                         needs a package compiled with --target vulkan; cuda\n"
      "                         or cuda:N run a package compiled with --target cuda\n"
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

/* An output name as a file name: characters other than [A-Za-z0-9._-]
 * become '_' (ONNX names like "/fc/Gemm_output_0" or "out:0"). */
static void file_name(const char *name, char *buf, size_t cap) {
  size_t k = 0;
  for (const char *p = name; *p && k + 1 < cap; p++) {
    char c = *p;
    int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
             c == '.' || c == '_' || c == '-';
    buf[k++] = ok ? c : '_';
  }
  buf[k] = 0;
  if (k == 0 || strcmp(buf, ".") == 0 || strcmp(buf, "..") == 0)
    snprintf(buf, cap, "output");
}

/* Converts t (dtype != want) into a new buffer of dtype `want`. */
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
  int as_int = !dml_dtype_is_float(want) && !dml_dtype_is_float(t->dtype);
  for (int64_t i = 0; i < n; i++) {
    if (as_int)
      dml_store_i64(want, buf, (size_t)i, dml_load_i64(t->dtype, t->data, (size_t)i));
    else
      dml_store_f64(want, buf, (size_t)i, dml_load_f64(t->dtype, t->data, (size_t)i));
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

int dmlc_cmd_run(int argc, char **argv) {
  const char *pkg = NULL, *out_dir = ".", *device = "cpu";
  const char *inputs[MAX_INPUTS];
  int n_inputs = 0;
  for (int i = 1; i < argc; i++) {
    const char *v;
    if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
      usage(stdout);
      return 0;
    } else if ((v = dmlc_flag_value(argc, argv, &i, "--input"))) {
      if (!*v || n_inputs == MAX_INPUTS) {
        fprintf(stderr, "error: dmlc run: --input needs NAME=FILE.npy\n");
        return 2;
      }
      inputs[n_inputs++] = v;
    } else if ((v = dmlc_flag_value(argc, argv, &i, "--output-dir"))) {
      if (!*v) {
        fprintf(stderr, "error: dmlc run: --output-dir needs a directory\n");
        return 2;
      }
      out_dir = v;
    } else if ((v = dmlc_flag_value(argc, argv, &i, "--device"))) {
      device = v;
    } else if (argv[i][0] == '-' && argv[i][1]) {
      fprintf(stderr, "error: dmlc run: unknown flag '%s'\n\n", argv[i]);
      usage(stderr);
      return 2;
    } else if (!pkg) {
      pkg = argv[i];
    } else {
      fprintf(stderr, "error: dmlc run: more than one package given ('%s', '%s')\n", pkg,
              argv[i]);
      return 2;
    }
  }
  if (!pkg) {
    usage(stderr);
    return 2;
  }

  dml_rt_model_t *model = NULL;
  dml_rt_session_t *sess = NULL;
  dml_status_t st = dml_rt_model_load_file(pkg, &model);
  if (!st) st = dml_rt_session_create(model, device, &sess);
  uint32_t n_model_in = model ? dml_rt_model_num_inputs(model) : 0;
  uint8_t *given = (uint8_t *)calloc(n_model_in + 1, 1);
  if (!st && !given)
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
    if (given[idx]) {
      st = dml_status_make(DML_STATUS_INVALID_ARGUMENT, "dmlc.run",
                           "input '%s' is given twice", info.name);
      break;
    }
    given[idx] = 1;
    dml_tensor_t t, conv;
    void *buf = NULL, *cbuf = NULL;
    st = dml_npy_read_file(file, &t, &buf);
    if (!st && t.dtype != info.dtype) {
      st = convert(&t, info.dtype, &conv, &cbuf);
      if (!st) {
        fprintf(stderr, "note: input '%s': converted %s values from '%s' to %s\n",
                info.name, dml_dtype_name(t.dtype), file, dml_dtype_name(info.dtype));
        t = conv;
      }
    }
    if (!st) st = dml_rt_session_set_input(sess, (uint32_t)idx, &t);
    free(cbuf);
    free(buf);
    if (st) st = dml_status_annotate(st, "binding --input '%s'", spec);
  }
  if (!st) {
    for (uint32_t j = 0; j < n_model_in; j++) {
      if (given[j]) continue;
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
  if (!st) st = dml_rt_session_run(sess);
  if (!st) st = make_dirs(out_dir);
  for (uint32_t j = 0; !st && j < dml_rt_model_num_outputs(model); j++) {
    dml_rt_io_info_t io;
    dml_tensor_t out;
    dml_rt_model_output_info(model, j, &io);
    st = dml_rt_session_get_output(sess, j, &out);
    if (st) break;
    char fname[256], path[4352], dims[256], summary[160];
    file_name(io.name, fname, sizeof fname);
    size_t dl = strlen(out_dir);
    snprintf(path, sizeof path, "%s%s%s.npy", out_dir,
             dl && out_dir[dl - 1] == '/' ? "" : "/", fname);
    st = dml_npy_write_file(path, &out);
    if (st) break;
    value_summary(&out, summary, sizeof summary);
    printf("%s: %s%s -> %s %s\n", io.name, dml_dtype_name(out.dtype),
           dml_dims_str(out.dims, out.rank, dims, sizeof dims), path, summary);
  }
  free(given);
  dml_rt_session_release(sess);
  dml_rt_model_release(model);
  return dmlc_report(st);
}
