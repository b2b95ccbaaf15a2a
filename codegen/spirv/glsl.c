/* glsl.c — kernel IR -> GLSL 450 compute source (dml_codegen.h). */
#include <stdlib.h>
#include <string.h>

#include "c_emit.h"
#include "dml_codegen.h"
#include "kernel_sincos.h"

static const dml_cdialect_t k_glsl = {
    {"gl_GlobalInvocationID.x", "gl_GlobalInvocationID.y", "gl_LocalInvocationID.x",
     "gl_LocalInvocationID.y", "gl_WorkGroupID.x", "gl_WorkGroupID.y"},
    "pc.sym[%d]",
    "uintBitsToFloat(0x7fc00000u)",
    "uintBitsToFloat(0x7f800000u)",
    "uintBitsToFloat(0xff800000u)",
    "",
    {"(-", "abs(", "exp(", "log(", "sqrt(", "tanh(", "(1.0 / (1.0 + exp(-", "floor(",
     "ceil(", "(1.0 / ", "dml_sin(", "dml_cos(", "(", "(", "(", "(", "max(", "min(",
     "pow("},
    {"", "", "", "", "", "", "", "", "", "", "", "", " + ", " - ", " * ", " / ", ", ",
     ", ", ", "},
    {")", ")", ")", ")", ")", ")", ")))", ")", ")", ")", ")", ")", ")", ")", ")", ")",
     ")", ")", ")"},
    "barrier();",
    "uint",
    {"float", "int64_t", "int", "bool", "int", "int", "float", "float", "double", "int",
     "int", "uint", "uint64_t"},
    1,
    "l",
    "ul",
    "(uint(",
    ") != 0u)",
    "uint8_t(",
    " ? 1u : 0u)",
    "int(",
    "uint8_t(",
    "int8_t(",
    "uint(",
    "uint16_t(",
    "int16_t(",
    {[DML_KF_ABS] = "abs(",
     [DML_KF_SQRT] = "sqrt(",
     [DML_KF_FLOOR] = "floor(",
     [DML_KF_CEIL] = "ceil(",
     [DML_KF_EXP] = "dml_exp64(",
     [DML_KF_LOG] = "dml_log64("},
    "max(",
    "min(",
    "abs(",
    "sign(",
    NULL,
    NULL,
    NULL,
    "uintBitsToFloat(uint(",
    NULL,
    NULL,
};

/* dml_sin / dml_cos of f32 (codegen/kernel_sincos.h: Cody–Waite, then
 * Payne–Hanek beyond |x| = 8192; the GLSL sin and cos reduce huge
 * arguments in f32: lavapipe's sin(1e30) was -1 for 0.73); the high word
 * of a 32-bit product by umulExtended. */
#define DML_SRC(...) #__VA_ARGS__
static const char k_sincos[] =
    "#define DML_SC_FN\n"
    "#define DML_SC_U uint\n"
    "#define DML_SC_F2U(x) floatBitsToUint(x)\n"
    "#define DML_SC_MULHI(a, b) dml_mulhi(a, b)\n"
    "#define DML_SC_FLOOR(x) floor(x)\n"
    "#define DML_SC_PRECISE precise\n"
    "uint dml_mulhi(uint a, uint b) { uint h, l; umulExtended(a, b, h, l); return h; "
    "}\n" DML_SINCOS_SRC "\n";
#undef DML_SRC

/* dml_fmod of float: C99's exact fmod, the macro of c_emit.h
 * (dml_c_fmod_macro) expanded for GLSL. */
static const char k_fmod[] =
    "DML_FMOD_FN(, float, uintBitsToFloat(0x7fc00000u), abs, isinf)\n";

/* dml_idiv / dml_fmod / dml_imod of `t` (c_emit.h): truncating division,
 * truncated remainder, and the remainder with the divisor's sign (ONNX
 * Mod, fmod = 0); a divisor of 0 gives 0, of -1 gives -a and 0, as on the
 * CPU; dml_ipow, integer power by squaring (wrapping, as the CPU's ipow).
 * Written with the macro's T. */
