// com.microsoft GroupQueryAttention, RotaryEmbedding, SimplifiedLayerNormalization and
// SkipSimplifiedLayerNormalization against plain float64 loops written here from ONNX Runtime's contrib-op
// documentation (ContribOperators.md), on seeded random shapes and data, fp32 and fp16.
//
// The references see exactly the values the kernel is fed (fp16 inputs are rounded before both use them) and keep
// every intermediate in float64; the tolerances below therefore only cover the kernel's own rounding:
//   fp32: fp32 accumulation over at most a few hundred terms of magnitude <= ~2  -> 2e-5 absolute (+1e-5 relative).
//   fp16: one rounding of each stored result (half ulp = 2^-11 relative) plus, in attention, the rotated Q/K that ONNX
//         Runtime also stores in fp16 (score error ~1e-3)                          -> 4e-3 absolute (+2e-3 relative).
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <sstream>

#include "providers/cpu/cpu_ops.h"
#include "providers/cpu/tests/kernel_test_util.h"

namespace ogx::test {
namespace {

struct Tol {
  double atol, rtol;
};
Tol tol_for(DType dt) { return dt == DType::f16 ? Tol{4e-3, 2e-3} : Tol{2e-5, 1e-5}; }

double round_to(DType dt, double v) {
  return dt == DType::f16 ? (double)f16_to_f32(f32_to_f16((float)v)) : (double)(float)v;
}

// Seeded random values rounded to dt, and the tensor holding exactly them.
struct Buf {
  std::vector<double> v;
  Tensor t;
};
Buf random_buf(std::mt19937& rng, DType dt, const Shape& s, double lo = -1, double hi = 1) {
  std::uniform_real_distribution<double> d(lo, hi);
  Buf b;
  b.v.resize((size_t)shape_numel(s));
  for (auto& x : b.v) x = round_to(dt, d(rng));
  b.t = make_tensor(dt, s, b.v);
  return b;
}

// Expects |got - ref| <= atol + rtol |ref| elementwise over the positions where `use(i)` holds.
template <typename Use>
void expect_close(const Tensor& got, const std::vector<double>& ref, Tol tol, const std::string& what, Use use) {
  ASSERT_EQ(got.numel(), (int64_t)ref.size()) << what;
  int bad = 0;
  double worst = 0;
  for (int64_t i = 0; i < got.numel(); i++) {
    if (!use(i)) continue;
    double g = got.get_f64(i), r = ref[(size_t)i], e = std::fabs(g - r);
    worst = std::max(worst, e);
    if (!(e <= tol.atol + tol.rtol * std::fabs(r))) {
      if (bad++ < 5) ADD_FAILURE() << what << ": element " << i << " got " << g << " want " << r;
    }
  }
  EXPECT_EQ(bad, 0) << what << " (max abs error " << worst << ")";
}
void expect_close(const Tensor& got, const std::vector<double>& ref, Tol tol, const std::string& what) {
  expect_close(got, ref, tol, what, [](int64_t) { return true; });
}

// Rotates x[0..rot) of one head (float64) by the cache row of position p. interleaved: pairs (2i, 2i+1), else halves.
void rotate_ref(double* x, int64_t rot, const std::vector<double>& cosc, const std::vector<double>& sinc, int64_t p,
                bool interleaved) {
  int64_t half = rot / 2;
  for (int64_t i = 0; i < half; i++) {
    int64_t a = interleaved ? 2 * i : i, b = interleaved ? 2 * i + 1 : i + half;
    double c = cosc[(size_t)(p * half + i)], s = sinc[(size_t)(p * half + i)];
    double x1 = x[a], x2 = x[b];
    x[a] = x1 * c - x2 * s;
    x[b] = x2 * c + x1 * s;
  }
}

// cos/sin caches [max_pos, half] of a real rotation (random frequencies), rounded to dt.
void make_caches(std::mt19937& rng, DType dt, int64_t max_pos, int64_t half, Buf& cosb, Buf& sinb) {
  std::uniform_real_distribution<double> f(0.01, 1.0);
  std::vector<double> freq((size_t)half);
  for (auto& x : freq) x = f(rng);
  cosb.v.resize((size_t)(max_pos * half));
  sinb.v.resize(cosb.v.size());
  for (int64_t p = 0; p < max_pos; p++)
    for (int64_t i = 0; i < half; i++) {
      cosb.v[(size_t)(p * half + i)] = round_to(dt, std::cos(p * freq[(size_t)i]));
      sinb.v[(size_t)(p * half + i)] = round_to(dt, std::sin(p * freq[(size_t)i]));
    }
  cosb.t = make_tensor(dt, {max_pos, half}, cosb.v);
  sinb.t = make_tensor(dt, {max_pos, half}, sinb.v);
}

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
  uint32_t seed = 1;
  std::vector<int64_t> past_len;  // per batch row; empty: random
  std::string str() const {
    std::ostringstream o;
    o << dtype_name(dt) << " " << step_name(step) << " B=" << B << " S=" << S << " N=" << N << " Nkv=" << Nkv
      << " H=" << H << (packed ? " packed" : "") << (rotary ? " rotary" : "") << (interleaved ? " interleaved" : "")
      << (rotary ? " rot=" + std::to_string(rot) : "") << " window=" << window << " softcap=" << softcap
      << " scale=" << scale << " seed=" << seed;
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
    tot[b] = past[b] + S;
  }
  int64_t total = *std::max_element(tot.begin(), tot.end());
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
        // Visible keys: causal j <= pos; with a window W, also j > pos - W (the window counts the current token).
        int64_t lo = c.window > 0 ? std::max<int64_t>(0, pos - c.window + 1) : 0;
        sc.assign((size_t)(pos + 1), 0.0);
        double mx = -INFINITY;
        for (int64_t j = lo; j <= pos; j++) {
          double d = 0;
          for (int64_t i = 0; i < H; i++) d += qh[i] * kfull[at(b, kvh, j) + i];
          d *= scale;
          if (c.softcap > 0) d = c.softcap * std::tanh(d / c.softcap);
          sc[j] = d;
          mx = std::max(mx, d);
        }
        double sum = 0;
        for (int64_t j = lo; j <= pos; j++) sum += sc[j] = std::exp(sc[j] - mx);
        double* o = &out[(size_t)(((b * S + s) * N + h) * H)];
        for (int64_t j = lo; j <= pos; j++)
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
  if (c.rotary) run.input("cos_cache", cosb.t).input("sin_cache", sinb.t);
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
  // The valid part of present (shared: the whole buffer, untouched positions unchanged).
  auto valid = [&](int64_t i) {
    int64_t t = (i / H) % present_buf, b = i / (H * present_buf * Nkv);
    return shared || t < tot[b];
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
        for (int opt = 0; opt < 6; opt++) {  // 0 plain, 1 rotary, 2 interleaved rotary, 3 window, 4 softcap+scale, 5 all
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
          if (opt == 1 || opt == 2 || opt == 5) {
            c.rotary = true;
            c.interleaved = opt == 2 || (opt == 5 && rng() % 2);
            c.rot = rng() % 2 ? c.H : c.H / 2;  // full or partial rotary
          }
          if (opt == 3 || opt == 5) c.window = 1 + (int64_t)(rng() % 4);
          if (opt == 4 || opt == 5) {
            c.softcap = rng() % 2 ? 0.5f : 2.0f;
            c.scale = 0.1f + 0.1f * (float)(rng() % 4);
          }
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

// ---------------------------------------------------------------------------------------------------------------
// RotaryEmbedding
// ---------------------------------------------------------------------------------------------------------------

TEST(RotaryEmbedding, RandomCasesAgainstFloat64) {
  std::mt19937 rng(11);
  int n = 0;
  for (DType dt : {DType::f32, DType::f16})
    for (bool four_d : {false, true})
      for (bool interleaved : {false, true})
        for (bool partial : {false, true})
          for (bool offset_form : {false, true})
            for (bool with_num_heads : {false, true}) {
              if (!four_d && partial && !with_num_heads) continue;  // 3-D partial rotary needs num_heads
              const int64_t B = 1 + rng() % 3, S = 1 + rng() % 6, N = 1 + rng() % 4, H = int64_t{8} << (rng() % 3);
              const int64_t rot = partial ? H / 2 : H, half = rot / 2;
              // 3-D without num_heads: the head size is the cache width x 2 (the full-rotary form).
              SCOPED_TRACE(::testing::Message() << dtype_name(dt) << (four_d ? " 4-D" : " 3-D") << " interleaved="
                                                << interleaved << " rot=" << rot << " H=" << H << " N=" << N
                                                << " B=" << B << " S=" << S << " offset_form=" << offset_form
                                                << " num_heads=" << with_num_heads << " case " << n++);
              Shape xs = four_d ? Shape{B, N, S, H} : Shape{B, S, N * H};
              Buf x = random_buf(rng, dt, xs);
              const int64_t max_pos = 24;
              Buf cosb, sinb;
              make_caches(rng, dt, max_pos, half, cosb, sinb);
              std::vector<int64_t> pos((size_t)(B * S));
              Tensor pos_t;
              if (offset_form) {
                int64_t off = (int64_t)(rng() % (max_pos - S + 1));
                for (int64_t i = 0; i < B * S; i++) pos[(size_t)i] = off + i % S;
                pos_t = make_tensor(DType::i64, {1}, std::vector<int64_t>{off});
              } else {
                for (auto& p : pos) p = (int64_t)(rng() % max_pos);
                pos_t = make_tensor(DType::i64, {B, S}, pos);
              }
              std::vector<double> ref = x.v;
              for (int64_t b = 0; b < B; b++)
                for (int64_t s = 0; s < S; s++)
                  for (int64_t h = 0; h < N; h++) {
                    int64_t off = four_d ? ((b * N + h) * S + s) * H : ((b * S + s) * N + h) * H;
                    rotate_ref(&ref[(size_t)off], rot, cosb.v, sinb.v, pos[(size_t)(b * S + s)], interleaved);
                  }
              NodeRun run("com.microsoft", "RotaryEmbedding");
              run.input("x", x.t).input("position_ids", pos_t).input("cos", cosb.t).input("sin", sinb.t);
              run.attr("interleaved", int64_t{interleaved ? 1 : 0}).registry(cpu::register_rotary);
              if (partial) run.attr("rotary_embedding_dim", rot);
              if (with_num_heads) run.attr("num_heads", N);
              Tensor y = run.run()[0];
              ASSERT_EQ(y.shape(), xs);
              expect_close(y, ref, tol_for(dt), "rotary output");
              if (::testing::Test::HasFailure()) return;
            }
}

// ---------------------------------------------------------------------------------------------------------------
// SimplifiedLayerNormalization / SkipSimplifiedLayerNormalization (RMSNorm)
// ---------------------------------------------------------------------------------------------------------------

TEST(SimplifiedLayerNormalization, RandomCasesAgainstFloat64) {
  std::mt19937 rng(13);
  for (DType dt : {DType::f32, DType::f16})
    for (const char* domain : {"", "com.microsoft"})
      for (int trial = 0; trial < 6; trial++) {
        const int rank = 2 + trial % 2;
        Shape xs(rank);
        for (auto& d : xs) d = 1 + rng() % 5;
        xs.back() = 1 + rng() % 80;
        const bool two_axes = trial == 5;  // normalize over the last two dimensions
        const int64_t axis = two_axes ? rank - 2 : -1;
        const int64_t Hn = two_axes ? xs[rank - 2] * xs[rank - 1] : xs.back();
        const float eps = trial % 2 ? 1e-5f : 1e-6f;
        SCOPED_TRACE(::testing::Message() << dtype_name(dt) << " domain '" << domain << "' shape " << shape_str(xs)
                                          << " axis " << axis);
        Buf x = random_buf(rng, dt, xs, -3, 3), g = random_buf(rng, dt, {Hn}, -2, 2);
        const int64_t rows = shape_numel(xs) / Hn;
        std::vector<double> y((size_t)shape_numel(xs)), inv((size_t)rows);
        for (int64_t r = 0; r < rows; r++) {
          double ss = 0;
          for (int64_t i = 0; i < Hn; i++) ss += x.v[(size_t)(r * Hn + i)] * x.v[(size_t)(r * Hn + i)];
          inv[(size_t)r] = 1.0 / std::sqrt(ss / (double)Hn + (double)eps);
          for (int64_t i = 0; i < Hn; i++) y[(size_t)(r * Hn + i)] = x.v[(size_t)(r * Hn + i)] * inv[(size_t)r] * g.v[(size_t)i];
        }
        auto res = NodeRun(domain, "SimplifiedLayerNormalization")
                       .input("x", x.t)
                       .constant("scale", g.t)
                       .attr("epsilon", eps)
                       .attr("axis", axis)
                       .outputs(2)
                       .registry(cpu::register_norm)
                       .run();
        expect_close(res[0], y, tol_for(dt), "Y");
        ASSERT_EQ(res[1].dtype(), DType::f32);
        expect_close(res[1], inv, Tol{0, 1e-5}, "inv_std_var (fp32)");
      }
}

TEST(SkipSimplifiedLayerNormalization, RandomCasesAgainstFloat64) {
  std::mt19937 rng(17);
  for (DType dt : {DType::f32, DType::f16})
    for (bool bias : {false, true})
      for (int skip_form = 0; skip_form < 3; skip_form++)  // skip [B,S,H], [1,S,H] or [S,H]
        for (bool want_stats : {false, true}) {
          const int64_t B = 1 + rng() % 3, S = 1 + rng() % 5, H = 1 + rng() % 96;
          const float eps = 1e-6f;
          SCOPED_TRACE(::testing::Message() << dtype_name(dt) << " bias=" << bias << " skip_form=" << skip_form
                                            << " B=" << B << " S=" << S << " H=" << H << " stats=" << want_stats);
          Shape ss = skip_form == 0 ? Shape{B, S, H} : skip_form == 1 ? Shape{1, S, H} : Shape{S, H};
          Buf x = random_buf(rng, dt, {B, S, H}, -3, 3), sk = random_buf(rng, dt, ss, -3, 3);
          Buf g = random_buf(rng, dt, {H}, -2, 2), bi = random_buf(rng, dt, {H}, -1, 1);
          std::vector<double> y((size_t)(B * S * H)), sum(y.size()), inv((size_t)(B * S));
          for (int64_t r = 0; r < B * S; r++) {
            int64_t sr = skip_form == 0 ? r : r % S;
            double sq = 0;
            for (int64_t i = 0; i < H; i++) {
              double t = x.v[(size_t)(r * H + i)] + sk.v[(size_t)(sr * H + i)] + (bias ? bi.v[(size_t)i] : 0.0);
              sum[(size_t)(r * H + i)] = t;
              sq += t * t;
            }
            inv[(size_t)r] = 1.0 / std::sqrt(sq / (double)H + (double)eps);
            for (int64_t i = 0; i < H; i++) y[(size_t)(r * H + i)] = sum[(size_t)(r * H + i)] * inv[(size_t)r] * g.v[(size_t)i];
          }
          NodeRun run("com.microsoft", "SkipSimplifiedLayerNormalization");
          run.input("input", x.t).input("skip", sk.t).constant("gamma", g.t);
          if (bias) run.constant("bias", bi.t);
          run.attr("epsilon", eps).outputs(4).registry(cpu::register_norm);
          if (!want_stats) run.skip_output(1).skip_output(2);  // as the reference builder wires it: Y and the sum
          auto res = run.run();
          expect_close(res[0], y, tol_for(dt), "output");
          // The residual sum is stored in the input type: one rounding of x + skip + bias.
          Tol sum_tol = dt == DType::f16 ? Tol{1e-3, 1e-3} : Tol{1e-5, 1e-6};
          expect_close(res[3], sum, sum_tol, "input_skip_bias_sum");
          if (want_stats) expect_close(res[2], inv, Tol{0, 1e-5}, "inv_std_var (fp32)");
        }
}

}  // namespace
}  // namespace ogx::test
