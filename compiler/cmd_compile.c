/* cmd_compile.c — `dmlc compile MODEL.onnx -o OUT.dmlpkg [--target cpu] [--batch-bound
 * N] [--bind NAME=FILE.npy]... [--train [--loss NAME] [--optimizer NAME] ...]`. */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dml_dim_spec.h"
#include "dml_driver.h"
#include "dml_file.h"
#include "dml_npy.h"
#include "dml_onnx.h"
#include "dml_train.h"
#include "dmlc_cmds.h"

#define DML_STR_(x) #x
#define DML_STR(x) DML_STR_(x)

static void usage(FILE *f) {
  fprintf(
      f,
      "usage: dmlc compile MODEL.onnx -o OUT.dmlpkg [--target LIST] [--batch-bound N]\n"
      "                    [--bind NAME=FILE.npy]... [--print-ir-after=PASS]\n"
      "                    [--print-ir-after-all] [--print-kernels]\n"
      "                    [--cuda-arch ptx|sm_XX,...] [--allow-tf32] [--progress]\n"
      "                    [--precision f32|f16|bf16]\n"
      "                    [--no-cpu-fallback]\n"
      "                    [--train [--loss NAME] [--optimizer NAME] ...]\n\n"
      "Compiles an ONNX model (opsets " DML_STR(DML_ONNX_OPSET_MIN) "-" DML_STR(
          DML_ONNX_OPSET_MAX) " of the default domain) into a .dmlpkg package: import,\n"
      "shape inference, constant folding, CSE, DCE, memory planning, then the package.\n\n"
      "  -o, --output FILE        the package to write (replaced atomically)\n"
      "  --target LIST            comma-separated targets: cpu (always in the package),\n"
      "                           vulkan (SPIR-V kernels), metal (MSL kernels), cuda\n"
      "                           (PTX and cubins, via clang-16 and ptxas); a\n"
      "                           function a GPU target cannot emit (an op, dtype or\n"
      "                           form it lacks, strings, run-time control flow) runs\n"
      "                           on the host (CPU kernels) in that device's sessions,\n"
      "                           with a note on stderr (dmlc inspect lists them)\n"
      "  --no-cpu-fallback        a GPU target fails listing what it cannot emit\n"
      "                           instead of placing functions on the host\n"
      "  --cuda-arch LIST         cuda: cubins for each sm_XX of LIST (needs ptxas) and\n"
      "                           PTX for the lowest, or 'ptx' for PTX (sm_80) only;\n"
      "                           default: PTX, plus sm_80 and sm_90 cubins when\n"
      "                           ptxas is found (DMLC_PTXAS, /usr/local/cuda/bin, "
      "PATH)\n"
      "  --allow-tf32             cuda: GEMM kernels on TF32 tensor cores (sm_80+:\n"
      "                           mma.sync; sm_90 also wgmma, unless --cuda-arch\n"
      "                           lacks sm_90), operands cut to 10 mantissa bits\n"
      "                           (results differ from f32 by about 1e-3 relative)\n"
      "  --precision f32|f16|bf16 GPU targets: values and weights of elementwise ops,\n"
      "                           data movement, Gemm/MatMul and Conv (f32\n"
      "                           accumulation), pools, BatchNorm, LayerNorm and\n"
      "                           InstanceNorm (statistics in f32) stored in 16 bits\n"
      "                           (weights converted in the package); Softmax,\n"
      "                           GroupNorm and reductions stay f32; inputs and\n"
      "                           outputs keep the model's dtypes (default f32;\n"
      "                           docs/kernels.md \"Reduced precision\")\n"
      "  --batch-bound N          upper bound of symbolic dims such as the batch\n"
      "                           (default 64); any batch up to N runs without\n"
      "                           recompiling\n"
      "  --dim-bound NAME=N,...   upper bound of the symbolic input dims named NAME\n"
      "                           (ONNX dim_param, or INPUT_dimK for an unnamed dim\n"
      "                           K): image height/width, sequence length, audio\n"
      "                           samples; memory is planned at the bounds and any\n"
      "                           size within them runs without recompiling (a\n"
      "                           larger one fails naming the dim and its bound).\n"
      "                           --dim-bound N alone: the bound of every other\n"
      "                           symbolic dim (as --batch-bound). A dim_param K*h\n"
      "                           (PyTorch's \"2*h\") is K times symbol h: bound it\n"
      "                           as h=N or as 2*h=N (h <= N/2, rounded down); other\n"
      "                           expressions (h+1) are one opaque symbol named by\n"
      "                           their spelling (docs/symbolic-dims.md). Repeatable\n"
      "  --input-shape NAME=SHAPE input NAME's shape as D0xD1x...: a number fixes a\n"
      "                           dim, [MIN:MAX] keeps it symbolic with bound MAX\n"
      "                           (e.g. x=1x3x[32:640]x[32:1280]); MIN (default 1)\n"
      "                           is checked against the model's windows at compile\n"
      "                           time; [MIN:MAX:STEP] also makes it a multiple of\n"
      "                           STEP (e.g. [32:1280:32] for a detector whose\n"
      "                           upsampled maps must meet their skip connections;\n"
      "                           on a dim declared K*h, STEP is a multiple of K,\n"
      "                           K when not given). A Reshape whose -1 dim needs\n"
      "                           such a step is refused naming the --input-shape\n"
      "                           that works. Repeatable\n"
      "  --dynamic-dim-bound N    upper bound of an output dim that depends on a shape\n"
      "                           input computed at run time (Expand's shape, Tile's\n"
      "                           repeats, Resize's scales, Pad's pads, Range, ...)\n"
      "                           where no input shape bounds it (default 4096)\n"
      "  --dynamic-max-elements N most elements planned for a value whose dims depend\n"
      "                           on run-time shape inputs (default 16777216); a run\n"
      "                           that needs more fails with OUT_OF_RANGE\n"
      "  --bind NAME=FILE.npy     compile graph input NAME as a constant holding the\n"
      "                           tensor in FILE.npy (its declared dtype and rank):\n"
      "                           specializes the model on a shape input's value\n"
      "                           (static shapes, exact memory), and is needed where\n"
      "                           an output's rank depends on the value. NAME is then\n"
      "                           no longer an input of the package. Repeatable\n"
      "  --print-ir-after=PASS    dump the IR to stderr after PASS (see dmlc opt "
      "--list-passes)\n"
      "  --print-ir-after-all     dump the IR to stderr after every pass\n"
      "  --print-kernels          print the GPU kernels (kernel IR) to stdout: each\n"
      "                           kernel, its grid and the graph nodes it holds\n"
      "\n"
      "training package (untrained; what `dmlc train` compiles before training,\n"
      "for training elsewhere with the runtime only, e.g. bench/dml_train_bench):\n"
      "  --train                  add train_step and eval_step (docs/training.md);\n"
      "                           forward is then in inference mode\n"
      "  --loss NAME              cross_entropy (default), nll, bce_with_logits, bce,\n"
      "                           mse, mae, huber; a loss per output:\n"
      "                           OUT=NAME[:WEIGHT],... (as dmlc train's)\n"
      "  --loss-output NAME       model output the loss reads (default: the first)\n"
      "  --optimizer NAME         sgd, momentum, nesterov, adam (default), adamw,\n"
      "                           rmsprop, adagrad (the learning rate is an input of\n"
      "                           train_step, given when training)\n"
      "  --momentum F             momentum (momentum/nesterov: default 0.9; rmsprop)\n"
      "  --weight-decay F         weight decay (AdamW: decoupled, default 1e-2)\n"
      "  --clip-norm F            scale gradients to a global L2 norm <= F\n"
      "  --clip-value F           clamp every gradient element to [-F, F]\n"
      "  --progress               a progress line on stderr (the stage and the time)\n"
      "                           once the compile takes more than a second: by\n"
      "                           default only when stderr is a terminal and no IR\n"
      "                           or kernels are printed (on a terminal the\n"
      "                           line is rewritten in place and cleared at the end);\n"
      "                           with --progress elsewhere too, as plain lines (at\n"
      "                           each stage and every 10 s). The environment\n"
      "                           variable DMLC_PROGRESS_AFTER_MS replaces the\n"
      "                           second of waiting (in ms; 0: at once)\n"
      "  -h, --help               this text\n");
}

