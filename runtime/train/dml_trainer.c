/* dml_trainer.c — fit / evaluate / predict over a training package
 * (dml_trainer.h), checkpoints and trained-package saving. */
#include "dml_trainer.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "dml_dtype.h"
#include "dml_pkg.h"
#include "dml_safetensors.h"

#define OP "train"
#define CKPT_FORMAT "dmlc-train-checkpoint-1"

#define MAXT DML_MAX_DATA_TENSORS

typedef struct fn_io {
  dml_rt_session_t *s;
  int32_t x[MAXT];      /* input index of model input i (-1: absent) */
  int32_t target[MAXT]; /* input index of target j */
  int32_t lr;           /* input index (-1: absent) */
  int32_t loss;         /* output index of the (total) loss */
  /* output indices per target (-1: absent): "loss.O" (multi-output),
   * "correct" / "correct.O" */
  int32_t out_loss[MAXT], correct[MAXT];
} fn_io_t;

struct dml_trainer {
  const dml_rt_model_t *m;
  fn_io_t train, eval, fwd;
  int32_t n_x, n_y; /* model inputs, targets */
  int multi;        /* targets named "target.O" (a loss per output) */
  dml_rt_io_info_t x_info[MAXT], y_info[MAXT];  /* train_step's inputs, targets */
  int64_t bound;                                /* batch bound */
  size_t x_row_bytes[MAXT], y_row_bytes[MAXT];  /* bytes per row (0: symbolic row) */
  int64_t x_row_numel[MAXT], y_row_numel[MAXT]; /* -1: a symbolic non-batch dim */
  int64_t n_classes[MAXT]; /* integer targets: the output's class dim (0: unknown) */
  int32_t epoch;
  uint64_t step;
  /* one gathered batch per tensor, grown to the largest batch seen (rows
   * of a symbolic row shape take the data set's size) */
  uint8_t *xbuf[MAXT], *ybuf[MAXT];
  size_t xcap[MAXT], ycap[MAXT];
  const char *run_config; /* the running fit's o->run_config (lent), or NULL */
  /* A PLATEAU schedule's state, kept across fits and in checkpoints
   * ("lr_state") so that a resumed run continues exactly. */
  int plateau_valid;
  dml_lr_plateau_state_t plateau;
};

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ===================================================================== */
/* Datasets, history, options                                            */
/* ===================================================================== */

/* The data set's tensors: input i / target j: from the lists when x (y)
 * is empty (rank 0, no data) and n_inputs (n_targets) > 0, else x (y), so
 * a data set whose x and y are set never reads the lists (callers that
 * set only x and y leave them uninitialized). */
static int ds_xl(const dml_dataset_t *d) {
  return !d->x.data && d->x.rank == 0 && d->n_inputs > 0;
}
static int ds_yl(const dml_dataset_t *d) {
  return !d->y.data && d->y.rank == 0 && d->n_targets > 0;
}
static int32_t ds_nx(const dml_dataset_t *d) {
  return ds_xl(d) ? d->n_inputs : 1;
}
static int32_t ds_ny(const dml_dataset_t *d) {
  return ds_yl(d) ? d->n_targets : 1;
}
static const dml_tensor_t *ds_x(const dml_dataset_t *d, int32_t i) {
  return ds_xl(d) ? &d->inputs[i] : &d->x;
}
static const dml_tensor_t *ds_y(const dml_dataset_t *d, int32_t j) {
  return ds_yl(d) ? &d->targets[j] : &d->y;
}
static int64_t ds_rows(const dml_dataset_t *d) {
  const dml_tensor_t *x = ds_x(d, 0);
  return x->rank ? x->dims[0] : 0;
}

dml_status_t dml_dataset_slice(const dml_dataset_t *d, int64_t begin, int64_t end,
                               dml_dataset_t *out) {
  if (!d || !out)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP, "NULL argument");
  if ((ds_xl(d) && d->n_inputs > MAXT) || (ds_yl(d) && d->n_targets > MAXT))
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                           "n_inputs %d and n_targets %d must be in [0, %d]", d->n_inputs,
                           d->n_targets, MAXT);
  int64_t n = ds_rows(d);
  dml_dataset_t r = *d;
  for (int32_t k = 0; k < ds_nx(d) + ds_ny(d); k++) {
    int is_x = k < ds_nx(d);
    const dml_tensor_t *v = is_x ? ds_x(d, k) : ds_y(d, k - ds_nx(d));
    if (v->rank < 1 || v->dims[0] != n)
      return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                             "x and y must be [N, ...] with the same N (%s %d)",
                             is_x ? "input" : "target", is_x ? k : k - ds_nx(d));
    if (begin < 0 || end < begin || end > n)
      return dml_status_make(DML_STATUS_OUT_OF_RANGE, OP,
                             "rows [%" PRId64 ", %" PRId64 ") outside [0, %" PRId64 ")",
                             begin, end, n);
    dml_tensor_t *w = is_x ? (ds_xl(d) ? &r.inputs[k] : &r.x)
                           : (ds_yl(d) ? &r.targets[k - ds_nx(d)] : &r.y);
    size_t rb = n ? dml_tensor_bytes(v) / (size_t)n : 0;
    w->dims[0] = end - begin;
    w->data = (uint8_t *)v->data + (size_t)begin * rb;
  }
  *out = r;
  return DML_OK;
}

void dml_history_free(dml_history_t *h) {
  if (!h) return;
  free(h->epochs);
  memset(h, 0, sizeof *h);
}

static void csv_num(char *buf, size_t cap, double v) {
  if (isnan(v))
    buf[0] = '\0';
  else
    snprintf(buf, cap, "%.9g", v);
}

/* The CSV column (or progress-line) name of table metric i of h. */
static const char *metric_column(const dml_history_t *h, int32_t i, char *buf,
                                 size_t cap) {
  char name[32];
  dml_metric_name(&h->metric[i], name, sizeof name);
  snprintf(buf, cap, "%s%.47s%s%s", h->validation[0] ? "val_" : "", h->metric_output[i],
           h->metric_output[i][0] ? "_" : "", name);
  return buf;
}

dml_status_t dml_history_write_csv(const dml_history_t *h, const char *path) {
  if (!h || !path)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP, "NULL argument");
  int32_t nm = h->n_metrics < 0                 ? 0
               : h->n_metrics > DML_MAX_METRICS ? DML_MAX_METRICS
                                                : h->n_metrics;
  int32_t no = h->n_outputs < 0 ? 0 : h->n_outputs > MAXT ? MAXT : h->n_outputs;
  size_t cols = (size_t)nm + 4 * (size_t)no;
  size_t cap = 128 + 128 * cols + (size_t)h->n_epochs * (200 + 32 * cols), n = 0;
  char *buf = (char *)malloc(cap);
  if (!buf) return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, OP, "out of memory");
  n += (size_t)snprintf(
      buf, cap, "epoch,loss,accuracy,val_loss,val_accuracy,lr,seconds,validation");
  for (int32_t j = 0; j < no; j++) {
    const char *o = h->output[j];
    n += (size_t)snprintf(buf + n, cap - n, ",%.47s_loss", o);
    if (h->output_has_accuracy[j])
      n += (size_t)snprintf(buf + n, cap - n, ",%.47s_accuracy", o);
    n += (size_t)snprintf(buf + n, cap - n, ",val_%.47s_loss", o);
    if (h->output_has_accuracy[j])
      n += (size_t)snprintf(buf + n, cap - n, ",val_%.47s_accuracy", o);
  }
  for (int32_t i = 0; i < nm; i++) {
    char col[128];
    n += (size_t)snprintf(buf + n, cap - n, ",%s", metric_column(h, i, col, sizeof col));
  }
  n += (size_t)snprintf(buf + n, cap - n, "\n");
  for (int32_t i = 0; i < h->n_epochs; i++) {
    const dml_epoch_metrics_t *e = &h->epochs[i];
    char a[32], b[32], c[32], d[32], f[32], g[32];
    csv_num(a, sizeof a, e->loss);
    csv_num(b, sizeof b, e->accuracy);
    csv_num(c, sizeof c, e->val_loss);
    csv_num(d, sizeof d, e->val_accuracy);
    csv_num(f, sizeof f, e->lr);
    csv_num(g, sizeof g, e->seconds);
    n += (size_t)snprintf(buf + n, cap - n, "%d,%s,%s,%s,%s,%s,%s,%.31s", e->epoch, a, b,
                          c, d, f, g, h->validation);
    for (int32_t j = 0; j < no; j++) {
      csv_num(a, sizeof a, e->output_loss[j]);
      csv_num(b, sizeof b, e->output_accuracy[j]);
      csv_num(c, sizeof c, e->val_output_loss[j]);
      csv_num(d, sizeof d, e->val_output_accuracy[j]);
      if (h->output_has_accuracy[j])
        n += (size_t)snprintf(buf + n, cap - n, ",%s,%s,%s,%s", a, b, c, d);
      else
        n += (size_t)snprintf(buf + n, cap - n, ",%s,%s", a, c);
    }
    for (int32_t k = 0; k < nm; k++) {
      csv_num(a, sizeof a, e->metrics[k]);
      n += (size_t)snprintf(buf + n, cap - n, ",%s", a);
    }
    n += (size_t)snprintf(buf + n, cap - n, "\n");
  }
  dml_status_t st = dml_write_file_atomic(OP, path, buf, n);
  free(buf);
  return st;
}

void dml_fit_options_init(dml_fit_options_t *o) {
  memset(o, 0, sizeof *o);
  o->epochs = DML_FIT_DEFAULT_EPOCHS;
  o->batch_size = DML_FIT_DEFAULT_BATCH_SIZE;
  o->shuffle = 1;
  o->lr.kind = DML_LR_CONSTANT;
  o->lr.initial = DML_FIT_DEFAULT_LR;
  o->validation_split = DML_FIT_DEFAULT_VALIDATION_SPLIT;
  double *hv[] = {&o->hyper.momentum,  &o->hyper.beta1,     &o->hyper.beta2,
                  &o->hyper.epsilon,   &o->hyper.alpha,     &o->hyper.weight_decay,
                  &o->hyper.clip_norm, &o->hyper.clip_value};
  for (size_t i = 0; i < sizeof hv / sizeof hv[0]; i++) *hv[i] = NAN;
  o->verbose = 1;
  o->monitor = DML_MONITOR_AUTO;
  o->restore_best = 1;
}

