/*
 * dml_trainer.h — training loop of a compiled package: fit, evaluate,
 * predict, learning-rate schedules, callbacks, checkpoints, saving.
 *
 * A training package (dmlc train, or dml_compile_options_t.train) holds
 * three functions sharing one set of globals (passes/dml_train.h):
 *
 *   forward(x) -> outputs...
 *   train_step(x, target, lr) -> loss            (updates the globals)
 *   eval_step(x, target) -> loss[, correct]
 *
 * A trainer opens one session of each on the same globals, so what
 * train_step learns is what eval_step and forward read.
 *
 *   dml_trainer_t *t;  dml_fit_options_t o;  dml_history_t h;
 *   dml_trainer_create(model, "cpu", &t);
 *   dml_fit_options_init(&o);  o.epochs = 3;  o.batch_size = 32;
 *   dml_trainer_fit(t, &train, &o, &h);
 *   dml_trainer_evaluate(t, &test, 0, &loss, &acc);
 *   dml_history_free(&h);  dml_trainer_release(t);
 *
 * Data: a dml_dataset_t is x [N, ...] (the dtype of the model's input) and
 * y [N] int64 class indices or [N, ...] f32 (the dtype and shape of
 * train_step's `target` per row); N rows, both C-contiguous, lent. A model
 * with several inputs and a loss per output (passes/dml_train.h,
 * dml_train_config_t.outputs) takes lists instead: inputs[0..n_inputs) in
 * the model's input order and targets[0..n_targets) in train_step's target
 * order (dml_trainer_input_info / dml_trainer_target_info), all of N rows,
 * shuffled and batched together.
 *
 * Symbolic row dims: a package compiled with other symbolic input dims
 * than the batch (dmlc train / dmlc compile --train --dim-bound H=64,W=64)
 * takes data sets of any size within the bounds. Each data set has one
 * size: its arrays' dims bind the symbols (dim = multiplier * symbol, a
 * positive multiple) for every batch drawn from it, and the validation
 * data may have another. A symbol over its compiled bound is OUT_OF_RANGE,
 * two arrays giving one symbol two values (or a dim that is not a
 * multiple of its multiplier) INVALID_ARGUMENT, each naming the array, the
 * dim, the symbol and its bound; the batch symbol in a non-batch dim is
 * UNIMPLEMENTED at create. To train at several sizes, fit one data set,
 * then another (a second fit with a larger `epochs`, or a checkpoint and
 * a resumed run: dmlc train --resume with the other --data).
 *
 * Determinism: epoch e (0-based) visits the training rows in the order of
 * dml_train_permutation(N, seed, e) when shuffling; the last batch of an
 * epoch holds the N % batch_size remaining rows (the packages' batch dim is
 * symbolic); train step k (0-based, counted over the whole run) runs with
 * dml_rt_session_set_seed(seed, k), so dropout and other random ops draw
 * the same numbers. Losses are accumulated in double in a fixed order. Same
 * package, seed, data and options: bit-identical losses on every run, and
 * a run resumed from a checkpoint continues exactly as the uninterrupted
 * one would.
 *
 * Threading: a trainer belongs to one thread at a time.
 * Errors (op "train"): INVALID_ARGUMENT for bad options or data (named),
 * NOT_FOUND / FAILED_PRECONDITION for a package without train_step or
 * eval_step, UNIMPLEMENTED for a model with more than DML_MAX_DATA_TENSORS
 * inputs or targets, the
 * runtime's errors annotated with the epoch and step, IO / DATA_LOSS for
 * checkpoints (dml_safetensors.h).
 */
#ifndef DML_TRAINER_H_
#define DML_TRAINER_H_

#include <stdint.h>
#include <stdio.h>

#include "dml_metrics.h"
#include "dml_rt.h"
#include "dml_status.h"
#include "dml_types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ===================================================================== */
/* Learning-rate schedules (per epoch)                                   */
/* ===================================================================== */