/* ---- the CPU fall-back's notes (dml_compile_options_t.note) ---- */

typedef struct fallback_notes {
  char *text; /* lines for stderr, malloc'd */
  size_t len;
} fallback_notes_t;

/* Collects "note: ..." for placement line `line` ("<target>\t<function>\t<why>"). */
static void fallback_note(void *ctx, const char *line) {
  fallback_notes_t *n = (fallback_notes_t *)ctx;
  const char *t1 = strchr(line, '\t'), *t2 = t1 ? strchr(t1 + 1, '\t') : NULL;
  if (!t2) return;
  char buf[768];
  int k = snprintf(buf, sizeof buf,
                   "note: CPU fall-back: target '%.*s', function '%.*s': %.400s%s "
                   "(--no-cpu-fallback: an error instead)\n",
                   (int)(t1 - line), line, (int)(t2 - t1 - 1), t1 + 1, t2 + 1,
                   strlen(t2 + 1) > 400 ? "..." : "");
  if (k <= 0) return;
  size_t m = (size_t)k < sizeof buf ? (size_t)k : sizeof buf - 1;
  char *t = (char *)realloc(n->text, n->len + m + 1);
  if (!t) return;
  memcpy(t + n->len, buf, m);
  n->len += m;
  t[n->len] = 0;
  n->text = t;
}

