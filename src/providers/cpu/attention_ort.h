// GroupQueryAttention's fp32 arithmetic as ONNX Runtime 1.30 computes it on x86-64 (checked bit for bit with
// tools/ortgenai_check/graph_diff.sh): MLAS's flash kernel over the fp32 KV cache (core/mlas/lib/flashattn_gqa.cpp,
// block sizes from contrib_ops/cpu/bert/gqa_attention_base.h), one (batch, query head) at a time.
//   Prompt (S > 1): query rows in blocks of q_block, keys in blocks of kv_block (L2-sized). Per block the scores are
//     MLAS SGEMM (one fused multiply-add chain over the head per score, times the scale); masked keys get the lowest
//     float; each row's online softmax takes the block maximum, MLAS's own exp (TransKernelAvx512F.S) summed in 16
//     lanes, and rescales the earlier sum and output by std::exp(old max - new max); the output accumulates the
//     unnormalized exps times V by MLAS SGEMM (fused chains; MLAS's M = 1 kernel when a query block has one row),
//     and is multiplied by 1 / sum at the end.
//   Decode (S == 1): the GEMV kernels: each score an 8-lane sum of rounded products times the scale, the window's
//     keys kept (the others lowest), the same exp and sum, the output a running sum of rounded products, times
//     1 / sum. (ONNX Runtime splits the keys across threads instead when batch x heads is below its thread count
//     and the keys span more than one block: that result depends on its thread count and is not reproduced.)
#pragma once
#include <cstdint>
#include <vector>

namespace ogx::cpu {

struct OrtAttentionHead {
  const float* q;     // [S, H] this head's rotated query rows
  const float* k;     // [total, H] the cache's keys for this head's KV head (row stride H)
  const float* v;     // [total, H] values
  const float* bias;  // [S, bias_stride] additive attention bias rows for this head, or null
  int64_t bias_stride;
  int64_t S, H, total, past;  // query rows, head size, keys, keys before the first query row
  int64_t window;             // local_window_size (keys (pos - window, pos]), -1 for none
  float scale;
  float* out;  // [S, out_stride] rows of this head's output
  int64_t out_stride;
};

// ONNX Runtime's key block for this head size: L2 cache bytes / (32 H), at least 1.
int64_t ort_attention_kv_block(int64_t H);

// One head, all query rows; scratch is reused between calls of one thread.
void ort_attention_head(const OrtAttentionHead& a, std::vector<float>& scratch);

}  // namespace ogx::cpu
