/* test_vjp.c — every VJP rule of passes/autodiff.c against central finite
 * differences.
 *
 * For one case (an op with its attributes and input shapes) the harness
 * builds a module with two functions of the same arguments x0, x1, ...:
 *
 *   @forward(x...) -> loss          loss = ReduceSum(y * R)
 *   @grad(x...)    -> (loss, dloss/dx0, dloss/dx1, ...)
 *
 * where y is the op's result and R a fixed random tensor of y's shape (so
 * every output element contributes with its own weight). @grad gets its
 * gradients from dml_autodiff(); the module goes through the default
 * pipeline, into a package in memory and through the runtime. Each gradient
 * element is then compared with the central difference
 *   n_i = (loss(x + h e_i) - loss(x - h e_i)) / (x_i+ - x_i-)
 * where loss is @forward of the same package and x_i+/- are the perturbed
 * values as stored in the input's dtype.
 *
 * Precision and tolerances (stated once, used by every case):
 *   f64 inputs (every kernel supports f64; most cases use it): h = 1e-6,
 *   |g - n| <= 1e-7 + 1e-6 |n| (the largest error seen is ~1% of that bound;
 *   the test prints it).
 *   The truncation error of the central difference is h^2/6 |f'''| ~ 1e-13
 *   and the rounding error ~ 1e-16 |loss| / h ~ 1e-9 for these losses, so the
 *   bound has a wide margin and a wrong rule (errors of order |g|) fails.
 *   f32 inputs (Cast/CastLike from f32, and MatMul, Gemm, Conv and the pools
 *   again in f32, whose kernels take another path than in f64): h = 1e-2,
 *   |g - n| <= 1e-3 + 1e-3 |n|. These ops are linear in each single input
 *   element, so the difference has no truncation error; its f32 rounding
 *   error is ~1e-7 * sum|terms| / h ~ 1e-4.
 * Non-smooth ops are checked away from their kinks: inputs are drawn at
 * least 0.05 from each kink point of the case (0 for Relu/Abs/LeakyRelu/
 * PRelu/Sign/..., the clip bounds for Clip, the thresholds for Shrink/
 * ThresholdedRelu, integers for Floor/Ceil, half-integers for Round) and,
 * for max/min ops (MaxPool, GlobalMaxPool, ReduceMax/Min, Max/Min), are
 * distinct values on a grid at least 2/N apart so no window has a tie.
 *
 * Random ops (Dropout in training mode) are checked through @grad itself with
 * the session's random state reset to the same (seed, step) before every
 * run, so every difference sees the mask of the gradient's run; the
 * gradient is also compared with mask * scale * R exactly.
 *
 * The cases (an op, attributes, input shapes, ranges, kinks) are data:
 * tests/autodiff/vjp_cases.txt, read at start.
 * Coverage: test_every_rule_has_a_case fails when dml_autodiff_supports()
 * says an op has a rule and no case of vjp_cases.txt checks that op. Cases
 * for ops that have no rule (yet) are skipped and listed. test_exact_values
 * checks what differences cannot see: ties of ReduceMax/Min, ReduceProd at
 * zeros.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dml_autodiff.h"
#include "dml_ir.h"
#include "dml_ir_text.h"
#include "dml_package_emit.h"
#include "dml_passes.h"
#include "dml_rt.h"
#include "dml_test.h"

#define MAX_ARGS 6
#define MAX_KINKS 6

enum {
  F_DISTINCT = 1u, /* inputs are distinct grid values (max/min ops) */
  F_RANDOM = 2u,   /* the op draws random numbers: replay the seed */
};

typedef struct vjp_case {
  char *op;     /* the op whose rule this case checks (ops.def spelling) */
  char *name;   /* the case's label */
  char *consts; /* global lines (non-differentiable inputs), or NULL */
  char *args;   /* the arguments, all differentiated: "%x0: f64[2,3], ..." */
  char *body;   /* node lines defining %y (and anything before it) */
  double lo[MAX_ARGS], hi[MAX_ARGS]; /* input range per argument; [-1, 1] if lo == hi */
  double kinks[MAX_KINKS];           /* points the inputs stay 0.05 away from */
  int n_kinks;
  unsigned flags;
} vjp_case_t;

/* The cases, read from tests/autodiff/vjp_cases.txt (its header describes
 * the format) by load_cases. */
static vjp_case_t *k_cases;
static size_t n_cases;

/* ---- small helpers ---------------------------------------------------------- */

typedef struct sbuf {
  char *p;
  size_t n, cap;
} sbuf_t;

static void sb_printf(sbuf_t *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  va_list ap2;
  va_copy(ap2, ap);
  int k = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (k < 0) {
    va_end(ap2);
    return;
  }
  if (b->n + (size_t)k + 1 > b->cap) {
    size_t cap = (b->cap ? b->cap * 2 : 1024) + (size_t)k;
    char *p = realloc(b->p, cap);
    if (!p) {
      va_end(ap2);
      abort();
    }
    b->p = p;
    b->cap = cap;
  }
  vsnprintf(b->p + b->n, (size_t)k + 1, fmt, ap2);
  va_end(ap2);
  b->n += (size_t)k;
}