/* ---- the progress line ---- */

struct dmlc_progress {
  pthread_t thread;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  const char *what;
  char stage[96], shown[96]; /* the current stage; the one last printed */
  int done, tty, printed;
  struct timespec t0;
  double last_line; /* seconds at the last plain line */
  double after;     /* seconds before the first line */
};

static double since(const struct timespec *t0) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) * 1e-9;
}

/* Prints the line for stage p->stage at el seconds; p->mu held (or the
 * thread not started yet). */
static void progress_print(dmlc_progress_t *p, double el) {
  if (p->tty) { /* one line, rewritten in place */
    fprintf(stderr, "\r%s: %s ... %.1f s\033[K", p->what, p->stage, el);
    p->printed = 1;
  } else if (strcmp(p->shown, p->stage) || el - p->last_line >= 10) {
    fprintf(stderr, "%s: %s ... %.1f s\n", p->what, p->stage, el);
    p->last_line = el;
  }
  snprintf(p->shown, sizeof p->shown, "%s", p->stage);
  fflush(stderr);
}

static void *progress_main(void *arg) {
  dmlc_progress_t *p = (dmlc_progress_t *)arg;
  pthread_mutex_lock(&p->mu);
  for (int first = 1; !p->done; first = 0) {
    if (!first) {
      struct timespec until;
      clock_gettime(CLOCK_MONOTONIC, &until);
      until.tv_nsec += 200000000;
      if (until.tv_nsec >= 1000000000) until.tv_sec++, until.tv_nsec -= 1000000000;
      pthread_cond_timedwait(&p->cv, &p->mu, &until);
    }
    double el = since(&p->t0);
    if (p->done || el < p->after) continue;
    progress_print(p, el);
  }
  pthread_mutex_unlock(&p->mu);
  return NULL;
}

dmlc_progress_t *dmlc_progress_start(const char *what, int force) {
  int tty = isatty(STDERR_FILENO);
  if (!tty && !force) return NULL;
  dmlc_progress_t *p = (dmlc_progress_t *)calloc(1, sizeof *p);
  if (!p) return NULL;
  p->what = what;
  p->tty = tty;
  const char *env = getenv("DMLC_PROGRESS_AFTER_MS");
  char *end = NULL;
  double ms = env ? strtod(env, &end) : 1000;
  p->after = env && *env && !*end && ms >= 0 && ms <= 1e9 ? ms / 1e3 : 1.0;
  snprintf(p->stage, sizeof p->stage, "starting");
  clock_gettime(CLOCK_MONOTONIC, &p->t0);
  /* With no delay the first line is printed here, before the thread starts:
   * a compile that ends before the thread first runs still shows it. */
  if (p->after <= 0) progress_print(p, 0.0);
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_mutex_init(&p->mu, NULL);
  pthread_cond_init(&p->cv, &ca);
  pthread_condattr_destroy(&ca);
  if (pthread_create(&p->thread, NULL, progress_main, p)) {
    pthread_cond_destroy(&p->cv);
    pthread_mutex_destroy(&p->mu);
    free(p);
    return NULL; /* no progress line: the compile goes on */
  }
  return p;
}

