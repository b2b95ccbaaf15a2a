/* cmd_train.c — `dmlc train MODEL.onnx --data ... -o TRAINED.dmlpkg`:
 * compiles the model with its training functions (passes/dml_train.h),
 * trains it (runtime/train/dml_trainer.h), writes the trained package and
 * optionally the trained ONNX model. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "dml_cpu.h"
#include "dml_dim_spec.h"
#include "dml_driver.h"
#include "dml_file.h"
#include "dml_onnx_export.h"
#include "dml_pkg.h"
#include "dml_quantize.h"
#include "dml_rt.h"
#include "dml_safetensors.h"
#include "dml_train.h"
#include "dml_train_data.h"
#include "dml_trainer.h"
#include "dmlc_cmds.h"
#include "dmlc_train_report.h"

/* The help text; the defaults it names are read from dml_fit_options_init
 * and dml_train_config_init (one definition, shared with the C API). */
static void usage(FILE *f) {
  dml_fit_options_t d;
  dml_train_config_t c;
  dml_fit_options_init(&d);
  dml_train_config_init(&c);
  fprintf(
      f,
      "usage: dmlc train MODEL.onnx --data DIR|FILES -o TRAINED.dmlpkg [flags]\n"
      "\n"
      "Compiles MODEL.onnx with a train_step (loss, backward pass, optimizer\n"
      "update) and an eval_step, trains it on the data, writes the trained\n"
      "package (forward, train_step and eval_step with the trained weights:\n"
      "`dmlc run` and `dmlc eval` use it) and reports the peak memory.\n"
      "\n"
      "data:\n"
      "  --data DIR|FILES          training data: a folder of IDX files (its train-*),\n"
      "                            X.npy,Y.npy, IMAGES,LABELS (IDX, gzipped or not)\n"
      "                            or FILE.csv (label in the last column); for models\n"
      "                            of several inputs or outputs NAME=FILE.npy,...: each\n"
      "                            model input and each trained output (its labels)\n"
      "                            by name, e.g. a=a.npy,b=b.npy,cls=c.npy,reg=r.npy\n"
      "  --validate-on WHAT        split (default): the last --validation-split of the\n"
      "                            training rows validate and are not trained on;\n"
      "                            test: the --data folder's t10k-* files; none\n"
      "  --validation-split F      the fraction held out (default %g; 0: none)\n"
      "  --validation-data SPEC    validation data (as --data; a folder: its t10k-*)\n"
      "  --scale F                 multiplier of IDX image bytes (default 1/255)\n"
      "  --label-column K          CSV label column, 0-based; -1 the last (default)\n"
      "\n"
      "training:\n"
      "  --loss NAME               cross_entropy, nll, bce_with_logits, bce,\n"
      "                            mse, mae, huber (default %s);\n"
      "                            a loss per output: OUT=NAME[:WEIGHT],... (weight\n"
      "                            default 1; the total is the weighted sum; outputs\n"
      "                            not named or of weight 0 stay untrained: labels\n"
      "                            given for a weight-0 output are ignored), e.g.\n"
      "                            cls=cross_entropy,reg=mse:0.5\n"
      "  --output NAME             model output the loss reads (default: the first)\n"
      "  --optimizer NAME          sgd, momentum, nesterov, adam, adamw,\n"
      "                            rmsprop, adagrad (default %s)\n"
      "  --lr F                    learning rate (default %g)\n"
      "  --momentum F              momentum (momentum/nesterov: default 0.9; rmsprop)\n"
      "  --weight-decay F          weight decay (AdamW: decoupled, default 1e-2)\n"
      "  --epochs N                epochs (default %d)\n"
      "  --batch-size N            rows per step (default %d); the last batch of an\n"
      "                            epoch holds the remaining rows\n"
      "  --batch-bound N           largest batch the package accepts (default: the\n"
      "                            larger of 64 and --batch-size)\n"
      "  --dim-bound NAME=N,...    bound of the model's other symbolic input dims\n"
      "                            (as dmlc compile), e.g. H=64,W=64 for a fully-\n"
      "                            convolutional model: one package then trains on\n"
      "                            images of any size within the bounds; each --data\n"
      "                            has one size (its arrays bind the symbols), so a\n"
      "                            run at another size is a --resume with its --data\n"
      "  --input-shape NAME=SHAPE  input NAME's shape (as dmlc compile: 3 fixes a\n"
      "                            dim, [MIN:MAX] keeps it symbolic)\n"
      "  --lr-schedule SPEC        step:INITIAL,EVERY,FACTOR | exponential:INITIAL,RATE\n"
      "                            | cosine:INITIAL,MINIMUM[,WARMUP] (per epoch,\n"
      "                            as torch.optim.lr_scheduler; overrides --lr)\n"
      "                            | plateau:INITIAL,FACTOR,PATIENCE[,MIN_LR[,COOLDOWN\n"
      "                            [,MIN_DELTA]]] (Keras' ReduceLROnPlateau on\n"
      "                            val_loss, or loss without validation data, or\n"
      "                            --early-stopping's monitor)\n"
      "  --clip-norm F             scale gradients to a global L2 norm <= F\n"
      "  --clip-value F            clamp every gradient element to [-F, F]\n"
      "  --early-stopping SPEC     patience=N[,min_delta=F][,monitor=val_loss|loss|\n"
      "                            val_accuracy|accuracy][,restore=0|1]\n"
      "  --checkpoint-every N      write DIR/epoch-NNNN.safetensors every N epochs\n"
      "  --checkpoint-dir DIR      where checkpoints go (created if missing)\n"
      "  --resume CKPT             continue from a checkpoint of the same model and\n"
      "                            options (to --epochs in total); a checkpoint of\n"
      "                            another seed, batch size, learning rate (schedule),\n"
      "                            validation split, loss, output, optimizer,\n"
      "                            momentum, weight decay or clipping is refused\n"
      "  --resume-anyway           resume even when those differ (each difference is\n"
      "                            noted)\n"
      "  --seed N                  shuffling and random ops (default 0)\n"
      "  --no-shuffle              visit rows in order\n"
      "\n"
      "output:\n"
      "  -o, --output-package PKG  the trained package (required)\n"
      "  --history FILE.csv        per-epoch loss, accuracy, val_loss, val_accuracy,\n"
      "                            lr, seconds, the validation data (split, test,\n"
      "                            validation or empty), per trained output OUT_loss,\n"
      "                            OUT_accuracy and their val_, one column per "
      "--metrics\n"
      "  --metrics LIST            besides loss and accuracy, each epoch on the\n"
      "                            validation data (training rows without): topK,\n"
      "                            precision, recall, f1 (macro), mae, mse, auc\n"
      "                            (binary), e.g. f1,top5; OUT=METRIC sets the output\n"
      "                            of it and the metrics after it, e.g.\n"
      "                            cls=accuracy,f1,reg=mae (history: val_cls_f1, ...)\n"
      "  --export-onnx FILE.onnx   MODEL.onnx with the trained initializers (with\n"
      "                            --qat: the int8 QDQ model, as dmlc quantize writes)\n"
      "  --qat                     quantization-aware training (docs/quantize.md):\n"
      "                            int8 fake quantization (per-channel weights,\n"
      "                            per-tensor activations calibrated on the first\n"
      "                            1000 training rows, then moving averages) with\n"
      "                            the straight-through estimator; CPU only\n"
      "  --plot FILE.svg           loss and accuracy (and validation) per epoch as\n"
      "                            an SVG chart (PNG is not written)\n"
      "  --json                    one JSON object on stdout at the end (all else\n"
      "                            goes to stderr): package, model, device, loss\n"
      "                            (null with a loss per output: losses {OUT: {loss,\n"
      "                            weight}}), optimizer, history [{epoch, loss,\n"
      "                            accuracy, val_loss, val_accuracy, lr, seconds,\n"
      "                            samples_per_second, metrics {NAME: value}}],\n"
      "                            validation, stopped_early, best_epoch, restored,\n"
      "                            final (the saved epoch's entry), peak_memory\n"
      "                            {planned_bytes, max_rss_bytes}; NaN as null\n"
      "  --quiet                   no progress output\n"
      "  --threads N               CPU threads of the kernels (default 1)\n"
      "  --device NAME             cpu (default), vulkan[:N] or cuda[:N]: a GPU device\n"
      "                            compiles the training functions for its target\n"
      "                            (SPIR-V or CUDA) and trains on it; ops its kernels\n"
      "                            lack are an error listing them\n"
      "  -h, --help                this text\n",
      d.validation_split, dml_loss_kind_name(c.loss),
      dml_optimizer_kind_name(c.optimizer), d.lr.initial, (int)d.epochs,
      (int)d.batch_size);
}