/* Appends `line` to the field `*field` ("a" -> "a\nline"; with `nl`,
 * every line ends in '\n': "a\nline\n"). */
static void append_line(char **field, const char *line, int nl) {
  sbuf_t b = {0};
  sb_printf(&b, "%s%s%s%s", *field ? *field : "", *field && !nl ? "\n" : "", line,
            nl ? "\n" : "");
  free(*field);
  *field = b.p;
}

/* Parses up to `max` numbers of `text` into `v`; returns how many, or -1
 * when a word is not a number or there are more than `max`. */
static int parse_numbers(const char *text, double *v, int max) {
  int n = 0;
  for (const char *p = text;;) {
    while (*p == ' ') p++;
    if (!*p) return n;
    char *end = NULL;
    double x = strtod(p, &end);
    if (end == p || (*end && *end != ' ') || n == max) return -1;
    v[n++] = x;
    p = end;
  }
}

static void free_cases(void) {
  for (size_t i = 0; i < n_cases; i++) {
    free(k_cases[i].op);
    free(k_cases[i].name);
    free(k_cases[i].consts);
    free(k_cases[i].args);
    free(k_cases[i].body);
  }
  free(k_cases);
  k_cases = NULL;
  n_cases = 0;
}

/* Reads the cases of `path` (the format: vjp_cases.txt's header) into
 * k_cases. Returns 0 (after printing file:line and the reason, with no
 * cases kept) on a malformed line, a case without args or body, or an
 * unreadable file. */
static int load_cases(const char *path) {
  size_t len = 0;
  char *text = dml_test_read_file(path, &len);
  if (!text) {
    fprintf(stderr, "%s: cannot read the VJP cases\n", path);
    return 0;
  }
  size_t cap = 0;
  int line_no = 0, ok = 1;
  const char *why = NULL;
  for (char *p = text; ok && p < text + len;) {
    char *e = memchr(p, '\n', (size_t)(text + len - p));
    char *line = p;
    if (e) *e = 0;
    p = e ? e + 1 : text + len;
    line_no++;
    while (*line == ' ') line++;
    if (!*line || *line == '#') continue;
    char *rest = strchr(line, ' ');
    if (rest)
      *rest++ = 0;
    else
      rest = line + strlen(line);
    vjp_case_t *c = n_cases ? &k_cases[n_cases - 1] : NULL;
    if (!strcmp(line, "case")) {
      char *name = strchr(rest, ' ');
      if (!name || !name[1] || strchr(name + 1, ' ')) {
        why = "'case' takes an op and a name";
      } else {
        if (n_cases == cap) {
          cap = cap ? cap * 2 : 64;
          vjp_case_t *k = realloc(k_cases, cap * sizeof *k);
          if (!k) abort();
          k_cases = k;
        }
        c = &k_cases[n_cases++];
        memset(c, 0, sizeof *c);
        *name++ = 0;
        append_line(&c->op, rest, 0);
        append_line(&c->name, name, 0);
      }
    } else if (!c) {
      why = "a field before the first 'case'";
    } else if (!strcmp(line, "args") && !c->args) {
      append_line(&c->args, rest, 0);
    } else if (!strcmp(line, "body")) {
      append_line(&c->body, rest, 0);
    } else if (!strcmp(line, "const")) {
      append_line(&c->consts, rest, 1);
    } else if (!strcmp(line, "lo") || !strcmp(line, "hi")) {
      if (parse_numbers(rest, line[0] == 'l' ? c->lo : c->hi, MAX_ARGS) < 1)
        why = "'lo' and 'hi' take 1 to 6 numbers";
    } else if (!strcmp(line, "kinks")) {
      c->n_kinks = parse_numbers(rest, c->kinks, MAX_KINKS);
      if (c->n_kinks < 1) why = "'kinks' takes 1 to 6 numbers";
    } else if (!strcmp(line, "flags")) {
      for (char *f = strtok(rest, " "); f && !why; f = strtok(NULL, " "))
        if (!strcmp(f, "distinct"))
          c->flags |= F_DISTINCT;
        else if (!strcmp(f, "random"))
          c->flags |= F_RANDOM;
        else
          why = "a flag other than 'distinct' and 'random'";
    } else {
      why = "an unknown or repeated field";
    }
    if (!why && c && !strcmp(line, "case") && n_cases > 1 &&
        (!k_cases[n_cases - 2].args || !k_cases[n_cases - 2].body))
      why = "the case before has no 'args' or no 'body'";
    if (why) {
      fprintf(stderr, "%s:%d: %s\n", path, line_no, why);
      ok = 0;
    }
  }
  if (ok && n_cases && (!k_cases[n_cases - 1].args || !k_cases[n_cases - 1].body)) {
    fprintf(stderr, "%s: the last case has no 'args' or no 'body'\n", path);
    ok = 0;
  }
  free(text);
  if (!ok) free_cases();
  return ok;
}

