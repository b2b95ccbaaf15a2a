/*
 * eager_lib_gen.c — writes the eager kernel library (runtime/dml_eager_lib.h)
 * as a C file of SPIR-V arrays, when the runtime is built:
 *
 *   dmlc_eager_libgen OUT.c
 *
 * For every elementwise op of ops.def it builds a one-node function (f32
 * operands of a symbolic length; bool for the logic ops, a bool output for
 * the compares, Where's bool condition; the op's attributes at their
 * defaults, Mod with fmod = 1, but the formula table's unary ops' (ew_ops.def
 * DML_EW), which are push-constant words (DML_EAGER_PC_ATTR); Clip-13 with
 * min, and with min and max, as operands), asks the scheduler for the node's formula
 * (dml_ksched_ew_node: the value the compiled path fuses into its kernels)
 * and wraps it in a kernel whose loads and stores address the tensors
 * through run-time offsets, dims and strides (push constants, the layout
 * of dml_eager_lib.h); GLSL -> SPIR-V as for packages
 * (dml_codegen_glsl, dml_codegen_spirv). Ops the scheduler refuses for f32
 * operands are left out (listed on stderr); the runtime names them in its
 * UNIMPLEMENTED error. The reductions, Softmax and LogSoftmax are the
 * scheduler's own kernels (dml_kschedule of a one-node function); Gather
 * (gather_kernel: the index rule the compiled path's,
 * dml_ksched_gather_index, with run-time offsets), MatMul
 * and Conv are written here (mm_kernel, conv_kernel: the scheduler's GEMM
 * and Conv forms fix their sizes and operands' offsets at compile time),
 * for f32 each operand at its own binding, for f64 every operand in
 * binding 1 (DML_KBUF_IN2/IN3 are f32 only in the renderers).
 *
 *   dmlc_eager_libgen --ptx OUT.c
 *
 * writes the same kernels, row for row, rendered as CUDA C
 * (dml_codegen_cuda) and compiled to PTX for sm_80 with clang-16
 * (dml_codegen_cuda_ptx), as `dmlc compile --target cuda` does: the table
 * dml_eager_ptx (dml_eager_lib.h), each row's entry point renamed
 * DML_EAGER_PTX_ENTRY. The f32 MatMul's B and Conv's W and bias (kernel-IR
 * buffers DML_KBUF_IN2/IN3) are the CUDA kernel's parameters in2 and in3,
 * after arena and weights (dml_codegen_cuda).
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

/* The enum identifier of dtype dt (the rows name dtypes by it, as ops). */
static const char *k_dtype_enum(dml_dtype_t dt) {
  switch (dt) {
    case DML_DTYPE_F32: return "DML_DTYPE_F32";
    case DML_DTYPE_F16: return "DML_DTYPE_F16";
    case DML_DTYPE_BF16: return "DML_DTYPE_BF16";
    case DML_DTYPE_I32: return "DML_DTYPE_I32";
    case DML_DTYPE_I64: return "DML_DTYPE_I64";
    case DML_DTYPE_BOOL: return "DML_DTYPE_BOOL";
    case DML_DTYPE_U8: return "DML_DTYPE_U8";
    case DML_DTYPE_I8: return "DML_DTYPE_I8";
    case DML_DTYPE_I16: return "DML_DTYPE_I16";
    case DML_DTYPE_F64: return "DML_DTYPE_F64";
    case DML_DTYPE_U16: return "DML_DTYPE_U16";
    case DML_DTYPE_U32: return "DML_DTYPE_U32";
    case DML_DTYPE_U64: return "DML_DTYPE_U64";
    default: return "DML_DTYPE_INVALID";
  }
}

_Static_assert(DML_EW_MAX_ATTRS <= DML_EAGER_PC_IN_WORDS,
               "the attribute words must fit in input 2's");

static const dml_kidx_t *sym(dml_kpool_t *p, uint32_t w) {
  return dml_ki_sym(p, (int32_t)w);
}

/* The body: for it < ITERS: i = gid + it * STRIDE; if i < N: y[i] = f(x). */
static dml_status_t ew_kernel(dml_op_t op, uint32_t n_in, uint32_t nd, dml_dtype_t dt,
                              dml_dtype_t odt, dml_kpool_t *p, dml_kernel_t *K,
                              const char **why) {
  /* operand j's dtype: the row's, Where's condition bool (dml_eager_in_dtype) */
  dml_eager_kernel_t row;
  memset(&row, 0, sizeof row);
  row.op = op;
  row.dtype = (uint32_t)dt;
  dml_dtype_t idt[DML_EAGER_MAX_INPUTS];
  dml_kdtype_t kt[DML_EAGER_MAX_INPUTS], okt = DML_KT_F32;
  for (uint32_t j = 0; j < n_in; j++) {
    idt[j] = dml_eager_in_dtype(&row, j);
    if (!dml_kdtype_of(idt[j], &kt[j])) {
      *why = "no kernel dtype";
      return DML_OK;
    }
  }
  if (!dml_kdtype_of(odt, &okt)) {
    *why = "no kernel dtype";
    return DML_OK;
  }
  /* the one-node function the scheduler sees */
  dml_pkg_symbol_t S = {
      "n", (int64_t)1 << 31, DML_PKG_SYMBOL_INPUT, 0, 0, 0, 0, {-1, -1}, 1, 0, 1};
  dml_pkg_value_t vals[DML_EAGER_MAX_INPUTS + 1];
  uint32_t ins[DML_EAGER_MAX_INPUTS], out = n_in;
  memset(vals, 0, sizeof vals);
  for (uint32_t j = 0; j <= n_in; j++) {
    vals[j].name = j < n_in ? "x" : "y";
    vals[j].type.dtype = j < n_in ? idt[j] : odt;
    vals[j].type.rank = 1;
    vals[j].type.dims[0].value = 1; /* 1 * symbol 0 */
    vals[j].type.dims[0].sym = 0;
    vals[j].storage = j < n_in ? DML_PKG_STORAGE_INPUT : DML_PKG_STORAGE_ARENA;
    vals[j].bytes = dml_dtype_size(j < n_in ? idt[j] : odt);
    if (j < n_in) ins[j] = j;
  }
  /* Mod's fmod = 1 (the scheduler's check; the kernel reads fmod from its
   * word), Cast's to */
  dml_attr_t fmod = {0};
  fmod.name = op == DML_OP_CAST ? "to" : "fmod";
  fmod.kind = DML_ATTR_INT;
  fmod.i = op == DML_OP_CAST ? dml_dtype_onnx_code(odt) : 1;
  dml_pkg_node_t node = {op,   dml_op_name(op),
                         "",   n_in,
                         ins,  1,
                         &out, op == DML_OP_MOD || op == DML_OP_CAST ? 1u : 0u,
                         &fmod};
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
      let[j]->val = kt[j] == DML_KT_F32 ? dml_kv_load(p, DML_KBUF_WEIGHTS, idx)
                                        : dml_kv_load_t(p, DML_KBUF_WEIGHTS, kt[j], idx);
    }
    x[j] = kt[j] == DML_KT_F32 ? dml_kv_reg(p, j) : dml_kv_reg_t(p, j, kt[j]);
  }
  /* the attributes of the ops of dml_eager_attr_words are the words
   * DML_EAGER_PC_ATTR, read at dispatch */
  const dml_kval_t *attrs[DML_EW_MAX_ATTRS];
  for (uint32_t a = 0; a < DML_EW_MAX_ATTRS; a++)
    attrs[a] = dml_kv_bits_f32(p, sym(p, DML_EAGER_PC_ATTR + a));
  const dml_kval_t *v = x[0]; /* Identity: the strided copy */
  if (op != DML_OP_IDENTITY)
    *why =
        dml_ksched_ew_node(p, &g, 0, 0, x, dml_eager_attr_words(op) ? attrs : NULL, &v);
  if (*why) return DML_OK;
  dml_kstmt_t *st = dml_ks_new(p, DML_KS_STORE);
  dml_kstmt_t *guard = dml_ks_new(p, DML_KS_IF_LT);
  dml_kstmt_t *loop = dml_ks_new(p, DML_KS_FOR);
  if (!st || !guard || !loop)
    return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, "codegen.eager",
                           "out of memory");
  st->buf = DML_KBUF_ARENA;
  st->dtype = okt;
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
  snprintf(K->name, sizeof K->name, "eager_%s_%s", dml_op_name(op), dml_dtype_name(dt));
  K->kind = DML_KK_ELEMENTWISE;
  K->local[0] = DML_EAGER_LOCAL;
  K->local[1] = K->local[2] = 1;
  K->body = loop;
  K->n_regs = n_in;
  return p->failed ? dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, "codegen.eager",
                                     "out of memory")
                   : DML_OK;
}

/* Reduction `op` over axis 1 of x [S0, S1, S2] (keepdims), or Softmax /
 * LogSoftmax over axis 1 of x [S0, S1, 1] (the scheduler takes no symbolic
 * dim after the axis; y as x): the scheduler's plan of the one-node
 * function, which must be one kernel. */
