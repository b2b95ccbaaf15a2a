/*
 * eager_lib_gen.c — writes the eager kernel library (runtime/dml_eager_lib.h)
 * as a C file of SPIR-V arrays, when the runtime is built:
 *
 *   dmlc_eager_libgen OUT.c
 *
 * For every elementwise op of ops.def it builds a one-node function (f32
 * operands of a symbolic length, the op's attributes at their defaults,
 * Mod with fmod = 1), asks the scheduler for the node's formula
 * (dml_ksched_ew_node: the value the compiled path fuses into its kernels)
 * and wraps it in a kernel whose loads and stores address the tensors
 * through run-time offsets, dims and strides (push constants, the layout
 * of dml_eager_lib.h); GLSL -> SPIR-V as for packages
 * (dml_codegen_glsl, dml_codegen_spirv). Ops the scheduler refuses for f32
 * operands are left out (listed on stderr); the runtime names them in its
 * UNIMPLEMENTED error.
 *
 *   dmlc_eager_libgen --ptx OUT.c
 *
 * writes the same kernels, row for row, rendered as CUDA C
 * (dml_codegen_cuda) and compiled to PTX for sm_80 with clang-16
 * (dml_codegen_cuda_ptx), as `dmlc compile --target cuda` does: the table
 * dml_eager_ptx (dml_eager_lib.h), each row's entry point renamed
 * DML_EAGER_PTX_ENTRY.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dml_codegen.h"
#include "dml_eager_lib.h"
#include "dml_ew.h"
#include "dml_file.h"
#include "schedule_internal.h"

/* The enum identifier of each op (the rows name ops by it, so a library
 * compiled against another ops.def fails to compile instead of naming
 * other ops: DMLC_EAGER_PTX_C brings one from another build). */
static const char *const k_op_enum[DML_OP_COUNT_] = {
    "DML_OP_INVALID",
#define DML_OP(e, name, imin, imax, omin, omax, flags) "DML_OP_" #e,
#include "ops.def"
#undef DML_OP
};

static const dml_kidx_t *sym(dml_kpool_t *p, uint32_t w) {
  return dml_ki_sym(p, (int32_t)w);
}

