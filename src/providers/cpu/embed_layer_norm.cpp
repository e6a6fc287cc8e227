// com.microsoft EmbedLayerNormalization (BERT / GPT-2 exports) on the CPU, following ONNX Runtime's contrib-op
// semantics: word_embedding[input_ids] + position_embedding[position] (+ segment_embedding[segment_ids]), then
// LayerNormalization with gamma and beta over the hidden axis.
//   Inputs: input_ids [B,S] (int32), segment_ids [B,S] (optional), word_embedding [V,H], position_embedding [P,H],
//   segment_embedding [G,H] (optional), gamma [H], beta [H] (optional), mask [B,S] (optional), position_ids [B,S] or
//   [1,S] (optional; default 0..S-1).
//   Outputs: output [B,S,H], mask_index [B] (int32: the number of nonzero mask entries per row, S without a mask),
//   embedding_sum [B,S,H] (optional: the sum before normalization).
// The sum and the statistics are computed in fp32. Ids outside a table are errors naming the node.
#include <cmath>
#include <vector>

#include "providers/cpu/cpu_ops.h"
#include "providers/cpu/type_dispatch.h"

namespace ogx::cpu {
namespace {

int64_t checked_id(const Tensor& ids, int64_t i, int64_t rows, const Node& node, const char* what) {
  const int64_t id = ids.get_i64(i);
  OGX_CHECK(id >= 0 && id < rows, node.describe(), ": ", what, " ", id, " is outside the table of ", rows, " rows");
  return id;
}

void embed_layer_norm_kernel(KernelContext& ctx) {
  const Node& node = ctx.node();
  const Tensor& ids = ctx.input(0);
  const Tensor* seg = ctx.input_or_null(1);
  const Tensor& word = ctx.input(2);
  const Tensor& pos = ctx.input(3);
  const Tensor* seg_table = ctx.input_or_null(4);
  const Tensor& gamma = ctx.input(5);
  const Tensor* beta = ctx.input_or_null(6);
  const Tensor* mask = ctx.input_or_null(7);
  const Tensor* pos_ids = ctx.input_or_null(8);
  OGX_CHECK(ids.rank() == 2, node.describe(), ": input_ids must be [B,S], got ", shape_str(ids.shape()));
  OGX_CHECK(word.rank() == 2 && pos.rank() == 2 && pos.dim(1) == word.dim(1) && pos.dtype() == word.dtype(),
            node.describe(), ": word and position embeddings must be [rows, hidden] of one type");
  const int64_t B = ids.dim(0), S = ids.dim(1), H = word.dim(1);
  OGX_CHECK(gamma.numel() == H && (!beta || beta->numel() == H), node.describe(), ": gamma/beta must have ", H,
            " elements");
  OGX_CHECK(!seg == !seg_table, node.describe(), ": segment_ids and segment_embedding come together");
  if (pos_ids)
    OGX_CHECK(pos_ids->rank() == 2 && (pos_ids->dim(0) == B || pos_ids->dim(0) == 1) && pos_ids->dim(1) == S,
              node.describe(), ": position_ids must be [B,S] or [1,S], got ", shape_str(pos_ids->shape()));
  const float eps = node.attr_float("epsilon", 1e-12f);
  Tensor& y = ctx.output(0, word.dtype(), {B, S, H});
  Tensor* sum_out = ctx.wants_output(2) ? &ctx.output(2, word.dtype(), {B, S, H}) : nullptr;
  if (ctx.wants_output(1)) {
    Tensor& mi = ctx.output(1, DType::i32, {B});
    for (int64_t b = 0; b < B; b++) {
      int64_t n = S;
      if (mask) {
        n = 0;
        for (int64_t s = 0; s < S; s++) n += mask->get_i64(b * S + s) != 0;
      }
      mi.data<int32_t>()[b] = (int32_t)n;
    }
  }
  dispatch_float(word.dtype(), "EmbedLayerNormalization", [&](auto tag) {
    using S_ = typename decltype(tag)::type;
    std::vector<float> row((size_t)H);
    for (int64_t b = 0; b < B; b++)
      for (int64_t s = 0; s < S; s++) {
        const int64_t i = b * S + s;
        const int64_t w = checked_id(ids, i, word.dim(0), node, "input id");
        const int64_t p = pos_ids ? checked_id(*pos_ids, (pos_ids->dim(0) == 1 ? 0 : b) * S + s, pos.dim(0), node,
                                               "position id")
                                  : s;
        OGX_CHECK(p < pos.dim(0), node.describe(), ": position ", p, " is outside the table of ", pos.dim(0), " rows");
        const int64_t g = seg ? checked_id(*seg, i, seg_table->dim(0), node, "segment id") : 0;
        for (int64_t h = 0; h < H; h++) {
          float v = (float)load(word.data<S_>()[w * H + h]) + (float)load(pos.data<S_>()[p * H + h]);
          if (seg) v += (float)load(seg_table->data<S_>()[g * H + h]);
          row[(size_t)h] = v;
          if (sum_out) sum_out->data<S_>()[i * H + h] = store<S_>(v);
        }
        double mean = 0, var = 0;
        for (int64_t h = 0; h < H; h++) mean += row[(size_t)h];
        mean /= (double)H;
        for (int64_t h = 0; h < H; h++) var += (row[(size_t)h] - mean) * (row[(size_t)h] - mean);
        const float inv = 1.0f / std::sqrt((float)(var / (double)H) + eps);
        for (int64_t h = 0; h < H; h++) {
          float v = (float)(row[(size_t)h] - mean) * inv * (float)load(gamma.data<S_>()[h]);
          if (beta) v += (float)load(beta->data<S_>()[h]);
          y.data<S_>()[i * H + h] = store<S_>(v);
        }
      }
  });
}

}  // namespace

void register_embed_layer_norm(KernelRegistry& r) {
  r.add_fn("com.microsoft", "EmbedLayerNormalization", embed_layer_norm_kernel);
}

}  // namespace ogx::cpu