static dml_status_t reduce_plan(dml_op_t op, int64_t max_len, dml_dtype_t dt,
                                uint32_t select_last, dml_kplan_t **out,
                                const char **why) {
  /* ArgMax/ArgMin: an i64 y, the attributes axis and select_last_index */
  const int arg = op == DML_OP_ARG_MAX || op == DML_OP_ARG_MIN;
  const int sm = op == DML_OP_SOFTMAX || op == DML_OP_LOG_SOFTMAX;
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
    vals[j].type.dtype = j && arg ? DML_DTYPE_I64 : dt;
    vals[j].type.rank = 3;
    for (int d = 0; d < 3; d++) {
      vals[j].type.dims[d].value = 1;
      vals[j].type.dims[d].sym = sm ? (d == 2 ? -1 : d) : j && d == 1 ? -1 : d;
    }
    vals[j].storage = j ? DML_PKG_STORAGE_ARENA : DML_PKG_STORAGE_CONST;
    vals[j].bytes = dml_dtype_size(vals[j].type.dtype);
  }
  uint32_t in = 0, y = 1;
  int64_t axis = 1;
  dml_attr_t a[3];
  memset(a, 0, sizeof a);
  a[0].name = "axes";
  a[0].kind = DML_ATTR_INTS;
  a[0].n = 1;
  a[0].ints = &axis;
  if (arg || sm) {
    a[0].name = "axis";
    a[0].kind = DML_ATTR_INT;
    a[0].i = 1;
  }
  a[1].name = "keepdims";
  a[1].kind = DML_ATTR_INT;
  a[1].i = 1;
  a[2].name = "select_last_index";
  a[2].kind = DML_ATTR_INT;
  a[2].i = select_last;
  dml_pkg_node_t node = {op, dml_op_name(op),         "", 1, &in, 1,
                         &y, sm ? 1u : arg ? 3u : 2u, a};
  dml_pkg_function_t fn = {"eager", 4, 2, vals, 1, &node, 0, NULL, 1, &y};
  dml_pkg_graph_t g = {3, S, 1, &fn, NULL};
  dml_kplan_t *plan = NULL;
  dml_status_t s = dml_kschedule(&g, 0, NULL, 0, &plan);
  if (s) { /* the scheduler has no form of this op for dt */
    dml_status_free(s);
    *why = "not scheduled for this dtype";
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
  char table[262144];
  size_t tlen;
} gen_t;

static dml_status_t emit_words(gen_t *G, const dml_kernel_t *K, uint32_t n_symbols,
                               dml_op_t op, uint32_t kind, uint32_t n_in, int64_t max_len,
                               dml_dtype_t dt, dml_dtype_t odt, uint32_t select_last);

/* Two forms per op: flat (one dim after merging: no index division) and
 * DML_EAGER_RANK dims (Identity three: also 3 dims); operands of dtype dt,
 * the output odt. */
static dml_status_t emit_t(gen_t *G, dml_op_t op, uint32_t n_in, dml_dtype_t dt,
                           dml_dtype_t odt) {
  dml_status_t s = DML_OK;
  /* Identity (the strided copy behind Transpose, Slice, Expand, Concat and
   * the contiguous copies) also indexes 3 dims: fewer index divisions for
   * a transposed matrix or a batch of them */
  const uint32_t forms[3] = {1, 3, DML_EAGER_RANK};
  const int nf = op == DML_OP_IDENTITY ? 3 : 2;
  for (int f = 0; f < nf && !s; f++) {
    dml_kpool_t pool = {0};
    dml_kernel_t K;
    const char *why = NULL;
    const uint32_t form = forms[nf == 3 ? f : 2 * f];
    s = ew_kernel(op, n_in, form, dt, odt, &pool, &K, &why);
    if (!s && why) {
      if (f == 0)
        fprintf(stderr, "dmlc_eager_libgen: %s (%u %s inputs -> %s) left out: %s\n",
                dml_op_name(op), n_in, dml_dtype_name(dt), dml_dtype_name(odt), why);
      dml_kpool_free(&pool);
      return DML_OK;
    }
    if (!s)
      s = emit_words(G, &K, DML_EAGER_PC_WORDS, op, DML_EAGER_EW, n_in, form, dt, odt, 0);
    dml_kpool_free(&pool);
  }
  return s;
}

/* Whether op is a compare (two operands of one dtype, a bool output) or a
 * logic op (bool operands and output). */
static int is_compare(dml_op_t op) {
  return op == DML_OP_EQUAL || op == DML_OP_LESS || op == DML_OP_LESS_OR_EQUAL ||
         op == DML_OP_GREATER || op == DML_OP_GREATER_OR_EQUAL;
}
static int is_logic(dml_op_t op) {
  return op == DML_OP_NOT || op == DML_OP_AND || op == DML_OP_OR || op == DML_OP_XOR;
}

/* Op `op` with n_in operands of dtype dt (Where's condition bool), the
 * output the compares' bool or dt. */
static dml_status_t emit_d(gen_t *G, dml_op_t op, uint32_t n_in, dml_dtype_t dt) {
  int bool_out = is_compare(op) || op == DML_OP_IS_NAN || op == DML_OP_IS_INF;
  return emit_t(G, op, n_in, dt, bool_out ? DML_DTYPE_BOOL : dt);
}

static dml_status_t emit(gen_t *G, dml_op_t op, uint32_t n_in) {
  return emit_d(G, op, n_in, is_logic(op) ? DML_DTYPE_BOOL : DML_DTYPE_F32);
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
                               dml_op_t op, uint32_t kind, uint32_t n_in, int64_t max_len,
                               dml_dtype_t dt, dml_dtype_t odt, uint32_t select_last) {
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
                       "{%s}, %lldll, %s, %s, %uu},\n",
                       k_op_enum[op], kind, n_in, nw, G->n, ptx ? ".w" : "", K->local[0],
                       K->local[1], K->local[2], items, (long long)max_len,
                       k_dtype_enum(dt), k_dtype_enum(odt), select_last);
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

/* Two kernels per reduction (and Softmax, LogSoftmax): rows up to
 * DML_KROW_MIN long (one invocation per row) and of any length (one
 * workgroup per row); ArgMax and ArgMin
 * (an i64 output) two for each select_last_index. */
static dml_status_t emit_reduce(gen_t *G, dml_op_t op, dml_dtype_t dt) {
  const int64_t lens[2] = {DML_KROW_MIN, (int64_t)1 << 30};
  const int arg = op == DML_OP_ARG_MAX || op == DML_OP_ARG_MIN;
  dml_status_t s = DML_OK;
  for (uint32_t last = 0; last < (arg ? 2u : 1u) && !s; last++)
    for (int i = 0; i < 2 && !s; i++) {
      dml_kplan_t *plan = NULL;
      const char *why = NULL;
      DML_RETURN_IF_ERROR(reduce_plan(op, lens[i], dt, last, &plan, &why));
      if (why) {
        fprintf(stderr, "dmlc_eager_libgen: %s (%s) left out: %s\n", dml_op_name(op),
                dml_dtype_name(dt), why);
        return DML_OK;
      }
      s = emit_words(G, &plan->kernels[0], DML_EAGER_REDUCE_SYMS, op, DML_EAGER_REDUCE, 1,
                     lens[i], dt, arg ? DML_DTYPE_I64 : dt, last);
      dml_kplan_release(plan);
    }
  return s;
}

/* ---- MatMul and Conv (dml_eager_lib.h DML_EAGER_MATMUL, DML_EAGER_CONV) ---- */

static const dml_kidx_t *iadd(dml_kpool_t *p, const dml_kidx_t *a, const dml_kidx_t *b) {
  return dml_ki_bin(p, DML_KI_ADD, a, b);
}
static const dml_kidx_t *imul(dml_kpool_t *p, const dml_kidx_t *a, const dml_kidx_t *b) {
  return dml_ki_bin(p, DML_KI_MUL, a, b);
}
static const dml_kidx_t *ic(dml_kpool_t *p, int64_t c) {
  return dml_ki_const(p, c);
}

static dml_kstmt_t *stmt_set(dml_kpool_t *p, uint32_t reg, const dml_kval_t *v) {
  dml_kstmt_t *s = dml_ks_new(p, DML_KS_SET);
  if (s) {
    s->reg = reg;
    s->val = v;
  }
  return s;
}

static dml_kstmt_t *stmt_let(dml_kpool_t *p, uint32_t reg, const dml_kval_t *v) {
  dml_kstmt_t *s = dml_ks_new(p, DML_KS_LET);
  if (s) {
    s->reg = reg;
    s->val = v;
  }
  return s;
}

/* if (lo <= lhs < hi) body (lo may be NULL) */
static dml_kstmt_t *stmt_if(dml_kpool_t *p, const dml_kidx_t *lo, const dml_kidx_t *lhs,
                            const dml_kidx_t *hi, dml_kstmt_t *body) {
  dml_kstmt_t *s = dml_ks_new(p, DML_KS_IF_LT);
  if (s) {
    s->lo = lo;
    s->lhs = lhs;
    s->hi = hi;
    s->body = body;
  }
  return s;
}

static dml_kstmt_t *stmt_for(dml_kpool_t *p, int32_t var, const dml_kidx_t *hi,
                             dml_kstmt_t *body) {
  dml_kstmt_t *s = dml_ks_new(p, DML_KS_FOR);
  if (s) {
    s->var = var;
    s->hi = hi;
    s->step = 1;
    s->body = body;
  }
  return s;
}

/* acc = acc + a * b, of dtype kt */
static const dml_kval_t *fma_v(dml_kpool_t *p, uint32_t acc, const dml_kval_t *a,
                               const dml_kval_t *b, dml_kdtype_t kt) {
  return dml_kv_fn(p, DML_KF_ADD, dml_kv_reg_t(p, acc, kt),
                   dml_kv_fn(p, DML_KF_MUL, a, b));
}

/* The MatMul kernel (dml_eager_lib.h): the register-blocked tiled form of
 * the compiled path's GEMM (codegen/schedule.c emit_gemm_tiled: a
 * workgroup's block of C, a micro-tile of TM x TN per invocation, A staged
 * transposed as tile0[k][m] and B as tile1[k][n], one tile pair and two
 * barriers per K step), with M, N, K, offsets and strides read from the
 * push constants instead of fixed at compile time. Every bound is checked
 * (the sizes are unknown here); out-of-range A and B elements load as 0,
 * so a partial K step adds 0 * 0. With `unit`, A's k stride and B's n
 * stride are 1 (the form for rows stored contiguously: lavapipe then loads
 * them as vectors instead of gathering). */
