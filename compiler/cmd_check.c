/* cmd_check.c — `dmlc check PKG --device D [--iterations N] [--seed S]
 * [--json]`: runs each GPU kernel of a package on the device against the
 * CPU reference kernels (dml_rt_check, dml_rt.h) and reports the worst
 * error per kernel; exit 1 when a kernel exceeds its tolerance. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dml_npy.h"
#include "dml_rt.h"
#include "dmlc_cmds.h"

static void usage(FILE *f) {
  fprintf(
      f,
      "usage: dmlc check PKG --device D [--iterations N] [--seed S] [--json]\n"
      "                  [--input NAME=FILE.npy]...\n\n"
      "Checks that the package's GPU kernels give right answers on device D: runs\n"
      "each kernel alone on D and the CPU reference kernels of its nodes on the\n"
      "same inputs, and reports the worst error per kernel (the element, the\n"
      "device's and the CPU's values); then the whole function once, end to end.\n"
      "Exit status 1 when any kernel exceeds its tolerance, 0 when all are within.\n\n"
      "Inputs per iteration and kernel: random values (normal, of a random scale\n"
      "1e-3..1e3), then edge values (a quarter of the elements NaN, +-inf, -0,\n"
      "denormals, +-1e-30, +-1e15, and +-3e38 where the kernel does not accumulate).\n"
      "Integer and bool inputs, and those an op reads as shapes, indices or\n"
      "coordinates, get the values the model computes on random inputs (so indices\n"
      "stay in range). A kernel casting floats to integers gets inputs in [0, 100)\n"
      "and no negative, huge or non-finite edge (ONNX leaves those casts undefined).\n"
      "Symbolic dims: at their bounds, then random sizes.\n\n"
      "Error of an element: |device - cpu| / max(1, |cpu|, m), m the size of the\n"
      "terms meeting in it: how far the CPU's result moves when the inputs and\n"
      "constants move by 2^-22 (relative; two steps of the dtype for f16 or bf16\n"
      "inputs), over that move, at least the median of that\n"
      "over the value, and for accumulating kernels the CPU's result on |inputs|.\n"
      "NaN matches NaN and an infinity the same infinity; differences below the\n"
      "smallest normal float count as none, and edge inputs are also run on the\n"
      "CPU with denormals flushed (a device may flush them). Tolerances (the\n"
      "kernel's loosest node):\n"
      "  exact           0     data movement, compares, Relu/Abs/Neg, Max/Min, Where,\n"
      "                        Cast, max pooling, ArgMax, Gather ...\n"
      "  arithmetic      1e-5  Add, Sub, Mul, Div, Sqrt, Reciprocal, HardSwish ...\n"
      "  transcendental  1e-4  Exp, Log, Tanh, Sigmoid, Erf, Pow, Sin ...\n"
      "  accumulating    1e-4  Gemm, MatMul, Conv, reductions, Softmax, BatchNorm,\n"
      "                        LayerNorm, average pooling, and ops not listed\n"
      "  end-to-end      1e-3  the whole function on random inputs\n"
      "f16 outputs at least 2e-3, bf16 1.6e-2; CUDA TF32 GEMMs (and end to end\n"
      "with them) 5e-3. docs/kernels.md \"Checking a device\" has the details.\n\n"
      "  --device D        vulkan, vulkan:N, cuda or cuda:N (see dmlc devices)\n"
      "  --iterations N    rounds of random and edge inputs (default 3)\n"
      "  --seed S          seed of the inputs (default 0)\n"
      "  --input NAME=FILE.npy  the model input NAME for the end-to-end runs (the\n"
      "                    values integer, index and shape inputs of the kernels\n"
      "                    take come from them); others are random: normal floats,\n"
      "                    integers 0 (one element) or 0..1, bools 0/1\n"
      "  --json            one JSON object instead of the table\n"
      "  -h, --help        this text\n");
}

/* Prints `s` as a JSON string. */
static void json_str(const char *s) {
  putchar('"');
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p == '"' || *p == '\\')
      printf("\\%c", *p);
    else if (*p < 0x20)
      printf("\\u%04x", *p);
    else
      putchar(*p);
  }
  putchar('"');
}

/* A number as JSON: non-finite ones as the strings "nan", "inf", "-inf". */
static void json_num(double x) {
  if (isnan(x))
    printf("\"nan\"");
  else if (isinf(x))
    printf(x > 0 ? "\"inf\"" : "\"-inf\"");
  else
    printf("%.9g", x);
}