/* The learning rate of epoch e (0-based), as torch.optim.lr_scheduler
 * (https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate)
 * stepped once per epoch:
 *   CONSTANT     lr_e = initial
 *   STEP         lr_e = initial * factor^floor(e / every)          (StepLR)
 *   EXPONENTIAL  lr_e = initial * rate^e                      (ExponentialLR)
 *   COSINE       lr_e = minimum + (initial - minimum)
 *                       * (1 + cos(pi * e / T)) / 2    (CosineAnnealingLR's
 *                closed form, T = total epochs), with `warmup` epochs first:
 *                lr_e = initial * (e + 1) / (warmup + 1) for e < warmup
 *                (LinearLR, start_factor 1/(warmup+1), total_iters warmup),
 *                then the cosine over e - warmup with T = total - warmup
 *                (SequentialLR with milestone warmup).
 *   PLATEAU      Keras' ReduceLROnPlateau (torch's reduces one epoch later,
 *                after more than `patience` bad epochs): starts at
 *                `initial`; after each epoch the fit's monitored value
 *                (dml_fit_options_t.monitor) updates the
 *                dml_lr_plateau_state_t below, which multiplies the rate by
 *                `factor` (never below `minimum`) after `patience` epochs
 *                without an improvement of more than `min_delta`, then waits
 *                `cooldown` epochs before counting again (as in Keras, the
 *                epoch whose count-down ends the cooldown already counts
 *                toward patience). The rate depends on
 *                the values seen, so dml_lr_schedule_at() gives `initial`;
 *                the history's `lr` column shows each epoch's rate. */
typedef enum dml_lr_schedule_kind {
  DML_LR_CONSTANT = 0,
  DML_LR_STEP,
  DML_LR_EXPONENTIAL,
  DML_LR_COSINE,
  DML_LR_PLATEAU,
} dml_lr_schedule_kind_t;

typedef struct dml_lr_schedule {
  dml_lr_schedule_kind_t kind;
  double initial; /* > 0 */
  int32_t every;  /* STEP: epochs between decays, >= 1 */
  double factor;  /* STEP: multiplier, > 0 */
  double rate;    /* EXPONENTIAL: multiplier per epoch, > 0 */
  double minimum; /* COSINE: final lr; PLATEAU: min_lr; 0 <= minimum <= initial */
  int32_t warmup; /* COSINE: warm-up epochs, >= 0 */
  /* PLATEAU: factor (above) in (0, 1); epochs without improvement before a
   * reduction, >= 0 (Keras' default 10); epochs after a reduction before
   * counting again, >= 0; the improvement that counts, >= 0 (Keras' 1e-4) */
  int32_t patience, cooldown;
  double min_delta;
} dml_lr_schedule_t;

/* lr of epoch `epoch` (0-based) of a run of `total_epochs` epochs. */
double dml_lr_schedule_at(const dml_lr_schedule_t *s, int32_t epoch,
                          int32_t total_epochs);

/* Checks the fields of `s` for its kind. Errors: INVALID_ARGUMENT naming
 * the field. */
dml_status_t dml_lr_schedule_check(const dml_lr_schedule_t *s);

/* Parses the CLI spelling: "constant:LR", "step:INITIAL,EVERY,FACTOR",
 * "exponential:INITIAL,RATE" (or "exp:"), "cosine:INITIAL,MINIMUM[,WARMUP]",
 * "plateau:INITIAL,FACTOR,PATIENCE[,MIN_LR[,COOLDOWN[,MIN_DELTA]]]"
 * (defaults min_lr 0, cooldown 0, min_delta 1e-4).
 * Errors: INVALID_ARGUMENT with the expected forms. */
dml_status_t dml_lr_schedule_parse(const char *spec, dml_lr_schedule_t *out);

/* The state of a PLATEAU schedule (Keras' ReduceLROnPlateau.on_epoch_end,
 * https://keras.io/api/callbacks/reduce_lr_on_plateau/): `maximize` 0 for
 * losses, 1 for accuracies. */
typedef struct dml_lr_plateau_state {
  double lr;   /* the rate of the next epoch */
  double best; /* best monitored value so far (+-inf before the first) */
  int32_t wait, cooldown_counter;
  int maximize;
} dml_lr_plateau_state_t;

void dml_lr_plateau_init(dml_lr_plateau_state_t *p, const dml_lr_schedule_t *s,
                         int maximize);
