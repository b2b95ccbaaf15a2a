/* cmd_quantize.c — `dmlc quantize MODEL.onnx -o OUT --calib DATA`: int8
 * post-training quantization into a QDQ ONNX model or a package
 * (dml_quantize.h, docs/quantize.md). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dml_cpu.h"
#include "dml_driver.h"
#include "dml_file.h"
#include "dml_quantize.h"
#include "dmlc_cmds.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: dmlc quantize MODEL.onnx -o OUT.onnx|OUT.dmlpkg --calib DATA\n"
          "                     [--method minmax|percentile[:P]|entropy]\n"
          "                     [--per-channel|--per-tensor] [--keep-f32 NAME,...]\n"
          "                     [--keep-f32-below-sqnr DB] [--report FILE.json]\n"
          "       dmlc quantize MODEL.onnx -o OUT.onnx|OUT.dmlpkg\n"
          "                     --weight-only int8|int4 [--group-size N]\n"
          "                     [--exclude NAME,...] [--asym] [--clip-search]\n"
          "       dmlc quantize MODEL.onnx -o OUT.onnx|OUT.dmlpkg\n"
          "                     --weight-only int4|int8 --method gptq --calib "
          "A.npy[,B.npy...]\n"
          "                     [--calib-mask NAME] [--damp F] [--act-order] "
          "[--int8-layers N]\n"
          "                     [--asym] [--clip-search] [--awq]\n"
          "       dmlc quantize MODEL.onnx -o OUT.onnx|OUT.dmlpkg\n"
          "                     --weight-only int4|int8 --awq --calib A.npy[,B.npy...]\n"
          "                     [--calib-mask NAME] [--asym] [--clip-search]\n"
          "\n"
          "Post-training int8 quantization: runs the f32 model on the CPU over the\n"
          "calibration rows, collects the range of every activation a quantized layer\n"
          "reads or writes, and writes the model in QDQ form (QuantizeLinear /\n"
          "DequantizeLinear pairs, as ONNX Runtime's quantize_static writes it):\n"
          "int8 asymmetric activations, int8 symmetric weights (Conv, Gemm, MatMul),\n"
          "int32 biases. Prints each layer's output SQNR against f32 on the\n"
          "calibration rows (docs/quantize.md).\n"
          "\n"
          "flags:\n"
          "  -o, --output FILE        the QDQ ONNX model (.onnx), or a package compiled\n"
          "                           from it (.dmlpkg); replaced atomically\n"
          "  --calib DATA             calibration rows: X.npy (f32 or f64, [N, ...]),\n"
          "                           an IDX file (gzipped or not) or a folder of IDX\n"
          "                           files (its train-*images*, as dmlc train reads\n"
          "                           it), X.npy,Y.npy or IMAGES,LABELS (as dmlc\n"
          "                           train --data; labels unused), or FILE.csv (a\n"
          "                           last column beyond the input's values is a\n"
          "                           label and dropped)\n"
          "  --calib-rows N           use the first N rows (default 1000; 0: all)\n"
          "  --scale F                multiplier of IDX image bytes (default 1/255)\n"
          "  --method NAME            minmax (default), percentile[:P] (P default\n"
          "                           99.99) or entropy (KL divergence, TensorRT's)\n"
          "  --per-channel            weights scaled per output channel (default;\n"
          "                           opset >= 13)\n"
          "  --per-tensor             one scale per weight tensor\n"
          "  --keep-f32 NAME,...      leave these nodes f32 (node name or first output\n"
          "                           name, as the table prints them). Repeatable\n"
          "  --keep-f32-below-sqnr DB leave f32, one at a time in graph order, the\n"
          "                           first layer whose output SQNR in the quantized\n"
          "                           model is below DB dB, and measure again, until\n"
          "                           none is below\n"
          "  --report FILE.json       write the per-layer report as JSON\n"
          "  --batch-size N           rows per run of the model (default 64)\n"
          "  --target LIST            with a .dmlpkg output: its targets (as dmlc\n"
          "                           compile --target; default cpu)\n"
          "  --threads N              CPU threads of the kernels (default 1)\n"
          "  --weight-only int8|int4  weight-only quantization, no calibration data:\n"
          "                           each MatMul / Gemm weight (an f32 rank-2\n"
          "                           initializer) symmetric per output column in\n"
          "                           groups along K, as ONNX opset 21's blocked\n"
          "                           DequantizeLinear feeding the MatMul\n"
          "  --group-size N           weights per scale along K (default 32; a K not a\n"
          "                           multiple of N ends in a shorter group)\n"
          "  --exclude NAME,...       with --weight-only: leave these nodes f32\n"
          "  --method gptq            with --weight-only: GPTQ (Frantar et al. 2022):\n"
          "                           each weight rounded in order along K with the\n"
          "                           error compensated through the Cholesky factor\n"
          "                           of H^-1, H = 2 X^T X of the layer's inputs on\n"
          "                           --calib: one .npy per model input, in order\n"
          "                           (f32, or int64 / int32 token ids and masks);\n"
          "                           --calib-rows (default 1000) rows, --batch-size\n"
          "                           (default 16) at a time\n"
          "  --calib-mask NAME        with gptq: the input [N, S] (attention mask)\n"
          "                           whose 0 positions are left out of H\n"
          "  --damp F                 with gptq: dampening, F * mean(diag H) (0.01)\n"
          "  --act-order              with gptq: rows in order of decreasing H[k,k],\n"
          "                           group scales fixed first (static groups)\n"
          "  --int8-layers N          with int4 gptq: the N layers of the worst int4\n"
          "                           output SQNR are written int8 (mixed precision)\n"
          "  --asym                   with --weight-only int4: asymmetric groups, uint4\n"
          "                           values with a uint4 zero point per scale\n"
          "                           (16 levels instead of 15; ONNX's DequantizeLinear\n"
          "                           zero point)\n"
          "  --clip-search            with --weight-only: each group's range shrunk by\n"
          "                           the factor of 1..0.5 (21 steps) of least squared\n"
          "                           weight error\n"
          "  --awq                    with --weight-only and --calib (one .npy per\n"
          "                           input, as gptq's): AWQ (Lin et al. 2024): per\n"
          "                           input channel scales s = mean|x|^alpha (alpha of\n"
          "                           0..1 with the least output error), weight rows\n"
          "                           times s, a Mul by 1/s before the MatMul; then\n"
          "                           round to nearest, or GPTQ with --method gptq\n"
          "  -h, --help               this text\n");
}

static void print_db(double v) {
  if (isnan(v))
    printf("%9s", "-");
  else if (isinf(v))
    printf("%9s", "inf");
  else
    printf("%9.2f", v);
}

static int add_names(const char *list, char ***names, size_t *n) {
  char *copy = strdup(list);
  if (!copy) return -1;
  for (char *save = NULL, *tok = strtok_r(copy, ",", &save); tok;
       tok = strtok_r(NULL, ",", &save)) {
    char **nn = (char **)realloc(*names, (*n + 1) * sizeof *nn);
    if (!nn) {
      free(copy);
      return -1;
    }
    *names = nn;
    if (!((*names)[*n] = strdup(tok))) {
      free(copy);
      return -1;
    }
    (*n)++;
  }
  free(copy);
  return 0;
}

static int has_suffix(const char *s, const char *suf) {
  size_t a = strlen(s), b = strlen(suf);
  return a >= b && !strcmp(s + a - b, suf);
}

/* `--weight-only`: dml_quantize_weights_onnx, its table, the .onnx file. */
static int weight_only_cmd(const char *model, const char *out, const char *calib,
                           int weight_only, int other_flags, dml_wq_options_t *wq,
                           char **excl, size_t n_excl) {
  if (!weight_only)
    return dmlc_usage_error(
        "quantize",
        "--group-size, --exclude, --asym, --clip-search and --awq go with --weight-only");
  if (calib)
    return dmlc_usage_error(
        "quantize", "--weight-only takes --calib data with --method gptq or --awq");
  if (other_flags)
    return dmlc_usage_error(
        "quantize", "--target, --report and --keep-f32 do not go with --weight-only");
  if (!model || !out || !out[0])
    return dmlc_usage_error("quantize", "give a model and -o OUT.onnx|OUT.dmlpkg");
  int pkg = has_suffix(out, ".dmlpkg");
  if (!pkg && !has_suffix(out, ".onnx"))
    return dmlc_usage_error("quantize", "-o '%s': name an .onnx or a .dmlpkg file", out);
  wq->exclude = (const char *const *)excl;
  wq->n_exclude = n_excl;
  dml_wq_report_t rep;
  memset(&rep, 0, sizeof rep);
  void *qm = NULL;
  size_t qn = 0;
  dml_status_t st = dml_quantize_weights_onnx(model, wq, &qm, &qn, &rep);
  if (!st) {
    int cal = wq->calib != NULL;
    printf("%-36s %-6s %11s %9s", "layer", "op", "K x N", "SQNR dB");
    if (cal) printf(" %9s %9s", "out RTN", wq->no_gptq ? "out AWQ" : "out GPTQ");
    printf("  %s\n", "form");
    for (size_t i = 0; i < rep.n_layers; i++) {
      const dml_wq_layer_t *l = &rep.layers[i];
      char kn[48];
      snprintf(kn, sizeof kn, "%" PRId64 "x%" PRId64, l->k, l->n);
      printf("%-36s %-6s %11s ", l->name, l->op, kn);
      print_db(l->sqnr_db);
      if (cal) {
        printf(" ");
        print_db(l->rtn_out_sqnr_db);
        printf(" ");
        print_db(l->out_sqnr_db);
      }
      char awq[32] = "";
      if (!isnan(l->awq_alpha)) snprintf(awq, sizeof awq, " awq%.1f", l->awq_alpha);
      if (l->quantized)
        printf("  int%d g%" PRId64 "%s%s%s%s\n", l->bits, wq->group_size,
               wq->asym && l->bits == 4 ? " asym" : "", wq->clip_search ? " clip" : "",
               awq, cal && !wq->no_gptq && !isnan(l->out_sqnr_db) ? " gptq" : "");
      else
        printf("  f32 (%s)\n", l->why_f32 ? l->why_f32 : "");
    }
    printf("weights %" PRIu64 " -> %" PRIu64 " bytes; opset %" PRId64 " -> %" PRId64 "\n",
           rep.f32_weight_bytes, rep.q_weight_bytes, rep.opset_in, rep.opset_out);
    if (cal)
      printf("%s: %" PRId64 " calibration rows, %" PRId64
             " layer-input rows in each H; out dB = the layer's output SQNR on its "
             "calibration inputs\n",
             wq->no_gptq ? "awq" : "gptq", rep.calib_rows, rep.hessian_rows);
  }
  void *bytes = NULL;
  size_t size = 0;
  if (!st && pkg) {
    /* compiled for the CPU: the wq-fuse pass turns each DequantizeLinear ->
     * MatMul/Gemm into MatMulWQ, its weights stored at 8 or 4 bits a value
     * (runtime/base/dml_wq.h) and dequantized in the GEMM's load stage */
    dml_compile_options_t co;
    memset(&co, 0, sizeof co);
    co.command_line = "dmlc quantize --weight-only";
    char *base = strdup(model); /* external data beside MODEL */
    char *slash = base ? strrchr(base, '/') : NULL;
    if (slash) *slash = 0;
    st = dml_compile_onnx_memory(qm, qn, slash ? base : ".", model, &co, &bytes, &size,
                                 NULL);
    free(base);
  }
  if (!st) {
    const void *parts[1] = {pkg ? bytes : qm};
    size_t sizes[1] = {pkg ? size : qn};
    st = dml_file_write_atomic("quantize", out, parts, sizes, 1);
  }
  if (!st) printf("wrote %s\n", out);
  free(bytes);
  free(qm);
  dml_wq_report_free(&rep);
  return st ? dmlc_report(st) : 0;
}