dml_status_t dml_monitor_parse(const char *s, dml_monitor_t *out) {
  static const struct {
    const char *name;
    dml_monitor_t m;
  } k[] = {{"auto", DML_MONITOR_AUTO},
           {"loss", DML_MONITOR_LOSS},
           {"val_loss", DML_MONITOR_VAL_LOSS},
           {"accuracy", DML_MONITOR_ACCURACY},
           {"val_accuracy", DML_MONITOR_VAL_ACCURACY}};
  for (size_t i = 0; s && i < sizeof k / sizeof k[0]; i++)
    if (!strcmp(s, k[i].name)) {
      *out = k[i].m;
      return DML_OK;
    }
  return dml_status_make(
      DML_STATUS_INVALID_ARGUMENT, OP,
      "unknown monitor '%s' (auto, loss, val_loss, accuracy, val_accuracy)",
      s ? s : "(null)");
}

/* ===================================================================== */
/* Trainer                                                               */
/* ===================================================================== */

static int is_target_name(const char *n) {
  return n && (!strcmp(n, "target") || !strncmp(n, "target.", 7));
}

static dml_status_t open_fn(const dml_rt_model_t *m, const char *device, const char *name,
                            dml_rt_session_t *share, fn_io_t *io) {
  memset(io, 0, sizeof *io);
  for (int k = 0; k < MAXT; k++)
    io->x[k] = io->target[k] = io->out_loss[k] = io->correct[k] = -1;
  DML_RETURN_IF_ERROR(dml_rt_session_create_function(m, device, name, share, &io->s));
  io->lr = dml_rt_session_find_input(io->s, "lr");
  io->loss = dml_rt_session_find_output(io->s, "loss");
  return DML_OK;
}

/* Finds the trainer's inputs and targets (by name) in io's session; with
 * `targets` 0 (forward) only the inputs. */
static dml_status_t map_fn(const dml_trainer_t *t, fn_io_t *io, const char *fname,
                           int targets) {
  uint32_t n_in = dml_rt_session_num_inputs(io->s), n_data = 0;
  for (uint32_t i = 0; i < n_in; i++) {
    dml_rt_io_info_t ii;
    DML_RETURN_IF_ERROR(dml_rt_session_input_info(io->s, i, &ii));
    if ((int32_t)i != io->lr && !is_target_name(ii.name)) n_data++;
  }
  if (n_data != (uint32_t)t->n_x)
    return dml_status_make(DML_STATUS_FAILED_PRECONDITION, OP,
                           "%s has %u model inputs, train_step %d", fname, n_data,
                           t->n_x);
  for (int32_t i = 0; i < t->n_x; i++) {
    io->x[i] = dml_rt_session_find_input(io->s, t->x_info[i].name);
    if (io->x[i] < 0)
      return dml_status_make(DML_STATUS_FAILED_PRECONDITION, OP,
                             "%s has no input '%s' (train_step has)", fname,
                             t->x_info[i].name);
  }
  for (int32_t j = 0; targets && j < t->n_y; j++) {
    io->target[j] = dml_rt_session_find_input(io->s, t->y_info[j].name);
    if (io->target[j] < 0)
      return dml_status_make(DML_STATUS_FAILED_PRECONDITION, OP,
                             "%s has no input '%s' (train_step has)", fname,
                             t->y_info[j].name);
    char nm[128];
    if (t->multi) {
      snprintf(nm, sizeof nm, "loss.%.100s", t->y_info[j].name + 7);
      io->out_loss[j] = dml_rt_session_find_output(io->s, nm);
      snprintf(nm, sizeof nm, "correct.%.100s", t->y_info[j].name + 7);
      io->correct[j] = dml_rt_session_find_output(io->s, nm);
    } else {
      io->correct[j] = dml_rt_session_find_output(io->s, "correct");
    }
  }
  return DML_OK;
}

/* The per-row size of train_step's input or target `info`: static dims
 * give *numel and *bytes; a symbolic non-batch dim (dmlc compile --train
 * --dim-bound H=64) gives -1 and 0, the row then taking each data set's
 * size (check_data). The batch symbol itself in a non-batch dim is
 * UNIMPLEMENTED: it changes with every batch. */
static dml_status_t row_bytes(const dml_rt_io_info_t *info, const char *what,
                              int64_t *numel, size_t *bytes) {
  if (info->rank < 1 || !info->dim_symbol[0] || info->dim_multiplier[0] != 1)
    return dml_status_make(DML_STATUS_FAILED_PRECONDITION, OP,
                           "%s '%s' has no symbolic batch dim first", what, info->name);
  int64_t n = 1;
  for (int32_t d = 1; d < info->rank; d++) {
    if (info->dims[d] < 0) {
      if (!strcmp(info->dim_symbol[d], info->dim_symbol[0]))
        return dml_status_make(DML_STATUS_UNIMPLEMENTED, OP,
                               "%s '%s': dim %d is the batch symbol '%s' too; the "
                               "trainer feeds batches of any size, so only dim 0 may "
                               "be it",
                               what, info->name, d, info->dim_symbol[0]);
      n = -1;
      continue;
    }
    if (n >= 0) n *= info->dims[d];
  }
  *numel = n;
  *bytes = n < 0 ? 0 : (size_t)n * dml_dtype_size(info->dtype);
  return DML_OK;
}

dml_status_t dml_trainer_create(const dml_rt_model_t *m, const char *device,
                                dml_trainer_t **out_trainer) {
  if (!m || !out_trainer)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP, "NULL argument");
  dml_trainer_t *t = (dml_trainer_t *)calloc(1, sizeof *t);
  if (!t) return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, OP, "out of memory");
  t->m = m;
  dml_status_t st = open_fn(m, device, "train_step", NULL, &t->train);
  if (st && dml_status_code(st) == DML_STATUS_NOT_FOUND)
    st = dml_status_detail(st,
                           "this is not a training package; make one with `dmlc train` "
                           "(or dml_compile_options_t.train)");
  if (!st) st = open_fn(m, device, "eval_step", t->train.s, &t->eval);
  if (!st) st = open_fn(m, device, "forward", t->train.s, &t->fwd);
  if (!st && !dml_rt_session_globals_writable(t->train.s))
    st = dml_status_make(
        DML_STATUS_FAILED_PRECONDITION, OP,
        "the package's globals are not writable (not a training package)");
  /* train_step's inputs: the model's (in forward's order) and the targets */
  uint32_t n_in = st ? 0 : dml_rt_session_num_inputs(t->train.s);
  for (uint32_t i = 0; i < n_in && !st; i++) {
    dml_rt_io_info_t ii;
    if ((int32_t)i == t->train.lr) continue;
    st = dml_rt_session_input_info(t->train.s, i, &ii);
    if (st) break;
    int tgt = is_target_name(ii.name);
    int32_t *n = tgt ? &t->n_y : &t->n_x;
    if (*n == MAXT) {
      st = dml_status_make(DML_STATUS_UNIMPLEMENTED, OP,
                           "train_step has more than %d %s; the trainer feeds at most %d",
                           MAXT, tgt ? "targets" : "model inputs", MAXT);
      break;
    }
    if (tgt && ii.name[6] == '.') t->multi = 1;
    (tgt ? t->y_info : t->x_info)[(*n)++] = ii;
  }
  if (!st && (t->n_x < 1 || t->n_y < 1 || t->train.lr < 0 || t->train.loss < 0 ||
              t->eval.loss < 0))
    st = dml_status_make(
        DML_STATUS_FAILED_PRECONDITION, OP,
        "train_step needs inputs 'target', 'lr' and output 'loss'; eval_step "
        "input 'target' and output 'loss' (passes/dml_train.h)");
  if (!st) st = map_fn(t, &t->train, "train_step", 1);
  if (!st) st = map_fn(t, &t->eval, "eval_step", 1);
  if (!st) st = map_fn(t, &t->fwd, "forward", 0);
  for (int32_t i = 0; i < t->n_x && !st; i++)
    st = row_bytes(&t->x_info[i], "input", &t->x_row_numel[i], &t->x_row_bytes[i]);
  for (int32_t j = 0; j < t->n_y && !st; j++)
    st = row_bytes(&t->y_info[j], "target", &t->y_row_numel[j], &t->y_row_bytes[j]);
  for (int32_t j = 0; j < t->n_y && !st; j++) {
    if (!dml_dtype_is_int(t->y_info[j].dtype)) continue;
    /* Class indices: the forward output's static dim 1 is the class count,
     * so a label outside [0, C) is an error, not a silent zero one-hot row
     * (the output "O" of "target.O"; output 0 for a single loss). */
    const char *on = dml_trainer_target_output(t, j);
    int32_t k = on ? dml_rt_session_find_output(t->fwd.s, on) : 0;
    dml_rt_io_info_t yo;
    if (k >= 0 && dml_rt_session_num_outputs(t->fwd.s) > (uint32_t)k &&
        !dml_rt_session_output_info(t->fwd.s, (uint32_t)k, &yo) && yo.rank >= 2 &&
        !yo.dim_symbol[1])
      t->n_classes[j] = yo.dims[1];
  }
  if (!st) {
    t->bound = t->x_info[0].dim_bound[0];
    for (int32_t i = 0; i < t->n_x; i++)
      if (t->x_info[i].dim_bound[0] < t->bound) t->bound = t->x_info[i].dim_bound[0];
    for (int32_t j = 0; j < t->n_y; j++)
      if (t->y_info[j].dim_bound[0] < t->bound) t->bound = t->y_info[j].dim_bound[0];
  }
  if (st) {
    dml_trainer_release(t);
    return dml_status_annotate(st, "creating a trainer");
  }
  *out_trainer = t;
  return DML_OK;
}

