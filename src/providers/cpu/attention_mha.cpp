// com.microsoft Attention (the fused multi-head attention of BERT / GPT-2 exports) on the CPU, following ONNX
// Runtime's contrib-op semantics (ContribOperators.md):
//   input [B,S,In], weights [In, Hq+Hk+Hv] (qkv_hidden_sizes, default three equal parts), bias [Hq+Hk+Hv] (optional),
//   mask_index (optional): [B] (valid key count per row: keys >= it are masked), [B,T] (raw 0/1 mask), or
//   [B,S,T] (raw mask per query); past [2,B,N,P,Hk/N] (optional, key then value); attention_bias [B|1,N|1,S,T]
//   (optional, added to the scores).
//   Attributes: num_heads, unidirectional (causal: query s sees keys <= P + s), scale (default 1/sqrt(head size)),
//   mask_filter_value (added where the mask is 0; default -10000).
//   Outputs: output [B,S,Hv], present [2,B,N,P+S,Hk/N] (the past followed by this run's keys and values).
// Scores, softmax and the projection are computed in fp32; present keeps the model's type. Not supported (an error
// naming the node): do_rotary, past_present_share_buffer, past_sequence_length, 2B-long mask_index.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "providers/cpu/cpu_ops.h"
#include "providers/cpu/type_dispatch.h"