/* The body: for it < ITERS: i = gid + it * STRIDE; if i < N: y[i] = f(x). */
static dml_status_t ew_kernel(dml_op_t op, uint32_t n_in, uint32_t nd, dml_kpool_t *p,
                              dml_kernel_t *K, const char **why) {
  /* the one-node function the scheduler sees */
  dml_pkg_symbol_t S = {
      "n", (int64_t)1 << 31, DML_PKG_SYMBOL_INPUT, 0, 0, 0, 0, {-1, -1}, 1, 0, 1};
  dml_pkg_value_t vals[DML_EAGER_MAX_INPUTS + 1];
  uint32_t ins[DML_EAGER_MAX_INPUTS], out = n_in;
  memset(vals, 0, sizeof vals);
  for (uint32_t j = 0; j <= n_in; j++) {
    vals[j].name = j < n_in ? "x" : "y";
    vals[j].type.dtype = DML_DTYPE_F32;
    vals[j].type.rank = 1;
    vals[j].type.dims[0].value = 1; /* 1 * symbol 0 */
    vals[j].type.dims[0].sym = 0;
    vals[j].storage = j < n_in ? DML_PKG_STORAGE_INPUT : DML_PKG_STORAGE_ARENA;
    vals[j].bytes = 4;
    if (j < n_in) ins[j] = j;
  }
  dml_attr_t fmod = {0};
  fmod.name = "fmod";
  fmod.kind = DML_ATTR_INT;
  fmod.i = 1;
  dml_pkg_node_t node = {
      op, dml_op_name(op), "", n_in, ins, 1, &out, op == DML_OP_MOD ? 1u : 0u, &fmod};
  dml_pkg_function_t fn = {"eager", 0, n_in + 1, vals, 1, &node, n_in, ins, 1, &out};
  dml_pkg_graph_t g = {1, &S, 1, &fn, NULL};

  /* coordinates of element i, outermost dim first */
  int32_t it = DML_KVAR_FIRST_LOOP;
  const dml_kidx_t *i = dml_ki_bin(
      p, DML_KI_ADD, dml_ki_var(p, DML_KVAR_GID_X),
      dml_ki_bin(p, DML_KI_MUL, dml_ki_var(p, it), sym(p, DML_EAGER_PC_STRIDE)));
  const dml_kidx_t *coord[DML_EAGER_RANK], *rest = i;
  /* the last nd dims only (nd 1: no division, the flat form) */
  const int lo = (int)(DML_EAGER_RANK - nd);
  for (int d = (int)DML_EAGER_RANK - 1; d >= lo; d--) {
    const dml_kidx_t *e = sym(p, DML_EAGER_PC_DIMS + (uint32_t)d);
    coord[d] = d == lo ? rest : dml_ki_bin(p, DML_KI_MOD, rest, e);
    rest = dml_ki_bin(p, DML_KI_DIV, rest, e);
  }
  const dml_kval_t *x[DML_EAGER_MAX_INPUTS];
  dml_kstmt_t *let[DML_EAGER_MAX_INPUTS] = {NULL};
  for (uint32_t j = 0; j < n_in; j++) {
    uint32_t w = DML_EAGER_PC_IN + j * DML_EAGER_PC_IN_WORDS;
    const dml_kidx_t *idx = sym(p, w);
    for (uint32_t d = (uint32_t)lo; d < DML_EAGER_RANK; d++)
      idx = dml_ki_bin(p, DML_KI_ADD, idx,
                       dml_ki_bin(p, DML_KI_MUL, coord[d], sym(p, w + 1 + d)));
    /* into a register: the formula reads it several times */
    let[j] = dml_ks_new(p, DML_KS_LET);
    if (let[j]) {
      let[j]->reg = j;
      let[j]->val = dml_kv_load(p, DML_KBUF_WEIGHTS, idx);
    }
    x[j] = dml_kv_reg(p, j);
  }
  const dml_kval_t *v = x[0]; /* Identity: the strided copy */
  if (op != DML_OP_IDENTITY) *why = dml_ksched_ew_node(p, &g, 0, 0, x, &v);
  if (*why) return DML_OK;
  dml_kstmt_t *st = dml_ks_new(p, DML_KS_STORE);
  dml_kstmt_t *guard = dml_ks_new(p, DML_KS_IF_LT);
  dml_kstmt_t *loop = dml_ks_new(p, DML_KS_FOR);
  if (!st || !guard || !loop)
    return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, "codegen.eager",
                           "out of memory");
  st->buf = DML_KBUF_ARENA;
  st->dtype = DML_KT_F32;
  st->idx = i;
  st->val = v;
  dml_kblock_t body = {NULL, NULL};
  for (uint32_t j = 0; j < n_in; j++) dml_kblock_add(&body, let[j]);
  dml_kblock_add(&body, st);
  guard->lhs = i;
  guard->hi = sym(p, DML_EAGER_PC_N);
  guard->body = body.first;
  loop->var = it;
  loop->hi = sym(p, DML_EAGER_PC_ITERS);
  loop->step = 1;
  loop->body = guard;
  memset(K, 0, sizeof *K);
  snprintf(K->name, sizeof K->name, "eager_%s", dml_op_name(op));
  K->kind = DML_KK_ELEMENTWISE;
  K->local[0] = DML_EAGER_LOCAL;
  K->local[1] = K->local[2] = 1;
  K->body = loop;
  K->n_regs = n_in;
  return p->failed ? dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, "codegen.eager",
                                     "out of memory")
                   : DML_OK;
}

/* Reduction `op` over axis 1 of x [S0, S1, S2] (keepdims): the
 * scheduler's plan of the one-node function, which must be one kernel. */