static dml_status_t mm_kernel(dml_kpool_t *p, int unit, dml_kdtype_t kt,
                              dml_kernel_t *K) {
  /* f32: B at binding 2; f64: B in binding 1 with A (IN2 holds f32 only) */
  const dml_kbuf_t bbuf = kt == DML_KT_F32 ? DML_KBUF_IN2 : DML_KBUF_WEIGHTS;
  const int64_t T = DML_EAGER_LOCAL, BM = DML_EAGER_MM_TILE, BN = DML_EAGER_MM_TILE,
                BK = DML_EAGER_MM_BK, TM = 4, TN = 4, SA = BM + 4, SB = BN + 4;
  const int64_t CG = BN / TN, QA = BM * BK / T, QB = BN * BK / T;
  const uint32_t acc = 0, ra = (uint32_t)(TM * TN), rb = ra + (uint32_t)TM,
                 pa = rb + (uint32_t)TN, pb = pa + (uint32_t)QA;
  const int32_t vt = DML_KVAR_FIRST_LOOP, vs = DML_KVAR_FIRST_LOOP + 1;
  const dml_kidx_t *lid = dml_ki_var(p, DML_KVAR_LID_X);
  const dml_kidx_t *M = sym(p, DML_EAGER_MM_M), *N = sym(p, DML_EAGER_MM_N),
                   *Kk = sym(p, DML_EAGER_MM_K);
  /* block w = (batch item, row block, column block) */
  const dml_kidx_t *w = iadd(p, dml_ki_var(p, DML_KVAR_WG_X),
                             imul(p, dml_ki_var(p, vt), sym(p, DML_EAGER_MM_GRID)));
  const dml_kidx_t *nb = dml_ki_bin(p, DML_KI_MOD, w, sym(p, DML_EAGER_MM_NB));
  const dml_kidx_t *rest = dml_ki_bin(p, DML_KI_DIV, w, sym(p, DML_EAGER_MM_NB));
  const dml_kidx_t *mb = dml_ki_bin(p, DML_KI_MOD, rest, sym(p, DML_EAGER_MM_MB));
  const dml_kidx_t *bi = dml_ki_bin(p, DML_KI_DIV, rest, sym(p, DML_EAGER_MM_MB));
  const dml_kidx_t *row0 = imul(p, mb, ic(p, BM)), *col0 = imul(p, nb, ic(p, BN));
  /* the batch item's base offsets in A and B */
  const dml_kidx_t *abase = sym(p, DML_EAGER_MM_A_OFF),
                   *bbase = sym(p, DML_EAGER_MM_B_OFF);
  const dml_kidx_t *brest = bi;
  for (int d = (int)DML_EAGER_MM_BATCH - 1; d >= 0; d--) {
    const dml_kidx_t *e = sym(p, DML_EAGER_MM_BDIMS + (uint32_t)d);
    const dml_kidx_t *cd = d == 0 ? brest : dml_ki_bin(p, DML_KI_MOD, brest, e);
    brest = dml_ki_bin(p, DML_KI_DIV, brest, e);
    abase = iadd(p, abase, imul(p, cd, sym(p, DML_EAGER_MM_A_BST + (uint32_t)d)));
    bbase = iadd(p, bbase, imul(p, cd, sym(p, DML_EAGER_MM_B_BST + (uint32_t)d)));
  }
  /* the block's bases into u32 registers once per block (lavapipe does not
   * hoist their divisions out of the K loop, and scalarizes them) */
  const uint32_t rg = pb + (uint32_t)QB;
  const dml_kidx_t *hv[5] = {abase, bbase, row0, col0, imul(p, bi, M)}, *hr[5];
  dml_kblock_t hoist = {NULL, NULL};
  for (uint32_t h = 0; h < 5; h++) {
    dml_kstmt_t *l = dml_ks_new(p, DML_KS_LET);
    if (l) {
      l->reg = rg + h;
      l->val = dml_kv_idx(p, DML_KT_U32, hv[h]);
    }
    dml_kblock_add(&hoist, l);
    hr[h] = dml_ki_val(p, dml_kv_reg_t(p, rg + h, DML_KT_U32));
  }
  abase = hr[0], bbase = hr[1], row0 = hr[2], col0 = hr[3];
  const dml_kidx_t *ybase = hr[4];
  const dml_kidx_t *kb = imul(p, dml_ki_var(p, vs), ic(p, BK));
  dml_kblock_t step = {NULL, NULL};
  /* stage A: element q of this invocation is (m, kk), kk the fast dim */
  for (int64_t q = 0; q < QA; q++) {
    const dml_kidx_t *kk = dml_ki_bin(p, DML_KI_MOD, lid, ic(p, BK));
    const dml_kidx_t *m =
        iadd(p, dml_ki_bin(p, DML_KI_DIV, lid, ic(p, BK)), ic(p, q * (T / BK)));
    const dml_kidx_t *mg = iadd(p, row0, m), *kg = iadd(p, kb, kk);
    const dml_kidx_t *ai = iadd(p, abase,
                                iadd(p, imul(p, mg, sym(p, DML_EAGER_MM_A_SM)),
                                     unit ? kg : imul(p, kg, sym(p, DML_EAGER_MM_A_SK))));
    dml_kblock_add(&step, stmt_set(p, pa + (uint32_t)q, dml_kv_zero(p, kt)));
    dml_kblock_add(
        &step, stmt_if(p, NULL, mg, M,
                       stmt_if(p, NULL, kg, Kk,
                               stmt_set(p, pa + (uint32_t)q,
                                        dml_kv_load_t(p, DML_KBUF_WEIGHTS, kt, ai)))));
    dml_kstmt_t *st = dml_ks_new(p, DML_KS_TILE_STORE);
    if (st) {
      st->tile = 0;
      st->idx = iadd(p, imul(p, kk, ic(p, SA)), m);
      st->val = dml_kv_reg_t(p, pa + (uint32_t)q, kt);
    }
    dml_kblock_add(&step, st);
  }
  /* stage B: element q is (kk, n), n the fast dim */
  for (int64_t q = 0; q < QB; q++) {
    const dml_kidx_t *n = dml_ki_bin(p, DML_KI_MOD, lid, ic(p, BN));
    const dml_kidx_t *kk =
        iadd(p, dml_ki_bin(p, DML_KI_DIV, lid, ic(p, BN)), ic(p, q * (T / BN)));
    const dml_kidx_t *ng = iadd(p, col0, n), *kg = iadd(p, kb, kk);
    const dml_kidx_t *bidx =
        iadd(p, bbase,
             iadd(p, imul(p, kg, sym(p, DML_EAGER_MM_B_SK)),
                  unit ? ng : imul(p, ng, sym(p, DML_EAGER_MM_B_SN))));
    dml_kblock_add(&step, stmt_set(p, pb + (uint32_t)q, dml_kv_zero(p, kt)));
    dml_kblock_add(&step, stmt_if(p, NULL, kg, Kk,
                                  stmt_if(p, NULL, ng, N,
                                          stmt_set(p, pb + (uint32_t)q,
                                                   dml_kv_load_t(p, bbuf, kt, bidx)))));
    dml_kstmt_t *st = dml_ks_new(p, DML_KS_TILE_STORE);
    if (st) {
      st->tile = 1;
      st->idx = iadd(p, imul(p, kk, ic(p, SB)), n);
      st->val = dml_kv_reg_t(p, pb + (uint32_t)q, kt);
    }
    dml_kblock_add(&step, st);
  }
  dml_kblock_add(&step, dml_ks_new(p, DML_KS_BARRIER));
  /* micro-tile rows 4 ty + i and columns 4 tx + j: adjacent, so the shared
   * reads vectorize (the compiled form's micro_off for 4 x 4) */
  const dml_kidx_t *tx = imul(p, dml_ki_bin(p, DML_KI_MOD, lid, ic(p, CG)), ic(p, TN)),
                   *ty = imul(p, dml_ki_bin(p, DML_KI_DIV, lid, ic(p, CG)), ic(p, TM));
  for (int64_t kk = 0; kk < BK; kk++) {
    for (int64_t i = 0; i < TM; i++)
      dml_kblock_add(&step,
                     stmt_set(p, ra + (uint32_t)i,
                              dml_kv_tile_t(p, 0, iadd(p, ty, ic(p, kk * SA + i)), kt)));
    for (int64_t j = 0; j < TN; j++)
      dml_kblock_add(&step,
                     stmt_set(p, rb + (uint32_t)j,
                              dml_kv_tile_t(p, 1, iadd(p, tx, ic(p, kk * SB + j)), kt)));
    for (int64_t i = 0; i < TM; i++)
      for (int64_t j = 0; j < TN; j++) {
        uint32_t r = acc + (uint32_t)(i * TN + j);
        dml_kblock_add(&step, stmt_set(p, r,
                                       fma_v(p, r, dml_kv_reg_t(p, ra + (uint32_t)i, kt),
                                             dml_kv_reg_t(p, rb + (uint32_t)j, kt), kt)));
      }
  }
  dml_kblock_add(&step, dml_ks_new(p, DML_KS_BARRIER));
  dml_kblock_t blk = hoist;
  for (int64_t i = 0; i < TM * TN; i++)
    dml_kblock_add(&blk, stmt_set(p, acc + (uint32_t)i, dml_kv_zero(p, kt)));
  const dml_kidx_t *steps =
      dml_ki_bin(p, DML_KI_DIV, iadd(p, Kk, ic(p, BK - 1)), ic(p, BK));
  dml_kblock_add(&blk, stmt_for(p, vs, steps, step.first));
  for (int64_t i = 0; i < TM; i++)
    for (int64_t j = 0; j < TN; j++) {
      const dml_kidx_t *row = iadd(p, row0, iadd(p, ty, ic(p, i)));
      const dml_kidx_t *col = iadd(p, col0, iadd(p, tx, ic(p, j)));
      dml_kstmt_t *st = dml_ks_new(p, DML_KS_STORE);
      if (st) {
        st->buf = DML_KBUF_ARENA;
        st->dtype = kt;
        st->idx = iadd(p, imul(p, iadd(p, ybase, row), N), col);
        st->val = dml_kv_reg_t(p, acc + (uint32_t)(i * TN + j), kt);
      }
      dml_kblock_add(&blk, stmt_if(p, NULL, row, M, stmt_if(p, NULL, col, N, st)));
    }
  /* the workgroup's turns over the blocks (uniform: w is the workgroup's) */
  dml_kstmt_t *body =
      stmt_for(p, vt, sym(p, DML_EAGER_MM_ITERS),
               stmt_if(p, NULL, w, sym(p, DML_EAGER_MM_BLOCKS), blk.first));
  memset(K, 0, sizeof *K);
  snprintf(K->name, sizeof K->name, "eager_MatMul%s", kt == DML_KT_F32 ? "" : "_f64");
  K->kind = DML_KK_GEMM;
  K->local[0] = (uint32_t)T;
  K->local[1] = K->local[2] = 1;
  K->n_tiles = 2;
  K->tile_dtype[0] = K->tile_dtype[1] = kt;
  K->tile_elems[0] = (uint32_t)(BK * SA);
  K->tile_elems[1] = (uint32_t)(BK * SB);
  K->body = body;
  K->n_regs = rg + 5;
  return p->failed || !body ? dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED,
                                              "codegen.eager", "out of memory")
                            : DML_OK;
}