/* Feeds an epoch's monitored value; returns 1 when it lowered p->lr. A NaN
 * value never improves. */
int dml_lr_plateau_update(dml_lr_plateau_state_t *p, const dml_lr_schedule_t *s,
                          double value);

/* ===================================================================== */
/* Shuffling                                                             */
/* ===================================================================== */

/* Fills perm[0..n) with the permutation of epoch `epoch` under `seed`:
 * Fisher-Yates (Knuth, TAOCP vol. 2, 3.4.2, algorithm P) from i = n-1 down
 * to 1, swapping i with j = floor(u_i * (i + 1)), u_i the 53-bit uniform
 * element i of the Philox stream (seed, step = epoch, stream 0xFFFFFFFF)
 * of dml_philox.h. Depends on (n, seed, epoch) only. */
void dml_train_permutation(int64_t n, uint64_t seed, uint64_t epoch, int64_t *perm);

/* ===================================================================== */
/* Early stopping                                                        */
/* ===================================================================== */

/* The state machine of Keras' EarlyStopping: a value improves when it is
 * below best - min_delta (mode min) or above best + min_delta (mode max);
 * after `patience` epochs in a row without improvement, stop. */
typedef struct dml_early_stopping_state {
  int maximize;     /* 0: lower is better (losses), 1: higher (accuracies) */
  double min_delta; /* >= 0 */
  int32_t patience; /* >= 0 */
  double best;      /* best value so far (+-inf before the first) */
  int32_t best_epoch, wait;
} dml_early_stopping_state_t;

void dml_early_stopping_init(dml_early_stopping_state_t *s, int maximize,
                             double min_delta, int32_t patience);
/* Feeds epoch `epoch`'s monitored value. Sets *out_improved (1 when the
 * value is the new best) and returns 1 when training should stop. A NaN
 * value never improves. */
int dml_early_stopping_update(dml_early_stopping_state_t *s, int32_t epoch, double value,
                              int *out_improved);

/* ===================================================================== */
/* Data, history, options                                                */
/* ===================================================================== */

/* Most inputs, and most targets (trained outputs), of a trained model
 * (passes/dml_train.h's DML_TRAIN_MAX_OUTPUTS). */
#define DML_MAX_DATA_TENSORS 8

typedef struct dml_dataset {
  dml_tensor_t x; /* [N, ...]: the model's input (n_inputs == 0) */
  dml_tensor_t y; /* [N] or [N, ...]: the target (n_targets == 0) */
  /* Several inputs / targets: when x is empty (rank 0, data NULL: zero
   * the struct) and n_inputs > 0, inputs[i] is model input i
   * (dml_trainer_input_info's order); when y is empty and n_targets > 0,
   * targets[j] is train_step's target j (dml_trainer_target_info: the
   * labels of one trained output). A data set with x and y set never
   * reads these (they may be left uninitialized). Every tensor has the
   * same N rows; at most DML_MAX_DATA_TENSORS of each. */
  int32_t n_inputs, n_targets;
  dml_tensor_t inputs[DML_MAX_DATA_TENSORS];
  dml_tensor_t targets[DML_MAX_DATA_TENSORS];
} dml_dataset_t;

/* Rows [begin, end) of `d` as views (no copy), every tensor of it.
 * Errors: INVALID_ARGUMENT (tensors of different row counts),
 * OUT_OF_RANGE. */
dml_status_t dml_dataset_slice(const dml_dataset_t *d, int64_t begin, int64_t end,
                               dml_dataset_t *out);

/* One epoch's results. Metrics that do not exist (no validation data, no
 * `correct` output) are NaN. */
