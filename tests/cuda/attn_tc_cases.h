/* attn_tc_cases.h — the fused attention forms that take the CUDA
 * tensor-core attention kernel (codegen/cuda/cuda_attn.c: f16/bf16, head
 * size 64 or 128, static shapes): gen_cuda_packages writes each as
 * attn_tc_<index>.dmlpkg (cpu,cuda), test_cuda runs it on random inputs in
 * [-2, 2) against the CPU's reference (runtime/cpu/cpu_attention.c) and
 * checks that the device ran a kernel named *_fa_f16 / *_fa_bf16 (compute
 * capability 8.0 and later). Query lengths 1, 63, 64, 65, 130, 200 and
 * 4096 (partial and whole 64-row blocks and 64-key tiles), head sizes 64
 * and 128, is_causal, bool and additive masks (broadcast, shorter than the
 * keys), rows whose every key is masked (y = 0), grouped-query attention,
 * the 3-D form, the scale attribute. */
#ifndef DML_ATTN_TC_CASES_H_
#define DML_ATTN_TC_CASES_H_

typedef struct {
  const char *what, *ir;
  int bf16; /* the operands' dtype: f16 (0) or bf16 (1) */
} attn_tc_case_t;

#define ATTN_TC_F(q, kv, attrs)                             \
  "func @forward(%q: " q ", %k: " kv ", %v: " kv ") -> (" q \
  ") {\n"                                                   \
  "  %y = Attention(%q, %k, %v)" attrs " : " q "\n  return %y\n}\n"
#define ATTN_TC_M(q, kv, m, attrs)                                     \
  "func @forward(%q: " q ", %k: " kv ", %v: " kv ", %m: " m ") -> (" q \
  ") {\n"                                                              \
  "  %y = Attention(%q, %k, %v, %m)" attrs " : " q "\n  return %y\n}\n"

static const attn_tc_case_t attn_tc_cases[] = {
    {"seq 1, head 64, f16", ATTN_TC_F("f16[1,2,1,64]", "f16[1,2,1,64]", ""), 0},
    {"seq 63, head 64, causal, f16",
     ATTN_TC_F("f16[2,3,63,64]", "f16[2,3,63,64]", " {is_causal = 1}"), 0},
    {"seq 64, head 128, f16", ATTN_TC_F("f16[1,2,64,128]", "f16[1,2,64,128]", ""), 0},
    {"seq 65, head 128, causal, bf16",
     ATTN_TC_F("bf16[1,2,65,128]", "bf16[1,2,65,128]", " {is_causal = 1}"), 1},
    {"query 200 over keys 77, GQA 4 over 2 heads, bool mask [200,77], f16",
     ATTN_TC_M("f16[1,4,200,64]", "f16[1,2,77,64]", "bool[200,77]", ""), 0},
    {"seq 200, head 64, additive bf16 mask [1,2,200,200], causal",
     ATTN_TC_M("bf16[1,2,200,64]", "bf16[1,2,200,64]", "bf16[1,2,200,200]",
               " {is_causal = 1}"),
     1},
    {"seq 4096, head 128, f16", ATTN_TC_F("f16[1,2,4096,128]", "f16[1,2,4096,128]", ""),
     0},
    {"seq 4096, head 64, causal, bf16",
     ATTN_TC_F("bf16[1,2,4096,64]", "bf16[1,2,4096,64]", " {is_causal = 1}"), 1},
    {"3-D [1,65,2*64], q/kv_num_heads 2, f16",
     ATTN_TC_F("f16[1,65,128]", "f16[1,65,128]", " {kv_num_heads = 2, q_num_heads = 2}"),
     0},
    {"scale 0.3, f16 mask [100,50] shorter than the 100 keys, head 128",
     ATTN_TC_M("f16[1,1,100,128]", "f16[1,1,100,128]", "f16[100,50]", " {scale = 0.3}"),
     0},
    {"every key masked in some rows (1 key, bool mask [1,2,7,1])",
     ATTN_TC_M("f16[1,2,7,64]", "f16[1,2,1,64]", "bool[1,2,7,1]", ""), 0},
    {"seq 130, head 128, causal, bf16, batch 2",
     ATTN_TC_F("bf16[2,2,130,128]", "bf16[2,2,130,128]", " {is_causal = 1}"), 1},
};
#define ATTN_TC_N_CASES (sizeof attn_tc_cases / sizeof attn_tc_cases[0])

/* The bound on the device's error in rounding steps of the dtype
 * (gpu_test_half_err: |device - cpu| / max(1, |cpu|) / step, step = 2u
 * with u = 2^-11 for f16, 2^-8 for bf16): P is rounded to the dtype before
 * P V (relative error u per weight: at most u max |v| = 2u in y, |v| < 2)
 * and y is rounded to the dtype on both sides (one step), so 2 steps;
 * 8 leaves a margin for the f32 sums' order. A wrong fragment layout, tile
 * edge or mask index gives errors of the order of |y| (0.05 to 2 here:
 * 6 to 250 steps of f16 at the smallest |y|, most cases far more). */
#define ATTN_TC_STEPS 8.0

#endif /* DML_ATTN_TC_CASES_H_ */