/* splitmix64: the inputs and R are a fixed function of the case's name. */
static uint64_t rng_next(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
static double rng_uniform(uint64_t *s) {
  return (double)(rng_next(s) >> 11) * (1.0 / 9007199254740992.0);
}
static uint64_t hash_str(const char *s) {
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++) h = (h ^ (uint8_t)*s) * 1099511628211ull;
  return h;
}

static int64_t type_numel(const dml_type_t *t) {
  int64_t n = 1;
  for (int32_t d = 0; d < t->rank; d++) n *= t->dims[d].value;
  return n;
}

static double load(dml_dtype_t dt, const void *p, int64_t i) {
  return dt == DML_DTYPE_F32 ? (double)((const float *)p)[i] : ((const double *)p)[i];
}
static void store(dml_dtype_t dt, void *p, int64_t i, double v) {
  if (dt == DML_DTYPE_F32)
    ((float *)p)[i] = (float)v;
  else
    ((double *)p)[i] = v;
}

static dml_tensor_t tensor_of(const dml_type_t *t, void *data) {
  dml_tensor_t x;
  memset(&x, 0, sizeof x);
  x.dtype = t->dtype;
  x.rank = t->rank;
  for (int32_t d = 0; d < t->rank; d++) x.dims[d] = t->dims[d].value;
  x.data = data;
  return x;
}

static void print_status(const char *what, const char *name, dml_status_t st) {
  char *msg = dml_status_format(st);
  fprintf(stderr, "case %s: %s failed:\n%s\n", name, what, msg ? msg : "?");
  free(msg);
  dml_status_free(st);
}

/* Largest |g - n| / (atol + rtol |n|) seen, for f64 [0] and f32 [1] inputs
 * (printed: how much of the tolerance the rules use). */
static double g_worst[2];

/* ---- one case ---------------------------------------------------------------- */

typedef struct args_info {
  uint32_t n;
  dml_type_t type[MAX_ARGS];
  dml_type_t y_type;
} args_info_t;

/* Parses the case with `return %y` to learn the argument types and y's type
 * (after shape inference). */
static int probe(const vjp_case_t *c, args_info_t *ai) {
  sbuf_t b = {0};
  sb_printf(&b, "%sfunc @probe(%s) -> (?[?]) {\n%s\n  return %%y\n}\n",
            c->consts ? c->consts : "", c->args, c->body);
  dml_ir_module_t *m = NULL;
  dml_status_t st = dml_ir_parse(b.p, b.n, c->name, &m);
  free(b.p);
  if (st) {
    print_status("parse", c->name, st);
    return 0;
  }
  dml_pass_options_t o;
  memset(&o, 0, sizeof o);
  st = dml_pass_run_pipeline(m, "shape-infer", &o);
  if (st) {
    print_status("shape-infer", c->name, st);
    dml_ir_module_release(m);
    return 0;
  }
  dml_ir_function_t *f = dml_ir_module_find_function(m, "probe");
  ai->n = f->n_args;
  for (uint32_t i = 0; i < f->n_args && i < MAX_ARGS; i++) ai->type[i] = f->args[i]->type;
  ai->y_type = f->results[0]->type;
  dml_ir_module_release(m);
  int ok = ai->n <= MAX_ARGS && dml_type_is_static(&ai->y_type);
  for (uint32_t i = 0; i < ai->n && ok; i++) ok = dml_type_is_static(&ai->type[i]);
  if (!ok) fprintf(stderr, "case %s: arguments and y must have static shapes\n", c->name);
  return ok;
}

static int near_kink(const vjp_case_t *c, double v) {
  for (int k = 0; k < c->n_kinks; k++)
    if (fabs(v - c->kinks[k]) < 0.05) return 1;
  return 0;
}

/* Fills the inputs: uniform in each argument's range away from the kinks,
 * or (F_DISTINCT) a shuffled grid over all arguments' elements. */
static void make_inputs(const vjp_case_t *c, const args_info_t *ai, uint64_t *rng,
                        void **x) {
  int64_t total = 0;
  for (uint32_t a = 0; a < ai->n; a++) total += type_numel(&ai->type[a]);
  int64_t *perm = NULL;
  if (c->flags & F_DISTINCT) {
    perm = malloc(sizeof(int64_t) * (size_t)total);
    for (int64_t i = 0; i < total; i++) perm[i] = i;
    for (int64_t i = total - 1; i > 0; i--) {
      int64_t j = (int64_t)(rng_next(rng) % (uint64_t)(i + 1)), t = perm[i];
      perm[i] = perm[j];
      perm[j] = t;
    }
  }
  int64_t k = 0;
  for (uint32_t a = 0; a < ai->n; a++) {
    double lo = c->lo[a], hi = c->hi[a];
    if (lo == hi) lo = -1.0, hi = 1.0;
    int64_t n = type_numel(&ai->type[a]);
    for (int64_t i = 0; i < n; i++, k++) {
      double v;
      if (perm) {
        v = -1.0 + 2.0 * ((double)perm[k] + 0.5) / (double)total;
      } else {
        do v = lo + (hi - lo) * rng_uniform(rng);
        while (near_kink(c, v));
      }
      store(ai->type[a].dtype, x[a], i, v);
    }
  }
  free(perm);
}

