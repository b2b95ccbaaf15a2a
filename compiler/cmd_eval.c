/* cmd_eval.c — `dmlc eval PKG --data DIR|FILES`: average loss and accuracy
 * of a training package (its eval_step) on a data set. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dml_cpu.h"
#include "dml_dtype.h"
#include "dml_rt.h"
#include "dml_train_data.h"
#include "dml_trainer.h"
#include "dmlc_cmds.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: dmlc eval PKG --data DIR|FILES [--split test|train] [--batch-size N]\n"
          "                 [--scale F] [--label-column K] [--device D] [--json]\n"
          "\n"
          "Runs the eval_step of the training package PKG (written by `dmlc train`)\n"
          "over a data set and prints the average loss (weighted by rows) and the\n"
          "accuracy (rows predicted right / rows). A package without eval_step (an\n"
          "inference package: dmlc compile, dmlc quantize -o X.dmlpkg) runs forward\n"
          "and prints the accuracy of output 0's argmax (class scores [N, C]).\n"
          "\n"
          "flags:\n"
          "  --data DIR|FILES   a folder of IDX files (MNIST layout: t10k-* is the\n"
          "                     test split, train-* the training split), two files\n"
          "                     X.npy,Y.npy or IMAGES,LABELS (IDX, gzipped or not), or\n"
          "                     one FILE.csv (label in the last column); a training\n"
          "                     package of several inputs or trained outputs takes\n"
          "                     NAME=FILE.npy,... (each model input and each trained\n"
          "                     output's labels by name) and prints each output's\n"
          "                     loss and accuracy too; an inference package (no\n"
          "                     eval_step: dmlc compile, dmlc strip) takes one input\n"
          "  --split NAME       for a folder: test (default) or train\n"
          "  --batch-size N     rows per eval_step run (default: the package's batch\n"
          "                     bound)\n"
          "  --scale F          multiplier of IDX image bytes (default 1/255: [0, 1];\n"
          "                     1 keeps 0..255)\n"
          "  --label-column K   CSV label column, 0-based; -1 the last (default)\n"
          "  --threads N        CPU threads of the kernels (default 1)\n"
          "  --device NAME      cpu (default), vulkan[:N] or cuda[:N]: GPU devices need\n"
          "                     the package's kernels for their target (a package\n"
          "                     trained with that --device has them)\n"
          "  --json             one JSON object on stdout instead: package, function\n"
          "                     (eval_step, or forward for an inference package),\n"
          "                     rows, loss (null without eval_step), accuracy (null\n"
          "                     when the package computes none), seconds,\n"
          "                     rows_not_run (a static batch's remainder)\n"
          "  -h, --help         this text\n");
}

/* `dmlc eval --json`: the result as one JSON object on `f`. */
/* One JSON object: the package, the function run, rows, loss, accuracy,
 * seconds, rows not run, and for a package with several trained outputs
 * (t non-NULL) "outputs": {NAME: {"loss": L, "accuracy": A}} from ol/oa. */
static void print_json(FILE *f, const char *pkg, const char *function, int64_t rows,
                       double loss, double acc, double secs, int64_t not_run,
                       const dml_trainer_t *t, const double *ol, const double *oa) {
  fputs("{\"package\": ", f);
  dmlc_json_str(f, pkg);
  fprintf(f, ", \"function\": \"%s\", \"rows\": %" PRId64 ", \"loss\": ", function, rows);
  dmlc_json_num(f, loss);
  fputs(", \"accuracy\": ", f);
  dmlc_json_num(f, acc);
  fputs(", \"seconds\": ", f);
  dmlc_json_num(f, secs);
  fprintf(f, ", \"rows_not_run\": %" PRId64, not_run);
  if (t && dml_trainer_target_output(t, 0)) {
    fputs(", \"outputs\": {", f);
    for (int32_t j = 0; dml_trainer_target_output(t, j); j++) {
      if (j) fputs(", ", f);
      dmlc_json_str(f, dml_trainer_target_output(t, j));
      fputs(": {\"loss\": ", f);
      dmlc_json_num(f, ol[j]);
      fputs(", \"accuracy\": ", f);
      dmlc_json_num(f, oa[j]);
      fputc('}', f);
    }
    fputc('}', f);
  }
  fputs("}\n", f);
}

static int has_function(const dml_rt_model_t *m, const char *name) {
  for (uint32_t i = 0; i < dml_rt_model_num_functions(m); i++) {
    const char *f = dml_rt_model_function_name(m, i);
    if (f && !strcmp(f, name)) return 1;
  }
  return 0;
}

/* An inference package (no eval_step; e.g. a model compiled from ONNX, or
 * the QDQ model of `dmlc quantize`): accuracy only, the rows whose output
 * 0 (class scores [N, C]) is largest at the label's index (the first such
 * index on ties; a NaN score never wins). */