static dml_status_t reduce_plan(dml_op_t op, int64_t max_len, dml_kplan_t **out,
                                const char **why) {
  dml_pkg_symbol_t S[3];
  static const char *const names[3] = {"outer", "len", "inner"};
  for (int i = 0; i < 3; i++) {
    dml_pkg_symbol_t z = {names[i],
                          i == 1 ? max_len : (int64_t)1 << 30,
                          DML_PKG_SYMBOL_INPUT,
                          0,
                          0,
                          0,
                          0,
                          {-1, -1},
                          1,
                          0,
                          1};
    S[i] = z;
  }
  dml_pkg_value_t vals[2];
  memset(vals, 0, sizeof vals);
  for (int j = 0; j < 2; j++) {
    vals[j].name = j ? "y" : "x";
    vals[j].type.dtype = DML_DTYPE_F32;
    vals[j].type.rank = 3;
    for (int d = 0; d < 3; d++) {
      vals[j].type.dims[d].value = 1;
      vals[j].type.dims[d].sym = j && d == 1 ? -1 : d;
    }
    vals[j].storage = j ? DML_PKG_STORAGE_ARENA : DML_PKG_STORAGE_CONST;
    vals[j].bytes = 4;
  }
  uint32_t in = 0, y = 1;
  int64_t axis = 1;
  dml_attr_t a[2];
  memset(a, 0, sizeof a);
  a[0].name = "axes";
  a[0].kind = DML_ATTR_INTS;
  a[0].n = 1;
  a[0].ints = &axis;
  a[1].name = "keepdims";
  a[1].kind = DML_ATTR_INT;
  a[1].i = 1;
  dml_pkg_node_t node = {op, dml_op_name(op), "", 1, &in, 1, &y, 2, a};
  dml_pkg_function_t fn = {"eager", 4, 2, vals, 1, &node, 0, NULL, 1, &y};
  dml_pkg_graph_t g = {3, S, 1, &fn, NULL};
  dml_kplan_t *plan = NULL;
  dml_status_t s = dml_kschedule(&g, 0, NULL, 0, &plan);
  if (s) { /* the scheduler has no f32 form of this op */
    dml_status_free(s);
    *why = "not scheduled for f32";
    return DML_OK;
  }
  if (plan->n_kernels != 1) {
    dml_kplan_release(plan);
    *why = "not one kernel";
    return DML_OK;
  }
  *out = plan;
  return DML_OK;
}

typedef struct gen {
  FILE *f;
  int ptx; /* --ptx: CUDA C -> PTX instead of GLSL -> SPIR-V */
  uint32_t n;
  char table[65536];
  size_t tlen;
} gen_t;

static dml_status_t emit_words(gen_t *G, const dml_kernel_t *K, uint32_t n_symbols,
                               dml_op_t op, uint32_t kind, uint32_t n_in,
                               int64_t max_len);

/* Two forms per op: flat (one dim after merging: no index division) and
 * DML_EAGER_RANK dims. */
static dml_status_t emit(gen_t *G, dml_op_t op, uint32_t n_in) {
  dml_status_t s = DML_OK;
  const uint32_t forms[2] = {1, DML_EAGER_RANK};
  for (int f = 0; f < 2 && !s; f++) {
    dml_kpool_t pool = {0};
    dml_kernel_t K;
    const char *why = NULL;
    s = ew_kernel(op, n_in, forms[f], &pool, &K, &why);
    if (!s && why) {
      if (f == 0)
        fprintf(stderr, "dmlc_eager_libgen: %s (%u f32 inputs) left out: %s\n",
                dml_op_name(op), n_in, why);
      dml_kpool_free(&pool);
      return DML_OK;
    }
    if (!s) s = emit_words(G, &K, DML_EAGER_PC_WORDS, op, DML_EAGER_EW, n_in, forms[f]);
    dml_kpool_free(&pool);
  }
  return s;
}

/* Writes PTX text `ptx` as a union k<G->n> of its bytes (NUL-terminated,
 * padded to whole words) and its words; *out_nw: the words. */
