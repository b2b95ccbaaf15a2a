/* dim_spec.c — --dim-bound and --input-shape (dml_dim_spec.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dml_dim_spec.h"

/* Where a parse error is printed (dmlc_dim_spec_t's `err`). */
#define ERR(s) ((s)->err ? (s)->err : stderr)

#define MAX_BOUND ((int64_t)1 << 31)

/* Parses a decimal integer in [lo, MAX_BOUND] from [p, end); 0 if not one. */
static int parse_int(const char *p, const char *end, int64_t lo, int64_t *out) {
  if (p >= end || end - p > 18) return 0;
  int64_t v = 0;
  for (; p < end; p++) {
    if (*p < '0' || *p > '9') return 0;
    v = v * 10 + (*p - '0');
  }
  if (v < lo || v > MAX_BOUND) return 0;
  *out = v;
  return 1;
}

static char *dup_n(const char *p, size_t n) {
  char *r = (char *)malloc(n + 1);
  if (r) {
    memcpy(r, p, n);
    r[n] = 0;
  }
  return r;
}

int dmlc_dim_spec_parse_bound(dmlc_dim_spec_t *s, const char *cmd, const char *v) {
  int64_t b = 0;
  if (!strchr(v, '=')) {
    if (!parse_int(v, v + strlen(v), 1, &b)) {
      fprintf(ERR(s),
              "error: %s: --dim-bound needs NAME=N[,NAME=N...] or one default N, each N "
              "a positive integer up to 2^31, got '%s'\n",
              cmd, v);
      return 0;
    }
    if (s->default_bound && s->default_bound != b) {
      fprintf(ERR(s), "error: %s: --dim-bound gives two default bounds (%lld and %lld)\n",
              cmd, (long long)s->default_bound, (long long)b);
      return 0;
    }
    s->default_bound = b;
    return 1;
  }
  for (const char *p = v; *p;) {
    const char *comma = strchr(p, ','), *end = comma ? comma : p + strlen(p);
    const char *eq = memchr(p, '=', (size_t)(end - p));
    if (!eq || eq == p || !parse_int(eq + 1, end, 1, &b)) {
      fprintf(ERR(s),
              "error: %s: --dim-bound item '%.*s' is not NAME=N (N a positive integer "
              "up to 2^31)\n",
              cmd, (int)(end - p), p);
      return 0;
    }
    if (s->n_bounds == s->cap_bounds) {
      size_t cap = s->cap_bounds ? 2 * s->cap_bounds : 8;
      void *nb = realloc(s->bounds, cap * sizeof *s->bounds);
      if (!nb) goto oom;
      s->bounds = (dml_onnx_dim_bound_t *)nb;
      s->cap_bounds = cap;
    }
    char *name = dup_n(p, (size_t)(eq - p));
    if (!name) goto oom;
    s->bounds[s->n_bounds].name = name;
    s->bounds[s->n_bounds].bound = b;
    s->n_bounds++;
    p = comma ? comma + 1 : end;
  }
  return 1;
oom:
  fprintf(ERR(s), "error: %s: out of memory\n", cmd);
  return 0;
}