static int eval_forward(dml_rt_model_t *m, const char *pkg, const char *data,
                        const char *split, const dml_data_options_t *dopt,
                        const char *device, int64_t batch, FILE *json) {
  dml_rt_session_t *s = NULL;
  dml_data_t d;
  memset(&d, 0, sizeof d);
  dml_rt_io_info_t xi, oi, yi;
  memset(&yi, 0, sizeof yi);
  dml_status_t st = dml_rt_session_create(m, device, &s);
  if (!st && dml_rt_session_num_inputs(s) != 1)
    st = dml_status_detail(
        dml_status_make(DML_STATUS_UNIMPLEMENTED, "eval",
                        "the package has no eval_step (an inference package: dmlc "
                        "compile, or dmlc strip of a trained one) and its forward has %u "
                        "inputs; eval of an inference package takes one input",
                        dml_rt_session_num_inputs(s)),
        "NAME=FILE.npy data is for training packages: evaluate the package dmlc train "
        "wrote (before dmlc strip), or run this one with dmlc run --input NAME=FILE.npy");
  if (!st && dml_data_spec_is_named(data))
    st = dml_status_detail(
        dml_status_make(DML_STATUS_INVALID_ARGUMENT, "eval",
                        "--data NAME=FILE.npy,...: the package has no eval_step (an "
                        "inference package) and eval of one takes X,Y files, a folder "
                        "or a CSV"),
        "named arrays are for training packages (the one dmlc train wrote, before "
        "dmlc strip)");
  if (!st) st = dml_rt_session_input_info(s, 0, &xi);
  if (!st) st = dml_rt_session_output_info(s, 0, &oi);
  if (!st && (oi.rank != 2 || (oi.dtype != DML_DTYPE_F32 && oi.dtype != DML_DTYPE_F64)))
    st = dml_status_make(DML_STATUS_UNIMPLEMENTED, "eval",
                         "output '%s' of the package's forward is not class scores "
                         "[N, C]; eval of an inference package measures accuracy only",
                         oi.name);
  if (!st) st = dml_data_load(data, split, dopt, &d);
  if (!st) {
    yi.name = "label";
    yi.dtype = DML_DTYPE_I64;
    yi.rank = 1;
    yi.dims[0] = -1;
    st = dml_data_adapt(&d, &xi, &yi);
  }
  int64_t rows = d.x.dims[0], right = 0, done = 0;
  if (batch <= 0) batch = xi.dims[0] > 0 ? xi.dims[0] : xi.dim_bound[0];
  if (xi.dims[0] > 0 && batch != xi.dims[0]) batch = xi.dims[0];
  int64_t row_elems = rows ? dml_dims_numel(d.x.dims + 1, d.x.rank - 1) : 0;
  size_t esz = dml_dtype_size(d.x.dtype);
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  for (int64_t r = 0; !st && r < rows; r += batch) {
    dml_tensor_t x = d.x;
    x.dims[0] = rows - r < batch ? rows - r : batch;
    if (xi.dims[0] > 0 && x.dims[0] != xi.dims[0]) break; /* static batch: whole ones */
    x.data = (uint8_t *)d.x.data + (size_t)(r * row_elems) * esz;
    st = dml_rt_session_set_input(s, 0, &x);
    if (!st) st = dml_rt_session_run(s);
    dml_tensor_t o;
    if (!st) st = dml_rt_session_get_output(s, 0, &o);
    for (int64_t i = 0; !st && i < o.dims[0]; i++) {
      int64_t c = o.dims[1], best = 0;
      double bv = -INFINITY;
      for (int64_t k = 0; k < c; k++) {
        double v = o.dtype == DML_DTYPE_F32 ? ((const float *)o.data)[i * c + k]
                                            : ((const double *)o.data)[i * c + k];
        if (v > bv) bv = v, best = k;
      }
      right += best == ((const int64_t *)d.y.data)[r + i];
      done++;
    }
  }
  clock_gettime(CLOCK_MONOTONIC, &b);
  if (!st) {
    double secs = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) * 1e-9;
    double acc = done ? (double)right / (double)done : NAN;
    if (json)
      print_json(json, pkg, "forward", done, NAN, acc, secs, rows - done, NULL, NULL,
                 NULL);
    else
      printf("rows %" PRId64
             "  accuracy %.4f (%.2f%%)  %.2fs  (forward: no eval_step, no loss)\n",
             done, acc, 100 * acc, secs);
    if (done < rows)
      fprintf(json ? stderr : stdout,
              "note: the last %" PRId64
              " rows were not run (the package's batch is "
              "static: %" PRId64 ")\n",
              rows - done, xi.dims[0]);
  }
  dml_data_free(&d);
  dml_rt_session_release(s);
  return st ? dmlc_report(st) : 0;
}