static const char k_int_helpers[] =
    "#define DML_INT_FNS(T) \\\n"
    "  T dml_idiv(T a, T b) { return b == T(0) ? T(0) : b == T(-1) ? -a : a / b; } \\\n"
    "  T dml_fmod(T a, T b) { \\\n"
    "    return (b == T(0) || b == T(-1)) ? T(0) : a - b * (a / b); \\\n"
    "  } \\\n"
    "  T dml_imod(T a, T b) { \\\n"
    "    T r = dml_fmod(a, b); \\\n"
    "    return (r != T(0) && ((r < T(0)) != (b < T(0)))) ? r + b : r; \\\n"
    "  } \\\n"
    "  T dml_ipow(T a, T e) { \\\n"
    "    if (e < T(0)) \\\n"
    "      return a == T(1) ? T(1) : a == T(-1) ? ((e & T(1)) != T(0) ? T(-1) : T(1)) : "
    "T(0); \\\n"
    "    T r = T(1); \\\n"
    "    while (e != T(0)) { \\\n"
    "      if ((e & T(1)) != T(0)) r *= a; \\\n"
    "      a *= a; \\\n"
    "      e >>= 1; \\\n"
    "    } \\\n"
    "    return r; \\\n"
    "  }\n";

/* dml_udiv / dml_umod of the unsigned `T` (u32, u64): a divisor of 0
 * gives 0, as on the CPU. */
static const char k_uint_helpers[] =
    "#define DML_UINT_FNS(T) \\\n"
    "  T dml_udiv(T a, T b) { return b == T(0) ? T(0) : a / b; } \\\n"
    "  T dml_umod(T a, T b) { return b == T(0) ? T(0) : a % b; }\n";

/* dml_philox32 / dml_philox24 (c_emit.h): the word of element i of a
 * random stream and its 24 random bits, Philox4x32-10 as runtime/base/dml_philox.c
 * computes it (the 32x32 -> 64 products through umulExtended). */
static const char k_philox_helper[] =
    "uint dml_philox32(uint i, uint stream, int s0, int s1, int t0, int t1) {\n"
    "  uint x0 = i >> 2u, x1 = 0u, x2 = stream, x3 = uint(t0);\n"
    "  uint k0 = uint(s0), k1 = uint(s1) ^ uint(t1);\n"
    "  for (int r = 0; r < 10; r++) {\n"
    "    if (r > 0) { k0 += 0x9E3779B9u; k1 += 0xBB67AE85u; }\n"
    "    uint h0, l0, h1, l1;\n"
    "    umulExtended(0xD2511F53u, x0, h0, l0);\n"
    "    umulExtended(0xCD9E8D57u, x2, h1, l1);\n"
    "    x0 = h1 ^ x1 ^ k0;\n"
    "    x2 = h0 ^ x3 ^ k1;\n"
    "    x1 = l1;\n"
    "    x3 = l0;\n"
    "  }\n"
    "  uint j = i & 3u;\n"
    "  uint w = j == 0u ? x0 : j == 1u ? x1 : j == 2u ? x2 : x3;\n"
    "  return w;\n"
    "}\n"
    "int dml_philox24(uint i, uint stream, int s0, int s1, int t0, int t1) {\n"
    "  return int(dml_philox32(i, stream, s0, s1, t0, t1) >> 8u);\n"
    "}\n";