void dmlc_progress_stage(void *ctx, const char *stage) {
  dmlc_progress_t *p = (dmlc_progress_t *)ctx;
  if (!p) return;
  pthread_mutex_lock(&p->mu);
  snprintf(p->stage, sizeof p->stage, "%s", stage);
  pthread_mutex_unlock(&p->mu);
}

void dmlc_progress_end(dmlc_progress_t *p) {
  if (!p) return;
  pthread_mutex_lock(&p->mu);
  p->done = 1;
  pthread_cond_signal(&p->cv);
  pthread_mutex_unlock(&p->mu);
  pthread_join(p->thread, NULL);
  if (p->printed) fputs("\r\033[K", stderr); /* the terminal line cleared */
  pthread_cond_destroy(&p->cv);
  pthread_mutex_destroy(&p->mu);
  free(p);
}

/* Matches "--flag VALUE" and "--flag=VALUE"; advances *i. */
static const char *flag_value(int argc, char **argv, int *i, const char *flag) {
  size_t n = strlen(flag);
  if (strncmp(argv[*i], flag, n) != 0) return NULL;
  if (argv[*i][n] == '=') return argv[*i] + n + 1;
  if (argv[*i][n] == 0 && *i + 1 < argc) return argv[++*i];
  return NULL;
}

/* Parses a positive integer <= hi for `flag`; 0 (after printing why) when
 * it is not one. */
static int parse_limit(const char *flag, const char *v, int64_t hi, int64_t *out) {
  char *end;
  long long x = strtoll(v, &end, 10);
  if (*end || !*v || x < 1 || x > hi) {
    fprintf(stderr,
            "error: dmlc compile: %s needs a positive integer up to %lld, got '%s'\n",
            flag, (long long)hi, v);
    return 0;
  }
  *out = x;
  return 1;
}

/* Parses a finite number for `flag` (> 0 when `positive`); 0 (after
 * printing why) when it is not one. */
static int parse_number(const char *flag, const char *v, int positive, double *out) {
  char *end;
  errno = 0;
  double d = strtod(v, &end);
  if (!*v || *end || errno || !isfinite(d) || (positive && !(d > 0))) {
    fprintf(stderr, "error: dmlc compile: %s needs a%s number, got '%s'\n", flag,
            positive ? " positive" : "", v);
    return 0;
  }
  *out = d;
  return 1;
}

/* Frees the tensors read for --bind. */
static void free_bindings(dml_onnx_binding_t *b, dml_tensor_t *t, void **bufs, size_t n) {
  for (size_t i = 0; i < n; i++) {
    free(bufs[i]);
    free((char *)b[i].name);
  }
  free(b);
  free(t);
  free(bufs);
}

