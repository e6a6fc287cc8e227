// com.microsoft GroupQueryAttention on the CPU, following ONNX Runtime's contrib-op semantics:
//   query [B,S,N*H] (or packed QKV [B,S,(N+2*Nkv)*H] when key/value are omitted), key/value [B,S,Nkv*H],
//   past_key/past_value [B,Nkv,P,H], seqlens_k [B] (int32, total length - 1), total_sequence_length (int32 scalar),
//   optional cos_cache/sin_cache [max_pos, rot/2] (do_rotary), position_ids [B,S], attention_bias [B|1,N|1,S,T]
//   (added after softcap), head_sink [N] (a per-head logit that joins the softmax denominator only, as
//   smooth_softmax does with a logit of 0).
//   Outputs: output [B,S,N*H], present_key/present_value [B,Nkv,max(T,P),H]. When present and past are the same
//   buffer (past_present_share_buffer) only the new positions are written.
// A batched first prompt may be right-padded: row b holds seqlens_k[b] + 1 <= S real tokens; its padding queries
// see the row's real keys only (ONNX Runtime caps the causal length at the row's total), and every one of the S
// new K/V rows is still stored.
// Scores and softmax are computed in fp32; K/V are stored in the model's type.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "providers/cpu/attention_ort.h"
#include "providers/cpu/cpu_ops.h"
#include "providers/cpu/rotary.h"
#include "providers/cpu/simd.h"
#include "providers/cpu/type_dispatch.h"
#include "providers/cpu/vec_math.h"