int dmlc_cmd_quantize(int argc, char **argv) {
  const char *model = NULL, *out = NULL, *calib = NULL, *report = NULL, *targets = NULL,
             *v;
  double scale = 0;
  char **keep = NULL;
  size_t n_keep = 0;
  dml_quant_options_t o;
  dml_quant_options_init(&o);
  o.max_rows = 1000;
  dml_wq_options_t wq;
  dml_wq_options_init(&wq);
  int weight_only = 0, group_given = 0, gptq = 0, gptq_flags = 0, mask_flag = 0;
  char **excl = NULL;
  size_t n_excl = 0;
  int rc = 0;
  for (int i = 1; i < argc && !rc; i++) {
    char *end;
    if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
      usage(stdout);
      goto done;
    } else if ((v = dmlc_flag_value(argc, argv, &i, "-o")) ||
               (v = dmlc_flag_value(argc, argv, &i, "--output"))) {
      out = v;
    } else if ((v = dmlc_flag_value(argc, argv, &i, "--calib"))) {
      calib = v;
    } else if ((v = dmlc_flag_value(argc, argv, &i, "--calib-rows"))) {
      o.max_rows = strtoll(v, &end, 10);
      if (*end || !*v || o.max_rows < 0)
        rc = dmlc_usage_error("quantize", "bad --calib-rows '%s'", v);
    } else if ((v = dmlc_flag_value(argc, argv, &i, "--scale"))) {
      scale = strtod(v, &end);
      if (*end || !*v || !(scale > 0))
        rc = dmlc_usage_error("quantize", "bad --scale '%s'", v);
    } else if ((v = dmlc_flag_value(argc, argv, &i, "--method"))) {
      if (!strcmp(v, "gptq")) {
        gptq = 1;
      } else if (!strcmp(v, "minmax")) {
        o.method = DML_QUANT_MINMAX;
      } else if (!strcmp(v, "entropy")) {
        o.method = DML_QUANT_ENTROPY;
      } else if (!strncmp(v, "percentile", 10) && (v[10] == 0 || v[10] == ':')) {
        o.method = DML_QUANT_PERCENTILE;
        if (v[10] == ':') {
          o.percentile = strtod(v + 11, &end);
          if (*end || !v[11] || !(o.percentile > 50 && o.percentile <= 100))
            rc = dmlc_usage_error("quantize",
                                  "bad percentile in '%s' (a number in (50, 100])", v);
        }
      } else {
        rc = dmlc_usage_error(
            "quantize",
            "unsupported --method '%s' (minmax, percentile[:P], entropy; gptq with "
            "--weight-only)",
            v);
      }
    } else if (!strcmp(argv[i], "--per-channel")) {
      o.per_channel = 1;
    } else if (!strcmp(argv[i], "--per-tensor")) {
      o.per_channel = 0;
    } else if ((v = dmlc_flag_value(argc, argv, &i, "--keep-f32-below-sqnr"))) {
      o.keep_f32_below_sqnr = strtod(v, &end);
      if (*end || !*v || !(o.keep_f32_below_sqnr > 0))
        rc = dmlc_usage_error("quantize", "bad --keep-f32-below-sqnr '%s' (dB > 0)", v);
    } else if ((v = dmlc_flag_value(argc, argv, &i, "--keep-f32"))) {
      if (!*v) {
        rc = dmlc_usage_error("quantize", "--keep-f32 needs names");
      } else if (add_names(v, &keep, &n_keep)) {
        fprintf(stderr, "error: dmlc quantize: out of memory\n");
        rc = 1;
      }
    } else if ((v = dmlc_flag_value(argc, argv, &i, "--weight-only"))) {
      if (!strcmp(v, "int8"))
        wq.bits = 8;
      else if (!strcmp(v, "int4"))
        wq.bits = 4;
      else
        rc = dmlc_usage_error("quantize", "bad --weight-only '%s' (int8 or int4)", v);
      weight_only = 1;
    } else if ((v = dmlc_flag_value(argc, argv, &i, "--group-size"))) {
      wq.group_size = strtoll(v, &end, 10);
      if (*end || !*v || wq.group_size < 2 || wq.group_size > (1 << 20))
        rc = dmlc_usage_error("quantize", "bad --group-size '%s' (2..1048576)", v);
      group_given = 1;
    } else if (!strcmp(argv[i], "--act-order")) {
      wq.act_order = 1;
      gptq_flags = 1;
    } else if ((v = dmlc_flag_value(argc, argv, &i, "--calib-mask"))) {
      wq.calib_mask = v;
      mask_flag = 1;
    } else if (!strcmp(argv[i], "--asym")) {
      wq.asym = 1;
      group_given = 1;
    } else if (!strcmp(argv[i], "--clip-search")) {
      wq.clip_search = 1;
      group_given = 1;
    } else if (!strcmp(argv[i], "--awq")) {
      wq.awq = 1;
      group_given = 1;
    } else if ((v = dmlc_flag_value(argc, argv, &i, "--damp"))) {
      wq.damp = strtod(v, &end);
      if (*end || !*v || !(wq.damp >= 0 && wq.damp < 1e6))
        rc = dmlc_usage_error("quantize", "bad --damp '%s' (>= 0)", v);
      gptq_flags = 1;
    } else if ((v = dmlc_flag_value(argc, argv, &i, "--int8-layers"))) {
      wq.int8_layers = strtoll(v, &end, 10);
      if (*end || !*v || wq.int8_layers < 0)
        rc = dmlc_usage_error("quantize", "bad --int8-layers '%s' (>= 0)", v);
      gptq_flags = 1;
    } else if ((v = dmlc_flag_value(argc, argv, &i, "--exclude"))) {
      if (!*v) {
        rc = dmlc_usage_error("quantize", "--exclude needs names");
      } else if (add_names(v, &excl, &n_excl)) {
        fprintf(stderr, "error: dmlc quantize: out of memory\n");
        rc = 1;
      }
    } else if ((v = dmlc_flag_value(argc, argv, &i, "--report"))) {
      report = v;
    } else if ((v = dmlc_flag_value(argc, argv, &i, "--target"))) {
      targets = v;
    } else if ((v = dmlc_flag_value(argc, argv, &i, "--batch-size"))) {
      o.batch = strtoll(v, &end, 10);
      if (*end || o.batch < 1)
        rc = dmlc_usage_error("quantize", "bad --batch-size '%s'", v);
    } else if ((v = dmlc_flag_value(argc, argv, &i, "--threads"))) {
      long th = strtol(v, &end, 10);
      if (*end || th < 1 || th > 64)
        rc = dmlc_usage_error("quantize", "bad --threads '%s' (1..64)", v);
      else
        dml_cpu_set_num_threads((int)th);
    } else if (argv[i][0] == '-') {
      rc = dmlc_usage_error("quantize", "unknown flag '%s'", argv[i]);
    } else if (!model) {
      model = argv[i];
    } else {
      rc = dmlc_usage_error("quantize", "more than one model given");
    }
  }
  if (rc) goto done;
  if ((gptq_flags && !gptq) || (mask_flag && !gptq && !wq.awq)) {
    rc = dmlc_usage_error(
        "quantize",
        "--calib-mask, --damp, --act-order and --int8-layers go with --method gptq "
        "(--calib-mask also with --awq)");
    goto done;
  }
  if (wq.asym && weight_only && wq.bits != 4) {
    rc = dmlc_usage_error("quantize", "--asym goes with --weight-only int4");
    goto done;
  }
  if (wq.awq && weight_only && (!calib || !calib[0])) {
    rc = dmlc_usage_error("quantize", "--awq needs --calib DATA");
    goto done;
  }
  if (gptq && !weight_only) {
    rc = dmlc_usage_error("quantize", "--method gptq goes with --weight-only int4|int8");
    goto done;
  }
  if (wq.awq && weight_only && !gptq) { /* AWQ, then round to nearest */
    wq.no_gptq = 1;
    wq.calib = calib;
    wq.calib_rows = o.max_rows;
    wq.batch = o.batch;
    calib = NULL;
  }
  if (gptq) {
    if (!calib || !calib[0]) {
      rc = dmlc_usage_error("quantize", "--method gptq needs --calib DATA");
      goto done;
    }
    if (wq.int8_layers > 0 && wq.bits != 4) {
      rc = dmlc_usage_error("quantize", "--int8-layers goes with --weight-only int4");
      goto done;
    }
    wq.calib = calib;
    wq.calib_rows = o.max_rows;
    wq.batch = o.batch;
    calib = NULL;
  }
  if (weight_only || group_given || n_excl) {
    rc = weight_only_cmd(model, out, calib, weight_only, targets || report || n_keep, &wq,
                         excl, n_excl);
    goto done;
  }
  if (!model || !out || !out[0] || !calib || !calib[0]) {
    rc = dmlc_usage_error("quantize", "give a model, -o OUT and --calib DATA");
    goto done;
  }
  int pkg = has_suffix(out, ".dmlpkg");
  if (!pkg && !has_suffix(out, ".onnx")) {
    rc = dmlc_usage_error("quantize", "-o '%s': name an .onnx or a .dmlpkg file", out);
    goto done;
  }
  if (targets && !pkg) {
    rc = dmlc_usage_error("quantize", "--target needs a .dmlpkg output");
    goto done;
  }
  o.keep_f32 = (const char *const *)keep;
  o.n_keep_f32 = n_keep;
  dml_tensor_t x;
  memset(&x, 0, sizeof x);
  dml_quant_report_t rep;
  memset(&rep, 0, sizeof rep);
  void *qm = NULL;
  size_t qn = 0;
  dml_status_t st = dml_quant_load_calib(calib, scale, &x);
  if (!st) st = dml_quantize_onnx(model, &x, &o, &qm, &qn, &rep);
  free(x.data);
  if (!st) {
    printf("%-28s %-18s %8s %9s  %s\n", "layer", "op", "weights", "SQNR dB", "form");
    for (size_t i = 0; i < rep.n_layers; i++) {
      const dml_quant_layer_t *l = &rep.layers[i];
      char w[32];
      if (l->weight_channels > 1)
        snprintf(w, sizeof w, "%d ch", l->weight_channels);
      else
        snprintf(w, sizeof w, "%s", l->weight_channels == 1 ? "tensor" : "-");
      printf("%-28s %-18s %8s ", l->name, l->op, w);
      print_db(l->sqnr_db);
      printf("  %s%s%s\n", l->quantized ? "int8" : "f32 (",
             l->quantized ? "" : (l->why_f32 ? l->why_f32 : ""), l->quantized ? "" : ")");
    }
    printf("output '%s' SQNR ", rep.output_name ? rep.output_name : "?");
    print_db(rep.output_sqnr_db);
    printf(" dB over %" PRId64 " calibration rows (%s", rep.calib_rows, rep.method);
    if (!strcmp(rep.method, "percentile")) printf(" %g", rep.percentile);
    printf("); %zu activations in QDQ; weights %" PRIu64 " -> %" PRIu64 " bytes\n",
           rep.n_activations, rep.f32_weight_bytes, rep.q_weight_bytes);
  }
  if (!st && report) st = dml_quant_report_write_json(&rep, report);
  if (!st && !pkg) {
    const void *parts[1] = {qm};
    size_t sizes[1] = {qn};
    st = dml_file_write_atomic("quantize", out, parts, sizes, 1);
  } else if (!st) {
    /* the QDQ model compiled; its external data, if any, beside MODEL */
    char *base = strdup(model);
    char *slash = base ? strrchr(base, '/') : NULL;
    if (slash) *slash = 0;
    dml_compile_options_t co;
    memset(&co, 0, sizeof co);
    co.targets = targets;
    co.command_line = "dmlc quantize";
    void *bytes = NULL;
    size_t size = 0;
    st = dml_compile_onnx_memory(qm, qn, slash ? base : ".", model, &co, &bytes, &size,
                                 NULL);
    free(base);
    if (!st) {
      const void *parts[1] = {bytes};
      size_t sizes[1] = {size};
      st = dml_file_write_atomic("quantize", out, parts, sizes, 1);
    }
    free(bytes);
  }
  if (!st) printf("wrote %s\n", out);
  free(qm);
  dml_quant_report_free(&rep);
  rc = st ? dmlc_report(st) : 0;
done:
  for (size_t i = 0; i < n_keep; i++) free(keep[i]);
  free((void *)keep);
  for (size_t i = 0; i < n_excl; i++) free(excl[i]);
  free((void *)excl);
  return rc;
}