/* Runs `s` on inputs x and returns output 0 (the loss) as a double. */
static int run_loss(dml_rt_session_t *s, const args_info_t *ai, void **x, int replay,
                    double *out) {
  for (uint32_t a = 0; a < ai->n; a++) {
    dml_tensor_t t = tensor_of(&ai->type[a], x[a]);
    dml_status_t st = dml_rt_session_set_input(s, a, &t);
    if (st) {
      print_status("set_input", "?", st);
      return 0;
    }
  }
  if (replay) dml_rt_session_set_seed(s, 11, 3);
  dml_status_t st = dml_rt_session_run(s);
  if (st) {
    print_status("run", "?", st);
    return 0;
  }
  dml_tensor_t l;
  st = dml_rt_session_get_output(s, 0, &l);
  if (st) {
    print_status("get_output", "?", st);
    return 0;
  }
  *out = load(l.dtype, l.data, 0);
  return 1;
}

/* Checks one case. Returns 1 when checked, 0 when skipped (no rule: then
 * only the forward function is built and run, which keeps the case's text,
 * shapes and the kernels' f64 support checked until a rule comes). */
static int check_case_(const vjp_case_t *c) {
  dml_op_t op = dml_op_from_name(c->op, strlen(c->op));
  CHECK(op != DML_OP_INVALID);
  if (op == DML_OP_INVALID) return 0;
  int has_rule = dml_autodiff_supports(op);
  args_info_t ai;
  memset(&ai, 0, sizeof ai);
  if (!probe(c, &ai)) {
    CHECK(!"probe");
    return 1;
  }
  uint64_t rng = hash_str(c->name);
  int64_t ny = type_numel(&ai.y_type);
  size_t esz = ai.y_type.dtype == DML_DTYPE_F32 ? 4 : 8;
  CHECK(ai.y_type.dtype == DML_DTYPE_F32 || ai.y_type.dtype == DML_DTYPE_F64);
  unsigned char *r = malloc((size_t)ny * esz);
  for (int64_t i = 0; i < ny; i++)
    store(ai.y_type.dtype, r, i, 2.0 * rng_uniform(&rng) - 1.0);

  /* The module: R as a hex constant, @forward and @grad with the same body. */
  char tbuf[128];
  sbuf_t b = {0};
  sb_printf(&b, "%sglobal @R : %s = dense<0x", c->consts ? c->consts : "",
            dml_ir_type_str(NULL, &ai.y_type, tbuf, sizeof tbuf));
  for (size_t i = 0; i < (size_t)ny * esz; i++) sb_printf(&b, "%02x", r[i]);
  sb_printf(&b, ">\n");
  const char *fn[2] = {"forward", "grad"};
  for (int k = 0; k < 2; k++)
    sb_printf(&b,
              "func @%s(%s) -> (?[?]) {\n%s\n  %%ry = Mul(%%y, @R)\n"
              "  %%loss = ReduceSum(%%ry) {keepdims = 0}\n  return %%loss\n}\n",
              fn[k], c->args, c->body);
  dml_ir_module_t *m = NULL;
  dml_status_t st = dml_ir_parse(b.p, b.n, c->name, &m);
  free(b.p);
  if (st) {
    print_status("parse", c->name, st);
    CHECK(!"parse");
    free(r);
    return 1;
  }
  dml_pass_options_t o;
  memset(&o, 0, sizeof o);
  o.verify_each = 1;
  CHECK_OK(dml_pass_run_pipeline(m, "shape-infer", &o));
  dml_ir_function_t *g = dml_ir_module_find_function(m, "grad");
  dml_ir_value_t *grads[MAX_ARGS] = {0}, *res[MAX_ARGS + 2];
  st =
      has_rule ? dml_autodiff(g, g->results[0], NULL, g->n_args, g->args, grads) : DML_OK;
  if (st && dml_status_code(st) == DML_STATUS_UNIMPLEMENTED) {
    /* The op has a rule, but not for this attribute or input form: listed,
     * not failed (the error itself is the rule's documented answer). */
    char *msg = dml_status_format(st);
    printf("skipped (form without a VJP rule): %s: %s\n", c->name, msg ? msg : "?");
    free(msg);
    dml_status_free(st);
    dml_ir_module_release(m);
    free(r);
    return 0;
  }
  if (st) {
    print_status("dml_autodiff", c->name, st);
    CHECK(!"dml_autodiff");
    dml_ir_module_release(m);
    free(r);
    return 1;
  }
  uint32_t nres = 0;
  res[nres++] = g->results[0];
  for (uint32_t a = 0; a < ai.n && has_rule; a++) {
    if (!grads[a]) {
      fprintf(stderr, "case %s: no gradient for x%u\n", c->name, a);
      CHECK(grads[a] != NULL);
      dml_ir_module_release(m);
      free(r);
      return 1;
    }
    CHECK(dml_type_equal(&grads[a]->type, &g->args[a]->type));
    /* A gradient may be the same value as an earlier result (Add's two
     * operands share one): the emitter returns a copy of it. */
    res[nres++] = grads[a];
  }
  /* Dropout with a mask output: return it to compare with the gradient. */
  dml_ir_value_t *mask = NULL;
  for (dml_ir_node_t *n = g->first; n; n = n->next)
    if (n->op == DML_OP_DROPOUT && n->n_outputs > 1) mask = n->outputs[1];
  if (mask && has_rule) res[nres++] = mask;
  CHECK_OK(dml_ir_function_set_results(g, nres, res));
  CHECK_OK(dml_pass_run_pipeline(m, dml_pass_default_pipeline(), &o));
  void *bytes = NULL;
  size_t size = 0;
  dml_rt_model_t *model = NULL;
  CHECK_OK(dml_package_emit_memory(m, NULL, &bytes, &size));
  dml_ir_module_release(m);
  if (bytes) CHECK_OK(dml_rt_model_load_memory(bytes, size, &model));
  free(bytes);
  dml_rt_session_t *sf = NULL, *sg = NULL;
  if (model) {
    CHECK_OK(dml_rt_session_create_function(model, "cpu", "forward", NULL, &sf));
    CHECK_OK(dml_rt_session_create_function(model, "cpu", "grad", NULL, &sg));
  }
  if (!sf || !sg) {
    dml_rt_session_release(sf);
    dml_rt_session_release(sg);
    dml_rt_model_release(model);
    free(r);
    return 1;
  }

  void *x[MAX_ARGS] = {0}, *gv[MAX_ARGS] = {0};
  for (uint32_t a = 0; a < ai.n; a++) {
    size_t bytes_a = (size_t)type_numel(&ai.type[a]) * 8;
    x[a] = malloc(bytes_a ? bytes_a : 8);
    gv[a] = malloc(bytes_a ? bytes_a : 8);
  }
  make_inputs(c, &ai, &rng, x);
  int replay = (c->flags & F_RANDOM) != 0;
  double loss_g = 0.0, loss_f = 0.0;
  int ok = run_loss(sg, &ai, x, replay, &loss_g);
  CHECK(ok);
  if (!has_rule) ok = 0; /* forward only */
  for (uint32_t a = 0; a < ai.n && ok; a++) {
    dml_tensor_t t;
    CHECK_OK(dml_rt_session_get_output(sg, 1 + a, &t));
    CHECK(t.dtype == ai.type[a].dtype &&
          type_numel(&ai.type[a]) == dml_dims_numel(t.dims, t.rank));
    memcpy(gv[a], t.data,
           (size_t)type_numel(&ai.type[a]) * (t.dtype == DML_DTYPE_F32 ? 4 : 8));
  }
  if (ok && mask) {
    /* dloss/dx = mask * R / (1 - ratio), exactly the rule's form. */
    dml_tensor_t mt;
    CHECK_OK(dml_rt_session_get_output(sg, 1 + ai.n, &mt));
    const uint8_t *mk = mt.data;
    int64_t kept = 0;
    double ratio = 0.4, scale = 1.0 / (1.0 - ratio);
    for (int64_t i = 0; i < ny; i++) {
      kept += mk[i] != 0;
      double want = mk[i] ? load(ai.y_type.dtype, r, i) * scale : 0.0;
      CHECK_NEAR(load(ai.type[0].dtype, gv[0], i), want, 1e-12);
    }
    CHECK(kept > 0 && kept < ny); /* the mask is not trivial */
  }
  if (ok && has_rule && !replay) {
    /* @forward computes the same loss as @grad's first result. */
    CHECK(run_loss(sf, &ai, x, 0, &loss_f));
    CHECK_NEAR(loss_f, loss_g, 1e-12 * (1.0 + fabs(loss_g)));
  }
  /* Central differences. */
  dml_rt_session_t *sfd = replay ? sg : sf;
  int64_t bad = 0;
  for (uint32_t a = 0; a < ai.n && ok; a++) {
    dml_dtype_t dt = ai.type[a].dtype;
    double h = dt == DML_DTYPE_F32 ? 1e-2 : 1e-6;
    double atol = dt == DML_DTYPE_F32 ? 1e-3 : 1e-7,
           rtol = dt == DML_DTYPE_F32 ? 1e-3 : 1e-6;
    int64_t n = type_numel(&ai.type[a]);
    for (int64_t i = 0; i < n && ok; i++) {
      double x0 = load(dt, x[a], i), lp = 0, lm = 0;
      store(dt, x[a], i, x0 + h);
      double xp = load(dt, x[a], i);
      ok = run_loss(sfd, &ai, x, replay, &lp);
      store(dt, x[a], i, x0 - h);
      double xm = load(dt, x[a], i);
      ok = ok && run_loss(sfd, &ai, x, replay, &lm);
      store(dt, x[a], i, x0);
      double num = (lp - lm) / (xp - xm), an = load(dt, gv[a], i);
      double use = fabs(an - num) / (atol + rtol * fabs(num));
      double *worst = &g_worst[dt == DML_DTYPE_F32];
      if (use > *worst) *worst = use;
      if (!(fabs(an - num) <= atol + rtol * fabs(num))) {
        if (bad++ < 8)
          fprintf(stderr,
                  "case %s (%s): d loss / d x%u[%lld] = %.12g, central difference %.12g "
                  "(x = %.6g)\n",
                  c->name, c->op, a, (long long)i, an, num, x0);
      }
    }
  }
  CHECK(ok || !has_rule);
  CHECK(bad == 0);
  for (uint32_t a = 0; a < ai.n; a++) {
    free(x[a]);
    free(gv[a]);
  }
  dml_rt_session_release(sf);
  dml_rt_session_release(sg);
  dml_rt_model_release(model);
  free(r);
  if (!has_rule) printf("skipped (no VJP rule for %s): %s\n", c->op, c->name);
  return has_rule;
}