int dmlc_cmd_compile(int argc, char **argv) {
  const char *model = NULL, *out = NULL, *v;
  dml_compile_options_t o;
  memset(&o, 0, sizeof o);
  /* --train: the defaults of `dmlc train` and the C API (cross-entropy,
   * Adam: dml_train_config_init). */
  dml_train_config_t cfg;
  dml_train_config_init(&cfg);
  int train = 0, train_flags = 0, progress = 0;
  char loss_buf[1024];
  dml_train_output_t loss_outs[DML_TRAIN_MAX_OUTPUTS];
  /* At most one binding per argument. */
  size_t n_bind = 0;
  dml_onnx_binding_t *bind = (dml_onnx_binding_t *)calloc((size_t)argc, sizeof(*bind));
  dml_tensor_t *bind_t = (dml_tensor_t *)calloc((size_t)argc, sizeof(*bind_t));
  void **bind_buf = (void **)calloc((size_t)argc, sizeof(void *));
  int rc = 2;
  dmlc_dim_spec_t dims = {0};
  if (!bind || !bind_t || !bind_buf) {
    fprintf(stderr, "error: dmlc compile: out of memory\n");
    rc = 1;
    goto done;
  }
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
      usage(stdout);
      rc = 0;
      goto done;
    } else if ((v = flag_value(argc, argv, &i, "-o")) ||
               (v = flag_value(argc, argv, &i, "--output"))) {
      out = v;
    } else if (!strcmp(argv[i], "--progress")) {
      progress = 1;
    } else if ((v = flag_value(argc, argv, &i, "--target"))) {
      o.targets = v;
    } else if ((v = flag_value(argc, argv, &i, "--cuda-arch"))) {
      o.cuda_arch = v;
    } else if (!strcmp(argv[i], "--allow-tf32")) {
      o.allow_tf32 = 1;
    } else if ((v = flag_value(argc, argv, &i, "--precision"))) {
      o.precision = v;
    } else if (!strcmp(argv[i], "--no-cpu-fallback")) {
      o.no_cpu_fallback = 1;
    } else if ((v = flag_value(argc, argv, &i, "--batch-bound"))) {
      char *end;
      o.batch_bound = strtoll(v, &end, 10);
      if (*end || o.batch_bound < 1 || o.batch_bound > (int64_t)1 << 31) {
        fprintf(stderr,
                "error: dmlc compile: --batch-bound needs a positive integer up to 2^31, "
                "got '%s'\n",
                v);
        goto done;
      }
    } else if ((v = flag_value(argc, argv, &i, "--dim-bound"))) {
      if (!dmlc_dim_spec_parse_bound(&dims, "dmlc compile", v)) goto done;
    } else if ((v = flag_value(argc, argv, &i, "--input-shape"))) {
      if (!dmlc_dim_spec_parse_shape(&dims, "dmlc compile", v)) goto done;
    } else if ((v = flag_value(argc, argv, &i, "--dynamic-dim-bound"))) {
      if (!parse_limit("--dynamic-dim-bound", v, (int64_t)1 << 31, &o.dynamic_dim_bound))
        goto done;
    } else if ((v = flag_value(argc, argv, &i, "--dynamic-max-elements"))) {
      if (!parse_limit("--dynamic-max-elements", v, (int64_t)1 << 40,
                       &o.dynamic_max_elements))
        goto done;
    } else if ((v = flag_value(argc, argv, &i, "--bind"))) {
      const char *eq = strchr(v, '=');
      if (!eq || eq == v || !eq[1]) {
        fprintf(stderr, "error: dmlc compile: --bind needs NAME=FILE.npy, got '%s'\n", v);
        goto done;
      }
      dml_status_t s = dml_npy_read_file(eq + 1, &bind_t[n_bind], &bind_buf[n_bind]);
      if (s) {
        s = dml_status_annotate(s, "--bind %s", v);
        rc = dmlc_report(s);
        goto done;
      }
      char *name = (char *)malloc((size_t)(eq - v) + 1);
      if (!name) {
        free(bind_buf[n_bind]);
        fprintf(stderr, "error: dmlc compile: out of memory\n");
        rc = 1;
        goto done;
      }
      memcpy(name, v, (size_t)(eq - v));
      name[eq - v] = 0;
      bind[n_bind].name = name;
      bind[n_bind].value = &bind_t[n_bind];
      n_bind++;
    } else if ((v = flag_value(argc, argv, &i, "--print-ir-after"))) {
      o.print_ir_after = v;
    } else if (!strcmp(argv[i], "--print-kernels")) {
      o.print_kernels = stdout;
    } else if (!strcmp(argv[i], "--print-ir-after-all")) {
      o.print_ir_after_all = 1;
    } else if (!strcmp(argv[i], "--train")) {
      train = 1;
    } else if ((v = flag_value(argc, argv, &i, "--loss"))) {
      dml_status_t s = strchr(v, '=')
                           ? dml_train_outputs_parse(v, loss_buf, sizeof loss_buf,
                                                     loss_outs, &cfg.n_outputs)
                           : dml_loss_kind_parse(v, &cfg.loss);
      if (!s && cfg.n_outputs) cfg.outputs = loss_outs;
      if (s) {
        rc = dmlc_report(s);
        goto done;
      }
      train_flags = 1;
    } else if ((v = flag_value(argc, argv, &i, "--loss-output"))) {
      cfg.output = v;
      train_flags = 1;
    } else if ((v = flag_value(argc, argv, &i, "--optimizer"))) {
      dml_status_t s = dml_optimizer_kind_parse(v, &cfg.optimizer);
      if (s) {
        rc = dmlc_report(s);
        goto done;
      }
      train_flags = 1;
    } else if ((v = flag_value(argc, argv, &i, "--momentum"))) {
      if (!parse_number("--momentum", v, 0, &cfg.momentum)) goto done;
      train_flags = 1;
    } else if ((v = flag_value(argc, argv, &i, "--weight-decay"))) {
      if (!parse_number("--weight-decay", v, 0, &cfg.weight_decay)) goto done;
      train_flags = 1;
    } else if ((v = flag_value(argc, argv, &i, "--clip-norm"))) {
      if (!parse_number("--clip-norm", v, 1, &cfg.clip_norm)) goto done;
      train_flags = 1;
    } else if ((v = flag_value(argc, argv, &i, "--clip-value"))) {
      if (!parse_number("--clip-value", v, 1, &cfg.clip_value)) goto done;
      train_flags = 1;
    } else if (argv[i][0] == '-') {
      fprintf(stderr, "error: dmlc compile: unknown or incomplete flag '%s'\n", argv[i]);
      goto done;
    } else if (!model) {
      model = argv[i];
    } else {
      fprintf(stderr, "error: dmlc compile: more than one model given ('%s', '%s')\n",
              model, argv[i]);
      goto done;
    }
  }
  /* One file by device and inode, not by spelling ("m.onnx", "./m.onnx"). */
  if (model && out && (!strcmp(model, out) || dml_file_same(model, out))) {
    fprintf(stderr,
            "error: dmlc compile: the output '%s' is the model '%s' itself; choose "
            "another -o\n",
            out, model);
    goto done;
  }
  if (!model || !out) {
    fprintf(stderr, "error: dmlc compile: %s\n",
            !model ? "no model given" : "no output given (-o)");
    goto done;
  }
  if (train_flags && !train) {
    fprintf(stderr,
            "error: dmlc compile: --loss, --loss-output, --optimizer, "
            "--momentum, --weight-decay and --clip-* need --train\n");
    goto done;
  }
  if (train) o.train = &cfg;
  o.bind = bind;
  o.n_bind = n_bind;
  if (!dmlc_dim_spec_apply(&dims, "dmlc compile", &o)) goto done;
  /* The command line goes into the package's meta section. */
  char cmdline[1024];
  size_t k = (size_t)snprintf(cmdline, sizeof cmdline, "dmlc");
  for (int i = 0; i < argc && k < sizeof cmdline; i++)
    k += (size_t)snprintf(cmdline + k, sizeof cmdline - k, " %s", argv[i]);
  o.command_line = cmdline;

  dml_compile_report_t r;
  /* IR and kernel dumps go to the terminal too: no line among them unless
   * asked for */
  int dumps = o.print_ir_after || o.print_ir_after_all || o.print_kernels;
  dmlc_progress_t *prog =
      dumps && !progress ? NULL : dmlc_progress_start("dmlc compile", progress);
  o.progress = prog ? dmlc_progress_stage : NULL;
  o.progress_ctx = prog;
  fallback_notes_t notes = {NULL, 0};
  o.note = fallback_note;
  o.note_ctx = &notes;
  dml_status_t s = dml_compile_onnx_file(model, out, &o, &r);
  dmlc_progress_end(prog);
  /* after the progress line has ended: one note per function on the host */
  if (!s && notes.text) fputs(notes.text, stderr);
  free(notes.text);
  if (s) {
    rc = dmlc_report(s);
    goto done;
  }
  printf(
      "compiled %s -> %s: %u nodes, %u weights (%llu bytes), arena %lld bytes, "
      "package %llu bytes, %.1f ms\n",
      model, out, r.num_nodes, r.num_weights, (unsigned long long)r.weight_bytes,
      (long long)r.arena_bytes, (unsigned long long)r.package_bytes, r.compile_ms);
  rc = 0;
done:
  if (rc == 2) dmlc_usage_hint("compile"); /* the error was printed */
  dmlc_dim_spec_free(&dims);
  free_bindings(bind, bind_t, bind_buf, n_bind);
  return rc;
}