/* The Conv kernel (dml_eager_lib.h): one invocation per output element,
 * the ONNX Conv-11 sum over the group's channels and the window, X zero in
 * the padding. */
static dml_status_t conv_kernel(dml_kpool_t *p, dml_kdtype_t kt, dml_kernel_t *K) {
  /* f32: W and the bias at bindings 2 and 3; f64: all in binding 1 */
  const int f32 = kt == DML_KT_F32;
  const int32_t vt = DML_KVAR_FIRST_LOOP, vc = vt + 1, vi = vt + 2, vj = vt + 3;
  const uint32_t acc = 0;
  const dml_kidx_t *i = iadd(p, dml_ki_var(p, DML_KVAR_GID_X),
                             imul(p, dml_ki_var(p, vt), sym(p, DML_EAGER_CV_STRIDE)));
  const dml_kidx_t *OW = sym(p, DML_EAGER_CV_OW), *OH = sym(p, DML_EAGER_CV_OH),
                   *OC = sym(p, DML_EAGER_CV_OC), *CGs = sym(p, DML_EAGER_CV_CG);
  const dml_kidx_t *ow = dml_ki_bin(p, DML_KI_MOD, i, OW);
  const dml_kidx_t *r1 = dml_ki_bin(p, DML_KI_DIV, i, OW);
  const dml_kidx_t *oh = dml_ki_bin(p, DML_KI_MOD, r1, OH);
  const dml_kidx_t *r2 = dml_ki_bin(p, DML_KI_DIV, r1, OH);
  const dml_kidx_t *oc = dml_ki_bin(p, DML_KI_MOD, r2, OC);
  const dml_kidx_t *n = dml_ki_bin(p, DML_KI_DIV, r2, OC);
  const dml_kidx_t *g = dml_ki_bin(p, DML_KI_DIV, oc, sym(p, DML_EAGER_CV_OCG));
  const dml_kidx_t *c = dml_ki_var(p, vc), *ki = dml_ki_var(p, vi),
                   *kj = dml_ki_var(p, vj);
  /* padded coordinates: ih + ph, iw + pw (never negative) */
  const dml_kidx_t *ihp =
      iadd(p, imul(p, oh, sym(p, DML_EAGER_CV_SH)), imul(p, ki, sym(p, DML_EAGER_CV_DH)));
  const dml_kidx_t *iwp =
      iadd(p, imul(p, ow, sym(p, DML_EAGER_CV_SW)), imul(p, kj, sym(p, DML_EAGER_CV_DW)));
  const dml_kidx_t *PH = sym(p, DML_EAGER_CV_PH), *PW = sym(p, DML_EAGER_CV_PW);
  const dml_kidx_t *H = sym(p, DML_EAGER_CV_H), *W = sym(p, DML_EAGER_CV_W);
  const dml_kidx_t *KH = sym(p, DML_EAGER_CV_KH), *KW = sym(p, DML_EAGER_CV_KW);
  const dml_kidx_t *chan =
      iadd(p, imul(p, n, sym(p, DML_EAGER_CV_C)), iadd(p, imul(p, g, CGs), c));
  const dml_kidx_t *xi = iadd(
      p, sym(p, DML_EAGER_CV_X_OFF),
      iadd(p, imul(p, iadd(p, imul(p, chan, H), dml_ki_bin(p, DML_KI_SUB, ihp, PH)), W),
           dml_ki_bin(p, DML_KI_SUB, iwp, PW)));
  const dml_kidx_t *wi = iadd(
      p, sym(p, DML_EAGER_CV_W_OFF),
      iadd(p, imul(p, iadd(p, imul(p, iadd(p, imul(p, oc, CGs), c), KH), ki), KW), kj));
  /* X's tap, 0 in the padding (zero padding: 0 * W[..] is added, so an
   * infinite or NaN weight gives NaN there, as ONNX's definition and the
   * compiled path's implicit GEMM do) */
  const uint32_t xr = 1;
  dml_kblock_t tap = {NULL, NULL};
  dml_kblock_add(&tap, stmt_set(p, xr, dml_kv_zero(p, kt)));
  dml_kblock_add(
      &tap,
      stmt_if(p, PH, ihp, iadd(p, PH, H),
              stmt_if(p, PW, iwp, iadd(p, PW, W),
                      stmt_set(p, xr, dml_kv_load_t(p, DML_KBUF_WEIGHTS, kt, xi)))));
  dml_kblock_add(
      &tap,
      stmt_set(
          p, acc,
          fma_v(p, acc, dml_kv_reg_t(p, xr, kt),
                dml_kv_load_t(p, f32 ? DML_KBUF_IN2 : DML_KBUF_WEIGHTS, kt, wi), kt)));
  dml_kstmt_t *loop_j = stmt_for(p, vj, KW, tap.first);
  dml_kstmt_t *loop_i = stmt_for(p, vi, KH, loop_j);
  dml_kstmt_t *loop_c = stmt_for(p, vc, CGs, loop_i);
  dml_kstmt_t *st = dml_ks_new(p, DML_KS_STORE);
  if (st) {
    st->buf = DML_KBUF_ARENA;
    st->dtype = kt;
    st->idx = i;
    st->val = dml_kv_reg_t(p, acc, kt);
  }
  dml_kblock_t b = {NULL, NULL};
  dml_kblock_add(&b, stmt_set(p, acc, dml_kv_zero(p, kt)));
  dml_kblock_add(
      &b, stmt_if(p, ic(p, 0), ic(p, 0), sym(p, DML_EAGER_CV_HAS_BIAS),
                  stmt_set(p, acc,
                           dml_kv_load_t(p, f32 ? DML_KBUF_IN3 : DML_KBUF_WEIGHTS, kt,
                                         iadd(p, sym(p, DML_EAGER_CV_B_OFF), oc)))));
  dml_kblock_add(&b, loop_c);
  dml_kblock_add(&b, st);
  dml_kstmt_t *body = stmt_for(p, vt, sym(p, DML_EAGER_CV_ITERS),
                               stmt_if(p, NULL, i, sym(p, DML_EAGER_CV_N), b.first));
  memset(K, 0, sizeof *K);
  snprintf(K->name, sizeof K->name, "eager_Conv%s", f32 ? "" : "_f64");
  K->kind = DML_KK_CONV;
  K->local[0] = DML_EAGER_LOCAL;
  K->local[1] = K->local[2] = 1;
  K->body = body;
  K->n_regs = 2;
  return p->failed || !body ? dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED,
                                              "codegen.eager", "out of memory")
                            : DML_OK;
}

/* The Gather kernel of x's dtype dt (dml_eager_lib.h DML_EAGER_GATHER):
 * one invocation per element of Y, the index rule the compiled path's
 * (dml_ksched_gather_index), the elements moved as bits (f16/bf16 as u16
 * words, bool as bytes, f64 as 64-bit words, as the compiled path's
 * data-movement kernels). */
