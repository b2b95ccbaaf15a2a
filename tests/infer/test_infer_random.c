/* Robustness: random ops over random operands and attributes (wrong kinds,
 * out-of-range axes, negative and huge values) either infer a valid type or
 * return an error; they never crash (run it under DMLC_SANITIZE too). */
#include "infer_util.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint32_t rnd(uint32_t n) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return (uint32_t)(rng_state % n);
}

static const int64_t k_ints[] = {0, 1, 2,         3,         -1,        -2,
                                 7, 4, INT64_MAX, INT64_MIN, 1000000007};

static void random_attr(dml_ir_node_t *n) {
  static const char *const names[] = {"axis",
                                      "axes",
                                      "perm",
                                      "kernel_shape",
                                      "strides",
                                      "pads",
                                      "dilations",
                                      "group",
                                      "to",
                                      "keepdims",
                                      "transA",
                                      "transB",
                                      "ceil_mode",
                                      "auto_pad",
                                      "allowzero",
                                      "split",
                                      "num_outputs",
                                      "start",
                                      "end",
                                      "output_padding",
                                      "output_shape",
                                      "value",
                                      "noop_with_empty_axes",
                                      "mode",
                                      "stash_type",
                                      "keep_aspect_ratio_policy"};
  const char *name = names[rnd(sizeof(names) / sizeof(names[0]))];
  int64_t v[8];
  size_t cnt = rnd(9);
  for (size_t i = 0; i < cnt; i++) v[i] = k_ints[rnd(sizeof(k_ints) / sizeof(k_ints[0]))];
  switch (rnd(6)) {
    case 0: CHECK_OK(dml_ir_node_set_attr_int(n, name, v[0] = k_ints[rnd(11)])); break;
    case 1: CHECK_OK(dml_ir_node_set_attr_ints(n, name, v, cnt)); break;
    case 2: CHECK_OK(dml_ir_node_set_attr_float(n, name, 0.5)); break;
    case 3: {
      static const char *const s[] = {"SAME_UPPER", "VALID", "NOTSET",
                                      "x",          "",      "not_larger"};
      CHECK_OK(dml_ir_node_set_attr_string(n, name, s[rnd(6)]));
      break;
    }
    case 4: {
      int64_t one = 1;
      dml_tensor_t t = {DML_DTYPE_I64, (int32_t)rnd(2), {1}, &one};
      CHECK_OK(dml_ir_node_set_attr_tensor(n, name, &t));
      break;
    }
    default: {
      double f[2] = {1.0, 2.0};
      CHECK_OK(dml_ir_node_set_attr_floats(n, name, f, rnd(3)));
      break;
    }
  }
}

static void test_random(void) {
  tmod_t t;
  tm_init(&t);
  static const char *const specs[] = {
      "f32[batch,3,8,8]", "f32[1,3,8,8]",    "f32[batch,4]",
      "f32[4]",           "f32[]",           "i64[batch,5]",
      "i64[2]",           "bool[batch,4]",   "f32[8,3,3,3]",
      "f32[2*batch,1,4]", "f16[3,0,2]",      "f32[1,1,1,1,1,1,1,1]",
      "i32[4]",           "f32[batch,batch]"};
  enum { NSPEC = sizeof(specs) / sizeof(specs[0]) };
  dml_ir_value_t *pool[NSPEC + 8];
  uint32_t np = 0;
  for (uint32_t i = 0; i < NSPEC; i++) {
    char name[16];
    snprintf(name, sizeof(name), "a%u", i);
    pool[np++] = targ(&t, name, specs[i]);
  }
  int64_t c1[4] = {0, -1, 2, 3}, c2[2] = {INT64_MAX, INT64_MIN}, c3[1] = {-7};
  int64_t c4[8] = {1, 1, 1, 1, 0, 0, 0, 0};
  pool[np++] = ti64(&t, c1, 4, 0);
  pool[np++] = ti64(&t, c2, 2, 0);
  pool[np++] = ti64(&t, c3, 1, 1);
  pool[np++] = ti64(&t, c4, 8, 0);
  pool[np++] = ti64(&t, c1, 0, 0);
  float f[4] = {1.0f, 2.0f, -1.0f, 1e30f};
  pool[np++] = tf32(&t, f, 4);
  int ok = 0, err = 0;
  for (int it = 0; it < 40000; it++) {
    dml_op_t op = (dml_op_t)(1 + rnd(DML_OP_COUNT_ - 1));
    const dml_op_info_t *info = dml_op_info(op);
    uint32_t nin =
        (uint32_t)info->min_inputs +
        rnd((uint32_t)((info->max_inputs < 0 ? info->min_inputs + 3 : info->max_inputs) -
                       info->min_inputs + 1));
    uint32_t nout = (uint32_t)info->min_outputs +
                    rnd((uint32_t)((info->max_outputs < 0 ? 4 : info->max_outputs) -
                                   info->min_outputs + 1));
    dml_ir_value_t *ins[8];
    for (uint32_t i = 0; i < nin && i < 8; i++) ins[i] = rnd(10) ? pool[rnd(np)] : NULL;
    if (nin > 8) nin = 8;
    dml_ir_node_t *n = NULL;
    dml_status_t st = dml_ir_node_create(t.f, op, "rnd", nin, ins, nout, NULL, &n);
    if (st) {
      dml_status_free(st);
      continue;
    }
    for (uint32_t k = rnd(4); k > 0; k--) random_attr(n);
    st = dml_ir_infer_node(t.m, n);
    if (st) {
      err++;
      CHECK(dml_status_code(st) != DML_STATUS_INTERNAL);
      if (dml_status_code(st) == DML_STATUS_INTERNAL) {
        char *msg = dml_status_format(st);
        fprintf(stderr, "%s\n", msg);
        free(msg);
      }
      dml_status_free(st);
    } else {
      ok++;
      for (uint32_t o = 0; o < n->n_outputs; o++) {
        const dml_type_t *ty = &n->outputs[o]->type;
        CHECK(ty->rank >= 0 && ty->rank <= DML_MAX_RANK);
        CHECK(dml_dtype_size(ty->dtype) > 0);
      }
      /* Grow the pool with inferred results now and then. */
      if (np < NSPEC + 8 && rnd(50) == 0) pool[np++] = n->outputs[0];
    }
    dml_ir_node_erase(n);
  }
  printf("random nodes: %d inferred, %d rejected\n", ok, err);
  CHECK(ok > 1000 && err > 1000);
  tm_free(&t);
}

int main(void) {
  RUN(test_random);
  return dml_test_finish();
}