void dml_trainer_release(dml_trainer_t *t) {
  if (!t) return;
  dml_rt_session_release(t->fwd.s);
  dml_rt_session_release(t->eval.s);
  dml_rt_session_release(t->train.s);
  for (int k = 0; k < MAXT; k++) {
    free(t->xbuf[k]);
    free(t->ybuf[k]);
  }
  free(t);
}

dml_rt_session_t *dml_trainer_session(dml_trainer_t *t, const char *function) {
  if (!t || !function) return NULL;
  if (!strcmp(function, "train_step")) return t->train.s;
  if (!strcmp(function, "eval_step")) return t->eval.s;
  if (!strcmp(function, "forward")) return t->fwd.s;
  return NULL;
}
int64_t dml_trainer_batch_bound(const dml_trainer_t *t) {
  return t ? t->bound : 0;
}
void dml_trainer_io_info(const dml_trainer_t *t, dml_rt_io_info_t *out_x,
                         dml_rt_io_info_t *out_target) {
  if (out_x) *out_x = t->x_info[0];
  if (out_target) *out_target = t->y_info[0];
}
int32_t dml_trainer_num_inputs(const dml_trainer_t *t) {
  return t ? t->n_x : 0;
}
int32_t dml_trainer_num_targets(const dml_trainer_t *t) {
  return t ? t->n_y : 0;
}
dml_status_t dml_trainer_input_info(const dml_trainer_t *t, int32_t i,
                                    dml_rt_io_info_t *out) {
  if (!t || !out || i < 0 || i >= t->n_x)
    return dml_status_make(DML_STATUS_OUT_OF_RANGE, OP, "no model input %d", i);
  *out = t->x_info[i];
  return DML_OK;
}
dml_status_t dml_trainer_target_info(const dml_trainer_t *t, int32_t j,
                                     dml_rt_io_info_t *out) {
  if (!t || !out || j < 0 || j >= t->n_y)
    return dml_status_make(DML_STATUS_OUT_OF_RANGE, OP, "no target %d", j);
  *out = t->y_info[j];
  return DML_OK;
}
const char *dml_trainer_target_output(const dml_trainer_t *t, int32_t j) {
  if (!t || j < 0 || j >= t->n_y || !t->multi) return NULL;
  return t->y_info[j].name + 7;
}
int32_t dml_trainer_epoch(const dml_trainer_t *t) {
  return t ? t->epoch : 0;
}
uint64_t dml_trainer_step(const dml_trainer_t *t) {
  return t ? t->step : 0;
}

/* The names of the model inputs (or the trained outputs), for errors. */
static const char *name_list(const dml_trainer_t *t, int targets, char *buf, size_t cap) {
  size_t n = 0;
  buf[0] = 0;
  for (int32_t k = 0; k < (targets ? t->n_y : t->n_x); k++) {
    const char *nm =
        targets ? (t->multi ? t->y_info[k].name + 7 : "target") : t->x_info[k].name;
    const char *parts[4] = {k ? ", " : "", "'", nm ? nm : "", "'"};
    for (int p = 0; p < 4; p++)
      for (const char *c = parts[p]; *c && n + 1 < cap; c++) buf[n++] = *c;
  }
  buf[n] = 0;
  return buf;
}

/* Checks `d` against the package's inputs and targets. */
static dml_status_t check_data(const dml_trainer_t *t, const dml_dataset_t *d,
                               const char *what) {
  if (!d)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP, "%s: NULL data set", what);
  char names[256];
  if (ds_nx(d) > MAXT || ds_nx(d) != t->n_x)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                           "%s: %d input arrays for a model of %d inputs (%s)", what,
                           ds_nx(d), t->n_x, name_list(t, 0, names, sizeof names));
  if (ds_ny(d) > MAXT || ds_ny(d) != t->n_y)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                           "%s: %d label arrays for a package of %d trained outputs (%s)",
                           what, ds_ny(d), t->n_y, name_list(t, 1, names, sizeof names));
  const dml_tensor_t *x0 = ds_x(d, 0);
  int64_t rows = x0->rank ? x0->dims[0] : 0;
  /* the symbols the data set's arrays bind (non-batch symbolic dims): one
   * value per symbol for every batch drawn from it */
  const char *sym_name[MAXT * DML_MAX_RANK];
  int64_t sym_value[MAXT * DML_MAX_RANK];
  char sym_by[MAXT * DML_MAX_RANK][112];
  int32_t n_sym = 0;
  for (int32_t k = 0; k < t->n_x + t->n_y; k++) {
    int is_x = k < t->n_x;
    int32_t j = is_x ? k : k - t->n_x;
    const dml_tensor_t *v = is_x ? ds_x(d, j) : ds_y(d, j);
    const dml_rt_io_info_t *info = is_x ? &t->x_info[j] : &t->y_info[j];
    int64_t row = is_x ? t->x_row_numel[j] : t->y_row_numel[j];
    char label[160];
    if (!t->multi && t->n_x == 1)
      snprintf(label, sizeof label, "%s", is_x ? "x" : "y");
    else if (is_x)
      snprintf(label, sizeof label, "input '%.100s'", info->name);
    else
      snprintf(label, sizeof label, "the label array of output '%.100s'",
               t->multi ? info->name + 7 : "target");
    if (v->rank < 1 || v->dims[0] != rows || rows < 0) {
      if (!t->multi && t->n_x == 1)
        return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                               "%s: x and y must be [N, ...] with the same N (x has "
                               "%" PRId64 " rows, y %" PRId64 ")",
                               what, rows, d->y.rank ? d->y.dims[0] : 0);
      return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                             "%s: %s has %" PRId64 " rows, input '%s' %" PRId64
                             ": every array needs the same rows",
                             what, label, v->rank ? v->dims[0] : 0, t->x_info[0].name,
                             rows);
    }
    int64_t n = dml_dims_numel(v->dims + 1, v->rank - 1);
    if (v->dtype != info->dtype || v->rank != info->rank || (row >= 0 && n != row) ||
        (!v->data && rows > 0)) {
      char want[160], got[64];
      dml_rt_io_info_str(info, want, sizeof want);
      return dml_status_detail(
          dml_status_make(
              DML_STATUS_INVALID_ARGUMENT, OP, "%s: %s is %s%s, the package's '%s' is %s",
              what, label, dml_dtype_name(v->dtype),
              dml_dims_str(v->dims, v->rank, got, sizeof got), info->name, want),
          "rows must match the package's type (dtype and per-row shape)");
    }
    for (int32_t dd = 1; dd < v->rank; dd++) {
      if (info->dims[dd] >= 0) {
        if (v->dims[dd] != info->dims[dd])
          return dml_status_make(
              DML_STATUS_INVALID_ARGUMENT, OP,
              "%s: %s dim %d is %" PRId64 ", the package's '%s' has %" PRId64, what,
              label, dd, v->dims[dd], info->name, info->dims[dd]);
        continue;
      }
      /* symbolic: dim = multiplier * symbol, 1 <= symbol <= its bound, and
       * one value per symbol over the data set's arrays */
      const char *sn = info->dim_symbol[dd];
      int64_t mul = info->dim_multiplier[dd] > 0 ? info->dim_multiplier[dd] : 1;
      int64_t sb = info->dim_bound[dd] / mul, sv = v->dims[dd] / mul;
      if (v->dims[dd] < mul || v->dims[dd] % mul)
        return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                               "%s: %s dim %d is %" PRId64
                               "; the package's '%s' has %s%s"
                               " there (a positive multiple of %" PRId64 ")",
                               what, label, dd, v->dims[dd], info->name,
                               mul > 1 ? "a multiple of " : "", sn, mul);
      if (sv > sb)
        return dml_status_detail(
            dml_status_make(DML_STATUS_OUT_OF_RANGE, OP,
                            "%s: %s dim %d is %" PRId64 ": symbol %s = %" PRId64
                            " exceeds its compiled bound %" PRId64,
                            what, label, dd, v->dims[dd], sn, sv, sb),
            "recompile with a larger bound (dmlc train / dmlc compile --train "
            "--dim-bound %s=%" PRId64 ")",
            sn, sv);
      int32_t f = 0;
      while (f < n_sym && strcmp(sym_name[f], sn)) f++;
      if (f < n_sym && sym_value[f] != sv)
        return dml_status_detail(
            dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                            "%s: %s dim %d gives symbol %s = %" PRId64
                            " but %s gives %s = %" PRId64,
                            what, label, dd, sn, sv, sym_by[f], sn, sym_value[f]),
            "the arrays of one data set share one size per symbol (bound %" PRId64
            "); give data of another size as another data set (a resumed run)",
            sb);
      if (f == n_sym && n_sym < MAXT * DML_MAX_RANK) {
        sym_name[n_sym] = sn;
        sym_value[n_sym] = sv;
        snprintf(sym_by[n_sym], sizeof sym_by[n_sym], "%.90s dim %d", label, dd);
        n_sym++;
      }
    }
    if (!is_x && t->n_classes[j] > 0 && dml_dtype_is_int(v->dtype)) {
      int64_t ne = dml_dims_numel(v->dims, v->rank);
      for (int64_t i = 0; i < ne; i++) {
        int64_t c = dml_load_i64(v->dtype, v->data, (size_t)i);
        if (c < 0 || c >= t->n_classes[j])
          return dml_status_make(DML_STATUS_OUT_OF_RANGE, OP,
                                 "%s: label %" PRId64 " (element %" PRId64
                                 " of %s) is outside [0, %" PRId64
                                 "): the model has %" PRId64 " classes",
                                 what, c, i, label, t->n_classes[j], t->n_classes[j]);
      }
    }
    /* Labels must be finite: one NaN or inf label makes every loss and
     * gradient after it NaN (a silently all-NaN package). Inputs are not
     * checked: as in Keras, a model may take non-finite inputs. */
    if (!is_x && dml_dtype_is_float(v->dtype) && n > 0) {
      int64_t ne = rows * n;
      for (int64_t i = 0; i < ne; i++) {
        double y = dml_load_f64(v->dtype, v->data, (size_t)i);
        if (!isfinite(y))
          return dml_status_detail(
              dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                              "%s: %s has %g at row %" PRId64 " (element %" PRId64
                              " of the row): labels must be finite",
                              what, label, y, i / n, i % n),
              "drop or fill the rows with NaN or infinite labels before training");
      }
    }
  }
  return DML_OK;
}

