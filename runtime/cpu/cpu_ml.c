/*
 * cpu_ml.c — ai.onnx.ml ops on the CPU: TreeEnsemble (ai.onnx.ml opset 5,
 * https://onnx.ai/onnx/operators/onnx_aionnxml_TreeEnsemble.html).
 *
 * Each tree starts at tree_roots[t]; node i compares X[n, nodes_featureids[i]]
 * with nodes_splits[i] by nodes_modes[i] (0 LEQ, 1 LT, 2 GTE, 3 GT, 4 EQ,
 * 5 NEQ, 6 MEMBER: the value is one of node i's set in membership_values,
 * the sets listed in the order of the MEMBER nodes' indices, each ended by a
 * NaN) and goes to nodes_truenodeids[i] when true, else nodes_falsenodeids[i];
 * there, a flag of nodes_trueleafs / nodes_falseleafs set means the id is a
 * leaf: weight leaf_weights[id] for target leaf_targetids[id]. A NaN feature
 * takes the true branch where nodes_missing_value_tracks_true[i] is set. A
 * root is always a node (a one-leaf tree is a root whose branches both go to
 * that leaf; ONNX's reference, op_tree_ensemble.py, reads leaf number
 * `root` for such a root instead). The weights are aggregated per target by
 * aggregate_function (0 AVERAGE: sum / number of trees, 1 SUM, 2 MIN, 3 MAX;
 * targets no leaf reached are 0 for SUM/AVERAGE and the dtype's largest /
 * smallest finite value for MIN / MAX, as the reference), in double, rounded
 * once to X's dtype. post_transform other than 0 (NONE) is UNIMPLEMENTED
 * (ONNX's reference ignores it). Every index is checked; a walk longer than
 * the node count (a cycle) is INVALID_ARGUMENT.
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "cpu_internal.h"

typedef struct {
  const dml_attr_t *a;
  size_t n;
  const int64_t *ints;      /* INTS */
  const dml_tensor_t *tens; /* TENSOR */
} ml_arr_t;

/* An INTS or TENSOR attribute as an array; n = 0 when absent. */
static ml_arr_t arr_of(const dml_cpu_call_t *c, const char *name) {
  ml_arr_t r = {dml_attr_find(c->attrs, c->n_attrs, name), 0, NULL, NULL};
  if (r.a && r.a->kind == DML_ATTR_INTS) {
    r.ints = r.a->ints;
    r.n = r.a->n;
  } else if (r.a && r.a->kind == DML_ATTR_TENSOR) {
    r.tens = &r.a->tensor;
    int64_t k = dml_dims_numel(r.tens->dims, r.tens->rank);
    r.n = k > 0 ? (size_t)k : 0;
  }
  return r;
}
static double arr_f(const ml_arr_t *r, size_t i) {
  return r->ints ? (double)r->ints[i] : dml_load_f64(r->tens->dtype, r->tens->data, i);
}
static int64_t arr_i(const ml_arr_t *r, size_t i) {
  return r->ints ? r->ints[i] : dml_load_i64(r->tens->dtype, r->tens->data, i);
}

