/*
 * dml_train.h — build the training functions of a module (ARCHITECTURE.md,
 * "Training is compiled").
 *
 * dml_train_build() takes a module whose function `forward` maps the model
 * inputs to its outputs and adds two functions:
 *
 *   train_step(<forward inputs>..., target, lr: f32[])
 *       -> (loss: f32[], correct: i64[], total: i64[])
 *     forward in training mode (Dropout draws from the Philox stream of the
 *     run; BatchNormalization uses the batch statistics and updates its
 *     running mean/var globals, as PyTorch's train(): running var from the
 *     unbiased batch variance; LayerNormalization decomposed into primitive
 *     ops; FakeQuantize with a state range tracks that range as an
 *     exponential moving average of the batches' [min, max], PyTorch's
 *     MovingAverageMinMaxObserver, averaging constant 0.01; non-finite
 *     updates skipped), the loss, the backward pass by reverse-mode
 *     autodiff (passes/dml_autodiff.h), gradient clipping, the optimizer
 *     update.
 *     Parameters (globals flagged DML_IR_GLOBAL_PARAM), optimizer state and
 *     the step count (globals flagged DML_IR_GLOBAL_STATE) are updated in
 *     place by Assign nodes at the end of the function.
 *   eval_step(<forward inputs>..., target) -> (loss: f32[], correct, total)
 *     forward in inference mode and the same loss.
 *   forward itself is put in inference mode (a Dropout exported with
 *     training_mode = true becomes the identity there).
 *
 * `correct` and `total` (i64 scalars) count right predictions and
 * predictions made, so accuracy over several batches is sum(correct) /
 * sum(total): rows whose argmax over axis 1 equals the label for
 * cross_entropy and nll (argmax of the target for soft targets); elements
 * on the right side of 0 (logits) / 0.5 (probabilities) for the binary
 * losses. Regression losses (mse, mae, huber) have no correct/total.
 *
 * `loss` is the mean over the batch (and over every other element for the
 * elementwise losses), as PyTorch's reduction='mean'. `target` has the
 * forward output's batch dim: int64 class indices [N] (or [N, d...]) for
 * cross_entropy and nll, or class probabilities of the output's shape when
 * `soft_targets` is set; for the other losses, the output's shape and
 * dtype. `lr` is a runtime scalar so learning-rate schedules live in the
 * host loop.
 *
 * Names are stable so a runtime trainer can find them: inputs "target" and
 * "lr"; outputs "loss", "correct" and "total"; optimizer state globals
 * "<param>.<slot>" with slot one of momentum_buffer, exp_avg, exp_avg_sq,
 * square_avg, sum (PyTorch's torch.optim state names) and the step counter
 * "optimizer.step" (f32 scalar, number of updates done).
 *
 * Formulas: losses as torch.nn.functional (cross_entropy, nll_loss,
 * binary_cross_entropy[_with_logits], mse_loss, l1_loss, huber_loss);
 * optimizers as the algorithm boxes of the torch.optim documentation (SGD
 * with momentum/dampening 0/nesterov, Adam, AdamW, RMSprop, Adagrad), with
 * weight decay as each of them defines it.
 */
#ifndef DML_TRAIN_H_
#define DML_TRAIN_H_

#include "dml_ir.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum dml_loss_kind {
  DML_LOSS_CROSS_ENTROPY = 0, /* softmax cross-entropy from logits [N, C, ...] */
  DML_LOSS_NLL,               /* negative log-likelihood of log-probabilities */
  DML_LOSS_BCE_WITH_LOGITS,   /* binary cross-entropy from logits */
  DML_LOSS_BCE,               /* binary cross-entropy from probabilities */
  DML_LOSS_MSE,               /* mean squared error */
  DML_LOSS_MAE,               /* mean absolute error (L1) */
  DML_LOSS_HUBER,             /* Huber with threshold `huber_delta` */
} dml_loss_kind_t;

typedef enum dml_optimizer_kind {
  DML_OPTIMIZER_SGD = 0, /* momentum 0: p -= lr * g */
  DML_OPTIMIZER_MOMENTUM,
  DML_OPTIMIZER_NESTEROV,
  DML_OPTIMIZER_ADAM,
  DML_OPTIMIZER_ADAMW,
  DML_OPTIMIZER_RMSPROP,
  DML_OPTIMIZER_ADAGRAD,
} dml_optimizer_kind_t;

/* One trained output of a multi-output model (Keras' loss={name: ...}
 * with loss_weights): the forward result `name`, its loss, its weight. */
typedef struct dml_train_output {
  const char *name;     /* a forward result's name */
  dml_loss_kind_t loss; /* its loss */
  double weight;        /* >= 0, finite; 0: not trained (no target) */
} dml_train_output_t;