/* Gathers rows perm[begin..end) (or begin..end when perm is NULL) of d into
 * the batch buffers and binds them to `io`'s inputs and targets (`targets`
 * 0: the inputs only). */
static dml_status_t bind_batch(dml_trainer_t *t, fn_io_t *io, const dml_dataset_t *d,
                               const int64_t *perm, int64_t begin, int64_t end,
                               int targets) {
  int64_t b = end - begin;
  for (int32_t k = 0; k < t->n_x + (targets ? t->n_y : 0); k++) {
    int is_x = k < t->n_x;
    int32_t j = is_x ? k : k - t->n_x;
    const dml_tensor_t *src = is_x ? ds_x(d, j) : ds_y(d, j);
    /* the data set's row size: the package's, or with symbolic row dims the
     * size check_data accepted */
    size_t rb =
        (size_t)dml_dims_numel(src->dims + 1, src->rank - 1) * dml_dtype_size(src->dtype);
    uint8_t **buf = is_x ? &t->xbuf[j] : &t->ybuf[j];
    size_t *cap = is_x ? &t->xcap[j] : &t->ycap[j];
    const uint8_t *bytes = (const uint8_t *)src->data;
    dml_tensor_t v = *src;
    v.dims[0] = b;
    if (perm && rb * (size_t)b > *cap) {
      uint8_t *nb = (uint8_t *)realloc(*buf, rb * (size_t)b + 1);
      if (!nb) return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, OP, "out of memory");
      *buf = nb;
      *cap = rb * (size_t)b;
    }
    if (perm) {
      for (int64_t r = 0; r < b; r++)
        memcpy(*buf + (size_t)r * rb, bytes + (size_t)perm[begin + r] * rb, rb);
      v.data = *buf;
    } else {
      v.data = (void *)(bytes + (size_t)begin * rb);
    }
    DML_RETURN_IF_ERROR(
        dml_rt_session_set_input(io->s, (uint32_t)(is_x ? io->x[j] : io->target[j]), &v));
  }
  return DML_OK;
}

static dml_status_t read_scalar(dml_rt_session_t *s, int32_t out, double *v) {
  dml_tensor_t o;
  DML_RETURN_IF_ERROR(dml_rt_session_get_output(s, (uint32_t)out, &o));
  if (dml_dims_numel(o.dims, o.rank) != 1)
    return dml_status_make(DML_STATUS_FAILED_PRECONDITION, OP,
                           "output %d is not a scalar (rank %d)", out, o.rank);
  *v = dml_load_f64(o.dtype, o.data, 0);
  return DML_OK;
}

/* The denominator of target j's accuracy for `rows` rows of data set `d`:
 * target elements for integer targets (d's row size: a symbolic row dim
 * takes the data set's), rows otherwise. */
static double acc_denominator(const dml_trainer_t *t, const dml_dataset_t *d, int32_t j,
                              int64_t rows) {
  const dml_tensor_t *y = ds_y(d, j);
  return dml_dtype_is_int(t->y_info[j].dtype)
             ? (double)rows * (double)dml_dims_numel(y->dims + 1, y->rank - 1)
             : (double)rows;
}

/* The loss and per-target sums of one run of io's session: loss, and per
 * target j the loss ("loss.O"; the loss for a single target) and `correct`
 * (0 when absent). */
static dml_status_t read_results(const dml_trainer_t *t, const fn_io_t *io, double *loss,
                                 double *out_loss, double *correct) {
  DML_RETURN_IF_ERROR(read_scalar(io->s, io->loss, loss));
  for (int32_t j = 0; j < t->n_y; j++) {
    out_loss[j] = *loss;
    correct[j] = 0;
    if (io->out_loss[j] >= 0)
      DML_RETURN_IF_ERROR(read_scalar(io->s, io->out_loss[j], &out_loss[j]));
    if (io->correct[j] >= 0)
      DML_RETURN_IF_ERROR(read_scalar(io->s, io->correct[j], &correct[j]));
  }
  return DML_OK;
}

/* The accuracy reported as `accuracy`: the first target's that has one. */
static int32_t first_accuracy(const fn_io_t *io, int32_t n_y) {
  for (int32_t j = 0; j < n_y; j++)
    if (io->correct[j] >= 0) return j;
  return -1;
}

dml_status_t dml_trainer_evaluate_outputs(dml_trainer_t *t, const dml_dataset_t *d,
                                          int64_t batch_size, double *out_loss,
                                          double *out_accuracy, double *out_losses,
                                          double *out_accuracies) {
  if (!t) return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP, "NULL trainer");
  DML_RETURN_IF_ERROR(check_data(t, d, "evaluate"));
  if (batch_size <= 0 || batch_size > t->bound) batch_size = t->bound;
  int64_t n = ds_rows(d);
  if (n == 0)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                           "evaluate: the data set is empty");
  double loss_sum = 0, ol_sum[MAXT] = {0}, correct[MAXT] = {0};
  for (int64_t b = 0; b < n; b += batch_size) {
    int64_t e = b + batch_size < n ? b + batch_size : n;
    dml_rt_session_clear_inputs(t->eval.s);
    dml_status_t st = bind_batch(t, &t->eval, d, NULL, b, e, 1);
    if (!st) st = dml_rt_session_run(t->eval.s);
    double l = 0, ol[MAXT], c[MAXT];
    if (!st) st = read_results(t, &t->eval, &l, ol, c);
    if (st)
      return dml_status_annotate(st, "evaluating rows [%" PRId64 ", %" PRId64 ")", b, e);
    loss_sum += l * (double)(e - b);
    for (int32_t j = 0; j < t->n_y; j++) {
      ol_sum[j] += ol[j] * (double)(e - b);
      correct[j] += c[j];
    }
  }
  if (out_loss) *out_loss = loss_sum / (double)n;
  int32_t fa = first_accuracy(&t->eval, t->n_y);
  if (out_accuracy)
    *out_accuracy = fa >= 0 ? correct[fa] / acc_denominator(t, d, fa, n) : NAN;
  for (int32_t j = 0; j < t->n_y; j++) {
    if (out_losses) out_losses[j] = ol_sum[j] / (double)n;
    if (out_accuracies)
      out_accuracies[j] =
          t->eval.correct[j] >= 0 ? correct[j] / acc_denominator(t, d, j, n) : NAN;
  }
  return DML_OK;
}

dml_status_t dml_trainer_evaluate(dml_trainer_t *t, const dml_dataset_t *d,
                                  int64_t batch_size, double *out_loss,
                                  double *out_accuracy) {
  return dml_trainer_evaluate_outputs(t, d, batch_size, out_loss, out_accuracy, NULL,
                                      NULL);
}

dml_status_t dml_trainer_predict_data(dml_trainer_t *t, const dml_dataset_t *d,
                                      uint32_t output, dml_tensor_t *out,
                                      void **out_buffer) {
  if (!t || !d || !out || !out_buffer)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP, "NULL argument");
  if (output >= dml_rt_session_num_outputs(t->fwd.s))
    return dml_status_make(DML_STATUS_OUT_OF_RANGE, OP,
                           "forward has %u outputs, asked for %u",
                           dml_rt_session_num_outputs(t->fwd.s), output);
  if (ds_nx(d) != t->n_x)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                           "predict: %d input arrays for a model of %d inputs", ds_nx(d),
                           t->n_x);
  int64_t n = ds_rows(d);
  for (int32_t i = 0; i < t->n_x; i++) {
    const dml_tensor_t *x = ds_x(d, i);
    if (x->rank != t->x_info[i].rank || x->dtype != t->x_info[i].dtype ||
        x->dims[0] < 1 || x->dims[0] != n)
      return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                             "predict: input '%s' must be %s [N, ...] with N >= 1 (the "
                             "same N for every input) and rank %d",
                             t->x_info[i].name, dml_dtype_name(t->x_info[i].dtype),
                             t->x_info[i].rank);
  }
  if (n > t->bound) DML_RETURN_IF_ERROR(dml_rt_model_check_chunks(t->m, OP, n, t->bound));
  uint8_t *res = NULL;
  size_t row_out = 0;
  dml_tensor_t r;
  memset(&r, 0, sizeof r);
  for (int64_t b = 0; b < n; b += t->bound) {
    int64_t e = b + t->bound < n ? b + t->bound : n;
    dml_rt_session_clear_inputs(t->fwd.s);
    dml_status_t st = bind_batch(t, &t->fwd, d, NULL, b, e, 0);
    if (!st) st = dml_rt_session_run(t->fwd.s);
    dml_tensor_t o;
    if (!st) st = dml_rt_session_get_output(t->fwd.s, output, &o);
    if (!st && (o.rank < 1 || o.dims[0] != e - b))
      st = dml_status_make(DML_STATUS_FAILED_PRECONDITION, OP,
                           "predict: output %u is not [batch, ...]", output);
    if (!st && !res) {
      r = o;
      r.dims[0] = n;
      row_out = dml_tensor_bytes(&o) / (size_t)(e - b);
      res = (uint8_t *)malloc(row_out * (size_t)n + 1);
      if (!res) st = dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, OP, "out of memory");
    }
    if (!st && dml_tensor_bytes(&o) != row_out * (size_t)(e - b))
      st = dml_status_make(DML_STATUS_INTERNAL, OP, "predict: output rows changed size");
    if (st) {
      free(res);
      return dml_status_annotate(st, "predicting rows [%" PRId64 ", %" PRId64 ")", b, e);
    }
    memcpy(res + (size_t)b * row_out, o.data, row_out * (size_t)(e - b));
  }
  r.data = res;
  *out = r;
  *out_buffer = res;
  return DML_OK;
}