static dml_status_t gather_kernel(dml_kpool_t *p, dml_dtype_t dt, dml_kernel_t *K,
                                  const char **why) {
  dml_kdtype_t kt = DML_KT_F32;
  if (dt == DML_DTYPE_F16 || dt == DML_DTYPE_BF16)
    kt = DML_KT_U16;
  else if (dt == DML_DTYPE_BOOL)
    kt = DML_KT_U8;
  else if (dt == DML_DTYPE_F64) /* as 64-bit words: no shaderFloat64 needed */
    kt = DML_KT_U64;
  else if (!dml_kdtype_of(dt, &kt)) {
    *why = "no kernel dtype";
    return DML_OK;
  }
  const int32_t vt = DML_KVAR_FIRST_LOOP;
  const dml_kidx_t *i = iadd(p, dml_ki_var(p, DML_KVAR_GID_X),
                             imul(p, dml_ki_var(p, vt), sym(p, DML_EAGER_GA_STRIDE)));
  const dml_kidx_t *Q = sym(p, DML_EAGER_GA_Q), *Kn = sym(p, DML_EAGER_GA_K),
                   *D = sym(p, DML_EAGER_GA_D);
  const dml_kidx_t *q = dml_ki_bin(p, DML_KI_MOD, i, Q);
  const dml_kidx_t *r = dml_ki_bin(p, DML_KI_DIV, i, Q);
  const dml_kidx_t *k = dml_ki_bin(p, DML_KI_MOD, r, Kn);
  const dml_kidx_t *pp = dml_ki_bin(p, DML_KI_DIV, r, Kn);
  const dml_kval_t *iv = dml_kv_load_t(p, DML_KBUF_WEIGHTS, DML_KT_I64,
                                       iadd(p, sym(p, DML_EAGER_GA_I_OFF), k));
  const dml_kidx_t *j = dml_ksched_gather_index(p, iv, DML_KT_I64, D);
  const dml_kidx_t *xi = iadd(p, sym(p, DML_EAGER_GA_X_OFF),
                              iadd(p, imul(p, iadd(p, imul(p, pp, D), j), Q), q));
  dml_kstmt_t *z = dml_ks_new(p, DML_KS_STORE), *st = dml_ks_new(p, DML_KS_STORE);
  if (z && st) {
    z->buf = st->buf = DML_KBUF_ARENA;
    z->dtype = st->dtype = kt;
    z->idx = st->idx = i;
    z->val = dml_kv_zero(p, kt);
    st->val = dml_kv_load_t(p, DML_KBUF_WEIGHTS, kt, xi);
  }
  dml_kblock_t b = {NULL, NULL};
  dml_kblock_add(&b, z);
  dml_kblock_add(&b, stmt_if(p, NULL, j, D, st));
  dml_kstmt_t *body = stmt_for(p, vt, sym(p, DML_EAGER_GA_ITERS),
                               stmt_if(p, NULL, i, sym(p, DML_EAGER_GA_N), b.first));
  memset(K, 0, sizeof *K);
  snprintf(K->name, sizeof K->name, "eager_Gather_%s", dml_dtype_name(dt));
  K->kind = DML_KK_ELEMENTWISE;
  K->local[0] = DML_EAGER_LOCAL;
  K->local[1] = K->local[2] = 1;
  K->body = body;
  return p->failed || !body ? dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED,
                                              "codegen.eager", "out of memory")
                            : DML_OK;
}

/* The slice-copy kernel of Concat for x's dtype dt (an elementwise row of
 * op Concat, one operand, max_len 3; dml_eager_lib.h DML_EAGER_PC_OUT):
 * element i of the index space [D3, D4, D5] (the last three dims words)
 * read from operand 0 at its offset and strides and written to y at the
 * output words' offset and strides, moved as bits (as gather_kernel): one
 * dispatch per input writes it into its slice of the output. */
static dml_status_t concat_kernel(dml_kpool_t *p, dml_dtype_t dt, dml_kernel_t *K,
                                  const char **why) {
  dml_kdtype_t kt = DML_KT_F32;
  if (dt == DML_DTYPE_F16 || dt == DML_DTYPE_BF16)
    kt = DML_KT_U16;
  else if (dt == DML_DTYPE_BOOL)
    kt = DML_KT_U8;
  else if (dt == DML_DTYPE_F64)
    kt = DML_KT_U64;
  else if (!dml_kdtype_of(dt, &kt)) {
    *why = "no kernel dtype";
    return DML_OK;
  }
  const int32_t vt = DML_KVAR_FIRST_LOOP;
  const dml_kidx_t *i = iadd(p, dml_ki_var(p, DML_KVAR_GID_X),
                             imul(p, dml_ki_var(p, vt), sym(p, DML_EAGER_PC_STRIDE)));
  const dml_kidx_t *c[3], *rest = i;
  for (int d = 2; d >= 0; d--) {
    const dml_kidx_t *e = sym(p, DML_EAGER_PC_DIMS + DML_EAGER_RANK - 3 + (uint32_t)d);
    c[d] = d == 0 ? rest : dml_ki_bin(p, DML_KI_MOD, rest, e);
    rest = dml_ki_bin(p, DML_KI_DIV, rest, e);
  }
  const uint32_t wi = DML_EAGER_PC_IN, wo = DML_EAGER_PC_OUT;
  const dml_kidx_t *xi = sym(p, wi), *yi = sym(p, wo);
  for (uint32_t d = 0; d < 3; d++) {
    xi = iadd(p, xi, imul(p, c[d], sym(p, wi + 1 + DML_EAGER_RANK - 3 + d)));
    yi = iadd(p, yi, imul(p, c[d], sym(p, wo + 1 + DML_EAGER_RANK - 3 + d)));
  }
  dml_kstmt_t *st = dml_ks_new(p, DML_KS_STORE);
  if (st) {
    st->buf = DML_KBUF_ARENA;
    st->dtype = kt;
    st->idx = yi;
    st->val = dml_kv_load_t(p, DML_KBUF_WEIGHTS, kt, xi);
  }
  dml_kstmt_t *body = stmt_for(p, vt, sym(p, DML_EAGER_PC_ITERS),
                               stmt_if(p, NULL, i, sym(p, DML_EAGER_PC_N), st));
  memset(K, 0, sizeof *K);
  snprintf(K->name, sizeof K->name, "eager_ConcatSlice_%s", dml_dtype_name(dt));
  K->kind = DML_KK_ELEMENTWISE;
  K->local[0] = DML_EAGER_LOCAL;
  K->local[1] = K->local[2] = 1;
  K->body = body;
  return p->failed || !body ? dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED,
                                              "codegen.eager", "out of memory")
                            : DML_OK;
}

/* The Gather kernels: x of f32, f16, bf16, f64, i32, i64, u8, i8, i16,
 * u16, u32, u64, bool (every dtype of the library); then Concat's
 * slice-copy kernels of the same dtypes. */
static dml_status_t emit_gather(gen_t *G) {
  static const dml_dtype_t dts[] = {
      DML_DTYPE_F32, DML_DTYPE_F16, DML_DTYPE_BF16, DML_DTYPE_F64, DML_DTYPE_I32,
      DML_DTYPE_I64, DML_DTYPE_U8,  DML_DTYPE_I8,   DML_DTYPE_I16, DML_DTYPE_U16,
      DML_DTYPE_U32, DML_DTYPE_U64, DML_DTYPE_BOOL};
  dml_status_t s = DML_OK;
  for (size_t d = 0; d < sizeof dts / sizeof dts[0] && !s; d++) {
    dml_kpool_t pool = {0};
    dml_kernel_t K;
    const char *why = NULL;
    s = gather_kernel(&pool, dts[d], &K, &why);
    if (!s && why)
      fprintf(stderr, "dmlc_eager_libgen: Gather (%s) left out: %s\n",
              dml_dtype_name(dts[d]), why);
    else if (!s)
      s = emit_words(G, &K, DML_EAGER_GA_WORDS, DML_OP_GATHER, DML_EAGER_GATHER, 2, 0,
                     dts[d], dts[d], 0);
    dml_kpool_free(&pool);
  }
  for (size_t d = 0; d < sizeof dts / sizeof dts[0] && !s; d++) { /* Concat's copies */
    dml_kpool_t pool = {0};
    dml_kernel_t K;
    const char *why = NULL;
    s = concat_kernel(&pool, dts[d], &K, &why);
    if (!s && why)
      fprintf(stderr, "dmlc_eager_libgen: Concat (%s) left out: %s\n",
              dml_dtype_name(dts[d]), why);
    else if (!s)
      s = emit_words(G, &K, DML_EAGER_PC_WORDS, DML_OP_CONCAT, DML_EAGER_EW, 1, 3, dts[d],
                     dts[d], 0);
    dml_kpool_free(&pool);
  }
  return s;
}

/* ---- normalizations (dml_eager_lib.h DML_EAGER_NORM) ---- */

/* A row of the normalization kernel: x's element j of the row at xb + j
 * (u32 register), y's at yb + j; scale's at sb + j * S_JS, B's at bb + j *
 * B_JS; registers mean (the mean of x - x0), inv, shift (x0). */
typedef struct {
  dml_kdtype_t kt; /* x's and y's */
  const dml_kidx_t *xb, *yb, *sb, *bb;
  uint32_t mean, inv, shift;
} nrow_t;

static const dml_kval_t *nrow_x(dml_kpool_t *p, const nrow_t *c, const dml_kidx_t *j) {
  const dml_kval_t *v = dml_kv_load_t(p, DML_KBUF_WEIGHTS, c->kt, iadd(p, c->xb, j));
  return c->kt == DML_KT_F32 ? v : dml_kv_cast(p, DML_KT_F32, v);
}

/* x - x0 (the shifted data), and its deviation from the mean */
static const dml_kval_t *nrow_shifted(sched_t *s, const dml_kidx_t *j, void *ctx) {
  const nrow_t *c = ctx;
  return dml_kv_fn(s->pool, DML_KF_SUB, nrow_x(s->pool, c, j),
                   dml_kv_reg(s->pool, c->shift));
}
static const dml_kval_t *nrow_dev(sched_t *s, const nrow_t *c, const dml_kidx_t *j) {
  return dml_kv_fn(s->pool, DML_KF_SUB, nrow_shifted(s, j, (void *)c),
                   dml_kv_reg(s->pool, c->mean));
}
static const dml_kval_t *nrow_sq(sched_t *s, const dml_kidx_t *j, void *ctx) {
  const dml_kval_t *d = nrow_dev(s, ctx, j);
  return dml_kv_fn(s->pool, DML_KF_MUL, d, d);
}