static void emit_ptx(gen_t *G, const char *ptx, size_t *out_nw) {
  size_t len = strlen(ptx), nw = (len + 1 + 3) / 4;
  fprintf(G->f, "static const union { char c[%zu]; uint32_t w[%zu]; } k%u = {{\n  \"",
          nw * 4, nw, G->n);
  for (const char *c = ptx; *c; c++) {
    if (*c == '\n')
      fprintf(G->f, "\\n\"%s", c[1] ? "\n  \"" : "");
    else if (*c == '\t')
      fputs("\\t", G->f);
    else if (*c == '"' || *c == '\\')
      fprintf(G->f, "\\%c", *c);
    else if ((unsigned char)*c < 32 || (unsigned char)*c > 126)
      fprintf(G->f, "\\%03o", (unsigned)(unsigned char)*c);
    else
      fputc(*c, G->f);
  }
  if (!len || ptx[len - 1] != '\n') fputc('"', G->f);
  fprintf(G->f, "}};\n");
  *out_nw = nw;
}

/* Writes the words of kernel `K` (n_symbols push-constant words) as
 * array k<G->n>, and its table row. */
static dml_status_t emit_words(gen_t *G, const dml_kernel_t *K, uint32_t n_symbols,
                               dml_op_t op, uint32_t kind, uint32_t n_in,
                               int64_t max_len) {
  char *glsl = NULL, *ptx = NULL;
  uint32_t *words = NULL;
  size_t nw = 0;
  dml_status_t s = DML_OK;
  if (G->ptx) { /* the same kernel IR, rendered as CUDA C */
    dml_kernel_t KC = *K;
    snprintf(KC.name, sizeof KC.name, DML_EAGER_PTX_ENTRY, G->n);
    s = dml_codegen_cuda(&KC, n_symbols, &glsl);
    if (!s) s = dml_codegen_cuda_ptx(glsl, 80, &ptx);
  } else {
    s = dml_codegen_glsl(K, n_symbols, &glsl);
    if (!s) s = dml_codegen_spirv(glsl, K->name, &words, &nw);
  }
  if (!s) {
    if (ptx) {
      emit_ptx(G, ptx, &nw);
    } else {
      fprintf(G->f, "static const uint32_t k%u[%zu] = {", G->n, nw);
      for (size_t w = 0; w < nw; w++)
        fprintf(G->f, "%s0x%08xu,", w % 8 ? " " : "\n  ", words[w]);
      fprintf(G->f, "\n};\n");
    }
    char items[400] = "";
    if (kind == DML_EAGER_REDUCE) {
      int len = 0;
      for (int d = 0; d < 3; d++)
        len += snprintf(items + len, sizeof items - (size_t)len,
                        "%s{%lldll, %lldll, %d, %uu}", d ? ", " : "",
                        (long long)K->items[d].c0, (long long)K->items[d].c,
                        (int)K->items[d].sym, K->items[d].more);
    } else {
      snprintf(items, sizeof items, "{0, 0, -1, 0}, {0, 0, -1, 0}, {0, 0, -1, 0}");
    }
    int len = snprintf(G->table + G->tlen, sizeof G->table - G->tlen,
                       "  {%s, %uu, %u, %zu, k%u%s, {%u, %u, %u}, "
                       "{%s}, %lldll},\n",
                       k_op_enum[op], kind, n_in, nw, G->n, ptx ? ".w" : "", K->local[0],
                       K->local[1], K->local[2], items, (long long)max_len);
    if (len < 0 || (size_t)len >= sizeof G->table - G->tlen)
      s = dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, "codegen.eager",
                          "the table outgrew its buffer");
    else
      G->tlen += (size_t)len;
    G->n++;
  }
  free(glsl);
  free(ptx);
  free(words);
  return dml_status_annotate(s, "eager kernel %s", dml_op_name(op));
}

/* Two kernels per reduction: rows up to DML_KROW_MIN long (one invocation
 * per row) and of any length (one workgroup per row). */
static dml_status_t emit_reduce(gen_t *G, dml_op_t op) {
  const int64_t lens[2] = {DML_KROW_MIN, (int64_t)1 << 30};
  dml_status_t s = DML_OK;
  for (int i = 0; i < 2 && !s; i++) {
    dml_kplan_t *plan = NULL;
    const char *why = NULL;
    DML_RETURN_IF_ERROR(reduce_plan(op, lens[i], &plan, &why));
    if (why) {
      fprintf(stderr, "dmlc_eager_libgen: %s (f32) left out: %s\n", dml_op_name(op), why);
      return DML_OK;
    }
    s = emit_words(G, &plan->kernels[0], DML_EAGER_REDUCE_SYMS, op, DML_EAGER_REDUCE, 1,
                   lens[i]);
    dml_kplan_release(plan);
  }
  return s;
}

