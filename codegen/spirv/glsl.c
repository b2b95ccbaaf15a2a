/* glsl.c — kernel IR -> GLSL 450 compute source (dml_codegen.h). */
#include <stdlib.h>
#include <string.h>

#include "c_emit.h"
#include "dml_codegen.h"

static const dml_cdialect_t k_glsl = {
    {"gl_GlobalInvocationID.x", "gl_GlobalInvocationID.y", "gl_LocalInvocationID.x",
     "gl_LocalInvocationID.y", "gl_WorkGroupID.x", "gl_WorkGroupID.y"},
    "pc.sym[%d]",
    "uintBitsToFloat(0x7fc00000u)",
    "uintBitsToFloat(0x7f800000u)",
    "uintBitsToFloat(0xff800000u)",
    "",
    {"(-",        "abs(",   "exp(",  "log(",    "sqrt(", "tanh(", "(1.0 / (1.0 + exp(-",
     "max(0.0, ", "floor(", "ceil(", "(1.0 / ", "sin(",  "cos(",  "(",
     "(",         "(",      "(",     "max(",    "min(",  "pow("},
    {"", "", "", "",    "",    "",    "",    "",   "",   "",
     "", "", "", " + ", " - ", " * ", " / ", ", ", ", ", ", "},
    {")", ")", ")", ")", ")", ")", ")))", ")", ")", ")",
     ")", ")", ")", ")", ")", ")", ")",   ")", ")", ")"},
    "barrier();",
    "uint",
};

dml_status_t dml_codegen_glsl(const dml_kernel_t *k, uint32_t n_symbols,
                              char **out_text) {
  if (n_symbols > 32)
    return dml_status_make(DML_STATUS_UNIMPLEMENTED, "codegen.vulkan",
                           "%u symbols exceed the 32 push-constant words", n_symbols);
  dml_sb_t b = {0};
  dml_sb_printf(
      &b,
      "#version 450\n"
      "// dmlc kernel %s (%s)\n"
      "layout(local_size_x = %u, local_size_y = %u, local_size_z = %u) in;\n"
      "layout(std430, set = 0, binding = 0) buffer Arena { float arena[]; };\n"
      "layout(std430, set = 0, binding = 1) readonly buffer Weights { float weights[]; "
      "};\n"
      "layout(push_constant) uniform Syms { uint sym[%u]; } pc;\n",
      k->name, dml_kernel_kind_name(k->kind), k->local[0], k->local[1], k->local[2],
      n_symbols ? n_symbols : 1);
  for (uint32_t t = 0; t < k->n_tiles; t++)
    dml_sb_printf(&b, "shared float tile%u[%u];\n", t, k->tile_elems[t]);
  dml_sb_printf(&b, "void main() {\n");
  for (uint32_t r = 0; r < k->n_regs; r++) dml_sb_printf(&b, "  float r%u = 0.0;\n", r);
  dml_cemit_stmts(&b, &k_glsl, k->body, 1);
  dml_sb_printf(&b, "}\n");
  if (b.oom) {
    free(b.p);
    return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, "codegen.vulkan",
                           "out of memory");
  }
  *out_text = b.p;
  return DML_OK;
}