static int check_case(const vjp_case_t *c) {
  int failed_before = dml_test_checks_failed_;
  int checked = check_case_(c);
  if (dml_test_checks_failed_ != failed_before)
    fprintf(stderr, "FAILED case: %s\n", c->name);
  return checked;
}

/* ---- tests ------------------------------------------------------------------- */

static int *k_checked;     /* per case: 1 when its gradient was compared */
static const char *k_only; /* $DMLC_VJP_CASE: run one case when debugging */

static void test_rules_against_central_differences(void) {
  int checked = 0, skipped = 0;
  for (size_t i = 0; i < n_cases; i++) {
    if (k_only && strcmp(k_only, k_cases[i].name) != 0) continue;
    k_checked[i] = check_case(&k_cases[i]);
    checked += k_checked[i];
    skipped += !k_checked[i];
  }
  printf("%d cases checked, %d skipped; largest error / tolerance: f64 %.3g, f32 %.3g\n",
         checked, skipped, g_worst[0], g_worst[1]);
  CHECK(k_only || checked > 0);
}

/* Every op with a rule has at least one case whose gradient was compared
 * (run after the cases). */
static void test_every_rule_has_a_case(void) {
  if (k_only) return;
  int missing = 0;
  for (int op = 1; op < DML_OP_COUNT_; op++) {
    if (!dml_autodiff_supports((dml_op_t)op)) continue;
    int found = 0;
    for (size_t i = 0; i < n_cases && !found; i++)
      found = k_checked[i] && strcmp(k_cases[i].op, dml_op_name((dml_op_t)op)) == 0;
    if (!found) {
      fprintf(stderr,
              "op %s has a VJP rule but no finite-difference case of vjp_cases.txt "
              "checks it\n",
              dml_op_name((dml_op_t)op));
      missing++;
    }
  }
  CHECK(missing == 0);
}