namespace ogx::cpu {
namespace {

struct MhaDims {
  int64_t B, S, In, N, Hq, Hk, Hv, dq, dv, P, T;
};

// Whether key t is visible to query s of row b (mask_index and causality), and the value to add when it is not.
struct MaskView {
  const Tensor* mask = nullptr;
  int kind = 0;  // 0: none, 1: [B] key counts, 2: [B,T], 3: [B,S,T]
  bool causal = false;
  int64_t P = 0, S = 0, T = 0;
  bool visible(int64_t b, int64_t s, int64_t t) const {
    if (causal && t > P + s) return false;
    switch (kind) {
      case 1: return t < mask->get_i64(b);
      case 2: return mask->get_i64(b * T + t) != 0;
      case 3: return mask->get_i64((b * S + s) * T + t) != 0;
      default: return true;
    }
  }
};

template <typename S_>
void run_mha(KernelContext& ctx, const MhaDims& d, const MaskView& mv, float scale, float filter) {
  const Tensor& x = ctx.input(0);
  const Tensor& w = ctx.input(1);
  const Tensor* bias = ctx.input_or_null(2);
  const Tensor* past = ctx.input_or_null(4);
  const Tensor* ab = ctx.input_or_null(5);
  const int64_t Wc = d.Hq + d.Hk + d.Hv;
  // QKV = x W + bias, fp32 [B*S, Wc].
  std::vector<float> qkv((size_t)(d.B * d.S * Wc));
  ctx.pool().parallel_for_cost(d.B * d.S, (double)(d.In * Wc), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; r++) {
      float* out = qkv.data() + r * Wc;
      for (int64_t c = 0; c < Wc; c++) out[c] = bias ? (float)load(bias->data<S_>()[c]) : 0.0f;
      const S_* xr = x.data<S_>() + r * d.In;
      for (int64_t k = 0; k < d.In; k++) {
        const float xv = (float)load(xr[k]);
        const S_* wr = w.data<S_>() + k * Wc;
        for (int64_t c = 0; c < Wc; c++) out[c] += xv * (float)load(wr[c]);
      }
    }
  });
  // present [2,B,N,T,dk]: the past, then the new keys / values (stored in the model's type).
  Tensor* present = ctx.wants_output(1) ? &ctx.output(1, x.dtype(), {2, d.B, d.N, d.T, d.dq}) : nullptr;
  std::vector<float> K((size_t)(d.B * d.N * d.T * d.dq)), V((size_t)(d.B * d.N * d.T * d.dv));
  for (int64_t b = 0; b < d.B; b++)
    for (int64_t n = 0; n < d.N; n++)
      for (int64_t t = 0; t < d.T; t++) {
        float* kd = K.data() + ((b * d.N + n) * d.T + t) * d.dq;
        float* vd = V.data() + ((b * d.N + n) * d.T + t) * d.dv;
        if (t < d.P) {
          const S_* pk = past->data<S_>() + ((b * d.N + n) * d.P + t) * d.dq;
          const S_* pv = past->data<S_>() + (((d.B + b) * d.N + n) * d.P + t) * d.dv;
          for (int64_t i = 0; i < d.dq; i++) kd[i] = (float)load(pk[i]);
          for (int64_t i = 0; i < d.dv; i++) vd[i] = (float)load(pv[i]);
        } else {
          const float* row = qkv.data() + (b * d.S + (t - d.P)) * Wc;
          for (int64_t i = 0; i < d.dq; i++) kd[i] = (float)load(store<S_>(row[d.Hq + n * d.dq + i]));
          for (int64_t i = 0; i < d.dv; i++) vd[i] = (float)load(store<S_>(row[d.Hq + d.Hk + n * d.dv + i]));
        }
        if (present) {
          S_* pk = present->data<S_>() + ((b * d.N + n) * d.T + t) * d.dq;
          S_* pv = present->data<S_>() + (((d.B + b) * d.N + n) * d.T + t) * d.dv;
          for (int64_t i = 0; i < d.dq; i++) pk[i] = store<S_>(kd[i]);
          for (int64_t i = 0; i < d.dv; i++) pv[i] = store<S_>(vd[i]);
        }
      }
  Tensor& y = ctx.output(0, x.dtype(), {d.B, d.S, d.Hv});
  ctx.pool().parallel_for_cost(d.B * d.N, (double)(d.S * d.T * (d.dq + d.dv)), [&](int64_t r0, int64_t r1) {
    std::vector<float> score((size_t)d.T);
    for (int64_t bn = r0; bn < r1; bn++) {
      const int64_t b = bn / d.N, n = bn % d.N;
      for (int64_t s = 0; s < d.S; s++) {
        const float* q = qkv.data() + (b * d.S + s) * Wc + n * d.dq;
        float mx = -INFINITY;
        for (int64_t t = 0; t < d.T; t++) {
          const float* k = K.data() + ((b * d.N + n) * d.T + t) * d.dq;
          float dot = 0;
          for (int64_t i = 0; i < d.dq; i++) dot += q[i] * k[i];
          float v = dot * scale;
          if (!mv.visible(b, s, t)) v += filter;
          if (ab) {
            const int64_t ab_b = ab->dim(0) == 1 ? 0 : b, ab_n = ab->dim(1) == 1 ? 0 : n;
            v += (float)ab->get_f64(((ab_b * ab->dim(1) + ab_n) * d.S + s) * d.T + t);
          }
          score[(size_t)t] = v;
          mx = std::max(mx, v);
        }
        double sum = 0;
        for (int64_t t = 0; t < d.T; t++) sum += score[(size_t)t] = std::exp(score[(size_t)t] - mx);
        S_* out = y.data<S_>() + (b * d.S + s) * d.Hv + n * d.dv;
        for (int64_t i = 0; i < d.dv; i++) {
          double acc = 0;
          for (int64_t t = 0; t < d.T; t++) acc += score[(size_t)t] * V[(size_t)(((b * d.N + n) * d.T + t) * d.dv + i)];
          out[i] = store<S_>((float)(acc / sum));
        }
      }
    }
  });
}

