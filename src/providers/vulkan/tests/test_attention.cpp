// RotaryEmbedding and GroupQueryAttention (decode and prompt, KV cache write, kv-head ratios 1/2/4, packed QKV,
// rotary, local window, softcap, scale) against float64 references.
#include "providers/vulkan/kernels/attention.h"
#include "providers/vulkan/kernels/layout.h"
#include "providers/vulkan/kernels/rotary.h"
#include "providers/vulkan/tests/attention_reference.h"
#include "providers/vulkan/tests/vk_test_util.h"

namespace ogx::vk::test {
namespace {

// fp16: inputs/caches/outputs are fp16 (2^-11 relative rounding) while scores and softmax run in fp32 — 3e-3.
double tol(DType t) { return t == DType::f16 ? 3e-3 : 1e-4; }

struct RotaryCase {
  bool four_d, interleaved, offset_positions;
  int64_t rot_dim;  // 0: full head
  DType dtype;
};

class VulkanRotaryTest : public VulkanTest, public ::testing::WithParamInterface<RotaryCase> {};

TEST_P(VulkanRotaryTest, MatchesReference) {
  auto c = GetParam();
  int64_t B = 2, S = 5, H = 3, D = 16, max_pos = 64, rot = c.rot_dim ? c.rot_dim : D;
  std::vector<float> cos_c, sin_c;
  rope_caches(max_pos, rot, cos_c, sin_c);
  cos_c = round_to(cos_c, c.dtype), sin_c = round_to(sin_c, c.dtype);
  auto x = round_to(random_values(B * S * H * D, 77 + c.four_d + 2 * c.interleaved), c.dtype);
  std::vector<int64_t> pos = c.offset_positions ? std::vector<int64_t>{9}
                                                : std::vector<int64_t>{3, 4, 5, 6, 7, 0, 1, 2, 30, 63};
  Shape shape = c.four_d ? Shape{B, H, S, D} : Shape{B, S, H * D};
  TensorView xv = upload(x, c.dtype, shape), pv = upload_i64(pos, c.offset_positions ? Shape{1} : Shape{B, S});
  TensorView cv = upload(cos_c, c.dtype, {max_pos, rot / 2}), sv = upload(sin_c, c.dtype, {max_pos, rot / 2});
  TensorView out = empty(c.dtype, shape);
  CommandRecorder rec(ctx());
  rec.begin();
  kernels::RotaryParams params;
  params.interleaved = c.interleaved;
  params.rotary_dim = c.rot_dim;
  params.num_heads = H;
  kernels::rotary_embedding(rec, params, xv, pv, cv, sv, out);
  rec.end();
  rec.run();
  GqaReference r{};
  r.D = D;
  r.interleaved = c.interleaved;
  std::vector<double> want(x.size());
  for (int64_t b = 0; b < B; b++)
    for (int64_t s = 0; s < S; s++)
      for (int64_t h = 0; h < H; h++) {
        int64_t base = c.four_d ? ((b * H + h) * S + s) * D : ((b * S + s) * H + h) * D;
        int64_t p = c.offset_positions ? pos[0] + s : pos[b * S + s];
        // rotate the first rot dims (reference over a rot-sized head), copy the rest
        GqaReference rr = r;
        rr.D = rot;
        rr.cos_c = cos_c, rr.sin_c = sin_c;
        std::vector<double> tmp(rot);
        rotate_head(rr, &x[base], p, true, tmp.data());
        for (int64_t j = 0; j < D; j++) want[base + j] = j < rot ? tmp[j] : x[base + j];
      }
  expect_close(download(out), want, tol(c.dtype), 1e-6, "rotary");
}

INSTANTIATE_TEST_SUITE_P(Layouts, VulkanRotaryTest,
                         ::testing::Values(RotaryCase{false, false, false, 0, DType::f32},
                                           RotaryCase{false, true, false, 0, DType::f32},
                                           RotaryCase{true, false, true, 0, DType::f32},
                                           RotaryCase{true, true, false, 8, DType::f32},
                                           RotaryCase{false, false, true, 8, DType::f16},
                                           RotaryCase{false, true, false, 0, DType::f16}));

struct GqaCase {
  int64_t B, S, Hq, Hkv, D, max_seq;
  std::vector<int> kv_lens;  // valid keys per batch row after this call
  bool first_prompt, rotary, interleaved, packed;
  int64_t window;
  float softcap, scale;
  DType dtype;
  int64_t rot_dim = 0;  // partial rotary: R < D rotate (cos/sin caches [max_seq, R/2]); 0: the whole head
};

// Runs one case on `ctx` (its tuning row picks the kernels' shapes) against the float64 reference.
void run_gqa_case(Context& ctx, const GqaCase& c) {
  DType dt = c.dtype;
  std::vector<DeviceBuffer> keep;
  auto upload = [&](const std::vector<float>& v, DType d, Shape s) {
    Tensor h = host_tensor(v, d, s);
    keep.push_back(ctx.memory().allocate("test", h.bytes()));
    TensorView view = keep.back().view(d, s);
    ctx.transfers().upload_tensor(view, h);
    return view;
  };
  auto upload_i32 = [&](const std::vector<int>& v, Shape s) {
    keep.push_back(ctx.memory().allocate("test i32", v.size() * 4));
    TensorView view = keep.back().view(DType::i32, s);
    ctx.transfers().upload(view.mem, 0, v.data(), v.size() * 4);
    return view;
  };
  auto download = [&](const TensorView& t) {
    Tensor h = ctx.transfers().download_tensor(t);
    std::vector<float> out(h.numel());
    for (size_t i = 0; i < out.size(); i++)
      out[i] = t.dtype == DType::f32 ? h.data<float>()[i] : f16_to_f32(h.data<uint16_t>()[i]);
    return out;
  };
  auto rnd = [&](float x) { return round_to({x}, dt)[0]; };
  GqaReference r{c.B, c.S, c.Hq, c.Hkv, c.D, c.max_seq, c.scale != 0 ? c.scale : 1.0f / std::sqrt((float)c.D),
                 c.softcap, c.window, c.rotary, c.interleaved, {}, {}};
  const int64_t R = c.rot_dim ? c.rot_dim : c.D;
  r.rot_dim = R;
  rope_caches(c.max_seq, R, r.cos_c, r.sin_c);
  r.cos_c = round_to(r.cos_c, dt), r.sin_c = round_to(r.sin_c, dt);
  uint32_t seed = (uint32_t)(c.S * 31 + c.Hq * 7 + c.Hkv + c.D + c.window + (int)c.softcap);
  auto q = round_to(random_values(c.B * c.S * c.Hq * c.D, seed), dt);
  auto k = round_to(random_values(c.B * c.S * c.Hkv * c.D, seed + 1), dt);
  auto v = round_to(random_values(c.B * c.S * c.Hkv * c.D, seed + 2), dt);
  auto kc = round_to(random_values(c.B * c.Hkv * c.max_seq * c.D, seed + 3), dt);  // past contents
  auto vc = round_to(random_values(c.B * c.Hkv * c.max_seq * c.D, seed + 4), dt);
  std::vector<int> seqlens;
  int total = c.first_prompt ? (int)c.S : 0;
  for (int len : c.kv_lens) seqlens.push_back(len - 1), total = c.first_prompt ? total : std::max(total, len);

  Shape cache{c.B, c.Hkv, c.max_seq, c.D};
  TensorView kcv = upload(kc, dt, cache), vcv = upload(vc, dt, cache);
  TensorView qv, kv, vv;
  if (c.packed) {
    std::vector<float> qkv;
    int64_t qr = c.Hq * c.D, kr = c.Hkv * c.D;
    for (int64_t t = 0; t < c.B * c.S; t++) {
      qkv.insert(qkv.end(), q.begin() + t * qr, q.begin() + (t + 1) * qr);
      qkv.insert(qkv.end(), k.begin() + t * kr, k.begin() + (t + 1) * kr);
      qkv.insert(qkv.end(), v.begin() + t * kr, v.begin() + (t + 1) * kr);
    }
    qv = upload(qkv, dt, {c.B, c.S, qr + 2 * kr});
  } else {
    qv = upload(q, dt, {c.B, c.S, c.Hq * c.D});
    kv = upload(k, dt, {c.B, c.S, c.Hkv * c.D});
    vv = upload(v, dt, {c.B, c.S, c.Hkv * c.D});
  }
  TensorView cosv = upload(r.cos_c, dt, {c.max_seq, R / 2}), sinv = upload(r.sin_c, dt, {c.max_seq, R / 2});
  kernels::GqaTensors t;
  t.query = qv;
  if (!c.packed) t.key = &kv, t.value = &vv;
  t.k_cache = kcv, t.v_cache = vcv;
  DeviceBuffer kv_table;
  t.pages = kernels::contiguous_kv_pages(ctx, kcv, vcv, kv_table);
  t.seqlens_k = upload_i32(seqlens, {c.B});
  t.total_sequence_length = upload_i32({total}, {1});
  t.cos_cache = &cosv, t.sin_cache = &sinv;
  t.output = upload(std::vector<float>(c.B * c.S * c.Hq * c.D, 0.0f), dt, {c.B, c.S, c.Hq * c.D});
  kernels::GqaParams p;
  p.num_heads = c.Hq, p.kv_num_heads = c.Hkv, p.scale = c.scale, p.softcap = c.softcap;
  p.local_window_size = c.window, p.do_rotary = c.rotary, p.rotary_interleaved = c.interleaved;
  auto ws = kernels::make_gqa_workspace(ctx, c.B, c.S, c.Hq, c.D, c.max_seq);
  CommandRecorder rec(ctx);
  rec.begin();
  kernels::group_query_attention(rec, p, t, ws);
  rec.end();
  rec.run();
  auto want = gqa_reference(r, q, k, v, kc, vc, seqlens, total, rnd);
  // The matrix-unit prompt kernel (gqa_prefill_coop.comp) rounds the rotated Q and the softmax probabilities to
  // fp16 as an fp16 model's own attention does: |scores| <= ~8 here, so up to ~4e-3 absolute per score (2^-11
  // relative) and 2^-11 relative per probability; outputs average random values in [-1, 1] and may be near 0, so
  // the bound is absolute: 3e-3.
  bool coop = dt == DType::f16 && c.S > 1 && ctx.coopmat_f16() && c.D % 16 == 0 && c.D <= 128;
  expect_close(download(t.output), want, tol(dt), coop ? 3e-3 : 1e-5, "gqa output");
  std::vector<double> kc_want(kc.begin(), kc.end()), vc_want(vc.begin(), vc.end());
  expect_close(download(kcv), kc_want, tol(dt), 1e-6, "k cache");
  expect_close(download(vcv), vc_want, 0, 0, "v cache");
}

class VulkanGqaTest : public VulkanTest, public ::testing::WithParamInterface<GqaCase> {};

TEST_P(VulkanGqaTest, MatchesReference) { run_gqa_case(ctx(), GetParam()); }

// B, S, Hq, Hkv, D, max_seq, kv_lens, first_prompt, rotary, interleaved, packed, window, softcap, scale, dtype
INSTANTIATE_TEST_SUITE_P(
    Cases, VulkanGqaTest,
    ::testing::Values(
        GqaCase{1, 1, 4, 4, 32, 64, {17}, false, false, false, false, -1, 0, 0, DType::f32},          // ratio 1
        GqaCase{2, 1, 8, 4, 64, 300, {1, 290}, false, true, false, false, -1, 0, 0, DType::f32},     // ratio 2, splits
        GqaCase{2, 1, 8, 2, 16, 48, {30, 9}, false, true, true, true, -1, 0, 0, DType::f32},         // ratio 4, packed
        GqaCase{1, 1, 4, 2, 32, 80, {70}, false, false, false, false, 15, 30.0f, 0.1f, DType::f32},  // window, softcap
        GqaCase{1, 1, 8, 2, 64, 128, {100}, false, true, false, false, -1, 0, 0, DType::f16},
        GqaCase{2, 20, 4, 2, 32, 64, {20, 13}, true, true, false, false, -1, 0, 0, DType::f32},      // prompt, padded
        GqaCase{1, 37, 8, 2, 64, 96, {37}, true, true, true, true, -1, 0, 0, DType::f16},
        GqaCase{1, 33, 4, 1, 32, 64, {33}, true, false, false, false, 8, 20.0f, 0, DType::f32},      // window prompt
        GqaCase{1, 4, 4, 4, 160, 64, {30}, false, true, false, false, -1, 0, 0, DType::f32},         // chunk, D > 128
        GqaCase{1, 5, 4, 2, 32, 64, {12}, false, false, false, false, -1, 0, 0, DType::f32},         // continued prompt
        GqaCase{1, 130, 4, 2, 64, 160, {130}, true, true, false, true, -1, 0, 0, DType::f16},       // 3 query tiles
        GqaCase{2, 70, 4, 1, 128, 96, {70, 41}, true, true, false, false, -1, 0, 0, DType::f16},    // D 128, padded
        GqaCase{1, 90, 2, 2, 32, 128, {90}, true, false, false, false, 40, 30.0f, 0, DType::f16},   // window, softcap
        GqaCase{1, 48, 4, 2, 64, 200, {150}, false, true, false, true, -1, 0, 0, DType::f16},       // past 102 keys
        // a few rows over a cache (a speculative verify pass): the split kernel, causal within the rows
        GqaCase{1, 5, 32, 8, 128, 400, {305}, false, true, false, true, -1, 0, 0, DType::f16},
        GqaCase{1, 8, 8, 2, 64, 300, {260}, false, true, false, true, 50, 0, 0, DType::f32},       // window
        GqaCase{2, 3, 8, 2, 64, 300, {200, 40}, false, true, false, false, -1, 0, 0, DType::f16},
        // one token with packed QKV: gqa_decode_group.comp (one dispatch) — group sizes 1/3/4/8, splits, passes
        GqaCase{1, 1, 32, 8, 64, 300, {290}, false, true, false, true, -1, 0, 0, DType::f16},
        GqaCase{2, 1, 8, 8, 128, 64, {5, 60}, false, true, false, true, -1, 0, 0, DType::f32},
        GqaCase{1, 1, 16, 2, 32, 520, {515}, false, true, true, true, 100, 30.0f, 0, DType::f32},
        GqaCase{1, 1, 4, 1, 256, 40, {1}, false, false, false, true, -1, 0, 0.2f, DType::f16},
        GqaCase{1, 1, 12, 4, 64, 1100, {1050}, false, true, false, true, -1, 0, 0, DType::f16},
        GqaCase{2, 1, 6, 2, 64, 200, {40, 170}, false, true, false, true, 33, 0, 0, DType::f32},
        // batched decode: B rows of different lengths (a right-padded batch's rows), one kernel launch for all —
        // the one-dispatch kernel (packed) and the split kernel + combine (separate Q, K, V), splits per row
        GqaCase{5, 1, 8, 2, 64, 300, {1, 290, 37, 128, 64}, false, true, false, true, -1, 0, 0, DType::f16},
        GqaCase{4, 1, 8, 2, 32, 600, {600, 3, 257, 513}, false, true, false, true, -1, 0, 0, DType::f32},
        GqaCase{16, 1, 8, 4, 64, 96, {1, 96, 2, 50, 17, 33, 64, 65, 90, 5, 8, 77, 31, 40, 12, 70}, false, true, false,
                false, -1, 0, 0, DType::f32},
        GqaCase{7, 1, 4, 2, 32, 300, {280, 1, 9, 140, 299, 33, 70}, false, false, false, false, -1, 0, 0, DType::f16},
        // partial rotary (Phi-4-mini: R = 0.75 D): the first R dims rotate, the rest pass through — one-dispatch
        // decode, split decode, prompt (plain and matrix-unit), interleaved pairs
        GqaCase{1, 1, 24, 8, 128, 200, {150}, false, true, false, true, -1, 0, 0, DType::f16, 96},
        GqaCase{2, 1, 8, 2, 64, 300, {40, 290}, false, true, false, false, -1, 0, 0, DType::f32, 48},
        GqaCase{1, 37, 8, 2, 64, 96, {37}, true, true, false, true, -1, 0, 0, DType::f16, 16},
        GqaCase{2, 20, 4, 2, 32, 64, {20, 13}, true, true, true, false, -1, 0, 0, DType::f32, 24}));

// Long caches: one token's attention split over a head's keys by up to decode_group_max_splits workgroups (partial
// softmax per split, merged by the last to finish), or by the split kernel + combine where the one-dispatch kernel
// does not fit (separate Q/K/V; group 8 x D 64 with 64 threads). Odd lengths, lengths one past and at block edges,
// group sizes 1/4/8, fp32 and fp16, under the device's own tuning row and the nvidia row forced on it: on lavapipe
// its cpu-driver row reads 8 keys per pass, so these lengths take 64..128 splits; the nvidia row 32 keys per pass
// (32 splits of up to 8 passes) and 256 threads (group 8 with D 128 in one dispatch). (The other rows run short
// caches in test_tuning_rows.cpp.) Tolerances as the short cases' (tol): fp32 1e-4 relative — fp32 sums over up to
// 8k keys in another order than the float64 reference; fp16 3e-3 relative — the new key and the output are rounded
// to fp16 (2^-11 each), the softmax runs in fp32; absolute 1e-5 for outputs near zero (the weighted average of
// thousands of random values in [-1, 1]).
const GqaCase kLongDecodeCases[] = {
    {1, 1, 8, 8, 64, 4112, {4097}, false, true, false, true, -1, 0, 0, DType::f32},            // group 1
    {1, 1, 16, 4, 64, 8208, {8192}, false, true, false, true, -1, 0, 0.3f, DType::f16},       // group 4, block edge
    {2, 1, 16, 2, 64, 6000, {5999, 2049}, false, true, false, true, -1, 0, 0, DType::f16},    // group 8, two rows
    {1, 1, 8, 1, 128, 3001, {3001}, false, true, true, true, -1, 0, 0, DType::f32},           // group 8, D 128
    {1, 1, 16, 4, 64, 8208, {8111}, false, true, false, false, -1, 0, 0, DType::f16},        // split + combine
    {1, 1, 32, 8, 64, 5000, {4999}, false, true, false, true, 1500, 0, 0, DType::f16},       // window of 1500
};

class VulkanGqaLongTest : public VulkanTest {
 protected:
  // Options of a second context on this test's device, with validation, under the tuning row `row`.
  ContextOptions options_with(const Tuning& row) {
    ContextOptions o = options_like(ctx());
    o.tuning = row;
    o.staging_bytes = 8 << 20;
    o.readback_bytes = 4 << 20;
    o.block_bytes = 32 << 20;
    return o;
  }
};

TEST_F(VulkanGqaLongTest, LongCachesMatchReference) {
  for (const Tuning& row : tuning_rows(ctx().info())) {
    if (row.row != ctx().tuning().row && row.row != "nvidia") continue;
    Context other(options_with(row));
    for (const GqaCase& c : kLongDecodeCases) {
      SCOPED_TRACE("tuning row " + row.row + ", Hq " + std::to_string(c.Hq) + " Hkv " + std::to_string(c.Hkv) +
                   " D " + std::to_string(c.D) + " keys " + std::to_string(c.kv_lens[0]));
      run_gqa_case(other, c);
    }
  }
}

// Batched decode with the split cap (tuning decode_group_fill): fill 1 puts each (row, KV head)'s keys in one
// workgroup (several passes, no merge); fill 8 does so for the first two cases (8 and 10 rows x KV heads) and
// leaves the others split. The one-dispatch kernel's cases of different row lengths, against the float64 reference,
// with its key loop in passes and (where the device and shape allow) in independent subgroups.
TEST_F(VulkanGqaLongTest, BatchedDecodeWithCappedSplitsMatchesReference) {
  const GqaCase cases[] = {
      {5, 1, 8, 2, 64, 300, {1, 290, 37, 128, 64}, false, true, false, true, -1, 0, 0, DType::f16},
      {4, 1, 8, 2, 32, 600, {600, 3, 257, 513}, false, true, false, true, -1, 0, 0, DType::f32},
      {2, 1, 16, 2, 32, 520, {515, 100}, false, true, true, true, 100, 30.0f, 0, DType::f32},
      {1, 1, 12, 4, 64, 1100, {1050}, false, true, false, true, -1, 0, 0, DType::f16},
  };
  for (uint32_t loop : {0u, 1u})
    for (uint32_t fill : {1u, 8u}) {
      Tuning row = ctx().tuning();
      row.decode_group_fill = fill;
      row.decode_group_subgroup_loop = loop;
      Context other(options_with(row));
      for (const GqaCase& c : cases) {
        SCOPED_TRACE("decode_group_subgroup_loop " + std::to_string(loop) + ", decode_group_fill " +
                     std::to_string(fill) + ", B " + std::to_string(c.B) + " Hkv " + std::to_string(c.Hkv) + " D " +
                     std::to_string(c.D));
        run_gqa_case(other, c);
      }
    }
}

// Key chunks (gqa_prepare.comp, gqa_decode_chunk.comp, gqa_merge_chunks.comp; tuning decode_chunk_min_keys 1 forces
// them at any length): one token over long caches (group sizes 1/4/7/8, and 9/12/16 in parts of 3/6/8 heads per
// workgroup; D 16/32/64/128, a window, softcap, separate Q/K/V), batched rows of different lengths (a row of 1 key), a few rows per sequence (a first prompt among them),
// in two configurations: up to 256 chunks of at least 16 keys a row, and one chunk a row (several sub-chunks of
// 4,096 / G keys each, rescaled as the max rises), 4 key rows per load round; cases the device's subgroups do not
// fit (lavapipe's 4 / 8 / 16 lanes: D <= 32 / 64 / 128) are left to the other tests. (Few distinct shapes, one unroll:
// each is a pipeline lavapipe compiles cold in CI, seconds apiece at its widest subgroups. The nvidia row's 8 rows
// per round run in LongCachesMatchReference, whose long cases take the chunks under that row.) (Lavapipe's subgroups of 8 lanes
// take D <= 64 in chunks; D 128 falls back to the other kernels there, and takes chunks on 32-lane GPUs.)
// Tolerances as LongCachesMatchReference's.
TEST_F(VulkanGqaLongTest, KeyChunksMatchReference) {
  const GqaCase cases[] = {
      {1, 1, 8, 8, 64, 4112, {4097}, false, true, false, true, -1, 0, 0, DType::f32},
      {1, 1, 16, 4, 64, 8208, {8192}, false, true, false, true, -1, 0, 0.3f, DType::f16},
      {2, 1, 16, 2, 64, 6000, {5999, 2049}, false, true, false, true, -1, 0, 0, DType::f16},
      {1, 1, 8, 1, 128, 3001, {3001}, false, true, true, true, -1, 0, 0, DType::f32},
      {1, 1, 32, 8, 64, 5000, {4999}, false, true, false, true, 1500, 0, 0, DType::f16},
      {1, 1, 16, 4, 64, 2100, {2011}, false, true, false, false, -1, 30.0f, 0, DType::f16},
      {1, 1, 14, 2, 32, 1000, {999}, false, true, false, true, -1, 0, 0, DType::f16},
      {1, 1, 16, 1, 32, 3000, {2999}, false, true, false, true, -1, 0, 0, DType::f16},  // group 16: 2 parts of 8
      {2, 1, 24, 2, 32, 1500, {1400, 700}, false, true, false, true, -1, 0, 0, DType::f16},  // 12: parts of 6
      {1, 1, 9, 1, 16, 900, {850}, false, true, false, true, 300, 0, 0, DType::f16},  // MQA 9: parts of 3
      {5, 1, 8, 2, 64, 300, {1, 290, 37, 128, 64}, false, true, false, true, -1, 0, 0, DType::f16},
      {4, 1, 8, 2, 64, 600, {600, 3, 257, 513}, false, true, false, true, -1, 0, 0, DType::f32},
      {1, 5, 32, 8, 128, 700, {650}, false, true, false, true, -1, 0, 0, DType::f16},
      {2, 3, 8, 2, 64, 300, {200, 40}, false, true, false, true, -1, 0, 0, DType::f32},
      {1, 16, 8, 2, 64, 300, {275}, false, true, true, true, 50, 0, 0, DType::f16},
      {1, 2, 16, 4, 64, 260, {130}, false, true, false, false, -1, 30.0f, 0, DType::f16},
      {1, 7, 8, 2, 64, 64, {7}, true, true, false, true, -1, 0, 0, DType::f16},
  };
  struct Config {
    uint32_t min_chunk, groups, unroll;
  };
  int ran = 0;
  for (const Config& k : {Config{16, 4096, 4}, Config{128, 2, 4}}) {  // many short chunks; one chunk a row
    Tuning row = ctx().tuning();
    row.decode_chunk_min_keys = 1;  // every case
    row.decode_chunk_min = k.min_chunk;
    row.decode_chunk_groups = k.groups;
    row.decode_chunk_unroll = k.unroll;
    Context other(options_with(row));
    for (const GqaCase& c : cases) {
      auto ws = kernels::make_gqa_workspace(other, c.B, c.S, c.Hq, c.D, c.max_seq);
      if (!kernels::takes_key_chunks(other, ws, c.B, c.S, c.Hq, c.Hkv, c.D, c.max_seq)) continue;  // this device's
      ran++;                                                                                       // subgroups
      SCOPED_TRACE("decode_chunk_min " + std::to_string(k.min_chunk) + ", decode_chunk_groups " +
                   std::to_string(k.groups) + ", B " + std::to_string(c.B) + " S " + std::to_string(c.S) + " Hq " +
                   std::to_string(c.Hq) + " Hkv " + std::to_string(c.Hkv) + " D " + std::to_string(c.D) +
                   " keys " + std::to_string(c.kv_lens[0]));
      run_gqa_case(other, c);
    }
  }
  if (ran == 0) GTEST_SKIP() << "no case fits the key-chunk kernel on this device (subgroup shuffles, D / 8 lanes)";
  std::printf("[key chunks] %d of %zu cases x 2 configurations took the chunks here\n", ran / 2,
              sizeof(cases) / sizeof(cases[0]));
}

// A few query rows over a cache (speculative verify passes, short chunks) through both kernels (tuning
// few_rows_group: 1 the one-token kernel's multi-row form, 0 the split kernel + combine), with the key loop in passes
// and in subgroups, split and unsplit (decode_group_fill), under this device's row and the nvidia row: 2..16 rows
// (more rows than the group's query heads: one split counter per row and KV head), two sequences of different
// lengths, a window, separate Q/K/V, D 128, a first prompt.
TEST_F(VulkanGqaLongTest, FewRowsThroughBothKernelsMatchReference) {
  const GqaCase cases[] = {
      {1, 5, 32, 8, 128, 700, {650}, false, true, false, true, -1, 0, 0, DType::f16},
      {2, 3, 8, 2, 64, 300, {200, 40}, false, true, false, true, -1, 0, 0, DType::f32},
      {1, 16, 8, 2, 64, 300, {275}, false, true, true, true, 50, 0, 0, DType::f16},
      {1, 2, 16, 4, 64, 260, {130}, false, true, false, false, -1, 30.0f, 0, DType::f16},
      {1, 7, 8, 2, 64, 64, {7}, true, true, false, true, -1, 0, 0, DType::f16},  // a first prompt (no past keys)
  };
  for (const Tuning& base : tuning_rows(ctx().info())) {
    if (base.row != ctx().tuning().row && base.row != "nvidia") continue;
    for (uint32_t group : {0u, 1u})
      for (uint32_t loop : {0u, 1u})
        for (uint32_t fill : {1u, 128u}) {
          if (!group && (loop || fill != 128)) continue;  // the split kernel reads neither
          Tuning row = base;
          row.few_rows_group = group;
          row.decode_group_subgroup_loop = loop;
          row.decode_group_fill = fill;
          Context other(options_with(row));
          for (const GqaCase& c : cases) {
            SCOPED_TRACE("row " + base.row + ", few_rows_group " + std::to_string(group) + ", subgroup loop " +
                         std::to_string(loop) + ", fill " + std::to_string(fill) + ", S " + std::to_string(c.S) +
                         " Hq " + std::to_string(c.Hq) + " Hkv " + std::to_string(c.Hkv));
            run_gqa_case(other, c);
          }
        }
  }
}

// kernels::last_rows: each row's last real position by GroupQueryAttention's lengths, on random shapes, rows of
// random real lengths (a right-padded prompt; the longest row fills the step) after a random past.
class VulkanLastRowsTest : public VulkanTest {};

TEST_F(VulkanLastRowsTest, EachRowsLastRealPositionMatchesTheReference) {
  std::mt19937 rng(41);
  for (DType dt : {DType::f32, DType::f16})
    for (int trial = 0; trial < 6; trial++) {
      const int64_t B = 1 + rng() % 5, S = 1 + rng() % 9, D = 1 + rng() % 300, past = rng() % 3 == 0 ? 0 : rng() % 40;
      std::vector<int32_t> seqlens(B);
      std::vector<int64_t> last(B);
      for (int64_t b = 0; b < B; b++) {
        const int64_t valid = b == 0 ? S : 1 + rng() % S;  // row 0 the longest
        last[b] = valid - 1;
        seqlens[b] = (int32_t)(past + valid - 1);
      }
      const std::vector<float> xv = round_to(random_values((size_t)(B * S * D), 7 + trial), dt);
      TensorView x = upload(xv, dt, {B, S, D});
      TensorView sl = upload_i32(seqlens, {B});
      TensorView total = upload_i32({(int32_t)(past + S)}, {1});
      TensorView y = empty(dt, {B, 1, D});
      CommandRecorder rec(ctx());
      rec.begin();
      kernels::last_rows(rec, x, sl, total, y);
      rec.end();
      rec.run();
      std::vector<double> want;
      for (int64_t b = 0; b < B; b++)
        for (int64_t d = 0; d < D; d++) want.push_back(xv[(size_t)((b * S + last[b]) * D + d)]);
      expect_close(download(y), want, 0, 0, "last rows");  // a copy: exact
    }
}

}  // namespace
}  // namespace ogx::vk::test