static int parse_double(const char *flag, const char *v, double *out) {
  char *end;
  errno = 0;
  double d = strtod(v, &end);
  if (!*v || *end || errno || !isfinite(d)) {
    dmlc_usage_error("train", "bad %s '%s' (a number)", flag, v);
    return 0;
  }
  *out = d;
  return 1;
}
/* An integer in [min, max]; else a usage error (printed) and 0. */
static int parse_int(const char *flag, const char *v, int64_t min, int64_t max,
                     int64_t *out) {
  char *end;
  errno = 0;
  long long d = strtoll(v, &end, 10);
  if (!*v || *end || errno || d < min || d > max) {
    dmlc_usage_error("train", "bad %s '%s' (an integer in [%" PRId64 ", %" PRId64 "])",
                     flag, v, min, max);
    return 0;
  }
  *out = (int64_t)d;
  return 1;
}

/* "patience=5,min_delta=1e-4,monitor=val_loss,restore=1" */
static int parse_early(const char *v, dml_fit_options_t *o) {
  char buf[256];
  if (strlen(v) >= sizeof buf) return 0;
  strcpy(buf, v);
  int have_patience = 0;
  for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
    char *eq = strchr(tok, '=');
    if (!eq) return 0;
    *eq = 0;
    const char *k = tok, *val = eq + 1;
    int64_t iv;
    double dv;
    if (!strcmp(k, "patience")) {
      if (!parse_int("--early-stopping patience", val, 1, 1000000, &iv)) return 0;
      o->patience = (int32_t)iv;
      have_patience = 1;
    } else if (!strcmp(k, "min_delta")) {
      if (!parse_double("--early-stopping min_delta", val, &dv) || dv < 0) return 0;
      o->min_delta = dv;
    } else if (!strcmp(k, "monitor")) {
      dml_status_t st = dml_monitor_parse(val, &o->monitor);
      if (st) {
        dmlc_report(st);
        return 0;
      }
    } else if (!strcmp(k, "restore")) {
      if (strcmp(val, "0") && strcmp(val, "1")) return 0;
      o->restore_best = val[0] == '1';
    } else {
      return 0;
    }
  }
  return have_patience;
}

/* --metrics with OUT=METRIC parts: each metric reads the output named last
 * (names point into buf). */
static int parse_output_metrics(const char *v, char *buf, size_t cap,
                                dml_fit_options_t *o) {
  if (strlen(v) >= cap) return dmlc_usage_error("train", "--metrics '%s' is too long", v);
  strcpy(buf, v);
  const char *out = NULL;
  o->n_metrics = 0;
  for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
    char *eq = strchr(tok, '=');
    if (eq) {
      *eq = 0;
      out = tok;
      tok = eq + 1;
    }
    dml_metric_t m[DML_MAX_METRICS];
    int32_t nm = 0;
    dml_status_t st = dml_metrics_parse(tok, m, &nm);
    if (st) return dmlc_report(st) + dmlc_usage_hint("train");
    for (int32_t k = 0; k < nm; k++) {
      if (o->n_metrics == DML_MAX_METRICS)
        return dmlc_usage_error("train", "--metrics: at most %d", DML_MAX_METRICS);
      o->metric_output[o->n_metrics] = out;
      o->metrics[o->n_metrics++] = m[k];
    }
  }
  return 0;
}

/* `--metrics ...,OUT=accuracy,...`: OUT must have an accuracy (train_step's
 * "correct.OUT", a classification loss); a regression output's accuracy is
 * an error, not an empty column. */
static dml_status_t check_output_accuracy(const char *spec, dml_trainer_t *t) {
  char buf[1024];
  snprintf(buf, sizeof buf, "%s", spec);
  const char *out = NULL;
  dml_rt_session_t *ts = dml_trainer_session(t, "train_step");
  for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
       tok = strtok_r(NULL, ",", &save)) {
    char *eq = strchr(tok, '=');
    if (eq) {
      *eq = 0;
      out = tok;
      tok = eq + 1;
    }
    if (!out || strcmp(tok, "accuracy")) continue;
    char nm[160];
    snprintf(nm, sizeof nm, "correct.%.100s", out);
    if (!ts || dml_rt_session_find_output(ts, nm) < 0)
      return dml_status_detail(
          dml_status_make(DML_STATUS_INVALID_ARGUMENT, "dmlc.train",
                          "--metrics %s=accuracy: output '%s' has no accuracy", out, out),
          "accuracy comes with a classification loss on the output (cross_entropy, "
          "nll, bce, ...); a regression output has the table metrics mae and mse");
  }
  return DML_OK;
}

/* Drops from `d` the labels of outputs that --loss gives weight 0 (not
 * trained, so train_step has no target for them), with a one-line note on
 * stderr for each: labels a user may pass along, not an error. */