int dmlc_dim_spec_parse_shape(dmlc_dim_spec_t *s, const char *cmd, const char *v) {
  const char *eq = strchr(v, '=');
  int64_t dims[DML_MAX_RANK], lo[DML_MAX_RANK], hi[DML_MAX_RANK], step[DML_MAX_RANK];
  int32_t rank = 0, any_range = 0;
  if (!eq || eq == v) goto bad;
  for (const char *p = eq + 1; *p;) {
    if (rank == DML_MAX_RANK) {
      fprintf(ERR(s), "error: %s: --input-shape '%s' has more than %d dims\n", cmd, v,
              DML_MAX_RANK);
      return 0;
    }
    const char *end;
    lo[rank] = hi[rank] = dims[rank] = step[rank] = 0;
    if (*p == '[') {
      const char *close = strchr(p, ']');
      if (!close) goto bad;
      const char *colon = memchr(p, ':', (size_t)(close - p));
      if (colon) {
        const char *c2 = memchr(colon + 1, ':', (size_t)(close - colon - 1)), *he = close;
        if (c2) {
          if (!parse_int(c2 + 1, close, 1, &step[rank])) goto bad;
          he = c2;
        }
        if (colon > p + 1 && !parse_int(p + 1, colon, 1, &lo[rank])) goto bad;
        if (!parse_int(colon + 1, he, 1, &hi[rank])) goto bad;
      } else if (!parse_int(p + 1, close, 1, &hi[rank])) {
        goto bad;
      }
      if (lo[rank] > hi[rank]) {
        fprintf(ERR(s),
                "error: %s: --input-shape '%s': range [%lld:%lld] has MIN > MAX\n", cmd,
                v, (long long)lo[rank], (long long)hi[rank]);
        return 0;
      }
      any_range = 1;
      end = close + 1;
    } else {
      end = p;
      while (*end >= '0' && *end <= '9') end++;
      if (!parse_int(p, end, 0, &dims[rank])) goto bad;
    }
    rank++;
    if (*end == 'x' && end[1]) {
      p = end + 1;
    } else if (*end) {
      goto bad;
    } else {
      p = end;
    }
  }
  if (s->n_shapes == s->cap_shapes) {
    size_t cap = s->cap_shapes ? 2 * s->cap_shapes : 4;
    void *ns = realloc(s->shapes, cap * sizeof *s->shapes);
    if (!ns) goto oom;
    s->shapes = (dml_onnx_input_shape_t *)ns;
    s->cap_shapes = cap;
  }
  /* One block: the name, then the dims. */
  size_t nlen = (size_t)(eq - v), off = (nlen + 8) / 8 * 8;
  char *blk = (char *)calloc(1, off + sizeof(int64_t) * DML_MAX_RANK);
  if (!blk) goto oom;
  memcpy(blk, v, nlen);
  int64_t *d = (int64_t *)(void *)(blk + off);
  memcpy(d, dims, sizeof dims);
  dml_onnx_input_shape_t *sh = &s->shapes[s->n_shapes++];
  memset(sh, 0, sizeof *sh);
  sh->name = blk;
  sh->rank = rank;
  sh->dims = d;
  for (int32_t k = 0; k < rank && any_range; k++) {
    if (!hi[k]) continue;
    if (s->n_ranges == s->cap_ranges) {
      size_t cap = s->cap_ranges ? 2 * s->cap_ranges : 8;
      void *nr = realloc(s->ranges, cap * sizeof *s->ranges);
      if (!nr) goto oom;
      s->ranges = (dml_onnx_dim_range_t *)nr;
      s->cap_ranges = cap;
    }
    dml_onnx_dim_range_t *r = &s->ranges[s->n_ranges++];
    r->input = blk;
    r->dim = k;
    r->min = lo[k];
    r->max = hi[k];
    r->step = step[k];
  }
  return 1;
bad:
  fprintf(ERR(s),
          "error: %s: --input-shape needs NAME=D0xD1x..., each D a number or a range "
          "[MIN:MAX] or [MIN:MAX:STEP] (bounds 1..2^31), got '%s'\n",
          cmd, v);
  return 0;
oom:
  fprintf(ERR(s), "error: %s: out of memory\n", cmd);
  return 0;
}

int dmlc_dim_spec_apply(const dmlc_dim_spec_t *s, const char *cmd,
                        dml_compile_options_t *o) {
  if (s->default_bound) {
    if (o->batch_bound && o->batch_bound != s->default_bound) {
      fprintf(ERR(s),
              "error: %s: --dim-bound %lld and --batch-bound %lld both set the default "
              "bound; give one\n",
              cmd, (long long)s->default_bound, (long long)o->batch_bound);
      return 0;
    }
    o->batch_bound = s->default_bound;
  }
  o->dim_bounds = s->bounds;
  o->n_dim_bounds = s->n_bounds;
  o->input_ranges = s->ranges;
  o->n_input_ranges = s->n_ranges;
  if (s->n_shapes) {
    o->input_shapes = s->shapes;
    o->n_input_shapes = s->n_shapes;
  }
  return 1;
}

void dmlc_dim_spec_free(dmlc_dim_spec_t *s) {
  for (size_t i = 0; i < s->n_bounds; i++) free((char *)s->bounds[i].name);
  for (size_t i = 0; i < s->n_shapes; i++) free((char *)s->shapes[i].name);
  free(s->bounds);
  free(s->shapes);
  free(s->ranges);
  memset(s, 0, sizeof *s);
}
