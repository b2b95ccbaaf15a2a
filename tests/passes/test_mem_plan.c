/* Tests of mem-plan: no two values live at the same time share bytes, a
 * node's outputs never share bytes with its inputs, offsets are aligned, the
 * arena is below the no-reuse sum, sizes are taken at the symbols' bounds,
 * and unknown types are an error that says what to do. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dml_ir.h"
#include "dml_passes.h"
#include "dml_test.h"

static dml_type_t f32_1d(int64_t n) {
  return dml_type_static(DML_DTYPE_F32, 1, &n);
}

/* Checks the plan of `f` against liveness computed here, independently of
 * the pass: [def step, last reading step], args and results to the end. */
static void check_plan(const dml_ir_function_t *f) {
  enum { MAXV = 1024 };
  const dml_ir_value_t *vals[MAXV];
  int64_t first[MAXV], last[MAXV];
  size_t nv = 0;
  int64_t n_steps = dml_ir_function_num_nodes(f);
  for (uint32_t i = 0; i < f->n_args; i++) {
    vals[nv] = f->args[i];
    first[nv] = -1;
    last[nv++] = n_steps;
  }
  int64_t step = 0;
  for (const dml_ir_node_t *n = f->first; n; n = n->next, step++)
    for (uint32_t i = 0; i < n->n_outputs && nv < MAXV; i++) {
      vals[nv] = n->outputs[i];
      first[nv] = step;
      last[nv++] = step;
    }
  step = 0;
  for (const dml_ir_node_t *n = f->first; n; n = n->next, step++)
    for (uint32_t i = 0; i < n->n_inputs; i++)
      for (size_t k = 0; k < nv; k++)
        if (vals[k] == n->inputs[i] && last[k] < step) last[k] = step;
  for (uint32_t i = 0; i < f->n_results; i++)
    for (size_t k = 0; k < nv; k++)
      if (vals[k] == f->results[i]) last[k] = n_steps;

  for (size_t a = 0; a < nv; a++) {
    const dml_ir_value_t *x = vals[a];
    CHECK(x->mem_offset >= 0 && x->mem_offset % 64 == 0);
    CHECK(x->mem_bytes == dml_ir_type_bytes_bound(f->module, &x->type));
    CHECK(x->mem_offset + x->mem_bytes <= f->arena_bytes);
    for (size_t b = a + 1; b < nv; b++) {
      const dml_ir_value_t *y = vals[b];
      int live_together = first[a] <= last[b] && first[b] <= last[a];
      int bytes_overlap = x->mem_bytes > 0 && y->mem_bytes > 0 &&
                          x->mem_offset < y->mem_offset + y->mem_bytes &&
                          y->mem_offset < x->mem_offset + x->mem_bytes;
      if (live_together && bytes_overlap)
        fprintf(stderr, "values %u and %u overlap: [%lld,+%lld) [%lld,+%lld)\n", x->id,
                y->id, (long long)x->mem_offset, (long long)x->mem_bytes,
                (long long)y->mem_offset, (long long)y->mem_bytes);
      CHECK(!(live_together && bytes_overlap));
    }
  }
}

/* x -> Relu -> Relu -> ... (n nodes) -> result. */
static dml_ir_function_t *make_chain(dml_ir_module_t *m, const char *name, int n,
                                     int64_t elems) {
  dml_ir_function_t *f = NULL;
  CHECK_OK(dml_ir_function_create(m, name, &f));
  dml_type_t t = f32_1d(elems);
  dml_ir_value_t *v = NULL;
  CHECK_OK(dml_ir_function_add_arg(f, "x", &t, &v));
  for (int i = 0; i < n; i++) {
    dml_ir_node_t *node = NULL;
    CHECK_OK(dml_ir_node_create(f, DML_OP_RELU, NULL, 1, &v, 1, NULL, &node));
    node->outputs[0]->type = t;
    v = node->outputs[0];
  }
  CHECK_OK(dml_ir_function_set_results(f, 1, &v));
  return f;
}

static void test_chain_reuses_two_buffers(void) {
  dml_ir_module_t *m = NULL;
  CHECK_OK(dml_ir_module_create(&m));
  dml_ir_function_t *f = make_chain(m, "forward", 10, 1000); /* 4000 B -> 4032 */
  dml_pass_options_t o;
  memset(&o, 0, sizeof(o));
  CHECK_OK(dml_pass_mem_plan(m, &o));
  check_plan(f);
  /* The argument plus two ping-pong buffers; without reuse 11 buffers. */
  CHECK(f->arena_bytes == 3 * 4032);
  CHECK(f->arena_bytes < 11 * 4032);
  CHECK(o.out_arena_bytes == f->arena_bytes);
  dml_ir_module_release(m);
}