dml_status_t dml_trainer_predict(dml_trainer_t *t, const dml_tensor_t *x, uint32_t output,
                                 dml_tensor_t *out, void **out_buffer) {
  if (!t || !x || !out || !out_buffer)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP, "NULL argument");
  dml_dataset_t d;
  memset(&d, 0, sizeof d);
  d.x = *x;
  if (t->n_x != 1)
    return dml_status_make(
        DML_STATUS_INVALID_ARGUMENT, OP,
        "predict: the model has %d inputs; use dml_trainer_predict_data", t->n_x);
  if (x->rank != t->x_info[0].rank || x->dtype != t->x_info[0].dtype || x->dims[0] < 1)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                           "predict: x must be %s [N, ...] with N >= 1 and rank %d",
                           dml_dtype_name(t->x_info[0].dtype), t->x_info[0].rank);
  return dml_trainer_predict_data(t, &d, output, out, out_buffer);
}

/* ---- globals: snapshots, checkpoints ---- */

typedef struct snapshot {
  uint32_t n;
  void **data;
} snapshot_t;

static void snapshot_free(snapshot_t *s) {
  for (uint32_t i = 0; s->data && i < s->n; i++) free(s->data[i]);
  free((void *)s->data);
  memset(s, 0, sizeof *s);
}

static dml_status_t snapshot_take(dml_trainer_t *t, snapshot_t *s) {
  uint32_t n = dml_rt_model_num_globals(t->m);
  if (!s->data) {
    s->data = (void **)calloc(n ? n : 1, sizeof(void *));
    if (!s->data)
      return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, OP, "out of memory");
    s->n = n;
  }
  for (uint32_t i = 0; i < n; i++) {
    dml_tensor_t v;
    DML_RETURN_IF_ERROR(dml_rt_session_global(t->train.s, i, &v));
    size_t nb = dml_tensor_bytes(&v);
    if (!s->data[i]) {
      s->data[i] = malloc(nb ? nb : 1);
      if (!s->data[i])
        return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, OP, "out of memory");
    }
    if (nb) memcpy(s->data[i], v.data, nb);
  }
  return DML_OK;
}

static dml_status_t snapshot_restore(dml_trainer_t *t, const snapshot_t *s) {
  for (uint32_t i = 0; i < s->n; i++) {
    dml_tensor_t v;
    DML_RETURN_IF_ERROR(dml_rt_session_global(t->train.s, i, &v));
    size_t nb = dml_tensor_bytes(&v);
    if (nb) memcpy(v.data, s->data[i], nb);
  }
  return DML_OK;
}

dml_status_t dml_trainer_save_checkpoint(dml_trainer_t *t, const char *path,
                                         uint64_t seed) {
  if (!t || !path)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP, "NULL argument");
  uint32_t n = dml_rt_model_num_globals(t->m);
  dml_st_entry_t *e = (dml_st_entry_t *)calloc(n ? n : 1, sizeof *e);
  if (!e) return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, OP, "out of memory");
  dml_status_t st = DML_OK;
  for (uint32_t i = 0; i < n && !st; i++) {
    dml_rt_global_info_t gi;
    st = dml_rt_model_global_info(t->m, i, &gi);
    if (!st) st = dml_rt_session_global(t->train.s, i, &e[i].tensor);
    e[i].name = gi.name;
  }
  char epoch[32], step[32], sd[32], nglob[32];
  snprintf(epoch, sizeof epoch, "%d", t->epoch);
  snprintf(step, sizeof step, "%" PRIu64, t->step);
  snprintf(sd, sizeof sd, "%" PRIu64, seed);
  snprintf(nglob, sizeof nglob, "%u", n);
  char lr_state[160] = "";
  if (t->plateau_valid)
    snprintf(lr_state, sizeof lr_state, "plateau %.17g %.17g %d %d %d", t->plateau.lr,
             t->plateau.best, t->plateau.wait, t->plateau.cooldown_counter,
             t->plateau.maximize);
  const char *keys[7] = {"format", "epoch", "step", "seed", "globals"};
  const char *vals[7] = {CKPT_FORMAT, epoch, step, sd, nglob};
  int n_meta = 5;
  if (t->run_config) keys[n_meta] = "config", vals[n_meta++] = t->run_config;
  if (t->plateau_valid) keys[n_meta] = "lr_state", vals[n_meta++] = lr_state;
  if (!st) st = dml_safetensors_write_file(path, e, n, keys, vals, n_meta);
  free(e);
  return st ? dml_status_annotate(st, "saving checkpoint '%s'", path) : DML_OK;
}

static int parse_u64(const char *s, uint64_t *out) {
  if (!s || !*s) return 0;
  uint64_t v = 0;
  for (; *s; s++) {
    if (*s < '0' || *s > '9' || v > (UINT64_MAX - 9) / 10) return 0;
    v = v * 10 + (uint64_t)(*s - '0');
  }
  *out = v;
  return 1;
}

dml_status_t dml_trainer_load_checkpoint(dml_trainer_t *t, const char *path) {
  if (!t || !path)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP, "NULL argument");
  dml_safetensors_t *f = NULL;
  void *bytes = NULL;
  DML_RETURN_IF_ERROR(dml_safetensors_read_file(path, &f, &bytes));
  dml_status_t st = DML_OK;
  const char *fmt = dml_safetensors_meta(f, "format");
  uint64_t epoch = 0, step = 0;
  if (!fmt || strcmp(fmt, CKPT_FORMAT) ||
      !parse_u64(dml_safetensors_meta(f, "epoch"), &epoch) ||
      !parse_u64(dml_safetensors_meta(f, "step"), &step) || epoch > INT32_MAX)
    st = dml_status_make(
        DML_STATUS_FAILED_PRECONDITION, OP,
        "not a dmlc training checkpoint: metadata format '%s' with epoch and "
        "step expected",
        fmt ? fmt : "(none)");
  uint32_t n = dml_rt_model_num_globals(t->m);
  if (!st && f->n_tensors != n)
    st = dml_status_make(DML_STATUS_FAILED_PRECONDITION, OP,
                         "the checkpoint holds %u tensors, the package %u globals",
                         f->n_tensors, n);
  /* Check everything first, then copy: on error nothing changes. */
  for (int pass = 0; pass < 2 && !st; pass++)
    for (uint32_t i = 0; i < n && !st; i++) {
      dml_rt_global_info_t gi;
      dml_tensor_t v;
      st = dml_rt_model_global_info(t->m, i, &gi);
      if (!st) st = dml_rt_session_global(t->train.s, i, &v);
      if (st) break;
      const dml_st_tensor_t *ct = dml_safetensors_find(f, gi.name);
      if (!ct) {
        st = dml_status_make(DML_STATUS_FAILED_PRECONDITION, OP,
                             "the checkpoint lacks global '%s'", gi.name);
        break;
      }
      if (ct->tensor.dtype != v.dtype || ct->tensor.rank != v.rank ||
          memcmp(ct->tensor.dims, v.dims, sizeof(int64_t) * (size_t)v.rank)) {
        char a[64], b[64];
        st = dml_status_make(DML_STATUS_FAILED_PRECONDITION, OP,
                             "global '%s' is %s%s in the package, %s%s in the checkpoint",
                             gi.name, dml_dtype_name(v.dtype),
                             dml_dims_str(v.dims, v.rank, a, 64),
                             dml_dtype_name(ct->tensor.dtype),
                             dml_dims_str(ct->tensor.dims, ct->tensor.rank, b, 64));
        break;
      }
      if (pass == 1) {
        size_t nb = dml_tensor_bytes(&v);
        if (nb) memcpy(v.data, ct->tensor.data, nb);
      }
    }
  dml_lr_plateau_state_t pl;
  memset(&pl, 0, sizeof pl);
  const char *ls = dml_safetensors_meta(f, "lr_state");
  int has_pl = 0;
  if (!st && ls) {
    char tail;
    has_pl = sscanf(ls, "plateau %lf %lf %d %d %d%c", &pl.lr, &pl.best, &pl.wait,
                    &pl.cooldown_counter, &pl.maximize, &tail) == 5;
    if (!has_pl)
      st = dml_status_make(DML_STATUS_FAILED_PRECONDITION, OP,
                           "checkpoint metadata lr_state '%.100s' is not "
                           "\"plateau LR BEST WAIT COOLDOWN MAXIMIZE\"",
                           ls);
  }
  if (!st) {
    t->epoch = (int32_t)epoch;
    t->step = step;
    t->plateau_valid = has_pl;
    if (has_pl) t->plateau = pl;
  }
  dml_safetensors_release(f);
  free(bytes);
  return st ? dml_status_annotate(st, "loading checkpoint '%s'", path) : DML_OK;
}

/* ---- fit ---- */

static void progress(FILE *log, int tty, const dml_epoch_metrics_t *m, int64_t step,
                     int64_t steps, double loss, double sps, int final) {
  if (tty) {
    int width = 24, fill = steps ? (int)(width * step / steps) : width;
    char bar[32];
    for (int i = 0; i < width; i++) bar[i] = i < fill ? '=' : (i == fill ? '>' : '.');
    bar[width] = '\0';
    fprintf(log,
            "\r\033[Kepoch %d/%d [%s] %" PRId64 "/%" PRId64 " loss %.4f  %.0f samples/s",
            m->epoch, m->epochs, bar, step, steps, loss, sps);
    if (!final) fflush(log);
  }
}