static void drop_untrained_labels(dml_data_named_t *d, const dml_train_config_t *cfg) {
  for (int32_t a = 0; a < d->n; a++) {
    uint32_t j = 0;
    while (j < cfg->n_outputs && strcmp(cfg->outputs[j].name, d->name[a])) j++;
    if (j == cfg->n_outputs || cfg->outputs[j].weight != 0) continue;
    fprintf(stderr,
            "note: output '%s' has weight 0 in --loss (not trained): its labels %s are "
            "ignored\n",
            d->name[a], d->path[a]);
    free(d->t[a].data);
    for (int32_t b = a + 1; b < d->n; b++) {
      memcpy(d->name[b - 1], d->name[b], sizeof d->name[b]);
      memcpy(d->path[b - 1], d->path[b], sizeof d->path[b]);
      d->t[b - 1] = d->t[b];
    }
    d->n--;
    memset(&d->t[d->n], 0, sizeof d->t[d->n]);
    a--;
  }
}

/* Bytes of the globals flagged `flag`. */
static uint64_t global_bytes(const dml_rt_model_t *m, uint32_t flag) {
  uint64_t sum = 0;
  for (uint32_t i = 0; i < dml_rt_model_num_globals(m); i++) {
    dml_rt_global_info_t gi;
    dml_status_t st = dml_rt_model_global_info(m, i, &gi);
    if (st) {
      dml_status_free(st);
      continue;
    }
    if (gi.flags & flag) sum += gi.bytes;
  }
  return sum;
}

/* Planned arena of function `name` in the package bytes (-1 if absent). */
static int64_t function_arena(const void *pkg, size_t size, const char *name) {
  dml_pkg_t p;
  dml_status_t st = dml_pkg_parse(pkg, size, &p);
  if (st) {
    dml_status_free(st);
    return -1;
  }
  const dml_pkg_section_t *gs = dml_pkg_find_section(&p, "graph");
  const dml_pkg_section_t *ws = dml_pkg_find_section(&p, "weights");
  dml_pkg_graph_t *g = NULL;
  if (!gs) return -1;
  st = dml_pkg_graph_decode_version(gs->data, gs->size, p.format_version,
                                    ws ? ws->size : 0, &g);
  if (st) {
    dml_status_free(st);
    return -1;
  }
  int64_t r = -1;
  for (uint32_t i = 0; i < g->n_functions; i++)
    if (!strcmp(g->functions[i].name, name)) r = (int64_t)g->functions[i].arena_bytes;
  dml_pkg_graph_release(g);
  return r;
}

static double mib(double b) {
  return b / (1024.0 * 1024.0);
}

/* This run's configuration, one "key=value" a line: what decides the
 * training trajectory, stored in checkpoints (dml_fit_options_t.run_config)
 * and compared on --resume. */
static void run_config(char *buf, size_t cap, const dml_fit_options_t *o,
                       const dml_train_config_t *c, const char *loss_spec) {
  const dml_lr_schedule_t *l = &o->lr;
  char lr[192];
  switch (l->kind) {
    case DML_LR_STEP:
      snprintf(lr, sizeof lr, "step:%.17g,%d,%.17g", l->initial, (int)l->every,
               l->factor);
      break;
    case DML_LR_EXPONENTIAL:
      snprintf(lr, sizeof lr, "exponential:%.17g,%.17g", l->initial, l->rate);
      break;
    case DML_LR_COSINE:
      snprintf(lr, sizeof lr, "cosine:%.17g,%.17g,%d", l->initial, l->minimum,
               (int)l->warmup);
      break;
    case DML_LR_PLATEAU:
      snprintf(lr, sizeof lr, "plateau:%.17g,%.17g,%d,%.17g,%d,%.17g", l->initial,
               l->factor, (int)l->patience, l->minimum, (int)l->cooldown, l->min_delta);
      break;
    default: snprintf(lr, sizeof lr, "constant:%.17g", l->initial); break;
  }
  snprintf(buf, cap,
           "seed=%" PRIu64 "\nbatch_size=%" PRId64
           "\nshuffle=%d\nlr=%s\n"
           "validation_split=%.17g\nloss=%s\noutput=%s\noptimizer=%s\nmomentum=%.17g\n"
           "weight_decay=%.17g\nclip_norm=%.17g\nclip_value=%.17g",
           o->seed, o->batch_size, o->shuffle, lr, o->validation_split,
           loss_spec ? loss_spec : dml_loss_kind_name(c->loss),
           c->output ? c->output : "(first)", dml_optimizer_kind_name(c->optimizer),
           c->momentum, c->weight_decay, c->clip_norm, c->clip_value);
}

/* The value of `key` in a run_config() text, as a [begin, end) span. */
static int config_value(const char *cfg, const char *key, const char **b,
                        const char **e) {
  size_t kl = strlen(key);
  for (const char *p = cfg; p && *p;) {
    const char *nl = strchr(p, '\n');
    const char *end = nl ? nl : p + strlen(p);
    if ((size_t)(end - p) > kl && !strncmp(p, key, kl) && p[kl] == '=') {
      *b = p + kl + 1;
      *e = end;
      return 1;
    }
    p = nl ? nl + 1 : NULL;
  }
  return 0;
}

/* Compares checkpoint `path`'s recorded configuration with this run's
 * (`run`): a difference is an error unless `anyway`, then a note. */
static dml_status_t check_resume_config(const char *path, const char *run, int anyway) {
  dml_safetensors_t *f = NULL;
  void *bytes = NULL;
  dml_status_t st = dml_safetensors_read_file(path, &f, &bytes);
  if (st) return dml_status_annotate(st, "reading checkpoint '%s' (--resume)", path);
  const char *ck = dml_safetensors_meta(f, "config");
  if (!ck) {
    fprintf(stderr,
            "note: checkpoint '%s' records no run configuration (an older dmlc wrote "
            "it): seed, batch size, learning rate, loss and optimizer not compared\n",
            path);
  } else {
    int n_diff = 0;
    for (const char *p = run; p && *p;) {
      const char *nl = strchr(p, '\n'), *eq = strchr(p, '=');
      const char *end = nl ? nl : p + strlen(p);
      char key[64];
      if (eq && eq < end && (size_t)(eq - p) < sizeof key) {
        memcpy(key, p, (size_t)(eq - p));
        key[eq - p] = 0;
        const char *b = NULL, *e = NULL;
        int have = config_value(ck, key, &b, &e);
        if (!have || (size_t)(e - b) != (size_t)(end - eq - 1) ||
            strncmp(b, eq + 1, (size_t)(e - b))) {
          if (!n_diff++ && !anyway)
            st = dml_status_make(
                DML_STATUS_FAILED_PRECONDITION, "dmlc.train",
                "--resume '%s': the checkpoint was written by a run of another "
                "configuration",
                path);
          if (!anyway)
            st = dml_status_detail(st, "%s: checkpoint %.*s, this run %.*s", key,
                                   have ? (int)(e - b) : 6, have ? b : "(none)",
                                   (int)(end - eq - 1), eq + 1);
          else
            fprintf(stderr, "note: --resume-anyway: %s: checkpoint %.*s, this run %.*s\n",
                    key, have ? (int)(e - b) : 6, have ? b : "(none)",
                    (int)(end - eq - 1), eq + 1);
        }
      }
      p = nl ? nl + 1 : NULL;
    }
    if (st)
      st = dml_status_detail(st,
                             "run with the checkpoint's options, or pass --resume-anyway "
                             "to continue with this run's");
  }
  dml_safetensors_release(f);
  free(bytes);
  return st;
}