dml_status_t dml_cpuk_TreeEnsemble(const dml_cpu_call_t *c) {
  const dml_tensor_t *x = &c->inputs[0];
  dml_tensor_t *y = &c->outputs[0];
  if (!dml_dtype_is_float(x->dtype) || y->dtype != x->dtype)
    return dml_cpu_err_dtype(c, "input", x->dtype);
  if (x->rank != 2 || y->rank != 2 || y->dims[0] != x->dims[0])
    return dml_cpu_err_shapes(c, "X must be [N, F] and Y [N, n_targets]");
  int64_t post = dml_cpu_get_int(c, "post_transform", 0);
  if (post != 0)
    return dml_cpu_error(c, DML_STATUS_UNIMPLEMENTED,
                         "post_transform %lld is not supported (NONE = 0 only)",
                         (long long)post);
  int64_t agg = dml_cpu_get_int(c, "aggregate_function", 1);
  if (agg < 0 || agg > 3)
    return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT,
                         "aggregate_function %lld is not 0..3", (long long)agg);
  ml_arr_t splits = arr_of(c, "nodes_splits"), feat = arr_of(c, "nodes_featureids"),
           modes = arr_of(c, "nodes_modes"), tid = arr_of(c, "nodes_truenodeids"),
           fid = arr_of(c, "nodes_falsenodeids"), tleaf = arr_of(c, "nodes_trueleafs"),
           fleaf = arr_of(c, "nodes_falseleafs"), ltarget = arr_of(c, "leaf_targetids"),
           lw = arr_of(c, "leaf_weights"), roots = arr_of(c, "tree_roots"),
           miss = arr_of(c, "nodes_missing_value_tracks_true"),
           members = arr_of(c, "membership_values");
  size_t nn = modes.n, nl = lw.n;
  if (!nn || splits.n != nn || feat.n != nn || tid.n != nn || fid.n != nn ||
      tleaf.n != nn || fleaf.n != nn || (miss.a && miss.n != nn) || ltarget.n != nl ||
      !roots.n)
    return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT,
                         "the nodes_* attributes need one entry per node (%zu), the "
                         "leaf_* one per leaf (%zu), tree_roots at least one",
                         nn, nl);
  int64_t N = x->dims[0], F = x->dims[1], T = y->dims[1];
  for (size_t i = 0; i < nn; i++) {
    int64_t m = arr_i(&modes, i), f = arr_i(&feat, i);
    if (m < 0 || m > 6 || f < 0 || f >= F ||
        (uint64_t)arr_i(&tid, i) >= (uint64_t)(arr_i(&tleaf, i) ? nl : nn) ||
        (uint64_t)arr_i(&fid, i) >= (uint64_t)(arr_i(&fleaf, i) ? nl : nn))
      return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT,
                           "node %zu: mode %lld, feature %lld (of %lld) or a child id "
                           "out of range",
                           i, (long long)m, (long long)f, (long long)F);
  }
  for (size_t i = 0; i < nl; i++)
    if ((uint64_t)arr_i(&ltarget, i) >= (uint64_t)T)
      return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT,
                           "leaf %zu: target %lld is not below n_targets %lld", i,
                           (long long)arr_i(&ltarget, i), (long long)T);
  for (size_t r = 0; r < roots.n; r++)
    if ((uint64_t)arr_i(&roots, r) >= (uint64_t)nn)
      return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT, "tree root %zu out of range",
                           r);
  /* MEMBER sets: node i's set starts at set_start[i] in membership_values
   * (the sets in node index order, each ended by NaN). */
  size_t need = nn * sizeof(size_t) + (size_t)T * sizeof(double);
  if (c->scratch_bytes < need || !c->scratch)
    return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT, "scratch too small");
  size_t *set_start = (size_t *)c->scratch;
  double *acc = (double *)((char *)c->scratch + nn * sizeof(size_t));
  size_t pos = 0;
  for (size_t i = 0; i < nn; i++) {
    set_start[i] = SIZE_MAX;
    if (arr_i(&modes, i) != 6) continue;
    set_start[i] = pos;
    while (pos < members.n && !isnan(arr_f(&members, pos))) pos++;
    if (pos >= members.n)
      return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT,
                           "membership_values has no NaN-ended set for MEMBER node %zu",
                           i);
    pos++;
  }
  double big = x->dtype == DML_DTYPE_F64   ? DBL_MAX
               : x->dtype == DML_DTYPE_F32 ? (double)FLT_MAX
               : x->dtype == DML_DTYPE_F16 ? 65504.0
                                           : 3.3895313892515355e38; /* bf16 */
  double init = agg == 2 ? big : agg == 3 ? -big : 0.0;
  for (int64_t n = 0; n < N; n++) {
    for (int64_t t = 0; t < T; t++) acc[t] = init;
    for (size_t r = 0; r < roots.n; r++) {
      size_t i = (size_t)arr_i(&roots, r);
      int leaf = 0; /* a root is a node: a one-leaf tree branches to its leaf */
      size_t steps = 0;
      while (!leaf) {
        if (++steps > nn)
          return dml_cpu_error(
              c, DML_STATUS_INVALID_ARGUMENT,
              "tree %zu does not reach a leaf within %zu steps (a cycle)", r, nn);
        double v = dml_load_f64(x->dtype, x->data, (size_t)(n * F + arr_i(&feat, i)));
        double s = arr_f(&splits, i);
        int go;
        switch (arr_i(&modes, i)) {
          case 0: go = v <= s; break;
          case 1: go = v < s; break;
          case 2: go = v >= s; break;
          case 3: go = v > s; break;
          case 4: go = v == s; break;
          case 5: go = v != s; break;
          default: {
            go = 0;
            for (size_t k = set_start[i]; !isnan(arr_f(&members, k)); k++)
              if (arr_f(&members, k) == v) go = 1;
          }
        }
        if (isnan(v) && miss.n && arr_i(&miss, i)) go = 1;
        leaf = (int)(go ? arr_i(&tleaf, i) : arr_i(&fleaf, i));
        i = (size_t)(go ? arr_i(&tid, i) : arr_i(&fid, i));
      }
      double w = arr_f(&lw, i);
      int64_t t = arr_i(&ltarget, i);
      if (agg == 0)
        acc[t] += w / (double)roots.n;
      else if (agg == 1)
        acc[t] += w;
      else if (agg == 2)
        acc[t] = w < acc[t] ? w : acc[t];
      else
        acc[t] = w > acc[t] ? w : acc[t];
    }
    for (int64_t t = 0; t < T; t++)
      dml_store_f64(y->dtype, y->data, (size_t)(n * T + t), acc[t]);
  }
  return DML_OK;
}

size_t dml_cpus_TreeEnsemble(const dml_cpu_call_t *c, int threads) {
  (void)threads;
  const dml_attr_t *m = dml_attr_find(c->attrs, c->n_attrs, "nodes_modes");
  size_t nn = 0;
  if (m && m->kind == DML_ATTR_TENSOR) {
    int64_t k = dml_dims_numel(m->tensor.dims, m->tensor.rank);
    nn = k > 0 ? (size_t)k : 0;
  } else if (m && m->kind == DML_ATTR_INTS) {
    nn = m->n;
  }
  int64_t T = c->outputs[0].rank == 2 ? c->outputs[0].dims[1] : 0;
  if (T < 0 || (uint64_t)T > SIZE_MAX / 16 || nn > SIZE_MAX / 16) return SIZE_MAX;
  return nn * sizeof(size_t) + (size_t)T * sizeof(double) + 1;
}