typedef struct dml_epoch_metrics {
  int32_t epoch;             /* 1-based */
  int32_t epochs;            /* of the run */
  uint64_t step;             /* train steps done after this epoch */
  double loss;               /* mean training loss over the epoch's rows */
  double accuracy;           /* training rows predicted right (train_step `correct`) */
  double val_loss;           /* evaluate() on the validation data */
  double val_accuracy;       /* evaluate() on the validation data */
  double lr;                 /* learning rate of the epoch */
  double seconds;            /* wall time of the epoch (training + validation) */
  double samples_per_second; /* training rows / training time */
  /* The fit's table metrics (dml_fit_options_t.metrics), in its order: on
   * the validation data after the epoch, or on the training rows (after
   * the epoch, with its final weights) when there is none. */
  double metrics[DML_MAX_METRICS];
  /* Multi-output packages (dml_history_t.n_outputs > 0), per trained
   * output j (train_step's target order): its mean loss (unweighted) and
   * accuracy on the training rows and on the validation data (NaN when
   * absent). `loss` above is then sum_j weight_j * output_loss[j] and
   * `accuracy` the accuracy of the first output that has one. */
  double output_loss[DML_MAX_DATA_TENSORS], output_accuracy[DML_MAX_DATA_TENSORS];
  double val_output_loss[DML_MAX_DATA_TENSORS], val_output_accuracy[DML_MAX_DATA_TENSORS];
} dml_epoch_metrics_t;

typedef struct dml_history {
  int32_t n_epochs;
  dml_epoch_metrics_t *epochs; /* malloc'd; dml_history_free() */
  int32_t stopped_early;       /* 1 when early stopping or the callback ended it */
  int32_t best_epoch;          /* early stopping's best epoch (1-based), 0 if none */
  int32_t restored;            /* 1 when the best epoch's globals were restored */
  /* The table metrics of the epochs' metrics[] (dml_fit_options_t). */
  int32_t n_metrics;
  dml_metric_t metric[DML_MAX_METRICS];
  /* Which data the val_ columns (and the table metrics) come from:
   * "split" (dml_fit_options_t.validation_split), the fit's
   * validation_label or "validation" for o->validation; "" without
   * validation data (table metrics then on the training rows). */
  char validation[32];
  /* Multi-output packages: the trained outputs' names (0 outputs for a
   * single-loss package), whether each has an accuracy, and the output
   * each table metric reads ("" for dml_fit_options_t.metrics_output
   * unnamed). */
  int32_t n_outputs;
  char output[DML_MAX_DATA_TENSORS][48];
  int32_t output_has_accuracy[DML_MAX_DATA_TENSORS];
  char metric_output[DML_MAX_METRICS][48];
} dml_history_t;

void dml_history_free(dml_history_t *h);

/* Writes the history as CSV: "epoch,loss,accuracy,val_loss,val_accuracy,lr,
 * seconds,validation", for a multi-output package per trained output O
 * "O_loss[,O_accuracy],val_O_loss[,val_O_accuracy]" (accuracy columns for
 * the outputs that have one), then one column per table metric (named
 * "val_" NAME on validation data, NAME on the training rows; "val_O_" NAME
 * for a metric on output O named in metric_output), then one line per
 * epoch ("" for NaN; `validation` is h->validation), atomically.
 * Errors: IO. */
dml_status_t dml_history_write_csv(const dml_history_t *h, const char *path);

/* Called after each epoch with its metrics, before early stopping reads
 * them: it may overwrite the metrics (e.g. with a validation metric of its
 * own; early stopping and the history then see those). Return nonzero to
 * stop training after this epoch. */
typedef int (*dml_epoch_callback_fn)(dml_epoch_metrics_t *metrics, void *user_data);

/* One training step's result, for the per-batch callback. */
typedef struct dml_batch_metrics {
  int32_t epoch;   /* 1-based */
  int64_t batch;   /* 1-based within the epoch */
  int64_t batches; /* in the epoch */
  uint64_t step;   /* train steps done, this one included */
  int64_t rows;    /* rows of this batch */
  double loss;     /* this batch's mean loss */
  double lr;       /* the rate it ran with */
} dml_batch_metrics_t;

/* Called after each training step (Keras' on_train_batch_end). Return
 * nonzero to stop training after this step: the epoch ends there (its
 * metrics over the rows trained, validation and the epoch callback run as
 * usual) and the history says stopped_early. */
typedef int (*dml_batch_callback_fn)(const dml_batch_metrics_t *metrics, void *user_data);

typedef enum dml_monitor {
  DML_MONITOR_AUTO = 0, /* val_loss when there is validation data, else loss */
  DML_MONITOR_LOSS,
  DML_MONITOR_VAL_LOSS,
  DML_MONITOR_ACCURACY,
  DML_MONITOR_VAL_ACCURACY,
} dml_monitor_t;