/* 1 when `a` and `b` are one file: the same spelling, or the same device
 * and inode ("m.onnx" and "./m.onnx", hard links). */
static int same_file(const char *a, const char *b) {
  return a && b && (!strcmp(a, b) || dml_file_same(a, b));
}

/* ---- --qat: quantization-aware training (docs/quantize.md) ---------------- */

/* The QAT form of the f32 model: `dmlc quantize`'s placement, with
 * FakeQuantize nodes (compiler/dml_quantize.h, fake_quant) whose activation
 * ranges are calibrated on the first DML_QAT_CALIB_ROWS rows of the training
 * data. *calib keeps those rows for the export; *out is the model. */
static dml_status_t qat_prepare(const char *model, const char *data,
                                const dml_data_options_t *dopt, const char *device,
                                dml_tensor_t *calib, uint8_t **out, size_t *out_n,
                                int verbose) {
  size_t ml = strlen(model);
  if (ml >= 7 && !strcmp(model + ml - 7, ".dmlpkg"))
    return dml_status_detail(
        dml_status_make(DML_STATUS_INVALID_ARGUMENT, "dmlc.train",
                        "--qat: '%s' is a package; quantization-aware training "
                        "starts from the f32 ONNX model",
                        model),
        "give the ONNX model the package was compiled from");
  if (strcmp(device, "cpu"))
    return dml_status_detail(
        dml_status_make(DML_STATUS_UNIMPLEMENTED, "dmlc.train",
                        "--qat trains on the CPU only (--device %s): FakeQuantize "
                        "and its gradient have no GPU kernels yet",
                        device),
        "drop --device, or use --device cpu");
  if (strchr(data, '='))
    return dml_status_make(DML_STATUS_UNIMPLEMENTED, "dmlc.train",
                           "--qat: models of one input only (named data '%s')", data);
  DML_RETURN_IF_ERROR(dml_quant_load_calib(data, dopt->image_scale, calib));
  dml_quant_options_t qo;
  dml_quant_options_init(&qo);
  qo.fake_quant = 1;
  qo.max_rows = DML_QAT_CALIB_ROWS;
  dml_quant_report_t rep;
  void *bytes = NULL;
  size_t n = 0;
  dml_status_t st = dml_quantize_onnx(model, calib, &qo, &bytes, &n, &rep);
  if (st) return dml_status_annotate(st, "--qat: inserting fake quantization");
  if (verbose) {
    size_t nq = 0;
    for (size_t i = 0; i < rep.n_layers; i++) nq += rep.layers[i].quantized != 0;
    printf(
        "qat: %zu of %zu layers fake-quantized, %zu activations; output '%s' at "
        "%.2f dB SQNR against f32 before training (%" PRId64 " calibration rows)\n",
        nq, rep.n_layers, rep.n_activations, rep.output_name ? rep.output_name : "",
        rep.output_sqnr_db, rep.calib_rows);
  }
  dml_quant_report_free(&rep);
  *out = (uint8_t *)bytes;
  *out_n = n;
  return DML_OK;
}

/* --export-onnx with --qat: the int8 QDQ model (dml_quantize_qat_export). */
static dml_status_t qat_export(const char *model, const char *qdq_path,
                               const dml_rt_model_t *m, dml_rt_session_t *s,
                               const dml_tensor_t *calib) {
  dml_quant_options_t qo;
  dml_quant_options_init(&qo);
  qo.max_rows = DML_QAT_CALIB_ROWS;
  void *bytes = NULL;
  size_t n = 0;
  dml_quant_report_t rep;
  uint32_t nw = 0, nr = 0;
  dml_status_t st = dml_quantize_qat_export(model, qdq_path, m, s, calib, &qo, &bytes, &n,
                                            &rep, &nw, &nr);
  if (st) return st;
  const void *parts[1] = {bytes};
  size_t sizes[1] = {n};
  st = dml_file_write_atomic("dmlc.train", qdq_path, parts, sizes, 1);
  if (!st)
    printf(
        "wrote %s (int8 QDQ: %u trained initializers, %u trained activation ranges; "
        "output '%s' at %.2f dB SQNR against the trained f32 weights)\n",
        qdq_path, nw, nr, rep.output_name ? rep.output_name : "", rep.output_sqnr_db);
  dml_quant_report_free(&rep);
  free(bytes);
  return st;
}

/* Refuses (usage error printed, returns 1) an output that is one of the
 * run's inputs (the model, a --data/--validation-data file, the --resume
 * checkpoint) or another output: writing it would destroy the input or
 * the other output. */
static int same_file_error(const char *model, const char *data, const char *val,
                           const char *resume, const char *out_pkg,
                           const char *export_onnx, const char *history) {
  const char *outs[3] = {out_pkg, export_onnx, history};
  static const char *const out_flag[3] = {"-o", "--export-onnx", "--history"};
  for (int k = 0; k < 3; k++) {
    if (!outs[k]) continue;
    if (same_file(outs[k], model)) {
      dmlc_usage_error("train",
                       "the output '%s' is the model '%s' itself; choose another %s",
                       outs[k], model, out_flag[k]);
      return 1;
    }
    if (same_file(outs[k], resume)) {
      dmlc_usage_error("train", "the output '%s' (%s) is the --resume checkpoint '%s'",
                       outs[k], out_flag[k], resume);
      return 1;
    }
    for (int q = 0; q < k; q++)
      if (outs[q] && same_file(outs[k], outs[q])) {
        dmlc_usage_error("train",
                         "%s and %s both name '%s'; one would overwrite the other",
                         out_flag[q], out_flag[k], outs[k]);
        return 1;
      }
    const char *specs[2] = {data, val};
    for (int d = 0; d < 2; d++) {
      /* a data spec is a folder or FILE[,FILE] */
      for (const char *p = specs[d]; p && *p;) {
        const char *comma = strchr(p, ',');
        size_t n = comma ? (size_t)(comma - p) : strlen(p);
        char piece[4096];
        if (n < sizeof piece) {
          memcpy(piece, p, n);
          piece[n] = 0;
          const char *eq = dml_data_spec_is_named(specs[d]) ? strchr(piece, '=') : NULL;
          if (same_file(outs[k], eq ? eq + 1 : piece)) {
            dmlc_usage_error("train", "the output '%s' (%s) is the data file '%s' of %s",
                             outs[k], out_flag[k], piece,
                             d ? "--validation-data" : "--data");
            return 1;
          }
        }
        p = comma ? comma + 1 : NULL;
      }
    }
  }
  return 0;
}