void attention_kernel(KernelContext& ctx) {
  const Node& node = ctx.node();
  const Tensor& x = ctx.input(0);
  const Tensor& w = ctx.input(1);
  OGX_CHECK(node.attr_int("do_rotary", 0) == 0, node.describe(), ": do_rotary is not supported");
  OGX_CHECK(node.attr_int("past_present_share_buffer", 0) == 0, node.describe(),
            ": past_present_share_buffer is not supported");
  OGX_CHECK(!ctx.has_input(6), node.describe(), ": past_sequence_length is not supported");
  OGX_CHECK(x.rank() == 3 && w.rank() == 2 && w.dim(0) == x.dim(2) && w.dtype() == x.dtype(), node.describe(),
            ": expected input [B,S,In] and weights [In, 3 x hidden] of one float type, got ", shape_str(x.shape()),
            " and ", shape_str(w.shape()));
  MhaDims d{};
  d.B = x.dim(0), d.S = x.dim(1), d.In = x.dim(2);
  d.N = node.attr_int("num_heads", 0);
  OGX_CHECK(d.N > 0, node.describe(), ": num_heads must be > 0");
  std::vector<int64_t> sizes = node.attr_ints("qkv_hidden_sizes");
  if (sizes.empty()) {
    OGX_CHECK(w.dim(1) % 3 == 0, node.describe(), ": weights width ", w.dim(1), " is not 3 x hidden");
    sizes = {w.dim(1) / 3, w.dim(1) / 3, w.dim(1) / 3};
  }
  OGX_CHECK(sizes.size() == 3 && sizes[0] == sizes[1] && sizes[0] + sizes[1] + sizes[2] == w.dim(1) &&
                sizes[0] % d.N == 0 && sizes[2] % d.N == 0,
            node.describe(), ": qkv_hidden_sizes do not fit weights ", shape_str(w.shape()), " and ", d.N, " heads");
  d.Hq = sizes[0], d.Hk = sizes[1], d.Hv = sizes[2], d.dq = d.Hq / d.N, d.dv = d.Hv / d.N;
  if (const Tensor* b = ctx.input_or_null(2))
    OGX_CHECK(b->numel() == w.dim(1) && b->dtype() == x.dtype(), node.describe(), ": bias must have ", w.dim(1),
              " elements");
  const Tensor* past = ctx.input_or_null(4);
  d.P = 0;
  if (past) {
    OGX_CHECK(past->rank() == 5 && past->dim(0) == 2 && past->dim(1) == d.B && past->dim(2) == d.N &&
                  past->dim(4) == d.dq && d.dq == d.dv && past->dtype() == x.dtype(),
              node.describe(), ": past must be [2, ", d.B, ", ", d.N, ", past_length, ", d.dq, "], got ",
              shape_str(past->shape()));
    d.P = past->dim(3);
  }
  d.T = d.P + d.S;
  MaskView mv;
  mv.causal = node.attr_int("unidirectional", 0) != 0;
  mv.P = d.P, mv.S = d.S, mv.T = d.T;
  if (const Tensor* m = ctx.input_or_null(3)) {
    OGX_CHECK(m->dtype() == DType::i32 || m->dtype() == DType::i64, node.describe(), ": mask_index must be int32");
    mv.mask = m;
    if (m->rank() == 1 && m->dim(0) == d.B) mv.kind = 1;
    else if (m->rank() == 2 && m->dim(0) == d.B && m->dim(1) == d.T) mv.kind = 2;
    else if (m->rank() == 3 && m->dim(0) == d.B && m->dim(1) == d.S && m->dim(2) == d.T) mv.kind = 3;
    else throw_error(node.describe(), ": mask_index shape ", shape_str(m->shape()), " is not [B], [B,T] or [B,S,T] with B=",
                     d.B, " S=", d.S, " T=", d.T);
  }
  if (const Tensor* ab = ctx.input_or_null(5))
    OGX_CHECK(ab->rank() == 4 && (ab->dim(0) == 1 || ab->dim(0) == d.B) && (ab->dim(1) == 1 || ab->dim(1) == d.N) &&
                  ab->dim(2) == d.S && ab->dim(3) == d.T,
              node.describe(), ": attention_bias must be [B|1, N|1, S, T], got ", shape_str(ab->shape()));
  const float scale = node.attr_float("scale", 0.0f) != 0.0f ? node.attr_float("scale", 0.0f)
                                                              : 1.0f / std::sqrt((float)d.dq);
  const float filter = node.attr_float("mask_filter_value", -10000.0f);
  dispatch_float(x.dtype(), "Attention", [&](auto tag) {
    using S_ = typename decltype(tag)::type;
    run_mha<S_>(ctx, d, mv, scale, filter);
  });
}

}  // namespace

void register_attention_mha(KernelRegistry& r) { r.add_fn("com.microsoft", "Attention", attention_kernel); }

}  // namespace ogx::cpu