/* Parses "loss", "val_loss", "accuracy", "val_accuracy", "auto". */
dml_status_t dml_monitor_parse(const char *s, dml_monitor_t *out);

/* Optimizer hyper-parameters and clipping thresholds set at fit (Keras'
 * optimizer arguments, torch.optim's): each is a run-time scalar of the
 * package, the f32 global "hyper.NAME" that train_step reads
 * (passes/train.c), holding the value it was compiled with until a fit
 * sets another. NaN: keep the package's current value. A package has only
 * those its optimizer and clipping use (weight_decay, momentum of RMSprop
 * and the clipping thresholds only when compiled nonzero, since a zero one
 * builds no term); setting one it lacks, or any in a package compiled
 * before these existed, is FAILED_PRECONDITION naming it. Ranges: momentum,
 * beta1, beta2, alpha in [0, 1); epsilon > 0; weight_decay >= 0;
 * clip_norm, clip_value > 0. A value set stays in the globals: later fits,
 * checkpoints and the saved package keep it. */
typedef struct dml_fit_hyper {
  double momentum, beta1, beta2, epsilon, alpha, weight_decay, clip_norm, clip_value;
} dml_fit_hyper_t;

typedef struct dml_fit_options {
  int32_t epochs;       /* total epochs of the run (a resumed run continues to it) */
  int64_t batch_size;   /* 1..the package's batch bound */
  int shuffle;          /* 1: shuffle every epoch (default) */
  uint64_t seed;        /* shuffling and random ops */
  dml_lr_schedule_t lr; /* default: constant 1e-3 */

  const dml_dataset_t *validation; /* lent; NULL: the split (or none) */
  double validation_split;         /* in [0, 1): the last rows of the data validate
                                      and are not trained on; ignored when
                                      `validation` is given; 0: none */
  int64_t eval_batch_size;         /* 0: the batch bound */

  int verbose; /* 0 silent, 1: progress bar on a terminal, one line per epoch
                  otherwise */
  FILE *log;   /* where verbose output goes; NULL: stdout */

  /* Early stopping: enabled when patience > 0. `monitor` is also what a
   * PLATEAU learning-rate schedule watches. */
  int32_t patience;
  double min_delta;
  dml_monitor_t monitor;
  int restore_best; /* 1: on stop, restore the globals of the best epoch */

  /* Checkpoints: every `checkpoint_every` epochs (0: never) into
   * checkpoint_dir/epoch-NNNN.safetensors (created if missing). */
  int32_t checkpoint_every;
  const char *checkpoint_dir;

  dml_epoch_callback_fn callback; /* may be NULL */
  void *user_data;
  dml_batch_callback_fn batch_callback; /* may be NULL; gets user_data too */

  /* The run's configuration as one string (lent; NULL: none), stored in
   * every checkpoint as metadata "config" so that a resumed run can be
   * compared with it (dmlc train --resume: "seed=0 batch_size=32 ..."). */
  const char *run_config;

  /* Metrics besides loss and accuracy (dml_metrics.h; dml_metrics_parse
   * fills them), computed each epoch from forward's output
   * `metrics_output` (0: the first) on the validation data, or on the
   * training rows without validation data. */
  int32_t n_metrics;
  dml_metric_t metrics[DML_MAX_METRICS];
  uint32_t metrics_output;
  /* Per metric, the name of the forward output it reads (NULL: output
   * metrics_output of a single-loss package; with a loss per output, the
   * only trained output, or INVALID_ARGUMENT asking for the name when
   * several are trained); its targets are those of that output's loss (a
   * multi-output package; an output without a loss is INVALID_ARGUMENT),
   * or y for a single-loss package. Lent. */
  const char *metric_output[DML_MAX_METRICS];
  /* What o->validation is, for the history (lent; NULL: "validation";
   * e.g. "test"). At most 31 characters, no comma. */
  const char *validation_label;

  /* Hyper-parameters to set before the first step (all NaN by default:
   * the package's). */
  dml_fit_hyper_t hyper;
} dml_fit_options_t;

