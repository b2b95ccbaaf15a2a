/* test_vulkan_ops1.c — codegen/schedule_ops1.c's kernel forms that
 * dml_every_op does not cover (Trilu, IsInf, IsNaN, BitShift, CumSum,
 * CumProd, ScatterElements, GatherND, ReverseSequence,
 * MeanVarianceNormalization, LRN, Det, Adagrad, Momentum, Adam:
 * tests/gpu_ops1_forms.h says why each stays) on the default Vulkan device
 * (Mesa's lavapipe in CI) against the CPU reference at batch 1, 3 and 16;
 * the forms with parameters fed at run time on chosen values (CumSum's
 * axis, negative included; Trilu's k); and the forms the scheduler refuses,
 * each an UNIMPLEMENTED error naming the node and the reason.
 * Tolerance: |vulkan - cpu| <= 1e-4 * max(1, |cpu|) (f32 sums where the
 * CPU sums in double; integers and bools compared exactly). Skips (77)
 * without a Vulkan device. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen_test_util.h"
#include "gpu_ops1_forms.h"
#include "gpu_test_util.h"
#include "vulkan_forms.h"

static void test_forms(void) {
  gpu_test_ops1_forms(vk_check_form);
}

/* Runs `cpu` and `vk` on input 0 `x` (f32 [2,3]) and input 1 the scalar
 * `p` (dtype pt), and checks output 0 of both: equal within 1e-5 and equal
 * to `want` (6 values). */
static void run_scalar_case(const char *what, dml_rt_session_t *cpu, dml_rt_session_t *vk,
                            const float *x, dml_dtype_t pt, int64_t p,
                            const float *want) {
  dml_tensor_t tx, tp;
  memset(&tx, 0, sizeof tx);
  memset(&tp, 0, sizeof tp);
  tx.dtype = DML_DTYPE_F32;
  tx.rank = 2;
  tx.dims[0] = 2;
  tx.dims[1] = 3;
  tx.data = (void *)x;
  int32_t p32 = (int32_t)p;
  tp.dtype = pt;
  tp.rank = 0;
  tp.data = pt == DML_DTYPE_I32 ? (void *)&p32 : (void *)&p;
  dml_rt_session_t *ss[2] = {cpu, vk};
  for (int k = 0; k < 2; k++) {
    CHECK_OK(dml_rt_session_set_input(ss[k], 0, &tx));
    CHECK_OK(dml_rt_session_set_input(ss[k], 1, &tp));
    CHECK_OK(dml_rt_session_run(ss[k]));
    dml_tensor_t y;
    memset(&y, 0, sizeof y);
    CHECK_OK(dml_rt_session_get_output(ss[k], 0, &y));
    CHECK(y.dtype == DML_DTYPE_F32 && y.rank == 2 && y.dims[0] == 2 && y.dims[1] == 3);
    if (y.dtype != DML_DTYPE_F32 || !y.data) continue;
    for (int i = 0; i < 6; i++) {
      float got = ((const float *)y.data)[i];
      if (got < want[i] - 1e-5f || got > want[i] + 1e-5f) {
        fprintf(stderr, "  %s on %s: element %d is %g, want %g\n", what,
                k ? "vulkan" : "cpu", i, (double)got, (double)want[i]);
        CHECK(0);
        break;
      }
    }
  }
}

/* CumSum with its axis fed at run time (one guarded loop per possible
 * axis on the GPU): axes 0, 1, -1 and -2 of a [2,3]; Trilu with k fed at
 * run time: k = 1, -1 and 5. */
static void test_run_time_parameters(void) {
  static const float x[6] = {1, 2, 3, 4, 5, 6};
  dml_rt_session_t *cpu, *vk;
  dml_rt_model_t *m = vk_open_pair(
      "func @forward(%x: f32[2,3], %a: i32[]) -> (f32[2,3]) {\n"
      "  %y = CumSum(%x, %a) : f32[2,3]\n  return %y\n}\n",
      &cpu, &vk);
  if (cpu && vk) {
    static const float ax0[6] = {1, 2, 3, 5, 7, 9}, ax1[6] = {1, 3, 6, 4, 9, 15};
    run_scalar_case("cumsum axis 0", cpu, vk, x, DML_DTYPE_I32, 0, ax0);
    run_scalar_case("cumsum axis 1", cpu, vk, x, DML_DTYPE_I32, 1, ax1);
    run_scalar_case("cumsum axis -1", cpu, vk, x, DML_DTYPE_I32, -1, ax1);
    run_scalar_case("cumsum axis -2", cpu, vk, x, DML_DTYPE_I32, -2, ax0);
  }
  gpu_test_close(m, cpu, vk);
  m = vk_open_pair(
      "func @forward(%x: f32[2,3], %k: i64[]) -> (f32[2,3]) {\n"
      "  %y = Trilu(%x, %k) : f32[2,3]\n  return %y\n}\n",
      &cpu, &vk);
  if (cpu && vk) {
    static const float k1[6] = {0, 2, 3, 0, 0, 6}, km1[6] = {1, 2, 3, 4, 5, 6},
                       k5[6] = {0, 0, 0, 0, 0, 0};
    run_scalar_case("trilu k 1", cpu, vk, x, DML_DTYPE_I64, 1, k1);
    run_scalar_case("trilu k -1", cpu, vk, x, DML_DTYPE_I64, -1, km1);
    run_scalar_case("trilu k 5", cpu, vk, x, DML_DTYPE_I64, 5, k5);
  }
  gpu_test_close(m, cpu, vk);
}

/* Forms schedule_ops1.c refuses: UNIMPLEMENTED naming the node and why. */
static void test_form_errors(void) {
  static const struct {
    const char *text, *want;
  } cases[] = {
      {"func @forward(%x: f32[5,5]) -> (f32[]) {\n"
       "  %y = Det(%x) : f32[]\n  return %y\n}\n",
       "(Det): M above 4 (cofactor expansion)"},
      {"global @i : i64[1,2] = dense<[0, 1]>\n"
       "func @forward(%x: bool[2,2], %u: bool[1,2]) -> (bool[2,2]) {\n"
       "  %y = ScatterElements(%x, @i, %u) {reduction = \"add\"} : bool[2,2]\n"
       "  return %y\n}\n",
       "(ScatterElements): a reduction over bool"},
      {"sym batch <= 16\n"
       "func @forward(%x: f32[batch,3], %y: f32[3,2]) -> (f32[batch,2]) {\n"
       "  %z = Einsum(%x, %y) {equation = \"ij,jk->ik\"} : f32[batch,2]\n"
       "  return %z\n}\n",
       "(Einsum): symbolic dims"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    vk_check_refused(cases[i].text, cases[i].want);
}

int main(void) {
  dml_rt_device_info_t d[16];
  uint32_t n = 0;
  if (gpu_test_skip(dml_rt_vulkan_devices(d, 16, &n), "no Vulkan device")) return 77;
  RUN(test_forms);
  RUN(test_run_time_parameters);
  RUN(test_form_errors);
  return dml_test_finish();
}