/* Parses `text` (label `label`) into `*m` and infers its shapes; returns its
 * function @f, or NULL (after a failed CHECK, *m released) on error. */
static dml_ir_function_t *parse_f(const char *text, const char *label,
                                  dml_ir_module_t **m) {
  *m = NULL;
  CHECK_OK(dml_ir_parse(text, strlen(text), label, m));
  if (!*m) return NULL;
  dml_pass_options_t o;
  memset(&o, 0, sizeof o);
  CHECK_OK(dml_pass_run_pipeline(*m, "shape-infer", &o));
  dml_ir_function_t *f = dml_ir_module_find_function(*m, "f");
  CHECK(f != NULL);
  if (!f) {
    dml_ir_module_release(*m);
    *m = NULL;
  }
  return f;
}

/* Makes @f of `m` return (its loss, `g`), runs the default pipeline,
 * releases `m` and returns a cpu session of the package (`*model` its
 * model), or NULL (after a failed CHECK) on error. */
static dml_rt_session_t *grad_session(dml_ir_module_t *m, dml_ir_function_t *f,
                                      dml_ir_value_t *g, dml_rt_model_t **model) {
  dml_ir_value_t *res[2] = {f->results[0], g};
  dml_pass_options_t o;
  memset(&o, 0, sizeof o);
  CHECK_OK(dml_ir_function_set_results(f, 2, res));
  CHECK_OK(dml_pass_run_pipeline(m, dml_pass_default_pipeline(), &o));
  void *bytes = NULL;
  size_t size = 0;
  dml_rt_session_t *s = NULL;
  *model = NULL;
  CHECK_OK(dml_package_emit_memory(m, NULL, &bytes, &size));
  dml_ir_module_release(m);
  if (bytes) CHECK_OK(dml_rt_model_load_memory(bytes, size, model));
  free(bytes);
  if (*model) CHECK_OK(dml_rt_session_create(*model, "cpu", &s));
  return s;
}