static void print_json(const char *pkg, const dml_rt_check_report_t *r) {
  printf("{\"package\": ");
  json_str(pkg);
  printf(", \"device\": ");
  json_str(r->device);
  printf(", \"seed\": %" PRIu64 ", \"iterations\": %" PRIu32
         ", \"passed\": %s, \"n_failed\": %" PRIu32 ", \"kernels\": [",
         r->seed, r->iterations, r->n_failed ? "false" : "true", r->n_failed);
  for (uint32_t k = 0; k < r->n_kernels; k++) {
    const dml_rt_check_kernel_t *o = &r->kernels[k];
    printf("%s{\"name\": ", k ? ", " : "");
    json_str(o->name);
    printf(", \"ops\": ");
    json_str(o->ops);
    printf(", \"class\": ");
    json_str(o->tol_class);
    printf(", \"tolerance\": %.9g, \"checked\": %s, \"passed\": %s, \"worst\": ",
           o->tolerance, o->checked ? "true" : "false", o->passed ? "true" : "false");
    json_num(o->worst);
    printf(", \"value\": ");
    json_str(o->value);
    printf(", \"index\": %" PRId64 ", \"coords\": [", o->index);
    for (int32_t d = 0; d < o->rank; d++)
      printf("%s%" PRId64, d ? ", " : "", o->coords[d]);
    printf("], \"device_value\": ");
    json_num(o->device_value);
    printf(", \"cpu_value\": ");
    json_num(o->cpu_value);
    printf(", \"inputs\": ");
    json_str(o->inputs ? o->inputs : "");
    printf(", \"iteration\": %" PRIu32 ", \"note\": ", o->iteration);
    json_str(o->note);
    printf("}");
  }
  printf("]}\n");
}

static void print_table(const char *pkg, const dml_rt_check_report_t *r) {
  printf("dmlc check %s on %s (seed %" PRIu64 ", %" PRIu32 " iteration%s)\n", pkg,
         r->device, r->seed, r->iterations, r->iterations == 1 ? "" : "s");
  printf("%-22s %-14s %9s %10s  %-6s %s\n", "kernel", "class", "tolerance", "worst",
         "result", "ops; worst element: device vs cpu (inputs, iteration)");
  for (uint32_t k = 0; k < r->n_kernels; k++) {
    const dml_rt_check_kernel_t *o = &r->kernels[k];
    if (!o->checked) {
      printf("%-22s %-14s %9.0e %10s  %-6s %s; %s\n", o->name, o->tol_class, o->tolerance,
             "-", "skip", o->ops, o->note);
      continue;
    }
    char at[160];
    size_t w = (size_t)snprintf(at, sizeof at, "%s[", o->value);
    for (int32_t d = 0; d < o->rank && w < sizeof at; d++)
      w += (size_t)snprintf(at + w, sizeof at - w, "%s%" PRId64, d ? "," : "",
                            o->coords[d]);
    if (w < sizeof at) snprintf(at + w, sizeof at - w, "]");
    printf("%-22s %-14s %9.0e %10.3g  %-6s %s; %s: %.9g vs %.9g (%s, %" PRIu32 ")%s%s\n",
           o->name, o->tol_class, o->tolerance, o->worst, o->passed ? "ok" : "FAIL",
           o->ops, at, o->device_value, o->cpu_value, o->inputs, o->iteration,
           o->note[0] ? "; " : "", o->note);
  }
  uint32_t checked = 0;
  for (uint32_t k = 0; k < r->n_kernels; k++) checked += (uint32_t)r->kernels[k].checked;
  if (!r->n_failed) {
    printf("passed: %" PRIu32 " of %" PRIu32 " checks within tolerance\n", checked,
           checked);
    return;
  }
  printf("FAILED: %" PRIu32 " of %" PRIu32 " checks exceed their tolerance:", r->n_failed,
         checked);
  for (uint32_t k = 0; k < r->n_kernels; k++)
    if (r->kernels[k].checked && !r->kernels[k].passed) printf(" %s", r->kernels[k].name);
  printf("\n");
}

static int parse_u64(const char *v, uint64_t *out) {
  char *end = NULL;
  if (!*v || *v == '-') return 0;
  unsigned long long n = strtoull(v, &end, 10);
  if (*end) return 0;
  *out = (uint64_t)n;
  return 1;
}

#define MAX_GIVEN 64

/* Reads the --input specs NAME=FILE.npy into given[] (by input index;
 * buffers in bufs[], freed by the caller). */
