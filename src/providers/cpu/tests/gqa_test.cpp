// com.microsoft GroupQueryAttention against a plain float64 loop written here from ONNX Runtime's contrib-op
// documentation (ContribOperators.md) and CPU kernel, on seeded random shapes and data, fp32 and fp16 (tolerances:
// contrib_test_util.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <sstream>

#include "providers/cpu/cpu_ops.h"
#include "providers/cpu/tests/contrib_test_util.h"

namespace ogx::test {
namespace {

using namespace contrib;

// ---------------------------------------------------------------------------------------------------------------
// GroupQueryAttention
// ---------------------------------------------------------------------------------------------------------------

enum class Step { first_no_past, first_separate, first_shared, decode_separate, decode_shared, continue_separate,
                  continue_shared };
const char* step_name(Step s) {
  switch (s) {
    case Step::first_no_past: return "first prompt, no past";
    case Step::first_separate: return "first prompt, empty separate past";
    case Step::first_shared: return "first prompt, shared buffer";
    case Step::decode_separate: return "decode, separate past/present";
    case Step::decode_shared: return "decode, shared buffer";
    case Step::continue_separate: return "later prompt chunk, separate past/present";
    case Step::continue_shared: return "later prompt chunk, shared buffer";
  }
  return "?";
}

struct GqaCase {
  DType dt = DType::f32;
  Step step = Step::first_no_past;
  int64_t B = 1, S = 1, N = 2, Nkv = 1, H = 8;
  bool packed = false, rotary = false, interleaved = false;
  int64_t rot = 0;      // rotary dim (cache width rot/2), <= H
  int64_t window = -1;  // local_window_size
  float softcap = 0, scale = 0;
  bool smooth = false, sink = false;  // smooth_softmax attribute / head_sink input
  bool pos_ids = false;               // position_ids input (the positions the kernel would derive)
  int bias_form = 0;                  // attention_bias: 0 none, 1 [B,N,S,T], 2 [1,N,S,T], 3 [B,1,S,T], 4 [1,1,S,T]
  uint32_t seed = 1;
  std::vector<int64_t> past_len;    // per batch row; empty: random
  std::vector<int64_t> prompt_len;  // first prompt: real tokens per row (<= S, right-padded); empty: S
  std::string str() const {
    std::ostringstream o;
    o << dtype_name(dt) << " " << step_name(step) << " B=" << B << " S=" << S << " N=" << N << " Nkv=" << Nkv
      << " H=" << H << (packed ? " packed" : "") << (rotary ? " rotary" : "") << (interleaved ? " interleaved" : "")
      << (rotary ? " rot=" + std::to_string(rot) : "") << " window=" << window << " softcap=" << softcap
      << " scale=" << scale << (smooth ? " smooth_softmax" : "") << (sink ? " head_sink" : "")
      << (pos_ids ? " position_ids" : "") << " bias_form=" << bias_form << " seed=" << seed;
    for (int64_t n : prompt_len) o << " len=" << n;
    return o.str();
  }
};

void run_gqa_case(GqaCase c) {
  SCOPED_TRACE(c.str());
  std::mt19937 rng(c.seed);
  const int64_t B = c.B, S = c.S, N = c.N, Nkv = c.Nkv, H = c.H, G = N / Nkv;
  const bool first = c.step == Step::first_no_past || c.step == Step::first_separate || c.step == Step::first_shared;
  const bool shared = c.step == Step::first_shared || c.step == Step::decode_shared || c.step == Step::continue_shared;
  const bool has_past = c.step != Step::first_no_past;
  // Per-row past lengths and totals (seqlens_k = total - 1).
  std::vector<int64_t> past(B, 0), tot(B);
  for (int64_t b = 0; b < B; b++) {
    if (!first) past[b] = c.past_len.empty() ? 1 + (int64_t)(rng() % 9) : c.past_len[(size_t)b];
    tot[b] = past[b] + (first && !c.prompt_len.empty() ? c.prompt_len[(size_t)b] : S);
  }
  // A first prompt's total_sequence_length is S even when every row is padded.
  int64_t total = first ? S : *std::max_element(tot.begin(), tot.end());
  int64_t max_past = *std::max_element(past.begin(), past.end());
  int64_t P = 0;  // past buffer capacity
  if (shared) P = total + (int64_t)(rng() % 5);
  else if (has_past) P = max_past;
  const int64_t present_buf = shared ? P : std::max(total, P);
  const int64_t qrow = c.packed ? (N + 2 * Nkv) * H : N * H;

  Buf q = random_buf(rng, c.dt, {B, S, qrow});
  Buf k = random_buf(rng, c.dt, {B, S, Nkv * H});
  Buf v = random_buf(rng, c.dt, {B, S, Nkv * H});
  Buf pk = random_buf(rng, c.dt, {B, Nkv, P, H});  // positions past the row's past length are garbage
  Buf pv = random_buf(rng, c.dt, {B, Nkv, P, H});
  Buf cosb, sinb;
  if (c.rotary) make_caches(rng, c.dt, total + 3, c.rot / 2, cosb, sinb);
  const bool bias_b = c.bias_form == 1 || c.bias_form == 3, bias_n = c.bias_form == 1 || c.bias_form == 2;
  Buf bias = random_buf(rng, c.dt, {bias_b ? B : 1, bias_n ? N : 1, S, total}, -2, 2);
  Buf sink = random_buf(rng, c.dt, {N}, -1, 3);
  std::vector<int32_t> seqlens(B);
  for (int64_t b = 0; b < B; b++) seqlens[b] = (int32_t)(tot[b] - 1);

  // ---- float64 reference ----
  auto qval = [&](int64_t b, int64_t s, int64_t h, int64_t i) { return q.v[(size_t)(((b * S + s) * qrow) + h * H + i)]; };
  auto knew = [&](int64_t b, int64_t s, int64_t h, int64_t i) {
    return c.packed ? q.v[(size_t)((b * S + s) * qrow + (N + h) * H + i)] : k.v[(size_t)(((b * S + s) * Nkv + h) * H + i)];
  };
  auto vnew = [&](int64_t b, int64_t s, int64_t h, int64_t i) {
    return c.packed ? q.v[(size_t)((b * S + s) * qrow + (N + Nkv + h) * H + i)]
                    : v.v[(size_t)(((b * S + s) * Nkv + h) * H + i)];
  };
  // Expected present (whole buffer for the shared case: untouched positions keep the past values).
  std::vector<double> kfull((size_t)(B * Nkv * present_buf * H), 0.0), vfull(kfull.size(), 0.0);
  auto at = [&](int64_t b, int64_t h, int64_t t) { return (size_t)(((b * Nkv + h) * present_buf + t) * H); };
  for (int64_t b = 0; b < B; b++)
    for (int64_t h = 0; h < Nkv; h++) {
      for (int64_t t = 0; t < (shared ? P : past[b]); t++)
        for (int64_t i = 0; i < H; i++) {
          kfull[at(b, h, t) + i] = pk.v[(size_t)(((b * Nkv + h) * P + t) * H + i)];
          vfull[at(b, h, t) + i] = pv.v[(size_t)(((b * Nkv + h) * P + t) * H + i)];
        }
      for (int64_t s = 0; s < S; s++) {
        double* kd = &kfull[at(b, h, past[b] + s)];
        for (int64_t i = 0; i < H; i++) {
          kd[i] = knew(b, s, h, i);
          vfull[at(b, h, past[b] + s) + i] = vnew(b, s, h, i);
        }
        if (c.rotary) rotate_ref(kd, c.rot, cosb.v, sinb.v, past[b] + s, c.interleaved);
      }
    }
  const double scale = c.scale != 0 ? (double)c.scale : 1.0 / std::sqrt((double)H);
  std::vector<double> out((size_t)(B * S * N * H), 0.0), qh(H), sc;
  for (int64_t b = 0; b < B; b++)
    for (int64_t s = 0; s < S; s++)
      for (int64_t h = 0; h < N; h++) {
        const int64_t pos = past[b] + s, kvh = h / G;
        for (int64_t i = 0; i < H; i++) qh[i] = qval(b, s, h, i);
        if (c.rotary) rotate_ref(qh.data(), c.rot, cosb.v, sinb.v, pos, c.interleaved);
        // Visible keys: causal j <= last = min(pos, the row's last real token); with a window W, also j > last - W
        // (the window counts the current token).
        const int64_t last = std::min(pos, tot[b] - 1);
        int64_t lo = c.window > 0 ? std::max<int64_t>(0, last - c.window + 1) : 0;
        sc.assign((size_t)(last + 1), 0.0);
        double mx = -INFINITY;
        for (int64_t j = lo; j <= last; j++) {
          double d = 0;
          for (int64_t i = 0; i < H; i++) d += qh[i] * kfull[at(b, kvh, j) + i];
          d *= scale;
          if (c.softcap > 0) d = c.softcap * std::tanh(d / c.softcap);
          if (c.bias_form)
            d += bias.v[(size_t)((((bias_b ? b : 0) * (bias_n ? N : 1) + (bias_n ? h : 0)) * S + s) * total + j)];
          sc[j] = d;
          mx = std::max(mx, d);
        }
        // smooth_softmax / head_sink: softmax over the visible scores plus one extra logit whose weight is dropped.
        const bool extra = c.smooth || c.sink;
        const double extra_logit = c.sink ? sink.v[(size_t)h] : 0.0;
        if (extra) mx = std::max(mx, extra_logit);
        double sum = extra ? std::exp(extra_logit - mx) : 0.0;
        for (int64_t j = lo; j <= last; j++) sum += sc[j] = std::exp(sc[j] - mx);
        double* o = &out[(size_t)(((b * S + s) * N + h) * H)];
        for (int64_t j = lo; j <= last; j++)
          for (int64_t i = 0; i < H; i++) o[i] += sc[j] / sum * vfull[at(b, kvh, j) + i];
      }

  // ---- the kernel ----
  NodeRun run("com.microsoft", "GroupQueryAttention");
  run.input("query", q.t);
  if (c.packed) run.omitted().omitted();
  else run.input("key", k.t).input("value", v.t);
  if (has_past) run.input("past_key", pk.t).input("past_value", pv.t);
  else run.omitted().omitted();
  run.input("seqlens_k", make_tensor(DType::i32, {B}, seqlens));
  run.input("total_sequence_length", make_tensor(DType::i32, {}, std::vector<int32_t>{(int32_t)total}));
  if (c.rotary || c.bias_form || c.sink || c.pos_ids) {
    if (c.rotary) run.input("cos_cache", cosb.t).input("sin_cache", sinb.t);
    else run.omitted().omitted();
    std::vector<int64_t> pos((size_t)(B * S));
    for (int64_t i = 0; i < B * S; i++) pos[(size_t)i] = past[(size_t)(i / S)] + i % S;
    if (c.pos_ids) run.input("position_ids", make_tensor(DType::i64, {B, S}, pos));
    else run.omitted();
  }
  if (c.bias_form || c.sink) {
    if (c.bias_form) run.input("attention_bias", bias.t);
    else run.omitted();
  }
  if (c.sink) run.input("head_sink", sink.t);
  if (c.smooth) run.attr("smooth_softmax", int64_t{1});
  run.attr("num_heads", N).attr("kv_num_heads", Nkv).outputs(3).registry(cpu::register_attention);
  if (c.rotary) run.attr("do_rotary", int64_t{1}).attr("rotary_interleaved", int64_t{c.interleaved ? 1 : 0});
  if (c.window > 0) run.attr("local_window_size", c.window);
  if (c.softcap > 0) run.attr("softcap", c.softcap);
  if (c.scale != 0) run.attr("scale", c.scale);
  if (shared) run.bind_output(1, pk.t).bind_output(2, pv.t);  // present_key/value are past_key/value's buffers
  std::vector<Tensor> res = run.run();

  Tol tol = tol_for(c.dt);
  ASSERT_EQ(res[0].shape(), Shape({B, S, N * H}));
  expect_close(res[0], out, tol, "output");
  ASSERT_EQ(res[1].shape(), Shape({B, Nkv, present_buf, H}));
  ASSERT_EQ(res[2].shape(), Shape({B, Nkv, present_buf, H}));
  if (shared) {
    EXPECT_EQ(res[1].raw(), pk.t.raw()) << "present_key must be written in place";
    EXPECT_EQ(res[2].raw(), pv.t.raw()) << "present_value must be written in place";
  }
  // The written part of present (all S new rows, padding too; shared: the whole buffer, untouched positions
  // unchanged).
  auto valid = [&](int64_t i) {
    int64_t t = (i / H) % present_buf, b = i / (H * present_buf * Nkv);
    return shared || t < past[b] + S;
  };
  expect_close(res[1], kfull, tol, "present_key", valid);
  expect_close(res[2], vfull, Tol{0, 0}, "present_value (a copy)", valid);
}

// Every step kind x head ratio 1/2/4 x each option on its own and all together, fp32 and fp16, random shapes.
TEST(GroupQueryAttention, RandomCasesAgainstFloat64) {
  std::mt19937 rng(7);
  const Step steps[] = {Step::first_no_past,   Step::first_separate, Step::first_shared,   Step::decode_separate,
                        Step::decode_shared,   Step::continue_separate, Step::continue_shared};
  int n = 0;
  for (DType dt : {DType::f32, DType::f16})
    for (Step st : steps)
      for (int ratio : {1, 2, 4})
        // 0 plain, 1 rotary, 2 interleaved rotary, 3 window, 4 softcap+scale, 5 those together, 6 smooth_softmax,
        // 7 head_sink, 8 attention_bias, 9 all of them but smooth_softmax (which head_sink excludes)
        for (int opt = 0; opt < 10; opt++) {
          GqaCase c;
          c.dt = dt;
          c.step = st;
          c.seed = 1000 + n++;
          c.Nkv = 1 + (int64_t)(rng() % 2);
          c.N = c.Nkv * ratio;
          c.H = int64_t{8} << (rng() % 3);  // 8, 16, 32
          c.B = 1 + (int64_t)(rng() % 3);
          bool first = st == Step::first_no_past || st == Step::first_separate || st == Step::first_shared;
          c.S = st == Step::decode_separate || st == Step::decode_shared ? 1
                : first                                                 ? 1 + (int64_t)(rng() % 9)
                                                                        : 2 + (int64_t)(rng() % 3);
          c.packed = rng() % 2;
          if (opt == 1 || opt == 2 || opt == 5 || opt == 9) {
            c.rotary = true;
            c.interleaved = opt == 2 || (opt >= 5 && rng() % 2);
            c.rot = rng() % 2 ? c.H : c.H / 2;  // full or partial rotary
          }
          if (opt == 3 || opt == 5 || opt == 9) c.window = 1 + (int64_t)(rng() % 4);
          if (opt == 4 || opt == 5 || opt == 9) {
            c.softcap = rng() % 2 ? 0.5f : 2.0f;
            c.scale = 0.1f + 0.1f * (float)(rng() % 4);
          }
          c.smooth = opt == 6;
          c.sink = opt == 7 || opt == 9;
          c.pos_ids = opt == 9;
          if (opt == 8 || opt == 9) c.bias_form = 1 + (int)(rng() % 4);
          run_gqa_case(c);
          if (::testing::Test::HasFailure()) return;
        }
}

// Decode rows at very different positions in one batch, window smaller and larger than each row's length.
TEST(GroupQueryAttention, BatchRowsWithDifferentLengthsAndWindow) {
  for (DType dt : {DType::f32, DType::f16})
    for (bool shared : {false, true})
      for (int64_t window : {-1, 1, 3, 7}) {
        GqaCase c;
        c.dt = dt;
        c.step = shared ? Step::decode_shared : Step::decode_separate;
        c.B = 4;
        c.S = 1;
        c.N = 8;
        c.Nkv = 2;
        c.H = 16;
        c.past_len = {1, 12, 5, 2};
        c.rotary = true;
        c.rot = 16;
        c.window = window;
        c.seed = 77 + (uint32_t)window;
        run_gqa_case(c);
      }
}

// A batched first prompt, right-padded: rows of 7, 3 and 1 real tokens in S = 7. Padding queries see only their
// row's real keys; all S new K/V rows are stored. With every option that changes the softmax.
TEST(GroupQueryAttention, RightPaddedFirstPromptBatch) {
  const Step steps[] = {Step::first_no_past, Step::first_separate, Step::first_shared};
  uint32_t seed = 500;
  for (DType dt : {DType::f32, DType::f16})
    for (Step st : steps)
      for (int opt = 0; opt < 4; opt++) {  // 0 plain, 1 rotary + window, 2 head_sink + bias, 3 smooth + packed
        GqaCase c;
        c.dt = dt;
        c.step = st;
        c.B = 3;
        c.S = 7;
        c.N = 4;
        c.Nkv = 2;
        c.H = 16;
        c.prompt_len = {7, 3, 1};
        c.rotary = opt == 1;
        c.rot = 16;
        c.window = opt == 1 ? 2 : -1;
        c.sink = opt == 2;
        c.bias_form = opt == 2 ? 3 : 0;
        c.smooth = opt == 3;
        c.packed = opt == 3;
        c.seed = seed++;
        run_gqa_case(c);
        if (::testing::Test::HasFailure()) return;
      }
}

// ONNX Runtime's input checks for the two optional inputs: head_sink excludes smooth_softmax and is [N];
// attention_bias is [B|1, N|1, S, total_sequence_length].
TEST(GroupQueryAttention, RejectsMisshapenBiasAndSink) {
  const int64_t B = 2, S = 3, N = 2, H = 4;
  auto run = [&](const Shape& bias_shape, const Shape& sink_shape, bool smooth) {
    std::mt19937 rng(3);
    NodeRun r("com.microsoft", "GroupQueryAttention");
    r.input("query", random_buf(rng, DType::f32, {B, S, N * H}).t)
        .input("key", random_buf(rng, DType::f32, {B, S, H}).t)
        .input("value", random_buf(rng, DType::f32, {B, S, H}).t)
        .omitted()
        .omitted()
        .input("seqlens_k", make_tensor(DType::i32, {B}, std::vector<int32_t>{(int32_t)S - 1, (int32_t)S - 1}))
        .input("total_sequence_length", make_tensor(DType::i32, {}, std::vector<int32_t>{(int32_t)S}))
        .omitted()
        .omitted()
        .omitted();
    if (bias_shape.empty()) r.omitted();
    else r.input("attention_bias", random_buf(rng, DType::f32, bias_shape).t);
    if (!sink_shape.empty()) r.input("head_sink", random_buf(rng, DType::f32, sink_shape).t);
    if (smooth) r.attr("smooth_softmax", int64_t{1});
    r.attr("num_heads", N).attr("kv_num_heads", int64_t{1}).outputs(3).registry(cpu::register_attention);
    return r.run();
  };
  EXPECT_NO_THROW(run({1, N, S, S}, {N}, false));
  EXPECT_THROW(run({}, {N}, true), Error);
  EXPECT_THROW(run({}, {N + 1}, false), Error);
  EXPECT_THROW(run({3, N, S, S}, {}, false), Error);
  EXPECT_THROW(run({B, 3, S, S}, {}, false), Error);
  EXPECT_THROW(run({B, N, 1, S}, {}, false), Error);
  EXPECT_THROW(run({B, N, S, S + 1}, {}, false), Error);
}

// The window boundary: with W keys visible and the current token counted, a query at position p must ignore key
// p - W. A V row that is huge at exactly that key makes an off-by-one visible whatever the scores.
TEST(GroupQueryAttention, WindowCountsTheCurrentToken) {
  const int64_t W = 3, S = 6, H = 4;
  std::vector<float> q((size_t)(S * H), 0.5f), k((size_t)(S * H), 0.25f), v((size_t)(S * H), 1.0f);
  for (int64_t i = 0; i < H; i++) v[(size_t)((S - 1 - W) * H + i)] = 1000.0f;  // key 2: outside query 5's window
  Tensor y = NodeRun("com.microsoft", "GroupQueryAttention")
                 .input("query", make_tensor(DType::f32, {1, S, H}, q))
                 .input("key", make_tensor(DType::f32, {1, S, H}, k))
                 .input("value", make_tensor(DType::f32, {1, S, H}, v))
                 .omitted()
                 .omitted()
                 .input("seqlens_k", make_tensor(DType::i32, {1}, std::vector<int32_t>{(int32_t)S - 1}))
                 .input("total_sequence_length", make_tensor(DType::i32, {}, std::vector<int32_t>{(int32_t)S}))
                 .attr("num_heads", int64_t{1})
                 .attr("kv_num_heads", int64_t{1})
                 .attr("local_window_size", W)
                 .outputs(3)
                 .registry(cpu::register_attention)
                 .run()[0];
  // Equal scores: query s averages v over keys (s - W, s].
  for (int64_t s = 0; s < S; s++) {
    int64_t lo = std::max<int64_t>(0, s - W + 1);
    double want = 0;
    for (int64_t j = lo; j <= s; j++) want += v[(size_t)(j * H)] / (double)(s - lo + 1);
    EXPECT_NEAR(y.get_f64(s * H), want, 1e-3 * std::max(1.0, want)) << "query " << s;
  }
}

}  // namespace
}  // namespace ogx::test