int dmlc_cmd_train(int argc, char **argv) {
  const char *model_path = NULL, *data = NULL, *val_data = NULL, *out_pkg = NULL;
  const char *history = NULL, *export_onnx = NULL, *device = "cpu", *resume = NULL, *v;
  const char *lr_schedule = NULL, *validate_on = NULL, *metrics = NULL, *plot = NULL;
  int split_given = 0, json = 0, qat = 0;
  FILE *jout = NULL;
  dml_train_config_t cfg;
  dml_train_config_init(&cfg); /* the defaults, shared with the C API */
  dml_fit_options_t o;
  dml_fit_options_init(&o);
  dml_data_options_t dopt;
  dml_data_options_init(&dopt);
  double lr = o.lr.initial;
  int64_t batch_bound = 0, iv;
  int resume_anyway = 0;
  dmlc_dim_spec_t dims = {0}; /* --dim-bound, --input-shape */
  char config[2048], loss_buf[1024], metrics_buf[1024];
  const char *loss_spec = NULL;
  dml_train_output_t outs[DML_TRAIN_MAX_OUTPUTS];
  int rc = 0;
  dml_status_t st;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
      usage(stdout);
      return 0;
    } else if ((v = dmlc_flag_value(argc, argv, &i, "--data"))) {
      data = v;
    } else if ((v = dmlc_flag_value(argc, argv, &i, "--validation-data"))) {
      val_data = v;
    } else if ((v = dmlc_flag_value(argc, argv, &i, "--validate-on"))) {
      if (strcmp(v, "split") && strcmp(v, "test") && strcmp(v, "none"))
        return dmlc_usage_error("train", "bad --validate-on '%s' (split, test or none)",
                                v);
      validate_on = v;
    } else if ((v = dmlc_flag_value(argc, argv, &i, "--metrics"))) {
      if (strchr(v, '=')) {
        if ((rc = parse_output_metrics(v, metrics_buf, sizeof metrics_buf, &o)))
          return rc;
      } else if ((st = dml_metrics_parse(v, o.metrics, &o.n_metrics))) {
        return dmlc_report(st) + dmlc_usage_hint("train");
      }
      metrics = v;
    } else if ((v = dmlc_flag_value(argc, argv, &i, "--validation-split"))) {
      split_given = 1;
      if (!parse_double("--validation-split", v, &o.validation_split)) return 2;
      if (!(o.validation_split >= 0 && o.validation_split < 1)) {
        return dmlc_usage_error("train",
                                "--validation-split must be in [0, 1) (0: no validation, "
                                "as --validate-on none)");
      }
    } else if ((v = dmlc_flag_value(argc, argv, &i, "--scale"))) {
      if (!parse_double("--scale", v, &dopt.image_scale)) return 2;
    } else if ((v = dmlc_flag_value(argc, argv, &i, "--label-column"))) {
      if (!parse_int("--label-column", v, -1000000, 1000000, &iv)) return 2;
      dopt.csv_label_column = (int)iv;
    } else if ((v = dmlc_flag_value(argc, argv, &i, "--loss"))) {
      if (strchr(v, '=')) {
        if ((st = dml_train_outputs_parse(v, loss_buf, sizeof loss_buf, outs,
                                          &cfg.n_outputs)))
          return dmlc_report(st) + dmlc_usage_hint("train");
        cfg.outputs = outs;
        loss_spec = v;
      } else if ((st = dml_loss_kind_parse(v, &cfg.loss))) {
        return dmlc_report(st) + dmlc_usage_hint("train");
      }
    } else if ((v = dmlc_flag_value(argc, argv, &i, "--output"))) {
      cfg.output = v;
    } else if ((v = dmlc_flag_value(argc, argv, &i, "--optimizer"))) {
      if ((st = dml_optimizer_kind_parse(v, &cfg.optimizer)))
        return dmlc_report(st) + dmlc_usage_hint("train");
    } else if ((v = dmlc_flag_value(argc, argv, &i, "--lr"))) {
      if (!parse_double("--lr", v, &lr)) return 2;
    } else if ((v = dmlc_flag_value(argc, argv, &i, "--momentum"))) {
      if (!parse_double("--momentum", v, &cfg.momentum)) return 2;
    } else if ((v = dmlc_flag_value(argc, argv, &i, "--weight-decay"))) {
      if (!parse_double("--weight-decay", v, &cfg.weight_decay)) return 2;
    } else if ((v = dmlc_flag_value(argc, argv, &i, "--epochs"))) {
      if (!parse_int("--epochs", v, 1, 1000000, &iv)) return 2;
      o.epochs = (int32_t)iv;
    } else if ((v = dmlc_flag_value(argc, argv, &i, "--batch-size"))) {
      if (!parse_int("--batch-size", v, 1, INT32_MAX, &o.batch_size)) return 2;
    } else if ((v = dmlc_flag_value(argc, argv, &i, "--batch-bound"))) {
      if (!parse_int("--batch-bound", v, 1, INT32_MAX, &batch_bound)) return 2;
    } else if ((v = dmlc_flag_value(argc, argv, &i, "--dim-bound"))) {
      if (!dmlc_dim_spec_parse_bound(&dims, "dmlc train", v)) {
        dmlc_dim_spec_free(&dims);
        return 2;
      }
    } else if ((v = dmlc_flag_value(argc, argv, &i, "--input-shape"))) {
      if (!dmlc_dim_spec_parse_shape(&dims, "dmlc train", v)) {
        dmlc_dim_spec_free(&dims);
        return 2;
      }
    } else if ((v = dmlc_flag_value(argc, argv, &i, "--lr-schedule"))) {
      lr_schedule = v;
    } else if ((v = dmlc_flag_value(argc, argv, &i, "--clip-norm"))) {
      if (!parse_double("--clip-norm", v, &cfg.clip_norm)) return 2;
      if (cfg.clip_norm <= 0) return dmlc_usage_error("train", "--clip-norm must be > 0");
    } else if ((v = dmlc_flag_value(argc, argv, &i, "--clip-value"))) {
      if (!parse_double("--clip-value", v, &cfg.clip_value)) return 2;
      if (cfg.clip_value <= 0)
        return dmlc_usage_error("train", "--clip-value must be > 0");
    } else if ((v = dmlc_flag_value(argc, argv, &i, "--early-stopping"))) {
      if (!parse_early(v, &o)) {
        return dmlc_usage_error("train",
                                "bad --early-stopping '%s' (patience=N[,min_delta=F]"
                                "[,monitor=NAME][,restore=0|1])",
                                v);
      }
    } else if ((v = dmlc_flag_value(argc, argv, &i, "--checkpoint-every"))) {
      if (!parse_int("--checkpoint-every", v, 1, 1000000, &iv)) return 2;
      o.checkpoint_every = (int32_t)iv;
    } else if ((v = dmlc_flag_value(argc, argv, &i, "--checkpoint-dir"))) {
      o.checkpoint_dir = v;
    } else if (!strcmp(argv[i], "--resume-anyway")) {
      resume_anyway = 1;
    } else if ((v = dmlc_flag_value(argc, argv, &i, "--resume"))) {
      resume = v;
    } else if ((v = dmlc_flag_value(argc, argv, &i, "--seed"))) {
      if (!parse_int("--seed", v, 0, INT64_MAX, &iv)) return 2;
      o.seed = (uint64_t)iv;
    } else if (!strcmp(argv[i], "--no-shuffle")) {
      o.shuffle = 0;
    } else if ((v = dmlc_flag_value(argc, argv, &i, "--history"))) {
      history = v;
    } else if (!strcmp(argv[i], "--qat")) {
      qat = 1;
    } else if ((v = dmlc_flag_value(argc, argv, &i, "--export-onnx"))) {
      export_onnx = v;
    } else if ((v = dmlc_flag_value(argc, argv, &i, "-o")) ||
               (v = dmlc_flag_value(argc, argv, &i, "--output-package"))) {
      out_pkg = v;
    } else if (!strcmp(argv[i], "--quiet")) {
      o.verbose = 0;
    } else if ((v = dmlc_flag_value(argc, argv, &i, "--threads"))) {
      if (!dmlc_set_threads("train", v)) return 2;
    } else if ((v = dmlc_flag_value(argc, argv, &i, "--plot"))) {
      size_t pl = strlen(v);
      if (pl < 5 || strcmp(v + pl - 4, ".svg"))
        return dmlc_usage_error(
            "train", "--plot needs a FILE.svg, got '%s' (only SVG is written)", v);
      plot = v;
    } else if (!strcmp(argv[i], "--json")) {
      json = 1;
    } else if ((v = dmlc_flag_value(argc, argv, &i, "--device"))) {
      device = v;
    } else if (argv[i][0] == '-') {
      return dmlc_usage_error("train", "unknown flag '%s'", argv[i]);
    } else if (!model_path) {
      model_path = argv[i];
    } else {
      return dmlc_usage_error("train", "more than one model given");
    }
  }
  if (!model_path || !data || !data[0] || !out_pkg || !out_pkg[0]) {
    return dmlc_usage_error("train", "give MODEL.onnx, --data and -o TRAINED.dmlpkg");
  }
  if (same_file_error(model_path, data, val_data, resume, out_pkg, export_onnx, history))
    return 2;
  if (plot &&
      (same_file(plot, model_path) || same_file(plot, data) ||
       same_file(plot, val_data) || same_file(plot, resume) || same_file(plot, out_pkg) ||
       same_file(plot, export_onnx) || same_file(plot, history)))
    return dmlc_usage_error("train", "--plot '%s' is another input or output of this run",
                            plot);
  if (o.checkpoint_every > 0 && !o.checkpoint_dir) {
    return dmlc_usage_error("train", "--checkpoint-every needs --checkpoint-dir");
  }
  if (val_data && split_given) {
    return dmlc_usage_error("train",
                            "give --validation-split or --validation-data, not both");
  }
  if (val_data && validate_on) {
    return dmlc_usage_error("train", "give --validate-on or --validation-data, not both");
  }
  if (split_given && validate_on && strcmp(validate_on, "split")) {
    return dmlc_usage_error("train", "--validation-split needs --validate-on split");
  }
  /* Keras' validation_split (dml_fit_options_init's default): the last
   * rows of the training data validate unless other validation data is
   * asked for. */
  if (val_data || (validate_on && strcmp(validate_on, "split"))) o.validation_split = 0;
  if (lr_schedule) {
    if ((st = dml_lr_schedule_parse(lr_schedule, &o.lr)))
      return dmlc_report(st) + dmlc_usage_hint("train");
  } else {
    o.lr.kind = DML_LR_CONSTANT;
    o.lr.initial = lr;
  }
  if (resume_anyway && !resume)
    return dmlc_usage_error("train", "--resume-anyway needs --resume CKPT");
  if (cfg.n_outputs && cfg.output)
    return dmlc_usage_error("train",
                            "--output names the output of a single --loss; a loss per "
                            "output (OUT=LOSS) names them itself");
  run_config(config, sizeof config, &o, &cfg, loss_spec);
  if (qat) { /* a QAT checkpoint resumes only with --qat, and only it */
    size_t cl = strlen(config);
    snprintf(config + cl, sizeof config - cl, "\nqat=1");
  }
  o.run_config = config;
  /* --dim-bound N alone is the default bound of symbolic dims, the batch
   * included (as dmlc compile); dmlc_dim_spec_apply refuses a different
   * --batch-bound */
  if (!batch_bound && dims.default_bound) batch_bound = dims.default_bound;
  if (!batch_bound) batch_bound = o.batch_size > 64 ? o.batch_size : 64;
  if (batch_bound < o.batch_size) {
    return dmlc_usage_error("train", "--batch-bound %" PRId64 " < --batch-size %" PRId64,
                            batch_bound, o.batch_size);
  }

  if (json && !(jout = dmlc_json_stdout())) {
    perror("error: dmlc train: --json");
    return 1;
  }
  /* the command line, for the package's meta section */
  char cmdline[2048] = "dmlc";
  for (int i = 0; i < argc; i++) {
    size_t l = strlen(cmdline);
    snprintf(cmdline + l, sizeof cmdline - l, " %s", argv[i]);
  }

  void *pkg = NULL;
  size_t pkg_size = 0;
  dml_rt_model_t *m = NULL;
  dml_trainer_t *t = NULL;
  dml_data_t train, val;
  memset(&train, 0, sizeof train);
  memset(&val, 0, sizeof val);
  dml_data_named_t ntrain, nval;
  memset(&ntrain, 0, sizeof ntrain);
  memset(&nval, 0, sizeof nval);
  dml_history_t h;
  memset(&h, 0, sizeof h);
  uint8_t *onnx = NULL;
  size_t onnx_size = 0;
  dml_tensor_t qat_calib;
  memset(&qat_calib, 0, sizeof qat_calib);

  /* 0. a checkpoint to resume from: of this configuration (before the
   * compile, so a mismatch fails at once) */
  if (resume && (st = check_resume_config(resume, config, resume_anyway))) goto out;

  /* 1. compile with the training functions */
  if (qat) {
    st = qat_prepare(model_path, data, &dopt, device, &qat_calib, &onnx, &onnx_size,
                     o.verbose);
  } else {
    st = dml_file_read_all("dmlc.train", model_path, &onnx, &onnx_size);
  }
  if (st) goto out;
  char base_dir[4096];
  snprintf(base_dir, sizeof base_dir, "%s", model_path);
  char *slash = strrchr(base_dir, '/');
  if (slash)
    *slash = 0;
  else
    strcpy(base_dir, ".");
  dml_compile_options_t copts;
  memset(&copts, 0, sizeof copts);
  copts.batch_bound = batch_bound;
  copts.command_line = cmdline;
  copts.train = &cfg;
  if (!dmlc_dim_spec_apply(&dims, "dmlc train", &copts)) {
    rc = 2;
    goto out;
  }
  /* A GPU device runs the training functions' kernels: compile them too. */
  if (!strcmp(device, "vulkan") || !strncmp(device, "vulkan:", 7))
    copts.targets = "cpu,vulkan";
  else if (!strcmp(device, "cuda") || !strncmp(device, "cuda:", 5))
    copts.targets = "cpu,cuda";
  dml_compile_report_t rep;
  /* a compile of more than a second shows its stage on a terminal */
  dmlc_progress_t *prog =
      o.verbose ? dmlc_progress_start("dmlc train: compiling", 0) : NULL;
  copts.progress = prog ? dmlc_progress_stage : NULL;
  copts.progress_ctx = prog;
  st = dml_compile_onnx_memory(onnx, onnx_size, base_dir, model_path, &copts, &pkg,
                               &pkg_size, &rep);
  dmlc_progress_end(prog);
  if (st && copts.targets)
    st = dml_status_annotate(st, "compiling the training functions for --device %s",
                             device);
  if (st) goto out;
  st = dml_rt_model_load_memory(pkg, pkg_size, &m);
  if (!st) st = dml_trainer_create(m, device, &t);
  if (st) goto out;
  if (metrics && strchr(metrics, '=') && dml_trainer_target_output(t, 0) &&
      (st = check_output_accuracy(metrics, t)))
    goto out;
  if (o.verbose)
    printf("compiled %s: %s loss, %s, batch bound %" PRId64 ", %.0f ms\n", model_path,
           loss_spec ? loss_spec : dml_loss_kind_name(cfg.loss),
           dml_optimizer_kind_name(cfg.optimizer), batch_bound, rep.compile_ms);

  /* 2. data: named arrays (several inputs or outputs), or x and y */
  dml_rt_io_info_t xi, yi;
  dml_trainer_io_info(t, &xi, &yi);
  dml_dataset_t tr, vd;
  memset(&tr, 0, sizeof tr);
  memset(&vd, 0, sizeof vd);
  int named = dml_data_spec_is_named(data);
  /* a single loss's labels are named as its output */
  const char *single_label = cfg.output;
  dml_rt_io_info_t fo;
  if (!single_label &&
      !dml_rt_session_output_info(dml_trainer_session(t, "forward"), 0, &fo))
    single_label = fo.name;
  if (!named && (dml_trainer_num_inputs(t) > 1 || dml_trainer_num_targets(t) > 1 ||
                 dml_trainer_target_output(t, 0))) {
    st = dml_status_make(DML_STATUS_INVALID_ARGUMENT, "dmlc.train",
                         "the model has %d inputs and %d trained outputs: give --data "
                         "NAME=FILE.npy,... naming each",
                         dml_trainer_num_inputs(t), dml_trainer_num_targets(t));
    goto out;
  }
  if (named) {
    st = dml_data_load_named(data, &ntrain);
    if (!st) drop_untrained_labels(&ntrain, &cfg);
    if (!st) st = dml_data_bind_named(&ntrain, t, single_label, &tr);
  } else {
    st = dml_data_load(data, "train", &dopt, &train);
    if (!st) st = dml_data_adapt(&train, &xi, &yi);
    tr.x = train.x;
    tr.y = train.y;
  }
  if (st) {
    st = dml_status_annotate(st, "reading --data");
    goto out;
  }
  int64_t train_rows = named ? ntrain.t[0].dims[0] : train.x.dims[0];
  struct stat sb;
  int data_is_dir = stat(data, &sb) == 0 && S_ISDIR(sb.st_mode);
  if (validate_on && !strcmp(validate_on, "test") && !data_is_dir) {
    st = dml_status_make(DML_STATUS_INVALID_ARGUMENT, "dmlc.train",
                         "--validate-on test needs --data DIR (a folder with t10k-* "
                         "files); '%s' is not a folder",
                         data);
    goto out;
  }
  const char *vspec =
      val_data ? val_data : (validate_on && !strcmp(validate_on, "test") ? data : NULL);
  o.validation_label = val_data ? "validation" : "test";
  if (vspec && named != dml_data_spec_is_named(vspec)) {
    st = dml_status_make(DML_STATUS_INVALID_ARGUMENT, "dmlc.train",
                         "--data and the validation data must both be NAME=FILE.npy,... "
                         "or neither");
    goto out;
  }
  if (vspec) {
    if (named) {
      st = dml_data_load_named(vspec, &nval);
      if (!st) drop_untrained_labels(&nval, &cfg);
      if (!st) st = dml_data_bind_named(&nval, t, single_label, &vd);
    } else {
      st = dml_data_load(vspec, "test", &dopt, &val);
      if (!st) st = dml_data_adapt(&val, &xi, &yi);
      vd.x = val.x;
      vd.y = val.y;
    }
    if (st) {
      st = dml_status_annotate(st, "reading the validation data");
      goto out;
    }
  }
  if (vspec) o.validation = &vd;
  /* too few rows for the split, or empty validation data: said up front,
   * in the CLI's flags */
  if (vspec && (named ? nval.t[0].dims[0] : val.x.dims[0]) < 1) {
    st = dml_status_make(DML_STATUS_INVALID_ARGUMENT, "dmlc.train",
                         "the validation data '%s' has no rows", vspec);
    goto out;
  }
  if (!vspec && o.validation_split > 0 &&
      floor((double)train_rows * o.validation_split) < 1) {
    st = dml_status_detail(
        dml_status_make(DML_STATUS_INVALID_ARGUMENT, "dmlc.train",
                        "a validation split of %g holds out no row of the %" PRId64
                        " training rows",
                        o.validation_split, train_rows),
        "%spass --validate-on none (or --validation-split 0) to train without "
        "validation, or give --validation-data",
        split_given ? "" : "the validation split is --validation-split's default; ");
    goto out;
  }
  if (o.verbose) {
    /* --validation-split holds out the last rows (dml_trainer_fit). */
    int64_t n_val = vspec ? (named ? nval.t[0].dims[0] : val.x.dims[0])
                          : (int64_t)floor((double)train_rows * o.validation_split);
    int64_t n_train = train_rows - (vspec ? 0 : n_val);
    if (n_val > 0)
      printf("training on %" PRId64 " rows%s%s, validating on %" PRId64 " rows%s\n",
             n_train, vspec ? " of " : "", vspec ? data : "", n_val,
             vspec ? (val_data ? " (--validation-data)"
                               : " (its t10k-*, --validate-on test)")
                   : " held out from them (--validation-split)");
    else
      printf("training on %" PRId64 " rows%s%s, no validation\n", n_train,
             vspec ? " of " : "", vspec ? data : "");
  }
  if (resume) {
    st = dml_trainer_load_checkpoint(t, resume);
    if (st) goto out;
    if (o.verbose)
      printf("resumed from %s at epoch %d, step %" PRIu64 "\n", resume,
             dml_trainer_epoch(t), dml_trainer_step(t));
  }

  /* the metrics read the output the loss reads */
  if (metrics && cfg.output) {
    dml_rt_session_t *fs = dml_trainer_session(t, "forward");
    uint32_t k = 0, no = dml_rt_session_num_outputs(fs);
    for (; k < no; k++) {
      dml_rt_io_info_t oi;
      if (!dml_rt_session_output_info(fs, k, &oi) && oi.name &&
          !strcmp(oi.name, cfg.output))
        break;
    }
    o.metrics_output = k < no ? k : 0;
  }

  /* 3. train */
  st = dml_trainer_fit(t, &tr, &o, &h);
  if (st) goto out;

  /* 4. outputs */
  st = dml_train_save_package(m, dml_trainer_session(t, "train_step"), pkg, pkg_size,
                              out_pkg);
  if (st) goto out;
  printf("wrote %s\n", out_pkg);
  if (history) {
    st = dml_history_write_csv(&h, history);
    if (st) goto out;
    printf("wrote %s\n", history);
  }
  if (plot) {
    st = dmlc_history_svg(&h, plot);
    if (st) goto out;
    printf("wrote %s\n", plot);
  }
  if (export_onnx && qat) {
    st = qat_export(model_path, export_onnx, m, dml_trainer_session(t, "forward"),
                    &qat_calib);
    if (st) goto out;
  } else if (export_onnx) {
    uint32_t nrep = 0, ndrop = 0;
    st = dml_onnx_export_trained(model_path, export_onnx, m,
                                 dml_trainer_session(t, "forward"), &nrep, &ndrop);
    if (st) goto out;
    printf("wrote %s (%u initializers replaced, %u Dropout set to inference)\n",
           export_onnx, nrep, ndrop);
  }
  {
    int64_t arena = function_arena(pkg, pkg_size, "train_step");
    uint64_t params = global_bytes(m, DML_RT_GLOBAL_PARAM);
    uint64_t state = global_bytes(m, DML_RT_GLOBAL_STATE);
    int64_t scratch = dml_rt_model_scratch_bytes(m);
    double data_bytes =
        named
            ? 0
            : (double)(dml_tensor_bytes(&train.x) + dml_tensor_bytes(&train.y) +
                       (vspec ? dml_tensor_bytes(&val.x) + dml_tensor_bytes(&val.y) : 0));
    for (int32_t k = 0; k < ntrain.n; k++)
      data_bytes += (double)dml_tensor_bytes(&ntrain.t[k]);
    for (int32_t k = 0; k < nval.n; k++)
      data_bytes += (double)dml_tensor_bytes(&nval.t[k]);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    double planned = (double)(arena > 0 ? arena : 0) + (double)params + (double)state;
    printf(
        "peak memory (planned): %.2f MiB = train_step arena %.2f MiB + parameters %.2f "
        "MiB "
        "+ optimizer/state %.2f MiB (kernel scratch %.2f MiB besides)\n",
        mib(planned), mib((double)(arena > 0 ? arena : 0)), mib((double)params),
        mib((double)state), mib((double)(scratch > 0 ? scratch : 0)));
    printf(
        "peak memory (measured): max RSS %.1f MiB, of which the data sets %.1f MiB and "
        "the package in memory %.1f MiB\n",
        ru.ru_maxrss / 1024.0, mib(data_bytes), mib((double)pkg_size));
    if (jout) {
      fputs("{\"package\": ", jout);
      dmlc_json_str(jout, out_pkg);
      fputs(", \"model\": ", jout);
      dmlc_json_str(jout, model_path);
      fputs(", \"device\": ", jout);
      dmlc_json_str(jout, device);
      /* "loss" is null when each output has its own ("losses" below) */
      if (cfg.n_outputs > 0)
        fputs(", \"loss\": null", jout);
      else
        fprintf(jout, ", \"loss\": \"%s\"", dml_loss_kind_name(cfg.loss));
      fprintf(jout, ", \"optimizer\": \"%s\", ", dml_optimizer_kind_name(cfg.optimizer));
      if (cfg.n_outputs > 0) { /* a loss per output: {NAME: {loss, weight}} */
        fputs("\"losses\": {", jout);
        for (uint32_t j = 0; j < cfg.n_outputs; j++) {
          fputs(j ? ", " : "", jout);
          dmlc_json_str(jout, cfg.outputs[j].name);
          fprintf(jout, ": {\"loss\": \"%s\", \"weight\": ",
                  dml_loss_kind_name(cfg.outputs[j].loss));
          dmlc_json_num(jout, cfg.outputs[j].weight);
          fputc('}', jout);
        }
        fputs("}, ", jout);
      }
      dmlc_history_json(jout, &h);
      fprintf(jout,
              ", \"peak_memory\": {\"planned_bytes\": %.0f, \"max_rss_bytes\": %.0f}}\n",
              planned, ru.ru_maxrss * 1024.0);
    }
  }
out:
  dml_history_free(&h);
  dml_data_free(&train);
  dml_data_free(&val);
  dml_data_named_free(&ntrain);
  dml_data_named_free(&nval);
  dml_trainer_release(t);
  dml_rt_model_release(m);
  free(pkg);
  free(onnx);
  free(qat_calib.data);
  if (jout) fclose(jout);
  dmlc_dim_spec_free(&dims);
  if (!st && rc == 2) return 2;
  return st ? dmlc_report(st) : 0;
}