namespace ogx::cpu {
namespace {

struct GqaDims {
  int64_t B, S, N, Nkv, H;
  int64_t past_buf;     // P: sequence capacity of past_key (0 without past)
  int64_t present_buf;  // sequence capacity of present_key
  int64_t total;        // total_sequence_length input
  bool packed, first_prompt, shared;
};

struct GqaAttrs {
  int64_t num_heads, kv_num_heads, local_window;
  float scale, softcap;
  bool do_rotary, interleaved, smooth_softmax;
};

GqaAttrs read_attrs(const Node& n) {
  GqaAttrs a;
  a.num_heads = n.attr_int("num_heads", 0);
  a.kv_num_heads = n.attr_int("kv_num_heads", 0);
  OGX_CHECK(a.num_heads > 0 && a.kv_num_heads > 0 && a.num_heads % a.kv_num_heads == 0, n.describe(),
            ": num_heads (", a.num_heads, ") must be a positive multiple of kv_num_heads (", a.kv_num_heads, ")");
  a.local_window = n.attr_int("local_window_size", -1);
  a.scale = n.attr_float("scale", 0.0f);
  a.softcap = n.attr_float("softcap", 0.0f);
  a.do_rotary = n.attr_int("do_rotary", 0) != 0;
  a.interleaved = n.attr_int("rotary_interleaved", 0) != 0;
  a.smooth_softmax = n.attr_int("smooth_softmax", 0) != 0;
  return a;
}

// Absolute position of query token s of batch b (ONNX Runtime: first prompt starts at 0, else after the past).
int64_t query_position(const GqaDims& d, const int32_t* seqlens, int64_t b, int64_t s) {
  if (d.first_prompt) return s;
  return (int64_t)seqlens[b] + 1 - d.S + s;
}

template <typename T>
void gqa_compute(KernelContext& ctx, const GqaAttrs& a, const GqaDims& d) {
  const Node& n = ctx.node();
  const Tensor& q_in = ctx.input(0);
  const Tensor* k_in = d.packed ? nullptr : &ctx.input(1);
  const Tensor* v_in = d.packed ? nullptr : &ctx.input(2);
  const Tensor* past_k = ctx.input_or_null(3);
  const Tensor* past_v = ctx.input_or_null(4);
  const int32_t* seqlens = ctx.input(5).data<int32_t>();
  const Tensor* cosc = ctx.input_or_null(7);
  const Tensor* sinc = ctx.input_or_null(8);
  const Tensor* pos_ids = ctx.input_or_null(9);
  const Tensor* bias = ctx.input_or_null(10);
  const Tensor* sink = ctx.input_or_null(11);
  const int64_t B = d.B, S = d.S, N = d.N, Nkv = d.Nkv, H = d.H;
  const int64_t group = N / Nkv;
  Shape pshape{B, Nkv, d.present_buf, H};
  Tensor& pk = ctx.output(1, q_in.dtype(), pshape);
  Tensor& pv = ctx.output(2, q_in.dtype(), pshape);
  Tensor& out = ctx.output(0, q_in.dtype(), {B, S, N * H});
  T* pkd = pk.data<T>();
  T* pvd = pv.data<T>();
  if (!d.shared) {  // fresh present buffers: unused positions are zero, as in ONNX Runtime
    std::memset(pkd, 0, pk.bytes());
    std::memset(pvd, 0, pv.bytes());
  }
  for (int64_t b = 0; b < B; b++) {
    int64_t total_b = (int64_t)seqlens[b] + 1;
    bool fits = d.first_prompt ? total_b >= 1 && total_b <= S : total_b >= S;
    OGX_CHECK(fits && total_b <= d.present_buf, n.describe(), ": seqlens_k[", b, "]=", seqlens[b],
              " inconsistent with sequence length ", S, " and KV capacity ", d.present_buf);
  }
  // Rotary tables, fp32.
  int64_t rot = 0;
  if (a.do_rotary) {
    OGX_CHECK(cosc && sinc && cosc->rank() == 2 && cosc->shape() == sinc->shape(), n.describe(),
              ": do_rotary needs cos_cache and sin_cache of equal 2-D shape");
    rot = cosc->dim(1) * 2;
    OGX_CHECK(rot <= H, n.describe(), ": rotary dim ", rot, " exceeds head size ", H);
  }
  auto row = [&](const Tensor& t, int64_t b, int64_t s, int64_t head, int64_t heads_in_row, int64_t head_offset) {
    return t.data<T>() + ((b * S + s) * heads_in_row + head_offset + head) * H;
  };
  int64_t row_heads = d.packed ? N + 2 * Nkv : N;
  // 1. Q (rotated, rounded to T as ONNX Runtime stores it) into fp32 [B,N,S,H]; new K/V into present.
  std::vector<float> q((size_t)(B * N * S * H));
  std::vector<float> tmp(H), cs(rot / 2 + 1), sn(rot / 2 + 1);
  auto load_rot = [&](int64_t p) {
    OGX_CHECK(p >= 0 && p < cosc->dim(0), n.describe(), ": position ", p, " outside the rotary cache (",
              cosc->dim(0), ")");
    for (int64_t i = 0; i < rot / 2; i++) {
      cs[i] = (float)cosc->get_f64(p * (rot / 2) + i);
      sn[i] = (float)sinc->get_f64(p * (rot / 2) + i);
    }
  };
  for (int64_t b = 0; b < B; b++) {
    int64_t past_len = d.first_prompt ? 0 : (int64_t)seqlens[b] + 1 - S;
    if (!d.shared && past_k && past_len > 0) {
      OGX_CHECK(past_len <= d.past_buf, n.describe(), ": past length ", past_len, " exceeds past_key capacity ",
                d.past_buf);
      for (int64_t h = 0; h < Nkv; h++) {
        std::memcpy(pkd + (b * Nkv + h) * d.present_buf * H, past_k->data<T>() + (b * Nkv + h) * d.past_buf * H,
                    past_len * H * sizeof(T));
        std::memcpy(pvd + (b * Nkv + h) * d.present_buf * H, past_v->data<T>() + (b * Nkv + h) * d.past_buf * H,
                    past_len * H * sizeof(T));
      }
    }
    for (int64_t s = 0; s < S; s++) {
      int64_t p = pos_ids ? pos_ids->get_i64(b * S + s) : query_position(d, seqlens, b, s);
      if (rot) load_rot(p);
      for (int64_t h = 0; h < N; h++) {
        const T* src = row(q_in, b, s, h, row_heads, 0);
        for (int64_t i = 0; i < H; i++) tmp[i] = (float)load(src[i]);
        if (rot) rotate_head(tmp.data(), rot, cs.data(), sn.data(), a.interleaved);
        float* dst = q.data() + ((b * N + h) * S + s) * H;
        for (int64_t i = 0; i < H; i++) dst[i] = (float)load(store<T>(tmp[i]));
      }
      for (int64_t h = 0; h < Nkv; h++) {
        const T* ks = d.packed ? row(q_in, b, s, h, row_heads, N) : k_in->data<T>() + ((b * S + s) * Nkv + h) * H;
        const T* vs = d.packed ? row(q_in, b, s, h, row_heads, N + Nkv) : v_in->data<T>() + ((b * S + s) * Nkv + h) * H;
        T* kd = pkd + ((b * Nkv + h) * d.present_buf + past_len + s) * H;
        T* vd = pvd + ((b * Nkv + h) * d.present_buf + past_len + s) * H;
        for (int64_t i = 0; i < H; i++) tmp[i] = (float)load(ks[i]);
        if (rot) rotate_head(tmp.data(), rot, cs.data(), sn.data(), a.interleaved);
        for (int64_t i = 0; i < H; i++) kd[i] = store<T>(tmp[i]);
        std::memcpy(vd, vs, H * sizeof(T));
      }
    }
  }
  // 2. Attention per (batch, head), fp32.
  const float alpha = a.scale == 0.0f ? 1.0f / std::sqrt((float)H) : a.scale;
  int64_t longest = 0;
  for (int64_t b = 0; b < B; b++) longest = std::max<int64_t>(longest, (int64_t)seqlens[b] + 1);
  ctx.pool().parallel_for_cost(B * N, (double)(S * longest * H * 4 + longest * H * 2), [&](int64_t i0, int64_t i1) {
    std::vector<float> kf, vf, score, acc(H), ort_scratch;
    for (int64_t i = i0; i < i1; i++) {
      int64_t b = i / N, h = i % N, kvh = h / group;
      int64_t total_b = (int64_t)seqlens[b] + 1;
      int64_t past_len = d.first_prompt ? 0 : total_b - S;
      const T* kbase = pkd + (b * Nkv + kvh) * d.present_buf * H;
      const T* vbase = pvd + (b * Nkv + kvh) * d.present_buf * H;
      const float* kp;  // keys and values as fp32: the cache itself when it is fp32, else a converted copy
      const float* vp;
      if constexpr (std::is_same_v<T, float>) {
        kp = kbase, vp = vbase;
      } else {
        kf.resize(total_b * H);
        vf.resize(total_b * H);
        for (int64_t t = 0; t < total_b * H; t++) {
          kf[t] = (float)load(kbase[t]);
          vf[t] = (float)load(vbase[t]);
        }
        kp = kf.data(), vp = vf.data();
      }
      if constexpr (std::is_same_v<T, float>) {  // ONNX Runtime's own arithmetic, bit for bit (attention_ort.h)
        if (!a.smooth_softmax && !sink && a.softcap <= 0) {
          OrtAttentionHead oh{q.data() + (b * N + h) * S * H, kp, vp, nullptr, 0, S, H, total_b, past_len,
                              a.local_window, alpha, out.data<float>() + b * S * N * H + h * H, N * H};
          if (bias) {
            int64_t bb = bias->dim(0) == 1 ? 0 : b, bh = bias->dim(1) == 1 ? 0 : h;
            oh.bias = bias->data<float>() + (bb * bias->dim(1) + bh) * bias->dim(2) * bias->dim(3);
            oh.bias_stride = bias->dim(3);
          }
          ort_attention_head(oh, ort_scratch);
          continue;
        }
      }
      score.resize(total_b);
      for (int64_t s = 0; s < S; s++) {
        const float* qv = q.data() + ((b * N + h) * S + s) * H;
        int64_t causal = std::min(past_len + s + 1, total_b);  // keys [0, causal) are visible
        int64_t start = 0;
        // local_window_size counts the current token (ONNX Runtime >= 1.23, as Hugging Face's sliding_window): the
        // window keys are (position - window, position].
        if (a.local_window > 0 && causal > a.local_window) start = causal - a.local_window;
        float mx = -INFINITY;
        dot_rows_f32(qv, kp + start * H, causal - start, H, alpha, score.data() + start);
        for (int64_t t = start; t < causal; t++) {
          float x = score[t];
          if (a.softcap > 0) x = a.softcap * std::tanh(x / a.softcap);
          if (bias) {
            int64_t bb = bias->dim(0) == 1 ? 0 : b, bh = bias->dim(1) == 1 ? 0 : h;
            x += (float)bias->get_f64(((bb * bias->dim(1) + bh) * bias->dim(2) + s) * bias->dim(3) + t);
          }
          score[t] = x;
          mx = std::max(mx, x);
        }
        // smooth_softmax / head_sink: one more logit (0 or the head's sink) in the denominator.
        const bool has_sink = a.smooth_softmax || sink;
        const float sink_logit = sink ? (float)sink->get_f64(h) : 0.0f;
        if (has_sink) mx = std::max(mx, sink_logit);
        double sum = has_sink ? std::exp(sink_logit - mx) : 0.0;
        for (int64_t t = start; t < causal; t++) score[t] -= mx;
        exp_nonpos_f32(score.data() + start, score.data() + start, causal - start);
        for (int64_t t = start; t < causal; t++) sum += score[t];
        std::fill(acc.begin(), acc.end(), 0.0f);
        for (int64_t t = start; t < causal; t++) score[t] = (float)(score[t] / sum);
        weighted_rows_f32(score.data() + start, vp + start * H, causal - start, H, acc.data());
        T* o = out.data<T>() + (b * S + s) * N * H + h * H;
        for (int64_t j = 0; j < H; j++) o[j] = store<T>(acc[j]);
      }
    }
  });
}

// position_ids [B,S] (read as b*S+s, as ONNX Runtime reads it), attention_bias [B|1, N|1, S, total_sequence_length]
// and head_sink [N], both of the query's type.
void check_optional_inputs(KernelContext& ctx, const GqaAttrs& a, const GqaDims& d) {
  const Node& n = ctx.node();
  DType dt = ctx.input(0).dtype();
  if (const Tensor* pos = ctx.input_or_null(9)) {
    OGX_CHECK(pos->rank() == 2 && pos->dim(0) == d.B && pos->dim(1) == d.S, n.describe(), ": position_ids ",
              shape_str(pos->shape()), " must be [", d.B, ",", d.S, "]");
  }
  if (const Tensor* bias = ctx.input_or_null(10)) {
    OGX_CHECK(bias->rank() == 4 && (bias->dim(0) == d.B || bias->dim(0) == 1) &&
                  (bias->dim(1) == d.N || bias->dim(1) == 1) && bias->dim(2) == d.S && bias->dim(3) == d.total &&
                  bias->dtype() == dt,
              n.describe(), ": attention_bias ", shape_str(bias->shape()), " must be [", d.B, "|1,", d.N, "|1,", d.S,
              ",", d.total, "] of ", dtype_name(dt));
  }
  if (const Tensor* sink = ctx.input_or_null(11)) {
    OGX_CHECK(!a.smooth_softmax, n.describe(), ": head_sink must not be given with smooth_softmax");
    OGX_CHECK(sink->rank() == 1 && sink->dim(0) == d.N && sink->dtype() == dt, n.describe(), ": head_sink ",
              shape_str(sink->shape()), " must be [", d.N, "] of ", dtype_name(dt));
  }
}

void gqa_kernel(KernelContext& ctx, const GqaAttrs& a) {
  const Node& n = ctx.node();
  const Tensor& q = ctx.input(0);
  OGX_CHECK(q.rank() == 3, n.describe(), ": query must be [batch, sequence, hidden], got ", shape_str(q.shape()));
  GqaDims d{};
  d.B = q.dim(0);
  d.S = q.dim(1);
  d.N = a.num_heads;
  d.Nkv = a.kv_num_heads;
  d.packed = !ctx.has_input(1);
  int64_t hidden = q.dim(2);
  int64_t heads_in_q = d.packed ? d.N + 2 * d.Nkv : d.N;
  OGX_CHECK(hidden % heads_in_q == 0, n.describe(), ": query width ", hidden, " is not a multiple of ", heads_in_q,
            " heads");
  d.H = hidden / heads_in_q;
  if (!d.packed) {
    const Tensor& k = ctx.input(1);
    const Tensor& v = ctx.input(2);
    OGX_CHECK(k.shape() == Shape({d.B, d.S, d.Nkv * d.H}) && v.shape() == k.shape(), n.describe(), ": key/value ",
              shape_str(k.shape()), " do not match [", d.B, ",", d.S, ",", d.Nkv * d.H, "]");
    OGX_CHECK(k.dtype() == q.dtype() && v.dtype() == q.dtype(), n.describe(), ": query/key/value types differ");
  }
  const Tensor* pk = ctx.input_or_null(3);
  const Tensor* pv = ctx.input_or_null(4);
  OGX_CHECK((pk == nullptr) == (pv == nullptr), n.describe(), ": past_key and past_value must both be given");
  if (pk) {
    OGX_CHECK(pk->rank() == 4 && pk->dim(0) == d.B && pk->dim(1) == d.Nkv && pk->dim(3) == d.H &&
                  pv->shape() == pk->shape() && pk->dtype() == q.dtype(),
              n.describe(), ": past_key ", shape_str(pk->shape()), " must be [", d.B, ",", d.Nkv, ",P,", d.H, "] of ",
              dtype_name(q.dtype()));
    d.past_buf = pk->dim(2);
  }
  const Tensor& seqlens = ctx.input(5);
  OGX_CHECK(seqlens.dtype() == DType::i32 && seqlens.numel() == d.B, n.describe(), ": seqlens_k must be int32 [",
            d.B, "]");
  const Tensor& total = ctx.input(6);
  OGX_CHECK(total.numel() == 1, n.describe(), ": total_sequence_length must be a scalar");
  d.total = total.get_i64(0);
  d.present_buf = std::max(d.total, d.past_buf);
  d.first_prompt = d.S > 1 && d.S == d.total;
  if (d.S == 1 && d.total == 1) d.first_prompt = true;
  Tensor* bk = ctx.bound_output(1);
  d.shared = pk && bk && bk->raw() == pk->raw();
  if (d.shared) d.present_buf = d.past_buf;
  check_optional_inputs(ctx, a, d);
  dispatch_float(q.dtype(), "GroupQueryAttention", [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, double>) throw_error(n.describe(), ": float64 is not supported");
    else gqa_compute<T>(ctx, a, d);
  });
}

}  // namespace

void register_attention(KernelRegistry& r) {
  r.add("com.microsoft", "GroupQueryAttention", [](const KernelInfo& info) -> std::unique_ptr<Kernel> {
    GqaAttrs a = read_attrs(info.node);
    return std::make_unique<FnKernel>([a](KernelContext& ctx) { gqa_kernel(ctx, a); });
  });
}

}  // namespace ogx::cpu