static void epoch_line(FILE *log, int tty, const dml_epoch_metrics_t *m, int64_t steps,
                       const dml_history_t *h) {
  if (tty) fprintf(log, "\r\033[K");
  fprintf(log, "epoch %d/%d  %" PRId64 " steps  loss %.4f", m->epoch, m->epochs, steps,
          m->loss);
  if (!isnan(m->accuracy)) fprintf(log, "  accuracy %.4f", m->accuracy);
  if (!isnan(m->val_loss)) fprintf(log, "  val_loss %.4f", m->val_loss);
  if (!isnan(m->val_accuracy)) fprintf(log, "  val_accuracy %.4f", m->val_accuracy);
  for (int32_t j = 0; j < h->n_outputs; j++) {
    const double v[4] = {m->output_loss[j], m->output_accuracy[j], m->val_output_loss[j],
                         m->val_output_accuracy[j]};
    static const char *const pre[4] = {"", "", "val_", "val_"};
    static const char *const post[4] = {"loss", "accuracy", "loss", "accuracy"};
    for (int k = 0; k < 4; k++)
      if (!isnan(v[k]))
        fprintf(log, "  %s%s_%s %.4f", pre[k], h->output[j], post[k], v[k]);
  }
  for (int32_t i = 0; i < h->n_metrics; i++) {
    char col[128];
    fprintf(log, "  %s %.4f", metric_column(h, i, col, sizeof col), m->metrics[i]);
  }
  fprintf(log, "  lr %.3g  %.1fs  %.0f samples/s\n", m->lr, m->seconds,
          m->samples_per_second);
  fflush(log);
}

static double monitored(dml_monitor_t mon, const dml_epoch_metrics_t *m) {
  switch (mon) {
    case DML_MONITOR_LOSS: return m->loss;
    case DML_MONITOR_VAL_LOSS: return m->val_loss;
    case DML_MONITOR_ACCURACY: return m->accuracy;
    case DML_MONITOR_VAL_ACCURACY: return m->val_accuracy;
    case DML_MONITOR_AUTO:
    default: return m->val_loss;
  }
}

static dml_status_t ensure_dir(const char *dir) {
  struct stat sb;
  if (stat(dir, &sb) == 0) {
    if (S_ISDIR(sb.st_mode)) return DML_OK;
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                           "checkpoint folder '%s' exists and is not a folder", dir);
  }
  if (mkdir(dir, 0755) != 0 && errno != EEXIST)
    return dml_status_make(DML_STATUS_IO, OP, "cannot create checkpoint folder '%s': %s",
                           dir, strerror(errno));
  return DML_OK;
}

static dml_status_t check_options(const dml_trainer_t *t, const dml_fit_options_t *o) {
  if (o->epochs < 1)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP, "epochs %d must be >= 1",
                           o->epochs);
  if (o->batch_size < 1 || o->batch_size > t->bound)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                           "batch size %" PRId64 " must be in [1, %" PRId64
                           "] (the package's batch bound; recompile with a larger "
                           "--batch-bound)",
                           o->batch_size, t->bound);
  if (!(o->validation_split >= 0 && o->validation_split < 1))
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                           "validation split %g must be in [0, 1)", o->validation_split);
  if (o->patience < 0 || !(o->min_delta >= 0))
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                           "early stopping: patience %d and min_delta %g must be >= 0",
                           o->patience, o->min_delta);
  if (o->checkpoint_every < 0 || (o->checkpoint_every > 0 && !o->checkpoint_dir))
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                           "checkpoint every %d epochs needs a checkpoint folder",
                           o->checkpoint_every);
  if (o->validation_label &&
      (strlen(o->validation_label) > 31 || strpbrk(o->validation_label, ",\n\r\"")))
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                           "validation_label '%s': at most 31 characters, no comma, "
                           "quote or line break",
                           o->validation_label);
  if (o->n_metrics < 0 || o->n_metrics > DML_MAX_METRICS)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                           "n_metrics %d must be in [0, %d]", o->n_metrics,
                           DML_MAX_METRICS);
  if (o->n_metrics > 0 && o->metrics_output >= dml_rt_session_num_outputs(t->fwd.s))
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                           "metrics_output %u: forward has %u outputs", o->metrics_output,
                           dml_rt_session_num_outputs(t->fwd.s));
  return dml_lr_schedule_check(&o->lr);
}

/* The run-time hyper-parameters: name, field, the global holding 1 - v
 * (NULL: none), range. */
typedef struct hyper_desc {
  const char *name;
  size_t offset;
  const char *complement;
  double lo, hi;
  int lo_open, hi_open;
} hyper_desc_t;
static const hyper_desc_t k_hyper[] = {
    {"momentum", offsetof(dml_fit_hyper_t, momentum), NULL, 0, 1, 0, 1},
    {"beta1", offsetof(dml_fit_hyper_t, beta1), "one_minus_beta1", 0, 1, 0, 1},
    {"beta2", offsetof(dml_fit_hyper_t, beta2), "one_minus_beta2", 0, 1, 0, 1},
    {"epsilon", offsetof(dml_fit_hyper_t, epsilon), NULL, 0, INFINITY, 1, 1},
    {"alpha", offsetof(dml_fit_hyper_t, alpha), "one_minus_alpha", 0, 1, 0, 1},
    {"weight_decay", offsetof(dml_fit_hyper_t, weight_decay), NULL, 0, INFINITY, 0, 1},
    {"clip_norm", offsetof(dml_fit_hyper_t, clip_norm), NULL, 0, INFINITY, 1, 1},
    {"clip_value", offsetof(dml_fit_hyper_t, clip_value), NULL, 0, INFINITY, 1, 1},
};
#define N_HYPER (sizeof k_hyper / sizeof k_hyper[0])

static int32_t hyper_global(const dml_trainer_t *t, const char *name) {
  char full[64];
  snprintf(full, sizeof full, "hyper.%s", name);
  return dml_rt_model_find_global(t->m, full);
}

void dml_trainer_hyper(dml_trainer_t *t, dml_fit_hyper_t *out) {
  for (size_t i = 0; i < N_HYPER; i++) {
    double *f = (double *)(void *)((char *)out + k_hyper[i].offset);
    *f = NAN;
    int32_t g = t ? hyper_global(t, k_hyper[i].name) : -1;
    dml_tensor_t v;
    dml_status_t st = g >= 0 ? dml_rt_session_global(t->train.s, (uint32_t)g, &v) : NULL;
    if (g >= 0 && !st && dml_tensor_bytes(&v) == sizeof(float))
      *f = dml_load_f64(v.dtype, v.data, 0);
    dml_status_free(st);
  }
}

/* Checks every hyper-parameter `h` sets (range, present in the package);
 * with `write`, stores them (and their complements) in the globals. */
static dml_status_t apply_hyper(dml_trainer_t *t, const dml_fit_hyper_t *h, int write) {
  for (size_t i = 0; i < N_HYPER; i++) {
    const hyper_desc_t *d = &k_hyper[i];
    double v = *(const double *)(const void *)((const char *)h + d->offset);
    if (isnan(v)) continue;
    if (!(d->lo_open ? v > d->lo : v >= d->lo) || !(d->hi_open ? v < d->hi : v <= d->hi))
      return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                             "hyper-parameter %s = %g is out of range %s%g, %g%s",
                             d->name, v, d->lo_open ? "(" : "[", d->lo, d->hi,
                             d->hi_open ? ")" : "]");
    int32_t g = hyper_global(t, d->name);
    int32_t gc = d->complement ? hyper_global(t, d->complement) : -1;
    if (g < 0 || (d->complement && gc < 0))
      return dml_status_detail(
          dml_status_make(DML_STATUS_FAILED_PRECONDITION, OP,
                          "hyper-parameter %s is not a run-time value of this package",
                          d->name),
          "its optimizer or clipping does not use it (weight decay, RMSprop's momentum "
          "and clipping exist only when compiled nonzero), or the package was compiled "
          "before run-time hyper-parameters; recompile it with the %s wanted",
          d->name);
    if (!write) continue;
    int32_t gs[2] = {g, gc};
    double vs[2] = {v, 1 - v};
    for (int k = 0; k < 2; k++) {
      if (gs[k] < 0) continue;
      dml_tensor_t tv;
      DML_RETURN_IF_ERROR(dml_rt_session_global(t->train.s, (uint32_t)gs[k], &tv));
      if (tv.dtype != DML_DTYPE_F32 || dml_tensor_bytes(&tv) != sizeof(float))
        return dml_status_make(DML_STATUS_FAILED_PRECONDITION, OP,
                               "global hyper.%s is not an f32 scalar", d->name);
      float f = (float)vs[k];
      memcpy(tv.data, &f, sizeof f);
    }
  }
  return DML_OK;
}

/* Table metric i's forward output and the target it is compared with:
 * o->metric_output[i] (by name); unnamed, o->metrics_output for a
 * single-loss package, the only trained output of a package with a loss per
 * output (INVALID_ARGUMENT asking for the name when it trains several); the
 * target of that output's loss (the only target of a single-loss package). */