static int overlaps(const dml_ir_value_t *x, const dml_ir_value_t *y) {
  return x->mem_offset < y->mem_offset + y->mem_bytes &&
         y->mem_offset < x->mem_offset + x->mem_bytes;
}

/* x -> Relu a -> MatMul(a, w) g -> Relu r -> Relu s: a dies at the MatMul,
 * so a plain plan may put r or s on a's bytes; a GPU kernel holding
 * MatMul + Relu + Relu (the fuse pass's group) still reads a while it
 * writes them, so the fusion-aware plan keeps a live to s. */
static void test_fusion_aware(void) {
  for (int fusion = 0; fusion < 2; fusion++) {
    dml_ir_module_t *m = NULL;
    CHECK_OK(dml_ir_module_create(&m));
    dml_ir_function_t *f = NULL;
    CHECK_OK(dml_ir_function_create(m, "forward", &f));
    int64_t d[2] = {16, 16};
    dml_type_t t = dml_type_static(DML_DTYPE_F32, 2, d);
    dml_ir_value_t *x = NULL, *w = NULL;
    CHECK_OK(dml_ir_function_add_arg(f, "x", &t, &x));
    CHECK_OK(dml_ir_function_add_arg(f, "w", &t, &w));
    dml_ir_node_t *a = NULL, *g = NULL, *r = NULL, *s = NULL;
    CHECK_OK(dml_ir_node_create(f, DML_OP_RELU, NULL, 1, &x, 1, NULL, &a));
    a->outputs[0]->type = t;
    dml_ir_value_t *in[2] = {a->outputs[0], w};
    CHECK_OK(dml_ir_node_create(f, DML_OP_MATMUL, NULL, 2, in, 1, NULL, &g));
    g->outputs[0]->type = t;
    CHECK_OK(dml_ir_node_create(f, DML_OP_RELU, NULL, 1, &g->outputs[0], 1, NULL, &r));
    r->outputs[0]->type = t;
    CHECK_OK(dml_ir_node_create(f, DML_OP_RELU, NULL, 1, &r->outputs[0], 1, NULL, &s));
    s->outputs[0]->type = t;
    CHECK_OK(dml_ir_function_set_results(f, 1, &s->outputs[0]));
    dml_pass_options_t o;
    memset(&o, 0, sizeof(o));
    o.fusion_aware = fusion;
    CHECK_OK(dml_pass_fuse(m, &o)); /* groups MatMul + Relu + Relu */
    CHECK(dml_fuse_group_of(a) == -1 && dml_fuse_group_of(g) == 0 &&
          dml_fuse_group_of(r) == 0 && dml_fuse_group_of(s) == 0);
    CHECK_OK(dml_pass_mem_plan(m, &o));
    check_plan(f);
    int hit =
        overlaps(a->outputs[0], r->outputs[0]) || overlaps(a->outputs[0], s->outputs[0]);
    if (fusion)
      CHECK(!hit); /* the group's results never land on what it reads */
    else
      CHECK(hit); /* the plain plan reuses a's bytes (what made the split) */
    dml_ir_module_release(m);
  }
}