typedef struct dml_train_config {
  dml_loss_kind_t loss;
  /* Name of the forward result the loss reads; NULL: the first result. */
  const char *output;
  double huber_delta;     /* > 0; 0 means 1.0 */
  double label_smoothing; /* cross_entropy only, in [0, 1) */
  int soft_targets;       /* cross_entropy: target holds probabilities [N, C] */

  dml_optimizer_kind_t optimizer;
  double momentum;     /* MOMENTUM/NESTEROV (0 means 0.9), RMSprop (0 = none) */
  double beta1, beta2; /* Adam/AdamW; 0 means 0.9 / 0.999 */
  double epsilon;      /* Adam/AdamW/RMSprop 0 means 1e-8; Adagrad 0 means 1e-10 */
  double alpha;        /* RMSprop smoothing constant; 0 means 0.99 */
  double weight_decay; /* L2 added to the gradient; AdamW: decoupled; 0 means 0
                          except AdamW, where a negative value means 0 and 0
                          means PyTorch's default 1e-2 */

  double clip_norm;  /* > 0: scale gradients to global L2 norm <= clip_norm */
  double clip_value; /* > 0: clamp every gradient element to [-v, v] */

  /* Several trained outputs (multi-output models; 0: the single `loss` on
   * `output` above). When n_outputs > 0, `loss` is ignored, `output` must
   * be NULL (INVALID_ARGUMENT) and the functions are (M = the outputs of weight > 0, in
   * this order): train_step(<forward inputs>..., target.<o_1>, ..., target.<o_M>, lr)
   *   eval_step(<forward inputs>..., target.<o_1>, ..., target.<o_M>)
   *     -> (loss, then per output: loss.<o_j>[, correct.<o_j>, total.<o_j>])
   * with loss = sum_j weight_j * loss.<o_j> (each the batch mean of output
   * o_j's loss, as in the single case; Keras' total loss), the only value
   * differentiated. correct/total exist for the classification losses.
   * label_smoothing, soft_targets and huber_delta apply to every output.
   * Outputs not listed (or of weight 0) stay results of forward only.
   * Lent; names unique; at most DML_TRAIN_MAX_OUTPUTS. */
  uint32_t n_outputs;
  const dml_train_output_t *outputs;
} dml_train_config_t;

/* Most trained outputs of one model (= the trainer's DML_MAX_DATA_TENSORS). */
#define DML_TRAIN_MAX_OUTPUTS 8

/* The defaults of a training configuration, shared by the C API
 * (dml_train_config_init) and `dmlc train` / `dmlc compile --train`, which
 * read them from here; the fit's defaults (epochs, batch size, learning
 * rate, validation split) are dml_fit_options_init's (dml_trainer.h).
 * docs/training.md, "Defaults", lists both. */
#define DML_TRAIN_DEFAULT_LOSS DML_LOSS_CROSS_ENTROPY
#define DML_TRAIN_DEFAULT_OPTIMIZER DML_OPTIMIZER_ADAM

/* Fills `c` with the defaults: DML_TRAIN_DEFAULT_LOSS (cross_entropy),
 * DML_TRAIN_DEFAULT_OPTIMIZER (Adam, beta1 0.9, beta2 0.999, epsilon
 * 1e-8), no weight decay, no clipping. */
void dml_train_config_init(dml_train_config_t *c);

/* Parses "cross_entropy", "nll", "bce_with_logits", "bce", "mse", "mae"
 * ("l1"), "huber" / "sgd", "momentum", "nesterov", "adam", "adamw",
 * "rmsprop", "adagrad". Errors: INVALID_ARGUMENT listing the valid names. */
dml_status_t dml_loss_kind_parse(const char *s, dml_loss_kind_t *out);
dml_status_t dml_optimizer_kind_parse(const char *s, dml_optimizer_kind_t *out);
const char *dml_loss_kind_name(dml_loss_kind_t k);

/* Parses a loss per output, "OUT=LOSS[:WEIGHT],..." (the --loss of `dmlc
 * train` / `dmlc compile --train`; WEIGHT a finite number >= 0, default 1)
 * into out[0..*n) (at most DML_TRAIN_MAX_OUTPUTS); the names are copied
 * into buf (cap bytes) and point into it. Errors: INVALID_ARGUMENT naming
 * the part that is not OUT=LOSS[:WEIGHT], the unknown loss or the bad
 * weight. */
dml_status_t dml_train_outputs_parse(const char *spec, char *buf, size_t cap,
                                     dml_train_output_t *out, uint32_t *n);
const char *dml_optimizer_kind_name(dml_optimizer_kind_t k);

/* Adds train_step and eval_step to `m` (which must hold `forward`, shape
 * inference done). Errors: NOT_FOUND (no forward, no such output),
 * INVALID_ARGUMENT (an output listed twice, a negative or non-finite
 * weight, no weight > 0, more than DML_TRAIN_MAX_OUTPUTS),
 * INVALID_ARGUMENT (loss/output shape or dtype mismatch, bad config value),
 * UNIMPLEMENTED naming every op on the path from a parameter to the loss
 * that has no VJP rule, with its node name. */
dml_status_t dml_train_build(dml_ir_module_t *m, const dml_train_config_t *cfg);

#ifdef __cplusplus
}
#endif
#endif /* DML_TRAIN_H_ */