/* The fit's defaults, shared by the C API (dml_fit_options_init) and
 * `dmlc train`, which reads them from here (docs/training.md, "Defaults";
 * the loss and optimizer are dml_train_config_init's, passes/dml_train.h). */
#define DML_FIT_DEFAULT_EPOCHS 10
#define DML_FIT_DEFAULT_BATCH_SIZE 32
#define DML_FIT_DEFAULT_LR 1e-3
#define DML_FIT_DEFAULT_VALIDATION_SPLIT 0.1

/* Defaults: DML_FIT_DEFAULT_EPOCHS (10) epochs, batch 32, shuffle, seed 0,
 * constant lr 1e-3, validation_split 0.1 (the last 10% of the rows, unless
 * o->validation is given), verbose 1, early stopping off (monitor auto,
 * restore_best 1), no checkpoints, no callback, no table metrics. */
void dml_fit_options_init(dml_fit_options_t *o);

/* ===================================================================== */
/* Trainer                                                               */
/* ===================================================================== */

typedef struct dml_trainer dml_trainer_t;

/* Opens train_step, eval_step and forward of `m` on `device` sharing one
 * writable copy of the globals (initialized from the package). `m` must
 * outlive the trainer. `device`: "cpu" (NULL), "vulkan[:N]" or "cuda[:N]";
 * on a GPU device the three sessions share the device's copy of the
 * globals, which train_step's kernels update in place, and the package must
 * hold that target's kernels for all three functions (`dmlc train --device`
 * compiles them); checkpoints, best-weight snapshots and the saved package
 * read the globals back from the device (dml_rt_session_global), and
 * restored values are uploaded before the next step. Errors: NOT_FOUND (a
 * function missing),
 * FAILED_PRECONDITION (globals not writable, no `loss` output, inputs not
 * named as dml_train.h says), UNIMPLEMENTED (more than DML_MAX_DATA_TENSORS model
 * inputs or targets),
 * the runtime's errors. */
dml_status_t dml_trainer_create(const dml_rt_model_t *m, const char *device,
                                dml_trainer_t **out_trainer);
void dml_trainer_release(dml_trainer_t *t);

/* The sessions (lent): "train_step", "eval_step", "forward"; NULL else. */
dml_rt_session_t *dml_trainer_session(dml_trainer_t *t, const char *function);
/* Largest batch the package accepts (the bound of the input's batch dim). */
int64_t dml_trainer_batch_bound(const dml_trainer_t *t);
/* The types of the model input x and of `target` (train_step's; lent by
 * the model): the first input and the first target. */
void dml_trainer_io_info(const dml_trainer_t *t, dml_rt_io_info_t *out_x,
                         dml_rt_io_info_t *out_target);
/* The model's inputs (forward's, in its order) and train_step's targets
 * (one per trained output, in its order): how many, and the type of each
 * (names lent by the model: the input's name; "target" for a single-loss
 * package, "target.O" for the loss on output O). */
int32_t dml_trainer_num_inputs(const dml_trainer_t *t);
int32_t dml_trainer_num_targets(const dml_trainer_t *t);
/* Errors: OUT_OF_RANGE. */
dml_status_t dml_trainer_input_info(const dml_trainer_t *t, int32_t i,
                                    dml_rt_io_info_t *out);
dml_status_t dml_trainer_target_info(const dml_trainer_t *t, int32_t j,
                                     dml_rt_io_info_t *out);
/* The forward output whose labels target j holds ("O" of "target.O"), or
 * NULL for a single-loss package's "target" (dml_train_config_t.output)
 * and j out of range. */
const char *dml_trainer_target_output(const dml_trainer_t *t, int32_t j);
/* The package's current hyper-parameters ("hyper.NAME" globals); NaN for
 * those it does not have. */
void dml_trainer_hyper(dml_trainer_t *t, dml_fit_hyper_t *out);
/* Epochs and train steps done (by fit or restored by a checkpoint). */
int32_t dml_trainer_epoch(const dml_trainer_t *t);
uint64_t dml_trainer_step(const dml_trainer_t *t);