dml_status_t dml_codegen_glsl(const dml_kernel_t *k, uint32_t n_symbols,
                              char **out_text) {
  if (n_symbols > 32)
    return dml_status_make(DML_STATUS_UNIMPLEMENTED, "codegen.vulkan",
                           "%u symbols exceed the 32 push-constant words", n_symbols);
  DML_RETURN_IF_ERROR(dml_cemit_check_ctabs(k, "codegen.vulkan"));
  dml_sb_t b = {0};
  uint32_t views = dml_kernel_views(k), dts = dml_kernel_dtypes(k);
  int u8 = (views & (DML_KVIEW(DML_KBUF_ARENA, DML_KT_BOOL) |
                     DML_KVIEW(DML_KBUF_WEIGHTS, DML_KT_BOOL) |
                     DML_KVIEW(DML_KBUF_ARENA, DML_KT_I8) |
                     DML_KVIEW(DML_KBUF_WEIGHTS, DML_KT_I8))) != 0;
  int u16 = (views & (DML_KVIEW(DML_KBUF_ARENA, DML_KT_U16) |
                      DML_KVIEW(DML_KBUF_WEIGHTS, DML_KT_U16) |
                      DML_KVIEW(DML_KBUF_ARENA, DML_KT_I16) |
                      DML_KVIEW(DML_KBUF_WEIGHTS, DML_KT_I16))) != 0;
  int i64 = (views & (DML_KVIEW_I64 | DML_KVIEW(DML_KBUF_ARENA, DML_KT_I64) |
                      DML_KVIEW(DML_KBUF_WEIGHTS, DML_KT_I64) |
                      DML_KVIEW(DML_KBUF_ARENA, DML_KT_U64) |
                      DML_KVIEW(DML_KBUF_WEIGHTS, DML_KT_U64))) != 0;
  int half = (dts & ((1u << DML_KT_F16) | (1u << DML_KT_BF16))) != 0;
  /* 64-bit integers need shaderInt64, byte views storageBuffer8BitAccess
   * (VK_KHR_8bit_storage), 16-bit views storageBuffer16BitAccess
   * (VK_KHR_16bit_storage: 16-bit words are only loaded, stored and
   * converted, so no shaderInt16 / shaderFloat16), doubles (OpCapability
   * Float64) shaderFloat64: the Vulkan runtime enables them from the
   * module's capabilities. */
  dml_sb_printf(&b, "#version 450\n");
  /* IEEE infinities, NaN and signed zeros kept in 32-bit float arithmetic
   * (SPV_KHR_float_controls' SignedZeroInfNanPreserve, Vulkan 1.2 core):
   * without it a driver may fold 0 * x to 0 or x - x to 0 even in `precise`
   * code (Mesa's NIR does: Mul(x, 0) with x = inf gave 0 on lavapipe where
   * the CPU gives NaN), and declared before glslang's optimizer the
   * extension also keeps SPIRV-Tools from folding floats. 64-bit floats get
   * the mode in dml_codegen_spirv (glslang keeps one of a mode); the Vulkan
   * runtime strips the modes a device lacks (rt_vulkan.c). */
  dml_sb_printf(&b,
                "#extension GL_EXT_spirv_intrinsics : require\n"
                "spirv_execution_mode(extensions = [\"SPV_KHR_float_controls\"], "
                "capabilities = [4466], 4461, 32);\n");
  if (i64)
    dml_sb_printf(&b,
                  "#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require\n");
  if (u8) dml_sb_printf(&b, "#extension GL_EXT_shader_8bit_storage : require\n");
  if (u16) dml_sb_printf(&b, "#extension GL_EXT_shader_16bit_storage : require\n");
  dml_sb_printf(
      &b,
      "// dmlc kernel %s (%s)\n"
      "layout(local_size_x = %u, local_size_y = %u, local_size_z = %u) in;\n"
      "layout(std430, set = 0, binding = 0) buffer Arena { float arena[]; };\n"
      "layout(std430, set = 0, binding = 1) %sbuffer Weights { float weights[]; "
      "};\n",
      k->name, dml_kernel_kind_name(k->kind), k->local[0], k->local[1], k->local[2],
      k->writes_weights ? "" : "readonly ");
  /* typed views: more blocks aliasing the same bindings */
  static const char *const block[DML_KT_COUNT_] = {
      "", "I64", "I32", "U8", "", "I8", "", "", "F64", "I16", "U16", "U32", "U64"};
  static const char *const elem[DML_KT_COUNT_] = {
      "", "int64_t", "int",     "uint8_t",  "",     "int8_t",  "",
      "", "double",  "int16_t", "uint16_t", "uint", "uint64_t"};
  for (int buf = 0; buf < 2; buf++)
    for (int t = DML_KT_I64; t < DML_KT_COUNT_; t++)
      if (views & DML_KVIEW(buf, t))
        dml_sb_printf(
            &b, "layout(std430, set = 0, binding = %d) %sbuffer %s%s { %s %s[]; };\n",
            buf, buf && !k->writes_weights ? "readonly " : "", buf ? "Weights" : "Arena",
            block[t], elem[t], dml_cemit_view((dml_kbuf_t)buf, (dml_kdtype_t)t));
  for (int buf = 2; buf < 4; buf++) /* the eager library's further operands */
    if (views & (buf == 2 ? DML_KVIEW_IN2 : DML_KVIEW_IN3))
      dml_sb_printf(&b,
                    "layout(std430, set = 0, binding = %d) readonly buffer In%d { float "
                    "in%d[]; };\n",
                    buf, buf, buf);
  dml_sb_printf(&b, "layout(push_constant) uniform Syms { uint sym[%u]; } pc;\n",
                n_symbols ? n_symbols : 1);
  if (views & DML_KVIEW_TYPED) {
    dml_sb_printf(&b, "%s%s", dml_c_fmod_macro, k_fmod);
    dml_sb_printf(&b, "%sDML_INT_FNS(int)\n", k_int_helpers);
    if (i64) dml_sb_printf(&b, "DML_INT_FNS(int64_t)\n");
    if (dts & ((1u << DML_KT_U32) | (1u << DML_KT_U64)))
      dml_sb_printf(&b, "%s", k_uint_helpers);
    if (dts & (1u << DML_KT_U32)) dml_sb_printf(&b, "DML_UINT_FNS(uint)\n");
    if (dts & (1u << DML_KT_U64)) dml_sb_printf(&b, "DML_UINT_FNS(uint64_t)\n");
    if (dts & (1u << DML_KT_F64))
      dml_sb_printf(
          &b,
          "DML_FMOD_FN(, double, double(uintBitsToFloat(0x7fc00000u)), abs, isinf)\n");
    dml_sb_printf(&b, "#define DML_FN\n");
    if (half)
      dml_sb_printf(&b,
                    "#define DML_U uint\n#define DML_F2U(x) "
                    "floatBitsToUint(x)\n#define DML_U2F(x) uintBitsToFloat(x)\n%s",
                    dml_cemit_half_helpers);
    if (dts & (1u << DML_KT_F64)) {
      dml_sb_printf(&b,
                    "#define DML_DINF double(uintBitsToFloat(0x7f800000u))\n"
                    "#define DML_DNAN double(uintBitsToFloat(0x7fc00000u))\n"
                    "#define DML_FLOOR floor\n"
                    "#define DML_EXP2I(k) packDouble2x32(uvec2(0u, uint((k) + 1023) << "
                    "20))\n"
                    "#define DML_DEXP(x) (int(unpackDouble2x32(x).y >> 20) - 1023)\n");
      dml_cemit_f64_math(&b, "LF");
    }
  }
  if (views & DML_KVIEW_RAND) dml_sb_printf(&b, "%s", k_philox_helper);
  if (views & DML_KVIEW_TRIG) dml_sb_printf(&b, "%s", k_sincos);
  for (uint32_t t = 0; t < k->n_tiles; t++)
    dml_sb_printf(&b, "shared %s tile%u[%u];\n", k_glsl.type[k->tile_dtype[t]], t,
                  k->tile_elems[t]);
  dml_cemit_ctabs(&b, &k_glsl, k);
  dml_sb_printf(&b, "void main() {\n");
  if (k->precise) {
    /* registers `precise float` (dml_kernel_t.precise) */
    dml_cdialect_t pd = k_glsl;
    pd.type[DML_KT_F32] = "precise float";
    dml_cemit_regs(&b, &pd, k);
  } else {
    dml_cemit_regs(&b, &k_glsl, k);
  }
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
