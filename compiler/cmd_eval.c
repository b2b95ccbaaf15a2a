/* cmd_eval.c — `dmlc eval PKG --data DIR|FILES`: average loss and accuracy
 * of a training package (its eval_step) on a data set. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dml_cpu.h"
#include "dml_rt.h"
#include "dml_train_data.h"
#include "dml_trainer.h"
#include "dmlc_cmds.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: dmlc eval PKG --data DIR|FILES [--split test|train] [--batch-size N]\n"
          "                 [--scale F] [--label-column K] [--device D]\n"
          "\n"
          "Runs the eval_step of the training package PKG (written by `dmlc train`)\n"
          "over a data set and prints the average loss (weighted by rows) and the\n"
          "accuracy (rows predicted right / rows).\n"
          "\n"
          "flags:\n"
          "  --data DIR|FILES   a folder of IDX files (MNIST layout: t10k-* is the\n"
          "                     test split, train-* the training split), two files\n"
          "                     X.npy,Y.npy or IMAGES,LABELS (IDX, gzipped or not), or\n"
          "                     one FILE.csv (label in the last column)\n"
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
          "  -h, --help         this text\n");
}

int dmlc_cmd_eval(int argc, char **argv) {
  const char *pkg = NULL, *data = NULL, *split = "test", *device = "cpu", *v;
  int64_t batch = 0;
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
      long th = strtol(v, &end, 10);
      if (*end || th < 1 || th > 64) {
        return dmlc_usage_error("eval", "bad --threads '%s' (1..64)", v);
      }
      dml_cpu_set_num_threads((int)th);
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
  dml_rt_model_t *m = NULL;
  dml_trainer_t *t = NULL;
  dml_data_t d;
  memset(&d, 0, sizeof d);
  dml_status_t st = dml_rt_model_load_file(pkg, &m);
  if (!st) st = dml_trainer_create(m, device, &t);
  if (!st) st = dml_data_load(data, split, &dopt, &d);
  dml_rt_io_info_t xi, yi;
  if (!st) {
    dml_trainer_io_info(t, &xi, &yi);
    st = dml_data_adapt(&d, &xi, &yi);
  }
  double loss = 0, acc = 0;
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  if (!st) {
    dml_dataset_t ds = {d.x, d.y};
    st = dml_trainer_evaluate(t, &ds, batch, &loss, &acc);
  }
  clock_gettime(CLOCK_MONOTONIC, &b);
  if (!st) {
    double secs = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) * 1e-9;
    printf("rows %" PRId64 "  loss %.6f", d.x.dims[0], loss);
    if (!isnan(acc)) printf("  accuracy %.4f (%.2f%%)", acc, 100 * acc);
    printf("  %.2fs\n", secs);
  }
  dml_data_free(&d);
  dml_trainer_release(t);
  dml_rt_model_release(m);
  return st ? dmlc_report(st) : 0;
}