int dmlc_cmd_eval(int argc, char **argv) {
  const char *pkg = NULL, *data = NULL, *split = "test", *device = "cpu", *v;
  int64_t batch = 0;
  int json = 0;
  dml_data_options_t dopt;
  dml_data_options_init(&dopt);
  for (int i = 1; i < argc; i++) {
    char *end;
    if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
      usage(stdout);
      return 0;
    } else if ((v = dmlc_flag_value(argc, argv, &i, "--data"))) {
      data = v;
    } else if ((v = dmlc_flag_value(argc, argv, &i, "--split"))) {
      split = v;
      if (strcmp(split, "test") && strcmp(split, "train")) {
        return dmlc_usage_error("eval", "--split must be test or train");
      }
    } else if ((v = dmlc_flag_value(argc, argv, &i, "--batch-size"))) {
      batch = strtoll(v, &end, 10);
      if (*end || batch < 1) {
        return dmlc_usage_error("eval", "bad --batch-size '%s'", v);
      }
    } else if ((v = dmlc_flag_value(argc, argv, &i, "--scale"))) {
      dopt.image_scale = strtod(v, &end);
      if (*end || !*v) {
        return dmlc_usage_error("eval", "bad --scale '%s'", v);
      }
    } else if ((v = dmlc_flag_value(argc, argv, &i, "--label-column"))) {
      dopt.csv_label_column = (int)strtol(v, &end, 10);
      if (*end || !*v) {
        return dmlc_usage_error("eval", "bad --label-column '%s'", v);
      }
    } else if ((v = dmlc_flag_value(argc, argv, &i, "--threads"))) {
      if (!dmlc_set_threads("eval", v)) return 2;
    } else if (!strcmp(argv[i], "--json")) {
      json = 1;
    } else if ((v = dmlc_flag_value(argc, argv, &i, "--device"))) {
      device = v;
    } else if (argv[i][0] == '-') {
      return dmlc_usage_error("eval", "unknown flag '%s'", argv[i]);
    } else if (!pkg) {
      pkg = argv[i];
    } else {
      return dmlc_usage_error("eval", "more than one package given");
    }
  }
  if (!pkg || !data || !data[0]) {
    return dmlc_usage_error("eval", "give a package and --data");
  }
  FILE *jout = NULL;
  if (json && !(jout = dmlc_json_stdout())) {
    perror("error: dmlc eval: --json");
    return 1;
  }
  dml_rt_model_t *m = NULL;
  dml_status_t lst = dml_rt_model_load_file(pkg, &m);
  if (lst) {
    if (jout) fclose(jout);
    return dmlc_report(lst);
  }
  if (!has_function(m, "eval_step")) {
    int rc = eval_forward(m, pkg, data, split, &dopt, device, batch, jout);
    dml_rt_model_release(m);
    if (jout) fclose(jout);
    return rc;
  }
  dml_trainer_t *t = NULL;
  dml_data_t d;
  memset(&d, 0, sizeof d);
  dml_data_named_t nd;
  memset(&nd, 0, sizeof nd);
  dml_dataset_t ds;
  memset(&ds, 0, sizeof ds);
  int named = dml_data_spec_is_named(data);
  dml_status_t st = dml_trainer_create(m, device, &t);
  if (!st && !named &&
      (dml_trainer_num_inputs(t) > 1 || dml_trainer_num_targets(t) > 1 ||
       dml_trainer_target_output(t, 0)))
    st = dml_status_make(DML_STATUS_INVALID_ARGUMENT, "dmlc.eval",
                         "the package has %d inputs and %d trained outputs: give --data "
                         "NAME=FILE.npy,... naming each",
                         dml_trainer_num_inputs(t), dml_trainer_num_targets(t));
  if (!st && named) {
    /* a single loss's labels are named as forward's first output */
    dml_rt_io_info_t fo;
    const char *single = NULL;
    if (!dml_rt_session_output_info(dml_trainer_session(t, "forward"), 0, &fo))
      single = fo.name;
    st = dml_data_load_named(data, &nd);
    if (!st) st = dml_data_bind_named(&nd, t, single, &ds);
  } else if (!st) {
    st = dml_data_load(data, split, &dopt, &d);
    dml_rt_io_info_t xi, yi;
    if (!st) {
      dml_trainer_io_info(t, &xi, &yi);
      st = dml_data_adapt(&d, &xi, &yi);
    }
    ds.x = d.x;
    ds.y = d.y;
  }
  double loss = 0, acc = 0, ol[DML_MAX_DATA_TENSORS], oa[DML_MAX_DATA_TENSORS];
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  if (!st) st = dml_trainer_evaluate_outputs(t, &ds, batch, &loss, &acc, ol, oa);
  clock_gettime(CLOCK_MONOTONIC, &b);
  if (!st) {
    double secs = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) * 1e-9;
    int64_t rows = named ? nd.t[0].dims[0] : d.x.dims[0];
    if (jout) {
      print_json(jout, pkg, "eval_step", rows, loss, acc, secs, 0, t, ol, oa);
    } else {
      printf("rows %" PRId64 "  loss %.6f", rows, loss);
      if (!isnan(acc)) printf("  accuracy %.4f (%.2f%%)", acc, 100 * acc);
      for (int32_t j = 0; dml_trainer_target_output(t, j); j++) {
        printf("  %s_loss %.6f", dml_trainer_target_output(t, j), ol[j]);
        if (!isnan(oa[j]))
          printf("  %s_accuracy %.4f", dml_trainer_target_output(t, j), oa[j]);
      }
      printf("  %.2fs\n", secs);
    }
  }
  if (jout) fclose(jout);
  dml_data_named_free(&nd);
  dml_data_free(&d);
  dml_trainer_release(t);
  dml_rt_model_release(m);
  return st ? dmlc_report(st) : 0;
}