/* y[j] = dev(j) * inv * scale(j) (+ B(j) when HAS_B), rounded to y's dtype */
static dml_kstmt_t *nrow_store(sched_t *s, const dml_kidx_t *j, void *ctx) {
  const nrow_t *c = ctx;
  dml_kpool_t *p = s->pool;
  const dml_kval_t *sv =
      dml_kv_load(p, DML_KBUF_IN2, iadd(p, c->sb, imul(p, j, sym(p, DML_EAGER_NM_S_JS))));
  const dml_kval_t *bv =
      dml_kv_load(p, DML_KBUF_IN3, iadd(p, c->bb, imul(p, j, sym(p, DML_EAGER_NM_B_JS))));
  const dml_kval_t *inv = dml_kv_reg(p, c->inv);
  const dml_kval_t *dev = nrow_dev(s, c, j);
  /* B added only when HAS_B (a select: the load reads a bound buffer) */
  const dml_kval_t *y =
      dml_kv_select(p,
                    dml_kv_fn(p, DML_KF_LT, dml_kv_const(p, 0.0f),
                              dml_kv_idx(p, DML_KT_F32, sym(p, DML_EAGER_NM_HAS_B))),
                    dml_ksched_norm_affine(p, dev, inv, sv, bv),
                    dml_ksched_norm_affine(p, dev, inv, sv, NULL));
  dml_kstmt_t *st = dml_ks_new(p, DML_KS_STORE);
  if (st) {
    st->buf = DML_KBUF_ARENA;
    st->dtype = c->kt;
    st->idx = iadd(p, c->yb, j);
    st->val = c->kt == DML_KT_F32 ? y : dml_kv_cast(p, c->kt, y);
  }
  return st;
}

/* BatchNormalization's row: y[j] = dml_ksched_bn_value(x[j], the channel's
 * scale, B, mean, var in registers 0 .. 3) */
static dml_kstmt_t *nbn_store(sched_t *s, const dml_kidx_t *j, void *ctx) {
  const nrow_t *c = ctx;
  dml_kpool_t *p = s->pool;
  const dml_kval_t *x[5] = {dml_kv_load_t(p, DML_KBUF_WEIGHTS, c->kt, iadd(p, c->xb, j)),
                            dml_kv_reg(p, 0), dml_kv_reg(p, 1), dml_kv_reg(p, 2),
                            dml_kv_reg(p, 3)};
  dml_kstmt_t *st = dml_ks_new(p, DML_KS_STORE);
  if (st) {
    st->buf = DML_KBUF_ARENA;
    st->dtype = c->kt;
    st->idx = iadd(p, c->yb, j);
    st->val = dml_ksched_bn_value(p, x, dml_kv_bits_f32(p, sym(p, DML_EAGER_NM_EPS)));
  }
  return st;
}

/* A serial sum over the row (the per-row form): register acc = 0, then
 * acc += f(j) for j = 0 .. L - 1 in order (the compiled path's short-row
 * form, schedule_norm.c). */
static void nrow_serial(sched_t *s, dml_kblock_t *body, const dml_kidx_t *L, int32_t vj,
                        const dml_kval_t *(*f)(sched_t *, const dml_kidx_t *, void *),
                        void *ctx, uint32_t acc) {
  dml_kpool_t *p = s->pool;
  dml_kblock_add(body, stmt_let(p, acc, dml_kv_const(p, 0.0f)));
  dml_kblock_add(body, stmt_for(p, vj, L,
                                stmt_set(p, acc,
                                         dml_kv_fn(p, DML_KF_ADD, dml_kv_reg(p, acc),
                                                   f(s, dml_ki_var(p, vj), ctx)))));
}

/* The normalization kernel of x's dtype (kernel dtype kt): `given` 0 the
 * row statistics (LayerNormalization, InstanceNormalization), 1
 * BatchNormalization's (dml_eager_lib.h DML_EAGER_NORM). per_row 0: one
 * workgroup of DML_KROW_WG per row, the row loops and trees of
 * schedule_rows.c; 1: one invocation per row (workgroups of
 * DML_EAGER_NM_ROW_LOCAL), serial sums in element order. */
static dml_status_t norm_kernel(dml_kpool_t *p, dml_kdtype_t kt, int given, int per_row,
                                dml_kernel_t *K) {
  sched_t s; /* the row helpers read its pool only */
  memset(&s, 0, sizeof s);
  s.pool = p;
  const int32_t vj = DML_KVAR_FIRST_LOOP, vt = DML_KVAR_FIRST_LOOP + 1;
  const dml_kidx_t *L = sym(p, DML_EAGER_NM_LEN);
  /* the rows of turn t: workgroup g's (g + t * GRID), or invocation i's
   * (i + t * GRID * DML_EAGER_NM_ROW_LOCAL) */
  const dml_kidx_t *row =
      per_row
          ? iadd(p, dml_ki_var(p, DML_KVAR_GID_X),
                 imul(p, dml_ki_var(p, vt),
                      imul(p, sym(p, DML_EAGER_NM_GRID), ic(p, DML_EAGER_NM_ROW_LOCAL))))
          : iadd(p, dml_ki_var(p, DML_KVAR_WG_X),
                 imul(p, dml_ki_var(p, vt), sym(p, DML_EAGER_NM_GRID)));
  const dml_kidx_t *ch = dml_ki_bin(p, DML_KI_MOD, row, sym(p, DML_EAGER_NM_C));
  /* the row's bases into u32 registers once per row */
  const uint32_t rg = 10;
  const dml_kidx_t *hv[4] = {
      iadd(p, sym(p, DML_EAGER_NM_X_OFF), imul(p, row, L)), imul(p, row, L),
      iadd(p, sym(p, DML_EAGER_NM_S_OFF), imul(p, ch, sym(p, DML_EAGER_NM_S_CS))),
      iadd(p, sym(p, DML_EAGER_NM_B_OFF), imul(p, ch, sym(p, DML_EAGER_NM_B_CS)))};
  const dml_kidx_t *hr[4];
  dml_kblock_t body = {NULL, NULL};
  for (uint32_t h = 0; h < 4; h++) {
    dml_kblock_add(&body, stmt_let(p, rg + h, dml_kv_idx(p, DML_KT_U32, hv[h])));
    hr[h] = dml_ki_val(p, dml_kv_reg_t(p, rg + h, DML_KT_U32));
  }
  /* registers (the compiled path's cooperative form): the mean 0 (its sums
   * 0 .. 3), the sum of squares 4 (4 .. 7), inv 8, the shift x0 9 */
  nrow_t c = {kt, hr[0], hr[1], hr[2], hr[3], 0, 8, 9};
  if (given) {
    /* the channel's scale, B, mean and var (binding 2; B binding 3) */
    const dml_kidx_t *at[4] = {hr[2], hr[3], iadd(p, sym(p, DML_EAGER_NM_M_OFF), ch),
                               iadd(p, sym(p, DML_EAGER_NM_V_OFF), ch)};
    for (uint32_t r = 0; r < 4; r++)
      dml_kblock_add(
          &body,
          stmt_let(p, r, dml_kv_load(p, r == 1 ? DML_KBUF_IN3 : DML_KBUF_IN2, at[r])));
    dml_kblock_add(&body, per_row
                              ? stmt_for(p, vj, L, nbn_store(&s, dml_ki_var(p, vj), &c))
                              : dml_krow_each(&s, L, vj, nbn_store, &c));
  } else {
    const dml_kval_t *Lf = dml_kv_idx(p, DML_KT_F32, L);
    dml_kblock_add(&body, stmt_let(p, c.shift, dml_kv_const(p, 0.0f)));
    dml_kblock_add(&body, stmt_if(p, ic(p, 0), ic(p, 0), L,
                                  stmt_set(p, c.shift, nrow_x(p, &c, ic(p, 0)))));
    if (per_row)
      nrow_serial(&s, &body, L, vj, nrow_shifted, &c, 0);
    else
      dml_krow_reduce(&s, &body, L, vj, DML_KF_ADD, 0.0f, nrow_shifted, &c, 0, 0);
    dml_kblock_add(&body, stmt_set(p, 0, dml_kv_fn(p, DML_KF_DIV, dml_kv_reg(p, 0), Lf)));
    if (per_row)
      nrow_serial(&s, &body, L, vj, nrow_sq, &c, 4);
    else
      dml_krow_reduce(&s, &body, L, vj, DML_KF_ADD, 0.0f, nrow_sq, &c, 4, 0);
    dml_kblock_add(&body, stmt_let(p, c.inv,
                                   dml_ksched_norm_inv(
                                       p, dml_kv_reg(p, 4), Lf,
                                       dml_kv_bits_f32(p, sym(p, DML_EAGER_NM_EPS)))));
    dml_kblock_add(&body, per_row
                              ? stmt_for(p, vj, L, nrow_store(&s, dml_ki_var(p, vj), &c))
                              : dml_krow_each(&s, L, vj, nrow_store, &c));
  }
  /* the rows in turns; in the workgroup form the test is uniform over the
   * workgroup, so the barriers inside stay in uniform control flow (the
   * per-row form has none) */
  dml_kstmt_t *top =
      stmt_for(p, vt, sym(p, DML_EAGER_NM_TURNS),
               stmt_if(p, NULL, row, sym(p, DML_EAGER_NM_ROWS), body.first));
  memset(K, 0, sizeof *K);
  snprintf(K->name, sizeof K->name, "eager_%s%s_%s", given ? "BatchNorm" : "Norm",
           per_row ? "Rows" : "",
           kt == DML_KT_F32   ? "f32"
           : kt == DML_KT_F16 ? "f16"
                              : "bf16");
  K->kind = DML_KK_NORM;
  K->local[1] = K->local[2] = 1;
  if (per_row) {
    K->local[0] = DML_EAGER_NM_ROW_LOCAL;
  } else {
    K->local[0] = DML_KROW_WG;
    K->n_tiles = 1;
    K->tile_elems[0] = DML_KROW_WG;
    K->tile_dtype[0] = DML_KT_F32;
  }
  K->body = top;
  K->n_regs = rg + 4;
  return p->failed || !top ? dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED,
                                             "codegen.eager", "out of memory")
                           : DML_OK;
}

/* The normalization kernels: f32, f16 and bf16 x and y, each with the row
 * statistics (op LayerNormalization, 3 operands) and BatchNormalization's
 * given ones (5 operands), each in the workgroup-per-row and the
 * invocation-per-row form (max_len: DML_EAGER_NM_FORM_GIVEN,
 * DML_EAGER_NM_FORM_PER_ROW). */