/* The seed scales the gradient; a wrt value the loss does not read gets NULL. */
static void test_seed_and_unused_wrt(void) {
  static const char *text =
      "func @f(%x: f64[3], %z: f64[3], %s: f64[]) -> (?[?]) {\n"
      "  %y = Mul(%x, %x)\n  %l = ReduceSum(%y) {keepdims = 0}\n  return %l\n}\n";
  dml_ir_module_t *m = NULL;
  dml_ir_function_t *f = parse_f(text, "seed", &m);
  if (!f) return;
  dml_ir_value_t *wrt[2] = {f->args[0], f->args[1]}, *g[2] = {NULL, NULL};
  CHECK_OK(dml_autodiff(f, f->results[0], f->args[2], 2, wrt, g));
  CHECK(g[0] != NULL && g[1] == NULL);
  if (!g[0]) {
    dml_ir_module_release(m);
    return;
  }
  dml_rt_model_t *model = NULL;
  dml_rt_session_t *s = grad_session(m, f, g[0], &model);
  if (!s) {
    dml_rt_model_release(model);
    return;
  }
  double x[3] = {1.0, -2.0, 0.5}, z[3] = {0, 0, 0}, seed = -3.0;
  int64_t d3 = 3;
  dml_tensor_t t;
  memset(&t, 0, sizeof t);
  t.dtype = DML_DTYPE_F64;
  t.rank = 1;
  t.dims[0] = d3;
  t.data = x;
  CHECK_OK(dml_rt_session_set_input(s, 0, &t));
  t.data = z;
  CHECK_OK(dml_rt_session_set_input(s, 1, &t));
  t.rank = 0;
  t.data = &seed;
  CHECK_OK(dml_rt_session_set_input(s, 2, &t));
  CHECK_OK(dml_rt_session_run(s));
  dml_tensor_t gx;
  CHECK_OK(dml_rt_session_get_output(s, 1, &gx));
  for (int i = 0; i < 3; i++)
    CHECK_NEAR(((const double *)gx.data)[i], seed * 2.0 * x[i], 1e-15);
  dml_rt_session_release(s);
  dml_rt_model_release(model);
}

/* Where the finite differences cannot look: ReduceMax/ReduceMin split the
 * gradient evenly between tied extremes (PyTorch's amax/amin; the check
 * cases use distinct values), ReduceProd is exact at zeros (the product of
 * the other elements at a single zero, 0 with two), ReduceL2 of zeros gives
 * 0 (PyTorch's norm). Each @f_k(x: f64[4]) reduces all of x to the loss;
 * its gradient must equal the stated values to 1e-15. */
static void test_exact_values(void) {
  static const struct {
    const char *op;
    double x[4], want[4];
  } k[] = {
      {"ReduceMax", {1.0, 3.0, 3.0, 2.0}, {0.0, 0.5, 0.5, 0.0}},
      {"ReduceMax", {3.0, 3.0, 3.0, -1.0}, {1.0 / 3, 1.0 / 3, 1.0 / 3, 0.0}},
      {"ReduceMin", {-2.0, 5.0, -2.0, -2.0}, {1.0 / 3, 0.0, 1.0 / 3, 1.0 / 3}},
      {"ReduceProd", {0.0, 2.0, 3.0, -1.0}, {-6.0, 0.0, 0.0, 0.0}},
      {"ReduceProd", {0.0, 2.0, 0.0, -1.0}, {0.0, 0.0, 0.0, 0.0}},
      {"ReduceProd", {1.5, 2.0, 4.0, -1.0}, {-8.0, -6.0, -3.0, 12.0}},
      {"ReduceL2", {0.0, 0.0, 0.0, 0.0}, {0.0, 0.0, 0.0, 0.0}},
  };
  for (size_t c = 0; c < sizeof k / sizeof k[0]; c++) {
    char text[256];
    snprintf(text, sizeof text,
             "func @f(%%x: f64[4]) -> (?[?]) {\n  %%l = %s(%%x) {keepdims = 0}\n"
             "  return %%l\n}\n",
             k[c].op);
    dml_ir_module_t *m = NULL;
    dml_ir_function_t *f = parse_f(text, "exact", &m);
    if (!f) return;
    dml_ir_value_t *g = NULL;
    CHECK_OK(dml_autodiff(f, f->results[0], NULL, 1, &f->args[0], &g));
    if (!g) {
      dml_ir_module_release(m);
      return;
    }
    dml_rt_model_t *model = NULL;
    dml_rt_session_t *s = grad_session(m, f, g, &model);
    if (!s) {
      dml_rt_model_release(model);
      return;
    }
    dml_tensor_t t;
    memset(&t, 0, sizeof t);
    t.dtype = DML_DTYPE_F64;
    t.rank = 1;
    t.dims[0] = 4;
    t.data = (void *)k[c].x;
    CHECK_OK(dml_rt_session_set_input(s, 0, &t));
    CHECK_OK(dml_rt_session_run(s));
    dml_tensor_t gx;
    CHECK_OK(dml_rt_session_get_output(s, 1, &gx));
    for (int i = 0; i < 4; i++) {
      double got = ((const double *)gx.data)[i];
      if (!(fabs(got - k[c].want[i]) <= 1e-15))
        fprintf(stderr, "%s case %zu: d/dx[%d] = %.17g, want %.17g\n", k[c].op, c, i, got,
                k[c].want[i]);
      CHECK_NEAR(got, k[c].want[i], 1e-15);
    }
    dml_rt_session_release(s);
    dml_rt_model_release(model);
  }
}