static dml_status_t metric_io(const dml_trainer_t *t, const dml_fit_options_t *o,
                              int32_t i, uint32_t *out_output, int32_t *out_target) {
  const char *on = o->metric_output[i];
  uint32_t k = o->metrics_output;
  char mn[32];
  if (on) {
    int32_t f = dml_rt_session_find_output(t->fwd.s, on);
    if (f < 0)
      return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                             "metric %s: forward has no output '%s'",
                             dml_metric_name(&o->metrics[i], mn, sizeof mn), on);
    k = (uint32_t)f;
  } else if (t->multi) {
    /* unnamed, with a loss per output: the only trained output; with
     * several, which one is not guessed */
    if (t->n_y != 1) {
      char names[256];
      return dml_status_detail(
          dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                          "metric %s names no output, and the package trains %d (%s)",
                          dml_metric_name(&o->metrics[i], mn, sizeof mn), t->n_y,
                          name_list(t, 1, names, sizeof names)),
          "name the output: --metrics OUT=%s (metric_output[%d] in the C API)",
          dml_metric_name(&o->metrics[i], mn, sizeof mn), (int)i);
    }
    int32_t f = dml_rt_session_find_output(t->fwd.s, t->y_info[0].name + 7);
    if (f < 0)
      return dml_status_make(DML_STATUS_FAILED_PRECONDITION, OP,
                             "forward has no output '%s' (train_step trains it)",
                             t->y_info[0].name + 7);
    k = (uint32_t)f;
  }
  *out_output = k;
  if (!t->multi) {
    *out_target = 0;
    return DML_OK;
  }
  dml_rt_io_info_t oi;
  DML_RETURN_IF_ERROR(dml_rt_session_output_info(t->fwd.s, k, &oi));
  for (int32_t j = 0; j < t->n_y; j++)
    if (oi.name && !strcmp(t->y_info[j].name + 7, oi.name)) {
      *out_target = j;
      return DML_OK;
    }
  return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                         "metric %s on output '%s': the output has no loss, so no labels "
                         "to compare with (give it a loss of weight > 0)",
                         dml_metric_name(&o->metrics[i], mn, sizeof mn),
                         oi.name ? oi.name : "");
}

/* The table metrics of `d` (each metric's forward output against its
 * target, metric_io) into out[0..o->n_metrics). */
static dml_status_t table_metrics(dml_trainer_t *t, const dml_fit_options_t *o,
                                  const dml_dataset_t *d, double *out) {
  if (o->n_metrics <= 0) return DML_OK;
  if (ds_rows(d) < 1) {
    for (int32_t i = 0; i < o->n_metrics; i++) out[i] = NAN;
    return DML_OK;
  }
  dml_tensor_t pred;
  void *buf = NULL;
  uint32_t have = UINT32_MAX;
  dml_status_t st = DML_OK;
  for (int32_t i = 0; i < o->n_metrics && !st; i++) {
    uint32_t k = 0;
    int32_t j = 0;
    st = metric_io(t, o, i, &k, &j);
    if (!st && k != have) {
      free(buf);
      buf = NULL;
      have = UINT32_MAX;
      st = dml_trainer_predict_data(t, d, k, &pred, &buf);
      if (!st) have = k;
    }
    if (!st) st = dml_metric_compute(&o->metrics[i], &pred, ds_y(d, j), &out[i]);
  }
  free(buf);
  return st;
}

dml_status_t dml_trainer_fit(dml_trainer_t *t, const dml_dataset_t *train,
                             const dml_fit_options_t *o, dml_history_t *out_history) {
  if (!t || !o) return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP, "NULL argument");
  DML_RETURN_IF_ERROR(check_options(t, o));
  DML_RETURN_IF_ERROR(check_data(t, train, "training data"));
  dml_dataset_t tr = *train, val;
  const dml_dataset_t *valp = o->validation;
  int64_t n_all = ds_rows(train);
  if (o->validation_split > 0 && !o->validation) {
    int64_t nv = (int64_t)floor((double)n_all * o->validation_split);
    if (nv < 1 || nv >= n_all)
      return dml_status_detail(
          dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                          "validation split %g of %" PRId64 " rows leaves an empty set",
                          o->validation_split, n_all),
          "set validation_split to 0 (no validation) or give validation data");
    DML_RETURN_IF_ERROR(dml_dataset_slice(train, 0, n_all - nv, &tr));
    DML_RETURN_IF_ERROR(dml_dataset_slice(train, n_all - nv, n_all, &val));
    valp = &val;
  }
  if (valp) DML_RETURN_IF_ERROR(check_data(t, valp, "validation data"));
  if (valp && ds_rows(valp) < 1) /* up front, not after the first epoch */
    return dml_status_detail(
        dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                        "the validation data has no rows"),
        "give validation rows, or none (validation NULL, validation_split 0)");
  DML_RETURN_IF_ERROR(apply_hyper(t, &o->hyper, 0));
  int64_t n = ds_rows(&tr);
  if (n < 1) return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP, "no training rows");
  if (o->checkpoint_every > 0) DML_RETURN_IF_ERROR(ensure_dir(o->checkpoint_dir));

  dml_monitor_t mon = o->monitor;
  if (mon == DML_MONITOR_AUTO) mon = valp ? DML_MONITOR_VAL_LOSS : DML_MONITOR_LOSS;
  if ((mon == DML_MONITOR_VAL_LOSS || mon == DML_MONITOR_VAL_ACCURACY) && !valp &&
      o->patience > 0)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                           "early stopping monitors a validation metric but there is no "
                           "validation data");
  int maximize = mon == DML_MONITOR_ACCURACY || mon == DML_MONITOR_VAL_ACCURACY;
  dml_early_stopping_state_t es;
  dml_early_stopping_init(&es, maximize, o->min_delta, o->patience);
  int plateau = o->lr.kind == DML_LR_PLATEAU;
  if ((mon == DML_MONITOR_VAL_LOSS || mon == DML_MONITOR_VAL_ACCURACY) && !valp &&
      plateau)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                           "the plateau schedule monitors a validation metric but there "
                           "is no validation data");
  /* a fresh run starts the plateau state; a resumed one (epoch > 0 with
   * the state from its checkpoint) continues it */
  if (plateau && !(t->plateau_valid && t->epoch > 0)) {
    dml_lr_plateau_init(&t->plateau, &o->lr, maximize);
    t->plateau_valid = 1;
  } else if (!plateau) {
    t->plateau_valid = 0;
  }
  if (o->n_metrics > 0) {
    /* the metrics fit the output and the targets: checked on one batch
     * before training, not after the first epoch */
    const dml_dataset_t *md = valp ? valp : &tr;
    dml_dataset_t head;
    double scratch[DML_MAX_METRICS];
    int64_t rows = ds_rows(md) < t->bound ? ds_rows(md) : t->bound;
    DML_RETURN_IF_ERROR(dml_dataset_slice(md, 0, rows, &head));
    dml_status_t mst = table_metrics(t, o, &head, scratch);
    if (mst) return dml_status_annotate(mst, "checking the metrics");
  }
  /* epochs is the total to reach (a resumed or second fit continues):
   * nothing left to train is said, not silently returned */
  if (t->epoch >= o->epochs)
    return dml_status_detail(
        dml_status_make(DML_STATUS_FAILED_PRECONDITION, OP,
                        "already trained %d epochs; epochs (%d) is the total to reach",
                        t->epoch, o->epochs),
        "pass epochs > %d to train more (a fit continues from the epochs done, as "
        "Keras' fit with initial_epoch)",
        t->epoch);
  DML_RETURN_IF_ERROR(apply_hyper(t, &o->hyper, 1));
  snapshot_t best;
  memset(&best, 0, sizeof best);

  FILE *log = o->log ? o->log : stdout;
  int tty = o->verbose && isatty(fileno(log));
  int64_t *perm = (int64_t *)malloc((size_t)n * sizeof *perm);
  dml_history_t h;
  memset(&h, 0, sizeof h);
  int32_t cap = o->epochs - t->epoch > 0 ? o->epochs - t->epoch : 1;
  h.epochs = (dml_epoch_metrics_t *)calloc((size_t)cap, sizeof *h.epochs);
  h.n_metrics = o->n_metrics;
  for (int32_t i = 0; i < o->n_metrics; i++) {
    h.metric[i] = o->metrics[i];
    if (o->metric_output[i])
      snprintf(h.metric_output[i], sizeof h.metric_output[i], "%.47s",
               o->metric_output[i]);
  }
  if (t->multi) {
    h.n_outputs = t->n_y;
    for (int32_t j = 0; j < t->n_y; j++) {
      snprintf(h.output[j], sizeof h.output[j], "%.47s", t->y_info[j].name + 7);
      h.output_has_accuracy[j] = t->train.correct[j] >= 0;
    }
  }
  snprintf(h.validation, sizeof h.validation, "%s",
           !valp                 ? ""
           : !o->validation      ? "split"
           : o->validation_label ? o->validation_label
                                 : "validation");
  if (!perm || !h.epochs) {
    free(perm);
    free(h.epochs);
    return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, OP, "out of memory");
  }
  int64_t steps = (n + o->batch_size - 1) / o->batch_size;
  dml_status_t st = DML_OK;
  float lr_value = 0;
  dml_tensor_t lr_t;
  memset(&lr_t, 0, sizeof lr_t);
  lr_t.dtype = DML_DTYPE_F32;
  lr_t.rank = 0;
  lr_t.data = &lr_value;
  while (t->epoch < o->epochs && !st) {
    int32_t e = t->epoch;
    dml_epoch_metrics_t m;
    memset(&m, 0, sizeof m);
    m.epoch = e + 1;
    m.epochs = o->epochs;
    m.lr = plateau ? t->plateau.lr : dml_lr_schedule_at(&o->lr, e, o->epochs);
    m.accuracy = m.val_loss = m.val_accuracy = NAN;
    for (int32_t j = 0; j < MAXT; j++)
      m.output_loss[j] = m.output_accuracy[j] = m.val_output_loss[j] =
          m.val_output_accuracy[j] = NAN;
    lr_value = (float)m.lr;
    if (o->shuffle)
      dml_train_permutation(n, o->seed, (uint64_t)e, perm);
    else
      for (int64_t i = 0; i < n; i++) perm[i] = i;
    double t0 = now_seconds(), last_print = t0;
    double loss_sum = 0, ol_sum[MAXT] = {0}, correct[MAXT] = {0};
    uint64_t step0 = t->step;
    int64_t s, rows = 0;
    int stop = 0;
    for (s = 0; s < steps && !st && !stop; s++) {
      int64_t b = s * o->batch_size, end = b + o->batch_size < n ? b + o->batch_size : n;
      dml_rt_session_clear_inputs(t->train.s);
      st = bind_batch(t, &t->train, &tr, perm, b, end, 1);
      if (!st) st = dml_rt_session_set_input(t->train.s, (uint32_t)t->train.lr, &lr_t);
      if (!st) {
        dml_rt_session_set_seed(t->train.s, o->seed, t->step);
        st = dml_rt_session_run(t->train.s);
      }
      double l = 0, ol[MAXT], c[MAXT];
      if (!st) st = read_results(t, &t->train, &l, ol, c);
      if (st) {
        st = dml_status_annotate(st, "epoch %d, step %" PRId64 "/%" PRId64, e + 1, s + 1,
                                 steps);
        break;
      }
      t->step++;
      loss_sum += l * (double)(end - b);
      for (int32_t j = 0; j < t->n_y; j++) {
        ol_sum[j] += ol[j] * (double)(end - b);
        correct[j] += c[j];
      }
      rows = end;
      if (o->batch_callback) {
        dml_batch_metrics_t bm = {e + 1, s + 1, steps, t->step, end - b, l, m.lr};
        if (o->batch_callback(&bm, o->user_data)) stop = 1;
      }
      if (tty) {
        double now = now_seconds();
        if (now - last_print > 0.1 || s + 1 == steps) {
          last_print = now;
          progress(log, tty, &m, s + 1, steps, loss_sum / (double)end,
                   (double)end / (now - t0 > 0 ? now - t0 : 1e-9), s + 1 == steps);
        }
      }
    }
    if (st) break;
    int64_t steps_run = s; /* fewer than `steps` when the batch callback stopped */
    double t1 = now_seconds();
    m.loss = loss_sum / (double)rows;
    int32_t fa = first_accuracy(&t->train, t->n_y);
    if (fa >= 0) m.accuracy = correct[fa] / acc_denominator(t, &tr, fa, rows);
    for (int32_t j = 0; t->multi && j < t->n_y; j++) {
      m.output_loss[j] = ol_sum[j] / (double)rows;
      if (t->train.correct[j] >= 0)
        m.output_accuracy[j] = correct[j] / acc_denominator(t, &tr, j, rows);
    }
    m.samples_per_second = (double)rows / (t1 - t0 > 0 ? t1 - t0 : 1e-9);
    (void)step0;
    if (valp) {
      double vl[MAXT], va[MAXT];
      st = dml_trainer_evaluate_outputs(t, valp, o->eval_batch_size, &m.val_loss,
                                        &m.val_accuracy, vl, va);
      for (int32_t j = 0; !st && t->multi && j < t->n_y; j++) {
        m.val_output_loss[j] = vl[j];
        m.val_output_accuracy[j] = va[j];
      }
      if (st) {
        st = dml_status_annotate(st, "validating after epoch %d", e + 1);
        break;
      }
    }
    for (int32_t i = 0; i < DML_MAX_METRICS; i++) m.metrics[i] = NAN;
    st = table_metrics(t, o, valp ? valp : &tr, m.metrics);
    if (st) {
      st = dml_status_annotate(st, "metrics after epoch %d", e + 1);
      break;
    }
    t->epoch = e + 1;
    m.step = t->step;
    m.seconds = now_seconds() - t0;
    if (o->callback && o->callback(&m, o->user_data)) stop = 1;
    /* the plateau state sees the epoch's (possibly callback-set) metrics;
     * it sets the next epoch's rate, saved with the checkpoint below */
    /* the epoch's line first (with the rate it ran at), then the note of a
     * plateau reduction, which applies from the next epoch */
    if (o->verbose) epoch_line(log, tty, &m, steps_run, &h);
    double lr_before = plateau ? t->plateau.lr : 0;
    if (plateau && dml_lr_plateau_update(&t->plateau, &o->lr, monitored(mon, &m)) &&
        o->verbose)
      fprintf(log,
              "epoch %d: %s did not improve for %d epochs: learning rate %.6g -> %.6g "
              "from epoch %d\n",
              m.epoch,
              mon == DML_MONITOR_LOSS       ? "loss"
              : mon == DML_MONITOR_VAL_LOSS ? "val_loss"
              : mon == DML_MONITOR_ACCURACY ? "accuracy"
                                            : "val_accuracy",
              o->lr.patience, lr_before, t->plateau.lr, m.epoch + 1);
    if (o->checkpoint_every > 0 && t->epoch % o->checkpoint_every == 0) {
      char path[4096];
      snprintf(path, sizeof path, "%s/epoch-%04d.safetensors", o->checkpoint_dir,
               t->epoch);
      t->run_config = o->run_config;
      st = dml_trainer_save_checkpoint(t, path, o->seed);
      t->run_config = NULL;
      if (st) break;
    }
    h.epochs[h.n_epochs++] = m;
    if (o->patience > 0) {
      int improved = 0;
      int es_stop =
          dml_early_stopping_update(&es, m.epoch, monitored(mon, &m), &improved);
      if (improved && o->restore_best) {
        st = snapshot_take(t, &best);
        if (st) break;
      }
      if (es_stop) {
        stop = 1;
        h.best_epoch = es.best_epoch;
        if (o->restore_best && es.best_epoch > 0) {
          st = snapshot_restore(t, &best);
          if (st) break;
          h.restored = 1;
        }
        if (o->verbose)
          fprintf(log, "early stopping after epoch %d: best %s %.6g at epoch %d%s\n",
                  m.epoch,
                  mon == DML_MONITOR_LOSS       ? "loss"
                  : mon == DML_MONITOR_VAL_LOSS ? "val_loss"
                  : mon == DML_MONITOR_ACCURACY ? "accuracy"
                                                : "val_accuracy",
                  es.best, es.best_epoch, h.restored ? " (its weights restored)" : "");
      }
    }
    if (stop) {
      h.stopped_early = 1;
      break;
    }
  }
  if (!h.best_epoch && o->patience > 0) h.best_epoch = es.best_epoch;
  snapshot_free(&best);
  free(perm);
  if (st) {
    free(h.epochs);
    return st;
  }
  if (out_history)
    *out_history = h;
  else
    free(h.epochs);
  return DML_OK;
}