static dml_status_t emit_norm(gen_t *G) {
  static const dml_dtype_t dts[3] = {DML_DTYPE_F32, DML_DTYPE_F16, DML_DTYPE_BF16};
  static const dml_kdtype_t kts[3] = {DML_KT_F32, DML_KT_F16, DML_KT_BF16};
  dml_status_t s = DML_OK;
  for (int d = 0; d < 3 && !s; d++)
    for (int given = 0; given < 2 && !s; given++)
      for (int per_row = 0; per_row < 2 && !s; per_row++) {
        dml_kpool_t pool = {0};
        dml_kernel_t K;
        s = norm_kernel(&pool, kts[d], given, per_row, &K);
        const int64_t form = (given ? DML_EAGER_NM_FORM_GIVEN : 0) |
                             (per_row ? DML_EAGER_NM_FORM_PER_ROW : 0);
        if (!s)
          s = emit_words(G, &K, DML_EAGER_NM_WORDS,
                         given ? DML_OP_BATCH_NORMALIZATION : DML_OP_LAYER_NORMALIZATION,
                         DML_EAGER_NORM, given ? 5u : 3u, form, dts[d], dts[d], 0);
        dml_kpool_free(&pool);
      }
  return s;
}

/* MaxPool's Indices kernel of X's dtype dt (dml_eager_lib.h
 * DML_EAGER_POOLIDX): the CPU's visit of each window (cpu_pool.c), in f32
 * (f16, bf16 widened exactly), f64, or the integer dtype itself. */
static dml_status_t poolidx_kernel(dml_kpool_t *p, dml_dtype_t dt, dml_kernel_t *K) {
  dml_kdtype_t lt = DML_KT_F32;
  if (!dml_kdtype_of(dt, &lt))
    return dml_status_make(DML_STATUS_INTERNAL, "codegen.eager", "no kernel dtype for %s",
                           dml_dtype_name(dt));
  /* f32 for f32, f16, bf16; f64 for f64; the integers in their own dtype
   * (exact, as cpu_pool.c's pool_window_max_int: a double would tie i64 and
   * u64 values past 2^53) */
  const int narrow = dt == DML_DTYPE_F32 || dt == DML_DTYPE_F16 || dt == DML_DTYPE_BF16;
  const dml_kdtype_t ct = narrow ? DML_KT_F32 : dt == DML_DTYPE_F64 ? DML_KT_F64 : lt;
  const int32_t vt = DML_KVAR_FIRST_LOOP, vi = vt + 1, vj = vt + 2, vk = vt + 3;
  const dml_kidx_t *i = iadd(p, dml_ki_var(p, DML_KVAR_GID_X),
                             imul(p, dml_ki_var(p, vt), sym(p, DML_EAGER_PI_STRIDE)));
  const dml_kidx_t *OW = sym(p, DML_EAGER_PI_OW), *OH = sym(p, DML_EAGER_PI_OH),
                   *OD = sym(p, DML_EAGER_PI_OD);
  const dml_kidx_t *H = sym(p, DML_EAGER_PI_H), *W = sym(p, DML_EAGER_PI_W),
                   *Dd = sym(p, DML_EAGER_PI_D);
  const dml_kidx_t *PH = sym(p, DML_EAGER_PI_PH), *PW = sym(p, DML_EAGER_PI_PW),
                   *PD = sym(p, DML_EAGER_PI_PD);
  const dml_kidx_t *ow = dml_ki_bin(p, DML_KI_MOD, i, OW);
  const dml_kidx_t *r1 = dml_ki_bin(p, DML_KI_DIV, i, OW);
  const dml_kidx_t *oh = dml_ki_bin(p, DML_KI_MOD, r1, OH);
  const dml_kidx_t *r2 = dml_ki_bin(p, DML_KI_DIV, r1, OH);
  const dml_kidx_t *od = dml_ki_bin(p, DML_KI_MOD, r2, OD);
  const dml_kidx_t *nc = dml_ki_bin(p, DML_KI_DIV, r2, OD);
  const dml_kidx_t *idp = iadd(p, imul(p, od, sym(p, DML_EAGER_PI_SD)),
                               imul(p, dml_ki_var(p, vk), sym(p, DML_EAGER_PI_DD)));
  const dml_kidx_t *ihp = iadd(p, imul(p, oh, sym(p, DML_EAGER_PI_SH)),
                               imul(p, dml_ki_var(p, vi), sym(p, DML_EAGER_PI_DH)));
  const dml_kidx_t *iwp = iadd(p, imul(p, ow, sym(p, DML_EAGER_PI_SW)),
                               imul(p, dml_ki_var(p, vj), sym(p, DML_EAGER_PI_DW)));
  /* the tap's offset in its image */
  const dml_kidx_t *off =
      iadd(p,
           imul(p,
                iadd(p, imul(p, dml_ki_bin(p, DML_KI_SUB, idp, PD), H),
                     dml_ki_bin(p, DML_KI_SUB, ihp, PH)),
                W),
           dml_ki_bin(p, DML_KI_SUB, iwp, PW));
  const dml_kidx_t *img = imul(p, Dd, imul(p, H, W));
  const dml_kidx_t *xi =
      iadd(p, sym(p, DML_EAGER_PI_X_OFF), iadd(p, imul(p, nc, img), off));
  /* registers: 0 the best value, 1 the winner's offset (u32), 2 found
   * (f32 0 or 1), 3 the tap's value */
  const uint32_t racc = 0, rpos = 1, rfl = 2, rv = 3;
  const dml_kval_t *acc = dml_kv_reg_t(p, racc, ct), *v = dml_kv_reg_t(p, rv, ct);
  const dml_kval_t *ld = dml_kv_load_t(p, DML_KBUF_WEIGHTS, lt, xi);
  if (lt != ct) ld = dml_kv_cast(p, ct, ld);
  const dml_kval_t *take = dml_kv_fn(
      p, DML_KF_OR,
      dml_kv_fn(p, DML_KF_OR,
                dml_kv_fn(p, DML_KF_LT, dml_kv_reg(p, rfl), dml_kv_const(p, 0.5f)),
                dml_kv_fn(p, DML_KF_GT, v, acc)),
      dml_kv_fn(p, DML_KF_AND,
                dml_kv_fn(p, DML_KF_NOT, dml_kv_fn(p, DML_KF_EQ, v, v), NULL),
                dml_kv_fn(p, DML_KF_EQ, acc, acc)));
  dml_kblock_t tap = {NULL, NULL};
  dml_kblock_add(&tap, stmt_set(p, rv, ld));
  dml_kblock_add(&tap, stmt_set(p, rpos,
                                dml_kv_select(p, take, dml_kv_idx(p, DML_KT_U32, off),
                                              dml_kv_reg_t(p, rpos, DML_KT_U32))));
  dml_kblock_add(&tap, stmt_set(p, racc, dml_kv_select(p, take, v, acc)));
  dml_kblock_add(&tap, stmt_set(p, rfl, dml_kv_const(p, 1.0f)));
  dml_kstmt_t *loop_j =
      stmt_for(p, vj, sym(p, DML_EAGER_PI_KW),
               stmt_if(p, PD, idp, iadd(p, PD, Dd),
                       stmt_if(p, PH, ihp, iadd(p, PH, H),
                               stmt_if(p, PW, iwp, iadd(p, PW, W), tap.first))));
  dml_kstmt_t *loop_i = stmt_for(p, vi, sym(p, DML_EAGER_PI_KH), loop_j);
  dml_kstmt_t *loop_k = stmt_for(p, vk, sym(p, DML_EAGER_PI_KD), loop_i);
  /* the index: nc * D * H * W plus the offset, row- or column-major (d + h
   * * D + w * D * H of pos = (d * H + h) * W + w) */
  const dml_kidx_t *pos = dml_ki_val(p, dml_kv_reg_t(p, rpos, DML_KT_U32));
  const dml_kidx_t *pw = dml_ki_bin(p, DML_KI_MOD, pos, W);
  const dml_kidx_t *ph = dml_ki_bin(p, DML_KI_MOD, dml_ki_bin(p, DML_KI_DIV, pos, W), H);
  const dml_kidx_t *pd = dml_ki_bin(p, DML_KI_DIV, pos, imul(p, W, H));
  const dml_kidx_t *cm =
      iadd(p, pd, iadd(p, imul(p, ph, Dd), imul(p, pw, imul(p, Dd, H))));
  dml_kstmt_t *st[2];
  for (int o = 0; o < 2; o++) {
    st[o] = dml_ks_new(p, DML_KS_STORE);
    if (st[o]) {
      st[o]->buf = DML_KBUF_ARENA;
      st[o]->dtype = DML_KT_I64;
      st[o]->idx = i;
      st[o]->val =
          dml_kv_cast(p, DML_KT_I64,
                      dml_kv_idx(p, DML_KT_U32, iadd(p, imul(p, nc, img), o ? cm : pos)));
    }
  }
  dml_kblock_t b = {NULL, NULL};
  dml_kblock_add(&b, stmt_let(p, racc, dml_kv_zero(p, ct)));
  dml_kblock_add(&b, stmt_let(p, rpos, dml_kv_idx(p, DML_KT_U32, ic(p, 0))));
  dml_kblock_add(&b, stmt_let(p, rfl, dml_kv_const(p, 0.0f)));
  dml_kblock_add(&b, stmt_let(p, rv, dml_kv_zero(p, ct)));
  dml_kblock_add(&b, loop_k);
  dml_kblock_add(&b, stmt_if(p, NULL, sym(p, DML_EAGER_PI_ORDER), ic(p, 1), st[0]));
  dml_kblock_add(&b, stmt_if(p, ic(p, 1), sym(p, DML_EAGER_PI_ORDER), ic(p, 2), st[1]));
  dml_kstmt_t *body = stmt_for(p, vt, sym(p, DML_EAGER_PI_ITERS),
                               stmt_if(p, NULL, i, sym(p, DML_EAGER_PI_N), b.first));
  memset(K, 0, sizeof *K);
  snprintf(K->name, sizeof K->name, "eager_MaxPoolIndices_%s", dml_dtype_name(dt));
  K->kind = DML_KK_ELEMENTWISE;
  K->local[0] = DML_EAGER_LOCAL;
  K->local[1] = K->local[2] = 1;
  K->body = body;
  K->n_regs = 4;
  return p->failed || !body ? dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED,
                                              "codegen.eager", "out of memory")
                            : DML_OK;
}