/* Forms of ops with a rule that the rule does not handle: UNIMPLEMENTED
 * naming the node, its op and the reason. */
static void test_unimplemented_forms(void) {
  static const struct {
    const char *args, *body, *want;
  } k[] = {
      {"%x: f64[2,2,3], %w: f64[2,3,4]",
       "%y = Einsum(%x, %w) {equation = \"...ij,...jk->...ik\"}",
       "node 'n' (Einsum): ellipsis"},
      {"%x: f64[3,3], %w: f64[3,3]", "%y = Einsum(%x, %w) {equation = \"ii,ij->j\"}",
       "node 'n' (Einsum): a repeated subscript"},
      {"%x: f64[1,2,3,3], %w: f64[2,2,2,2]",
       "%y = ConvTranspose(%x, %w) {strides = [2, 2], output_shape = [7, 7]}",
       "node 'n' (ConvTranspose): output_shape"},
      {"%x: f64[2,3]", "%y = Pad(%x, @p) {mode = \"reflect\"}",
       "node 'n' (Pad): negative pads, or reflect/wrap pads longer than the dim"},
  };
  for (size_t c = 0; c < sizeof k / sizeof k[0]; c++) {
    char text[512];
    snprintf(text, sizeof text,
             "global @p : i64[4] = dense<[2, 0, 0, 0]>\n"
             "func @f(%s) -> (?[?]) {\n  %s\n  %%l = ReduceSum(%%y) {keepdims = 0}\n"
             "  return %%l\n}\n",
             k[c].args, k[c].body);
    dml_ir_module_t *m = NULL;
    dml_ir_function_t *f = parse_f(text, "forms", &m);
    if (!f) continue;
    f->first->name = dml_ir_strdup(m, "n"); /* the op under test */
    dml_ir_value_t *g = NULL;
    CHECK_ERROR(dml_autodiff(f, f->results[0], NULL, 1, &f->args[0], &g),
                DML_STATUS_UNIMPLEMENTED, k[c].want);
    dml_ir_module_release(m);
  }
}

/* Errors: a loss that is not a scalar, a wrt value that is not a float. */
static void test_errors(void) {
  static const char *text =
      "func @f(%x: f64[3], %i: i64[3]) -> (?[?]) {\n"
      "  %y = Mul(%x, %x)\n  %l = ReduceSum(%y) {keepdims = 0}\n  return %l\n}\n";
  dml_ir_module_t *m = NULL;
  dml_ir_function_t *f = parse_f(text, "errors", &m);
  if (!f) return;
  dml_ir_value_t *g = NULL, *y = f->first->outputs[0];
  CHECK_ERROR(dml_autodiff(f, y, NULL, 1, &f->args[0], &g), DML_STATUS_INVALID_ARGUMENT,
              "");
  CHECK_ERROR(dml_autodiff(f, f->results[0], NULL, 1, &f->args[1], &g),
              DML_STATUS_INVALID_ARGUMENT, "");
  dml_ir_module_release(m);
}

/* The cases file parses, and has cases. */
static void test_load_cases(void) {
  char path[1024];
  CHECK(load_cases(dml_test_path("DMLC_SOURCE_DIR", "tests/autodiff/vjp_cases.txt", path,
                                 sizeof path)));
  CHECK(n_cases > 0);
  k_checked = calloc(n_cases ? n_cases : 1, sizeof *k_checked);
  if (!k_checked) abort();
}

int main(void) {
  setvbuf(stdout, NULL, _IONBF, 0); /* keep stdout and stderr in order */
  k_only = getenv("DMLC_VJP_CASE");
  RUN(test_load_cases);
  RUN(test_rules_against_central_differences);
  RUN(test_every_rule_has_a_case);
  RUN(test_seed_and_unused_wrt);
  RUN(test_exact_values);
  RUN(test_unimplemented_forms);
  RUN(test_errors);
  free_cases();
  free(k_checked);
  return dml_test_finish();
}