int main(int argc, char **argv) {
  int ptx = argc == 3 && !strcmp(argv[1], "--ptx");
  if (argc != 2 + ptx) {
    fprintf(stderr, "usage: dmlc_eager_libgen [--ptx] OUT.c\n");
    return 2;
  }
  const char *lib = ptx ? "dml_eager_ptx" : "dml_eager_spirv";
  gen_t *G = (gen_t *)calloc(1, sizeof *G);
  char *text = NULL;
  size_t size = 0;
  if (!G) return 1;
  G->ptx = ptx;
  G->f = open_memstream(&text, &size);
  if (!G->f) return 1;
  fprintf(G->f,
          "/* Generated by dmlc_eager_libgen (codegen/eager_lib_gen.c): the eager "
          "kernel library's %s. Do not edit. */\n"
          "#include \"dml_eager_lib.h\"\n",
          ptx ? "PTX (clang-16, sm_80)" : "SPIR-V");
  /* the kernels' interface as generated (a file compiled by another build,
   * DMLC_EAGER_PTX_C, must agree) */
  fprintf(G->f,
          "_Static_assert(DML_EAGER_PC_WORDS == %u && DML_EAGER_RANK == %u && "
          "DML_EAGER_LOCAL == %u && DML_EAGER_REDUCE_SYMS == %u, \"generated for another "
          "dml_eager_lib.h: run dmlc_eager_libgen of this checkout\");\n",
          (unsigned)DML_EAGER_PC_WORDS, DML_EAGER_RANK, DML_EAGER_LOCAL,
          DML_EAGER_REDUCE_SYMS);
  dml_status_t s = DML_OK;
  s = emit(G, DML_OP_IDENTITY, 1); /* the strided copy */
  for (int o = 1; o < DML_OP_COUNT_ && !s; o++) {
    const dml_op_info_t *info = dml_op_info((dml_op_t)o);
    if (info && (info->flags & DML_OPF_REDUCTION)) {
      s = emit_reduce(G, (dml_op_t)o);
      continue;
    }
    if (!info || !(info->flags & DML_OPF_ELEMENTWISE)) continue;
    /* fixed arities, and the variadic ops' two-operand form */
    uint32_t n_in = info->max_inputs < 0 ? 2u : (uint32_t)info->max_inputs;
    if (info->min_inputs != info->max_inputs && info->max_inputs >= 0) {
      fprintf(stderr, "dmlc_eager_libgen: %s left out: optional inputs\n", info->name);
      continue;
    }
    if (o == DML_OP_CAST) { /* f32 -> f32 would be a copy; other dtypes: not yet */
      fprintf(stderr, "dmlc_eager_libgen: Cast left out: f32 kernels only\n");
      continue;
    }
    if (n_in < 1 || n_in > DML_EAGER_MAX_INPUTS) {
      fprintf(stderr, "dmlc_eager_libgen: %s left out: %u inputs\n", info->name, n_in);
      continue;
    }
    s = emit(G, (dml_op_t)o, n_in);
  }
  fprintf(G->f,
          "const dml_eager_kernel_t %s[] = {\n%s  {DML_OP_INVALID, 0, 0, 0, "
          "0, {0, 0, 0}, {{0, 0, -1, 0}, {0, 0, -1, 0}, {0, 0, -1, 0}}, 0}\n};\n"
          "const uint32_t %s_count = %u;\n",
          lib, G->tlen ? G->table : "", lib, G->n);
  fclose(G->f);
  const void *parts[1] = {text};
  size_t sizes[1] = {size};
  if (!s) s = dml_file_write_atomic("codegen.eager", argv[argc - 1], parts, sizes, 1);
  free(text);
  free(G);
  if (s) {
    char *m = dml_status_format(s);
    fprintf(stderr, "dmlc_eager_libgen: %s\n", m ? m : "error");
    free(m);
    dml_status_free(s);
    return 1;
  }
  return 0;
}