static dml_status_t read_given(const dml_rt_model_t *m, char **specs, int n_specs,
                               dml_tensor_t *tensors, const dml_tensor_t **given,
                               void **bufs) {
  for (int k = 0; k < n_specs; k++) {
    const char *eq = strchr(specs[k], '=');
    char name[256];
    size_t nl = eq ? (size_t)(eq - specs[k]) : 0;
    if (!eq || nl >= sizeof name)
      return dml_status_make(DML_STATUS_INVALID_ARGUMENT, "dmlc.check",
                             "--input '%s' needs NAME=FILE.npy", specs[k]);
    memcpy(name, specs[k], nl);
    name[nl] = 0;
    int32_t i = dml_rt_model_find_input(m, name);
    if (i < 0 || i >= MAX_GIVEN)
      return dml_status_make(DML_STATUS_NOT_FOUND, "dmlc.check",
                             "--input '%s': the model has no input named '%s'", specs[k],
                             name);
    DML_RETURN_IF_ERROR(dml_npy_read_file(eq + 1, &tensors[k], &bufs[k]));
    dml_rt_io_info_t info;
    DML_RETURN_IF_ERROR(dml_rt_model_input_info(m, (uint32_t)i, &info));
    if (tensors[k].dtype != info.dtype)
      return dml_status_make(DML_STATUS_INVALID_ARGUMENT, "dmlc.check",
                             "input '%s': '%s' holds %s values, the model input is %s",
                             name, eq + 1, dml_dtype_name(tensors[k].dtype),
                             dml_dtype_name(info.dtype));
    given[i] = &tensors[k];
  }
  return DML_OK;
}

int dmlc_cmd_check(int argc, char **argv) {
  const char *pkg = NULL, *device = NULL;
  dml_rt_check_options_t opt;
  memset(&opt, 0, sizeof opt);
  opt.iterations = 3;
  int json = 0, n_specs = 0;
  char *specs[MAX_GIVEN];
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v;
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      usage(stdout);
      return 0;
    } else if (!strcmp(a, "--json")) {
      json = 1;
    } else if ((v = dmlc_flag_value(argc, argv, &i, "--device"))) {
      if (!*v) return dmlc_usage_error("check", "--device needs a device (e.g. vulkan)");
      device = v;
    } else if ((v = dmlc_flag_value(argc, argv, &i, "--iterations"))) {
      uint64_t n = 0;
      if (!parse_u64(v, &n) || n < 1 || n > 1000000)
        return dmlc_usage_error("check", "--iterations needs a positive integer");
      opt.iterations = (uint32_t)n;
    } else if ((v = dmlc_flag_value(argc, argv, &i, "--input"))) {
      if (!*v || !strchr(v, '='))
        return dmlc_usage_error("check", "--input needs NAME=FILE.npy");
      if (n_specs == MAX_GIVEN)
        return dmlc_usage_error("check", "more than %d --input flags", MAX_GIVEN);
      specs[n_specs++] = (char *)v;
    } else if ((v = dmlc_flag_value(argc, argv, &i, "--seed"))) {
      if (!parse_u64(v, &opt.seed))
        return dmlc_usage_error("check", "--seed needs a non-negative integer");
    } else if (a[0] == '-') {
      return dmlc_usage_error("check", "unknown flag '%s'", a);
    } else if (!pkg) {
      pkg = a;
    } else {
      return dmlc_usage_error("check", "more than one package given");
    }
  }
  if (!pkg) return dmlc_usage_error("check", "no package given");
  if (!device)
    return dmlc_usage_error("check",
                            "no --device given (vulkan, vulkan:N, cuda or cuda:N; the "
                            "CPU is the reference)");
  dml_rt_model_t *m = NULL;
  dml_rt_check_report_t *r = NULL;
  dml_tensor_t tensors[MAX_GIVEN];
  const dml_tensor_t *given[MAX_GIVEN];
  void *bufs[MAX_GIVEN];
  memset(given, 0, sizeof given);
  memset(bufs, 0, sizeof bufs);
  dml_status_t st = dml_rt_model_load_file(pkg, &m);
  if (!st && n_specs) {
    st = read_given(m, specs, n_specs, tensors, given, bufs);
    opt.inputs = given;
    opt.n_inputs =
        dml_rt_model_num_inputs(m) < MAX_GIVEN ? dml_rt_model_num_inputs(m) : MAX_GIVEN;
  }
  if (!st) st = dml_rt_check(m, device, &opt, &r);
  for (int k = 0; k < MAX_GIVEN; k++) free(bufs[k]);
  if (st) {
    dml_rt_model_release(m);
    return dmlc_report(dml_status_annotate(st, "dmlc check %s", pkg));
  }
  if (json)
    print_json(pkg, r);
  else
    print_table(pkg, r);
  int rc = r->n_failed ? 1 : 0;
  dml_rt_check_report_free(r);
  dml_rt_model_release(m);
  return rc;
}