/* Trains from epoch dml_trainer_epoch(t) to o->epochs (see the top of
 * this file): o->epochs is the total, so a second fit (or one after a
 * checkpoint) continues; with nothing left (dml_trainer_epoch(t) >=
 * o->epochs) it is FAILED_PRECONDITION "already trained N epochs; epochs (M)
 * is the total to reach", training nothing. Fills *out_history (may be
 * NULL) with the epochs run. On an error the globals hold the last
 * completed step. Errors: as above. */
dml_status_t dml_trainer_fit(dml_trainer_t *t, const dml_dataset_t *train,
                             const dml_fit_options_t *o, dml_history_t *out_history);

/* eval_step over `d` in batches of `batch_size` (0: the bound): the mean
 * loss weighted by rows, and the accuracy: sum of `correct` over the target
 * elements for integer targets, over the rows for others (NaN when
 * eval_step has no `correct`). Either output may be NULL. */
dml_status_t dml_trainer_evaluate(dml_trainer_t *t, const dml_dataset_t *d,
                                  int64_t batch_size, double *out_loss,
                                  double *out_accuracy);
/* As evaluate, with each trained output's mean loss (unweighted) and
 * accuracy into out_losses[j] / out_accuracies[j], j <
 * dml_trainer_num_targets(t) (NaN where eval_step has none; a single-loss
 * package: the loss and the accuracy). `out_loss` is the weighted total,
 * `out_accuracy` the first output's accuracy that exists. Any output may
 * be NULL. */
dml_status_t dml_trainer_evaluate_outputs(dml_trainer_t *t, const dml_dataset_t *d,
                                          int64_t batch_size, double *out_loss,
                                          double *out_accuracy, double *out_losses,
                                          double *out_accuracies);

/* forward on x [N, ...] with the current globals: output `output` (0 for
 * the first) for all N rows, in *out (data in *out_buffer, malloc'd;
 * free() it). Errors: INVALID_ARGUMENT, OUT_OF_RANGE, the runtime's. */
dml_status_t dml_trainer_predict(dml_trainer_t *t, const dml_tensor_t *x, uint32_t output,
                                 dml_tensor_t *out, void **out_buffer);
/* As predict, on the inputs of `d` (its x, or inputs[0..n_inputs) for a
 * model of several inputs; targets unused). */
dml_status_t dml_trainer_predict_data(dml_trainer_t *t, const dml_dataset_t *d,
                                      uint32_t output, dml_tensor_t *out,
                                      void **out_buffer);

/* Writes every global (parameters and optimizer state) to `path` as
 * safetensors, atomically, with metadata format "dmlc-train-checkpoint-1",
 * epoch, step, seed (and "config": the fit's run_config, when a fit with
 * one writes it). Errors: IO, RESOURCE_EXHAUSTED. */
dml_status_t dml_trainer_save_checkpoint(dml_trainer_t *t, const char *path,
                                         uint64_t seed);
/* Restores every global and the epoch/step counters from a checkpoint
 * written by save_checkpoint (for the same package). On error nothing is
 * changed. Errors: DATA_LOSS / NOT_FOUND / IO from reading;
 * FAILED_PRECONDITION naming a global that is missing, extra, or of
 * another dtype or shape, or bad metadata. */
dml_status_t dml_trainer_load_checkpoint(dml_trainer_t *t, const char *path);

/* Writes the package `pkg_bytes` (`pkg_size` bytes: the package model `m`,
 * the model of session `s`, was loaded from) to `path` with the session's current global
 * values in place of the stored ones: every CONST value of every function named as a
 * global gets the global's bytes at its offset in "weights"; all other sections are
 * copied unchanged and the CRCs recomputed. Atomic (temporary file, fsync, rename).
 * Errors: DATA_LOSS (bytes not a valid package), FAILED_PRECONDITION (a global missing
 * from the package or of another size), IO, RESOURCE_EXHAUSTED. */
dml_status_t dml_train_save_package(const dml_rt_model_t *m, dml_rt_session_t *s,
                                    const void *pkg_bytes, size_t pkg_size,
                                    const char *path);

#ifdef __cplusplus
}
#endif
#endif /* DML_TRAINER_H_ */