static void test_random_dags(void) {
  uint32_t seed = 12345;
  for (int trial = 0; trial < 50; trial++) {
    dml_ir_module_t *m = NULL;
    CHECK_OK(dml_ir_module_create(&m));
    dml_ir_function_t *f = NULL;
    CHECK_OK(dml_ir_function_create(m, "forward", &f));
    dml_ir_value_t *vals[128];
    size_t nv = 0;
    int n_args = 1 + trial % 3;
    int64_t sum = 0;
    for (int i = 0; i < n_args; i++) {
      seed = seed * 1103515245u + 12345u;
      dml_type_t t = f32_1d(1 + (seed >> 16) % 500);
      char name[16];
      snprintf(name, sizeof(name), "a%d", i);
      CHECK_OK(dml_ir_function_add_arg(f, name, &t, &vals[nv++]));
      sum += (dml_ir_type_bytes_bound(m, &t) + 63) / 64 * 64;
    }
    int n_nodes = 5 + trial;
    for (int i = 0; i < n_nodes; i++) {
      seed = seed * 1103515245u + 12345u;
      dml_ir_value_t *ins[2];
      /* Mostly recent operands, sometimes old ones: long live ranges. */
      for (int k = 0; k < 2; k++) {
        seed = seed * 1103515245u + 12345u;
        size_t back = (seed >> 16) % (nv < 4 ? nv : (seed >> 8) % 5 == 0 ? nv : 4);
        ins[k] = vals[nv - 1 - back];
      }
      uint32_t n_out = (seed >> 20) % 4 == 0 ? 2 : 1;
      dml_ir_node_t *node = NULL;
      CHECK_OK(dml_ir_node_create(f, n_out == 2 ? DML_OP_SPLIT : DML_OP_ADD, NULL,
                                  n_out == 2 ? 1 : 2, ins, n_out, NULL, &node));
      for (uint32_t k = 0; k < n_out; k++) {
        seed = seed * 1103515245u + 12345u;
        node->outputs[k]->type = f32_1d((seed >> 16) % 700); /* 0 bytes happen */
        sum += (dml_ir_type_bytes_bound(m, &node->outputs[k]->type) + 63) / 64 * 64;
        vals[nv++] = node->outputs[k];
      }
    }
    dml_ir_value_t *res[2] = {vals[nv - 1], vals[nv / 2]};
    CHECK_OK(dml_ir_function_set_results(f, 2, res));
    dml_pass_options_t o;
    memset(&o, 0, sizeof(o));
    CHECK_OK(dml_pass_mem_plan(m, &o));
    check_plan(f);
    CHECK(f->arena_bytes <= sum);
    if (trial > 20) CHECK(f->arena_bytes < sum);
    dml_ir_module_release(m);
  }
}

static void test_symbolic_bound_and_functions(void) {
  dml_ir_module_t *m = NULL;
  CHECK_OK(dml_ir_module_create(&m));
  int32_t batch = -1;
  CHECK_OK(dml_ir_module_add_symbol(m, "batch", 32, &batch));
  dml_ir_function_t *f = NULL;
  CHECK_OK(dml_ir_function_create(m, "forward", &f));
  dml_type_t t = dml_type_unknown(DML_DTYPE_F32);
  t.rank = 2;
  t.dims[0].value = 1;
  t.dims[0].sym = batch;
  t.dims[1].value = 10;
  t.dims[1].sym = -1;
  dml_ir_value_t *x = NULL;
  CHECK_OK(dml_ir_function_add_arg(f, "x", &t, &x));
  dml_ir_node_t *n = NULL;
  CHECK_OK(dml_ir_node_create(f, DML_OP_SIGMOID, "s", 1, &x, 1, NULL, &n));
  n->outputs[0]->type = t;
  CHECK_OK(dml_ir_function_set_results(f, 1, &n->outputs[0]));
  dml_ir_function_t *g = make_chain(m, "other", 4, 4096);
  dml_pass_options_t o;
  memset(&o, 0, sizeof(o));
  CHECK_OK(dml_pass_mem_plan(m, &o));
  CHECK(x->mem_bytes == 32 * 10 * 4);
  CHECK(n->outputs[0]->mem_bytes == 32 * 10 * 4);
  CHECK(f->arena_bytes == 2 * 1280);
  CHECK(g->arena_bytes == 3 * 16384);
  CHECK(o.out_arena_bytes == 3 * 16384);
  check_plan(f);
  check_plan(g);
  dml_ir_module_release(m);
}

static void test_unknown_type_is_an_error(void) {
  dml_ir_module_t *m = NULL;
  CHECK_OK(dml_ir_module_create(&m));
  dml_ir_function_t *f = NULL;
  CHECK_OK(dml_ir_function_create(m, "forward", &f));
  dml_type_t t = f32_1d(8);
  dml_ir_value_t *x = NULL;
  CHECK_OK(dml_ir_function_add_arg(f, "x", &t, &x));
  dml_ir_node_t *n = NULL;
  CHECK_OK(dml_ir_node_create(f, DML_OP_RELU, "r1", 1, &x, 1, NULL, &n));
  CHECK_OK(dml_ir_function_set_results(f, 1, &n->outputs[0]));
  dml_pass_options_t o;
  memset(&o, 0, sizeof(o));
  CHECK_ERROR(dml_pass_mem_plan(m, &o), DML_STATUS_FAILED_PRECONDITION,
              "run shape-infer first");
  CHECK_ERROR(dml_pass_mem_plan(m, &o), DML_STATUS_FAILED_PRECONDITION, "node 'r1'");
  dml_ir_module_release(m);
}

int main(void) {
  RUN(test_chain_reuses_two_buffers);
  RUN(test_random_dags);
  RUN(test_fusion_aware);
  RUN(test_symbolic_bound_and_functions);
  RUN(test_unknown_type_is_an_error);
  return dml_test_finish();
}