/* ===================================================================== */
/* Trained package                                                       */
/* ===================================================================== */

dml_status_t dml_train_save_package(const dml_rt_model_t *m, dml_rt_session_t *s,
                                    const void *pkg_bytes, size_t pkg_size,
                                    const char *path) {
  static const char *op = "train.save";
  if (!m || !s || !pkg_bytes || !path)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, op, "NULL argument");
  dml_pkg_t pkg;
  DML_RETURN_IF_ERROR(dml_pkg_parse(pkg_bytes, pkg_size, &pkg));
  const dml_pkg_section_t *gs = dml_pkg_find_section(&pkg, "graph");
  const dml_pkg_section_t *ws = dml_pkg_find_section(&pkg, "weights");
  if (!gs || !ws)
    return dml_status_make(DML_STATUS_DATA_LOSS, op, "the package has no %s section",
                           gs ? "weights" : "graph");
  dml_pkg_graph_t *g = NULL;
  DML_RETURN_IF_ERROR(
      dml_pkg_graph_decode_version(gs->data, gs->size, pkg.format_version, ws->size, &g));
  uint32_t n_glob = dml_rt_model_num_globals(m);
  uint8_t *weights = (uint8_t *)malloc(ws->size ? ws->size : 1);
  uint8_t *found = (uint8_t *)calloc(n_glob ? n_glob : 1, 1);
  dml_pkg_writer_t *w = NULL;
  dml_status_t st = DML_OK;
  if (!weights || !found) {
    st = dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, op, "out of memory");
    goto out;
  }
  memcpy(weights, ws->data, ws->size);
  for (uint32_t fi = 0; fi < g->n_functions && !st; fi++) {
    const dml_pkg_function_t *fn = &g->functions[fi];
    for (uint32_t vi = 0; vi < fn->n_values && !st; vi++) {
      const dml_pkg_value_t *v = &fn->values[vi];
      if (v->storage != DML_PKG_STORAGE_CONST || !(v->flags & DML_PKG_VALUE_FLAGS_ALL) ||
          !v->name || !v->name[0])
        continue;
      int32_t gi = dml_rt_model_find_global(m, v->name);
      if (gi < 0) continue;
      dml_tensor_t cur;
      st = dml_rt_session_global(s, (uint32_t)gi, &cur);
      if (st) break;
      size_t nb = dml_tensor_bytes(&cur);
      if (nb > v->bytes || v->offset > ws->size || nb > ws->size - v->offset) {
        st = dml_status_make(
            DML_STATUS_FAILED_PRECONDITION, op,
            "global '%s' (%zu bytes) does not fit its %llu stored bytes in "
            "function '%s'",
            v->name, nb, (unsigned long long)v->bytes, fn->name);
        break;
      }
      memcpy(weights + v->offset, cur.data, nb);
      found[gi] = 1;
    }
  }
  for (uint32_t i = 0; i < n_glob && !st; i++)
    if (!found[i]) {
      dml_rt_global_info_t gi;
      st = dml_rt_model_global_info(m, i, &gi);
      if (!st)
        st =
            dml_status_make(DML_STATUS_FAILED_PRECONDITION, op,
                            "global '%s' is not stored in the package's weights (not the "
                            "package the model was loaded from?)",
                            gi.name);
    }
  if (!st) st = dml_pkg_writer_create(&w);
  for (uint32_t i = 0; i < pkg.n_sections && !st; i++) {
    const dml_pkg_section_t *sec = &pkg.sections[i];
    st = dml_pkg_writer_add_section(w, sec->tag, sec == ws ? weights : sec->data,
                                    (size_t)sec->size, sec->alignment);
  }
  if (!st) st = dml_pkg_writer_finish_file(w, path);
out:
  dml_pkg_writer_release(w);
  free(weights);
  free(found);
  dml_pkg_graph_release(g);
  return st ? dml_status_annotate(st, "saving the trained package '%s'", path) : DML_OK;
}