/* MaxPool's Indices kernels: X of f32, f16, bf16, f64 and the integers. */
static dml_status_t emit_poolidx(gen_t *G) {
  static const dml_dtype_t dts[12] = {DML_DTYPE_F32, DML_DTYPE_F16, DML_DTYPE_BF16,
                                      DML_DTYPE_F64, DML_DTYPE_I8,  DML_DTYPE_I16,
                                      DML_DTYPE_I32, DML_DTYPE_I64, DML_DTYPE_U8,
                                      DML_DTYPE_U16, DML_DTYPE_U32, DML_DTYPE_U64};
  dml_status_t s = DML_OK;
  for (int d = 0; d < 12 && !s; d++) {
    dml_kpool_t pool = {0};
    dml_kernel_t K;
    s = poolidx_kernel(&pool, dts[d], &K);
    if (!s)
      s = emit_words(G, &K, DML_EAGER_PI_WORDS, DML_OP_MAX_POOL, DML_EAGER_POOLIDX, 1, 0,
                     dts[d], DML_DTYPE_I64, 0);
    dml_kpool_free(&pool);
  }
  return s;
}

/* Writes the MatMul and Conv kernels, each operand at its own binding
 * (SPIR-V) or kernel parameter (PTX: arena, weights, in2, in3, pc). */
static dml_status_t emit_mm_conv(gen_t *G) {
  dml_status_t s = DML_OK;
  for (int f64 = 0; f64 < 2 && !s; f64++) { /* f32; f64, every operand at binding 1 */
    const dml_kdtype_t kt = f64 ? DML_KT_F64 : DML_KT_F32;
    const dml_dtype_t dt = f64 ? DML_DTYPE_F64 : DML_DTYPE_F32;
    for (int which = 0; which < 3 && !s; which++) { /* MatMul, its unit form, Conv */
      dml_kpool_t pool = {0};
      dml_kernel_t K;
      s = which == 2 ? conv_kernel(&pool, kt, &K) : mm_kernel(&pool, which, kt, &K);
      if (!s)
        s = which == 2 ? emit_words(G, &K, DML_EAGER_CV_WORDS, DML_OP_CONV,
                                    DML_EAGER_CONV, 3, 0, dt, dt, 0)
                       : emit_words(G, &K, DML_EAGER_MM_WORDS, DML_OP_MATMUL,
                                    DML_EAGER_MATMUL, 2, which, dt, dt, 0);
      dml_kpool_free(&pool);
    }
  }
  return s;
}

/* The kernels for dtypes other than f32 (docs/tensor.md): each op of
 * `ops` for f16, bf16, i32, i64, u8, i8, i16, f64, u16, u32 and u64
 * operands (the float-only ones for f16, bf16 and f64, the signed-only
 * ones not for the unsigned; Mod with both fmod forms, read at dispatch),
 * BitShift of u8, u16, u32 and u64, the compares, Clip and Where of each,
 * Identity, Equal and Where of bool, Cast between any two of those and
 * f32, and ReduceSum, ReduceMax, ReduceMin, ArgMax, ArgMin of each but f16
 * and bf16 (their reductions run the f32 kernels on a cast: dml_tensor.c).
 * A row the kernel IR or the scheduler refuses is left out (stderr). */
static dml_status_t emit_dtypes(gen_t *G) {
  enum { ND = 12 };
  static const dml_dtype_t dts[ND] = {DML_DTYPE_F32, DML_DTYPE_F16, DML_DTYPE_BF16,
                                      DML_DTYPE_I32, DML_DTYPE_I64, DML_DTYPE_U8,
                                      DML_DTYPE_I8,  DML_DTYPE_I16, DML_DTYPE_F64,
                                      DML_DTYPE_U16, DML_DTYPE_U32, DML_DTYPE_U64};
  /* float_only 1: f16, bf16, f64 only; 2: not the unsigned dtypes (ONNX's
   * Neg and Relu take signed types) */
  static const struct {
    dml_op_t op;
    uint32_t n_in;
    int float_only;
  } ops[] = {{DML_OP_IDENTITY, 1, 0}, {DML_OP_ADD, 2, 0},  {DML_OP_SUB, 2, 0},
             {DML_OP_MUL, 2, 0},      {DML_OP_MAX, 2, 0},  {DML_OP_MIN, 2, 0},
             {DML_OP_ABS, 1, 0},      {DML_OP_NEG, 1, 2},  {DML_OP_RELU, 1, 2},
             {DML_OP_DIV, 2, 1},      {DML_OP_EXP, 1, 1},  {DML_OP_SQRT, 1, 1},
             {DML_OP_SIGMOID, 1, 1},  {DML_OP_TANH, 1, 1}, {DML_OP_MOD, 2, 0}};
  static const dml_op_t reds[5] = {DML_OP_REDUCE_SUM, DML_OP_REDUCE_MAX,
                                   DML_OP_REDUCE_MIN, DML_OP_ARG_MAX, DML_OP_ARG_MIN};
  dml_status_t s = DML_OK;
  for (int d = 1; d < ND && !s; d++)
    for (size_t o = 0; o < sizeof ops / sizeof ops[0] && !s; o++)
      if (ops[o].float_only == 1 ? dml_dtype_is_float(dts[d])
          : ops[o].float_only == 2
              ? !(dml_dtype_is_int(dts[d]) && !dml_dtype_is_signed_int(dts[d]))
              : 1)
        s = emit_t(G, ops[o].op, ops[o].n_in, dts[d], dts[d]);
  /* the compares (bool output), Clip (min, max operands) and Where of
   * each dtype; Identity, Equal and Where of bool */
  static const struct {
    dml_op_t op;
    uint32_t n_in;
  } more[] = {{DML_OP_EQUAL, 2},
              {DML_OP_LESS, 2},
              {DML_OP_LESS_OR_EQUAL, 2},
              {DML_OP_GREATER, 2},
              {DML_OP_GREATER_OR_EQUAL, 2},
              {DML_OP_CLIP, 2},
              {DML_OP_CLIP, 3},
              {DML_OP_WHERE, 3}};
  for (int d = 1; d < ND && !s; d++)
    for (size_t o = 0; o < sizeof more / sizeof more[0] && !s; o++)
      s = emit_d(G, more[o].op, more[o].n_in, dts[d]);
  for (int d = 1; d < ND && !s; d++) /* the unsigned dtypes */
    if (dml_dtype_is_int(dts[d]) && !dml_dtype_is_signed_int(dts[d]))
      s = emit_d(G, DML_OP_BIT_SHIFT, 2, dts[d]);
  if (!s) s = emit_d(G, DML_OP_IDENTITY, 1, DML_DTYPE_BOOL);
  if (!s) s = emit_d(G, DML_OP_EQUAL, 2, DML_DTYPE_BOOL);
  if (!s) s = emit_d(G, DML_OP_WHERE, 3, DML_DTYPE_BOOL);
  for (int a = 0; a < ND && !s; a++)
    for (int b = 0; b < ND && !s; b++)
      if (a != b) s = emit_t(G, DML_OP_CAST, 1, dts[a], dts[b]);
  for (int d = 1; d < ND && !s; d++)
    for (int r = 0; r < 5 && !s; r++)
      if (dts[d] != DML_DTYPE_F16 && dts[d] != DML_DTYPE_BF16) /* cast to f32 */
        s = emit_reduce(G, reds[r], dts[d]);
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
    if (info && ((info->flags & DML_OPF_REDUCTION) || o == DML_OP_SOFTMAX ||
                 o == DML_OP_LOG_SOFTMAX)) { /* the compiled path's row kernels */
      s = emit_reduce(G, (dml_op_t)o, DML_DTYPE_F32);
      continue;
    }
    if (!info || !(info->flags & DML_OPF_ELEMENTWISE)) continue;
    /* fixed arities, and the variadic ops' two-operand form */
    uint32_t n_in = info->max_inputs < 0 ? 2u : (uint32_t)info->max_inputs;
    if (o == DML_OP_CLIP) { /* Clip-13: x, min (operand 1), max (operand 2) */
      s = emit(G, DML_OP_CLIP, 2);
      if (!s) s = emit(G, DML_OP_CLIP, 3);
      continue;
    }
    if (info->min_inputs != info->max_inputs && info->max_inputs >= 0) {
      fprintf(stderr, "dmlc_eager_libgen: %s left out: optional inputs\n", info->name);
      continue;
    }
    if (o == DML_OP_CAST) continue; /* below, between the dtypes */
    if (n_in < 1 || n_in > DML_EAGER_MAX_INPUTS) {
      fprintf(stderr, "dmlc_eager_libgen: %s left out: %u inputs\n", info->name, n_in);
      continue;
    }
    s = emit(G, (dml_op_t)o, n_in);
  }
  if (!s) s = emit_mm_conv(G);
  if (!s) s = emit_gather(G);
  if (!s) s = emit_norm(G);
  if (!s) s = emit_poolidx(G);
  if (!s) s = emit_dtypes(G);
  fprintf(G->f,
          "const dml_eager_kernel_t %s[] = {\n%s  {DML_OP_INVALID, 0, 0, 0, "
          "0, {0, 0, 0}, {{0, 0, -1, 0}, {0, 0, -1, 0}, {0, 0, -1, 0}}, 0, "
          "DML_DTYPE_INVALID, DML_DTYPE_INVALID, 0}\n};\n"
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
