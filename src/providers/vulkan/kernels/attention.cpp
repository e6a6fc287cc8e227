#include "providers/vulkan/kernels/attention.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "providers/vulkan/kernels/kernel_util.h"
#include "providers/vulkan/transfer.h"

namespace ogx::vk::kernels {

namespace {

constexpr int64_t kPrefillMaxHead = 128;     // gqa_prefill.comp MAXD
constexpr uint32_t kPrefillShared = 27 * 1024;  // bytes of shared memory gqa_prefill.comp declares (about)
constexpr uint32_t kPrefillCoopRows = 64;       // query rows per workgroup of gqa_prefill_coop.comp (BQ)
constexpr int64_t kFewQueryRows = 16;           // at most this many query rows take the split kernel (gqa_decode.comp,
                                                // tuning few_rows_attention)

struct Dims {
  int64_t B, S, Hq, Hkv, D, max_seq;
};

// Shared memory of gqa_prefill_coop.comp for head size D and key tiles of bkv keys: Q/K tile, V tile, per-subgroup
// scores, probabilities and row factors.
uint32_t prefill_coop_shared(int64_t D, uint32_t bkv) {
  uint32_t row = (uint32_t)(D / 8 + 1) * 16;
  return 64 * row + bkv * row + 4 * 16 * (bkv + 4) * 4 + 4 * 16 * (bkv / 8 + 1) * 16 + 4 * 256 * 4;
}

// The matrix-unit prompt attention applies: fp16 cache and activations, D % 16 == 0 and <= 128.
bool prefill_coop_applies(Context& ctx, const Dims& d, const GqaTensors& t) {
  return ctx.coopmat_f16() && t.k_cache.dtype == DType::f16 && t.output.dtype == DType::f16 && d.D % 16 == 0 &&
         d.D <= 128 && ctx.info().max_shared_memory >= prefill_coop_shared(d.D, 32) &&
         t.pages.table.size > 0;
}

// Its key tile: 64 keys where the shared memory holds them (the H200's 48 KiB: D <= 64), else 32. H200, one 1B layer
// (Hq 32, Hkv 8, D 64), `ogx_vulkan_bench --attention-only`: prompt 2k / 8k / 32k 752 / 9,544 / 141,863 us with 32
// keys, 709 / 8,888 / 132,128 with 64 (both with the next tile's loads in flight).
const char* prefill_coop_pipeline(Context& ctx, int64_t D) {
  return ctx.info().max_shared_memory >= prefill_coop_shared(D, 64) ? "gqa_prefill_coop_bkv64_f16"
                                                                     : "gqa_prefill_coop_f16";
}

Dims check(const GqaParams& pr, const GqaTensors& t) {
  Dims d;
  OGX_CHECK(pr.num_heads > 0 && pr.kv_num_heads > 0 && pr.num_heads % pr.kv_num_heads == 0,
            "GroupQueryAttention: num_heads ", pr.num_heads, " must be a multiple of kv_num_heads ", pr.kv_num_heads);
  OGX_CHECK(t.k_cache.shape.size() == 4, "GroupQueryAttention: KV cache must be [B, Hkv, max_seq, D], got ",
            shape_str(t.k_cache.shape));
  d.B = t.k_cache.shape[0], d.Hkv = t.k_cache.shape[1], d.max_seq = t.k_cache.shape[2], d.D = t.k_cache.shape[3];
  d.Hq = pr.num_heads;
  d.S = t.query.shape.size() == 3 ? t.query.shape[1] : 0;
  OGX_CHECK(d.Hkv == pr.kv_num_heads && t.v_cache.shape == t.k_cache.shape, "GroupQueryAttention: caches ",
            shape_str(t.k_cache.shape), "/", shape_str(t.v_cache.shape), " do not match kv_num_heads ", pr.kv_num_heads);
  int64_t q_row = t.key ? d.Hq * d.D : (d.Hq + 2 * d.Hkv) * d.D;
  OGX_CHECK(t.query.shape.size() == 3 && t.query.shape[0] == d.B && t.query.shape[2] == q_row,
            "GroupQueryAttention: query ", shape_str(t.query.shape), " must be [", d.B, ", S, ", q_row, "]");
  if (t.key) OGX_CHECK(t.value && t.key->numel() == d.B * d.S * d.Hkv * d.D && t.value->numel() == t.key->numel(),
                       "GroupQueryAttention: key/value must be [B, S, ", d.Hkv * d.D, "]");
  OGX_CHECK(t.output.numel() == d.B * d.S * d.Hq * d.D, "GroupQueryAttention: output ", shape_str(t.output.shape),
            " must hold [B, S, ", d.Hq * d.D, "]");
  OGX_CHECK(t.seqlens_k.dtype == DType::i32 && t.seqlens_k.numel() == d.B && t.total_sequence_length.dtype == DType::i32,
            "GroupQueryAttention: seqlens_k must be int32 [B] and total_sequence_length int32 [1]");
  OGX_CHECK(d.D <= 256 && d.D % 2 == 0, "GroupQueryAttention: head size ", d.D, " must be even and <= 256");
  d.max_seq = (d.max_seq + kKvBlock - 1) / kKvBlock * kKvBlock;  // the kernels' table stride: whole blocks
  OGX_CHECK(t.pages.table.size >= (VkDeviceSize)(d.B * d.Hkv * (d.max_seq / kKvBlock) * 8),
            "GroupQueryAttention: the block table must hold [B, Hkv, ", d.max_seq / kKvBlock, "] block addresses");
  if (pr.do_rotary)  // [max_pos, R / 2] with R <= D (partial rotary: R < D)
    OGX_CHECK(t.cos_cache && t.sin_cache && t.cos_cache->shape.size() == 2 && t.cos_cache->shape == t.sin_cache->shape &&
                  t.cos_cache->shape.back() >= 1 && t.cos_cache->shape.back() * 2 <= d.D,
              "GroupQueryAttention: do_rotary needs cos/sin caches [max_pos, R / 2] with R <= head size ", d.D);
  return d;
}

}  // namespace

namespace {

constexpr uint32_t kGroupShared = 25 * 1024;  // bytes of shared memory gqa_decode_group.comp declares (about)
constexpr int64_t kChunkShared = 4096;        // floats of gqa_decode_chunk.comp's shared buffer (scores, outputs)
constexpr uint32_t kChunkSharedBytes = 4096 * 4 + 258 * 8 + 2 * 256 * 4;  // all it declares
constexpr int64_t kMaxChunks = 256;           // gqa_merge_chunks.comp MAX_CHUNKS
constexpr int64_t kMergeThreads = 256;        // gqa_merge_chunks.comp T
constexpr int64_t kGroupScratch = 4096;       // its shared merge buffer (floats): subgroups x G x D must fit

// Keys per pass of gqa_decode_group.comp: each of its T threads holds 8 elements of one key row.
int64_t group_keys_per_pass(const Context& ctx, int64_t D) {
  return D >= 8 ? (int64_t)ctx.tuning().decode_group_threads * 8 / D : 1;
}

// Workgroups per KV head of gqa_decode_group.comp for a cache of max_seq positions: one pass of keys each up to
// 32 workgroups; past 32 x 8 passes, about 8 passes each up to the tuning row's decode_group_max_splits (more splits
// read a long cache with more workgroups at the price of a longer merge by the last split: on the H200 32 splits
// beat 128 over 8k and 32k keys, tuning.cpp).
int64_t decode_group_splits(const Context& ctx, int64_t max_seq, int64_t D) {
  constexpr int64_t kMinSplits = 32, kPassesPerSplit = 8;
  const int64_t kp = std::max<int64_t>(group_keys_per_pass(ctx, D), 1);
  const int64_t passes = (max_seq + kp - 1) / kp;  // of one workgroup serving every key
  const Tuning& tu = ctx.tuning();
  const uint32_t row_most = D >= 128 && tu.decode_group_max_splits_d128 ? tu.decode_group_max_splits_d128
                                                                        : tu.decode_group_max_splits;
  const int64_t most = std::max<int64_t>(row_most, 1);
  const int64_t cap = std::clamp<int64_t>(passes / kPassesPerSplit, std::min(kMinSplits, most), most);
  return std::clamp<int64_t>(passes, 1, cap);
}

// The key-chunk kernels (gqa_decode_chunk.comp + gqa_merge_chunks.comp) for `rows` query rows over a block table of
// max_seq positions: the tuning row's choice (decode_chunk_min_keys).
bool chunks_enabled(const Context& ctx, int64_t rows, int64_t max_seq) {
  const uint32_t from = ctx.tuning().decode_chunk_min_keys;
  return from > 0 && rows * max_seq >= (int64_t)from;
}

// Most chunks per query row: about decode_chunk_groups workgroups over `pairs` (query row, KV head) pairs, at least
// decode_chunk_min keys each at the table's width, at most kMaxChunks (gqa_merge_chunks.comp's weights). (The
// workspace sizes for rows x 1 KV head: an upper bound.)
int64_t chunk_capacity(const Context& ctx, int64_t pairs, int64_t max_seq) {
  const Tuning& tu = ctx.tuning();
  const int64_t min_keys = std::max<int64_t>(tu.decode_chunk_min, 16);
  const int64_t by_keys = (max_seq + min_keys - 1) / min_keys;
  const int64_t by_groups = (int64_t)tu.decode_chunk_groups / std::max<int64_t>(pairs, 1);
  return std::clamp<int64_t>(std::min(by_keys, by_groups), 1, kMaxChunks);
}

}  // namespace

namespace {
struct GqaWorkspaceSizes {
  int64_t nsplit, group_nsplit;
  VkDeviceSize q_rotated, partials, counters;  // bytes
};

GqaWorkspaceSizes gqa_workspace_sizes(Context& ctx, int64_t B, int64_t S_max, int64_t Hq, int64_t D,
                                      int64_t max_seq) {
  GqaWorkspaceSizes z;
  z.nsplit = std::clamp<int64_t>((max_seq + ctx.tuning().attention_split - 1) / ctx.tuning().attention_split, 1, 16);
  z.group_nsplit = decode_group_splits(ctx, max_seq, D);
  // Partial results: one token's splits, a few rows' splits (up to kFewQueryRows rows), or (the split kernel over a
  // prompt, where the tiled prompt kernels do not apply: D > 128) one per query row. Never prompt x splits: a prompt
  // of 32k rows would need gigabytes.
  const int64_t splits = std::max(z.nsplit, z.group_nsplit);
  int64_t partial_rows = std::max(splits, S_max <= kFewQueryRows ? S_max * z.nsplit : S_max);
  // The key-chunk kernels' states (chunks per query row, up to kFewQueryRows rows a sequence).
  const int64_t S = S_max <= kFewQueryRows ? std::max<int64_t>(S_max, 1) : 1;
  if (chunks_enabled(ctx, B * S, max_seq)) partial_rows = std::max(partial_rows, S * chunk_capacity(ctx, B * S, max_seq));
  z.q_rotated = (VkDeviceSize)(B * Hq * S_max * D * 4);
  z.partials = (VkDeviceSize)(B * partial_rows * Hq * (D + 2) * 4);
  // The group kernel's split counters: one per (row, KV head), up to kFewQueryRows rows a sequence (<= Hq per row).
  z.counters = (VkDeviceSize)(B * Hq * std::min<int64_t>(std::max<int64_t>(S_max, 1), kFewQueryRows) * 4);
  return z;
}

DeviceBuffer zeroed_counters(Context& ctx, VkDeviceSize bytes) {
  DeviceBuffer b = ctx.memory().allocate("gqa.counters", bytes);
  std::vector<uint32_t> zeros((size_t)(bytes / 4), 0u);
  ctx.transfers().upload(b.slice(), 0, zeros.data(), bytes);
  return b;
}
}  // namespace

GqaWorkspace make_gqa_workspace(Context& ctx, int64_t B, int64_t S_max, int64_t Hq, int64_t D, int64_t max_seq) {
  GqaWorkspace none;
  return regrow_gqa_workspace(ctx, none, B, S_max, Hq, D, max_seq);
}

GqaWorkspace regrow_gqa_workspace(Context& ctx, GqaWorkspace& old, int64_t B, int64_t S_max, int64_t Hq, int64_t D,
                                  int64_t max_seq) {
  const GqaWorkspaceSizes z = gqa_workspace_sizes(ctx, B, S_max, Hq, D, max_seq);
  GqaWorkspace ws;
  ws.nsplit = z.nsplit;
  ws.group_nsplit = z.group_nsplit;
  ws.q_rotated = old.q_rotated.size() >= z.q_rotated ? std::move(old.q_rotated)
                                                     : ctx.memory().allocate("gqa.q_rotated", z.q_rotated);
  ws.partials = old.partials.size() >= z.partials ? std::move(old.partials)
                                                  : ctx.memory().allocate("gqa.partials", z.partials);
  // (counters are zero between steps: a reused buffer is)
  ws.counters = old.counters.size() >= z.counters ? std::move(old.counters) : zeroed_counters(ctx, z.counters);
  return ws;
}

namespace {

// The rotary flags the attention shaders read (gqa_rotary.glsl): 1 rotary, 2 interleaved, 4 position_ids given,
// bits 8 and up: R / 2 of a partial rotary (R < head size), else 0.
uint32_t rotary_flags(const GqaParams& pr, const GqaTensors& t, int64_t D, bool pos) {
  uint32_t half = 0;  // R / 2 when the rotation covers part of the head (partial rotary), else 0
  if (pr.do_rotary && t.cos_cache && t.cos_cache->shape.back() * 2 < D) half = (uint32_t)t.cos_cache->shape.back();
  return (pr.do_rotary ? 1u : 0u) | (pr.rotary_interleaved ? 2u : 0u) | (pos ? 4u : 0u) | (half << 8);
}

// gqa_prepare.comp: the d.S query rows of each sequence rotated into fp32 [B, Hq, S, D] (the slice returned), their
// keys (rotated) and values written into the caches at their positions.
BufferSlice prepare_rows(CommandRecorder& rec, const GqaParams& pr, const GqaTensors& t, GqaWorkspace& ws,
                         const Dims& d, const char* ty) {
  OGX_CHECK(ws.q_rotated.size() >= (VkDeviceSize)(d.B * d.Hq * d.S * d.D * 4), "GroupQueryAttention: workspace too small");
  const size_t es = dtype_size(t.query.dtype);
  const uint64_t k_addr = t.key ? addr(*t.key) : addr(t.query) + d.Hq * d.D * es;
  const uint64_t v_addr = t.value ? addr(*t.value) : addr(t.query) + (d.Hq + d.Hkv) * d.D * es;
  const uint32_t q_row = (uint32_t)t.query.shape[2], kv_row = t.key ? (uint32_t)(d.Hkv * d.D) : q_row;
  const BufferSlice q_rot = ws.q_rotated.slice().sub(0, d.B * d.Hq * d.S * d.D * 4);
  const bool pos = pr.do_rotary && t.position_ids;
  if (pos)
    OGX_CHECK(t.position_ids->dtype == DType::i64 && t.position_ids->numel() == d.B * d.S,
              "GroupQueryAttention: position_ids must be int64 [B, S]");
  struct {
    uint64_t q, k, v, seqlens, total, cos_c, sin_c, q_out, kv_table, pos_ids;
    uint32_t B, S, Hq, Hkv, D, max_seq, q_row, kv_row, flags, max_pos, k_off, v_off;
  } p{addr(t.query), k_addr, v_addr, addr(t.seqlens_k), addr(t.total_sequence_length),
      pr.do_rotary ? addr(*t.cos_cache) : 0, pr.do_rotary ? addr(*t.sin_cache) : 0, q_rot.address,
      t.pages.table.address, pos ? addr(*t.position_ids) : 0, (uint32_t)d.B, (uint32_t)d.S,
      (uint32_t)d.Hq, (uint32_t)d.Hkv, (uint32_t)d.D, (uint32_t)d.max_seq, q_row, kv_row,
      rotary_flags(pr, t, d.D, pos), pr.do_rotary ? (uint32_t)t.cos_cache->shape[0] : 0, t.pages.k_off,
      t.pages.v_off};
  static_assert(sizeof(p) <= 128, "push constants");
  const Pipeline& pl = rec.context().pipelines().get(std::string("gqa_prepare_") + ty);
  uint32_t gx, gy;
  grid_2d(div_up(d.B * d.S * (d.Hq + 2 * d.Hkv) * d.D, 256), &gx, &gy);
  const BufferSlice none = t.query.mem;
  rec.dispatch(pl, &p, sizeof(p), gx, gy, 1,
               {t.query.mem, t.key ? t.key->mem : none, t.value ? t.value->mem : none, t.seqlens_k.mem,
                t.total_sequence_length.mem, t.cos_cache ? t.cos_cache->mem : none,
                t.sin_cache ? t.sin_cache->mem : none, pos ? t.position_ids->mem : none, t.pages.table},
               {q_rot, t.k_cache.mem, t.v_cache.mem});
  return q_rot;
}

// Query heads per gqa_decode_chunk.comp workgroup: the KV head's whole group (G = Hq / Hkv) up to 8 (its register
// arrays), else the largest divisor of G under 8 (G 16: two workgroups of 8 per KV head, each reading the keys and
// values; MQA with 71 heads: one head each, as the split kernel reads them).
int64_t chunk_heads(const Dims& d) {
  const int64_t G = d.Hq / d.Hkv;
  int64_t h = std::min<int64_t>(G, 8);
  while (G % h) h--;
  return h;
}

// gqa_decode_chunk.comp's limits (its shared arrays, subgroup layout) and gqa_merge_chunks.comp's.
bool chunk_decode_fits(const Context& ctx, const Dims& d) {
  const int64_t sg = ctx.info().subgroup_size, L = d.D / 8, T = ctx.tuning().decode_chunk_threads, G = chunk_heads(d);
  return ctx.info().features.subgroup_shuffle && d.D % 8 == 0 && d.D <= 256 && sg >= L && sg % L == 0 &&
         T % sg == 0 && T <= 256 && (T / sg) * G <= 256 && (T / sg) * G * d.D <= kChunkShared &&
         d.D / 4 <= kMergeThreads && ctx.info().max_shared_memory >= kChunkSharedBytes;
}

// Chunk states the workspace holds per query row of d.
int64_t chunk_room(const GqaWorkspace& ws, const Dims& d) {
  return (int64_t)(ws.partials.size() / (VkDeviceSize)(d.B * d.S * d.Hq * (d.D + 2) * 4));
}

// The key chunks serve d's rows: the tuning row takes them, the shapes fit, the workspace holds a chunk a row.
bool chunks_apply(const Context& ctx, const Dims& d, const GqaWorkspace& ws) {
  return chunks_enabled(ctx, d.B * d.S, d.max_seq) && chunk_decode_fits(ctx, d) && chunk_room(ws, d) >= 1;
}

// Chunks per query row of d (workgroups along x of gqa_decode_chunk.comp): chunk_capacity over every (row, KV head
// part) workgroup, at most what the workspace holds.
uint32_t chunk_count(const Context& ctx, const Dims& d, const GqaWorkspace& ws) {
  return (uint32_t)std::min(chunk_capacity(ctx, d.B * d.S * (d.Hq / chunk_heads(d)), d.max_seq), chunk_room(ws, d));
}

// The d.S query rows of each sequence (rotated into q_rot, their keys and values in the caches) in key chunks:
// gqa_decode_chunk.comp over chunks x KV heads x rows, then gqa_merge_chunks.comp per (row, head) into the output.
void chunk_decode(CommandRecorder& rec, const GqaParams& pr, const GqaTensors& t, GqaWorkspace& ws, const Dims& d,
                  const char* ty, const BufferSlice& q_rot, float scale) {
  Context& ctx = rec.context();
  const int64_t rows = d.B * d.S;
  const int64_t heads = chunk_heads(d), groups_y = d.Hq / heads;  // workgroups per row: KV heads x parts
  const uint32_t nchunk = chunk_count(ctx, d, ws);
  const VkDeviceSize o_bytes = (VkDeviceSize)(rows * d.Hq * nchunk * d.D * 4);
  const BufferSlice part_o = ws.partials.slice().sub(0, o_bytes);
  const BufferSlice part_ml = ws.partials.slice().sub(o_bytes, (VkDeviceSize)(rows * d.Hq * nchunk * 2 * 4));
  struct {
    uint64_t q, kv_table, seqlens, total, part_o, part_ml;
    uint32_t Hq, Hkv, S, max_seq, k_off, v_off, parts;
    float scale, softcap;
    int32_t window;
  } p{q_rot.address, t.pages.table.address, addr(t.seqlens_k), addr(t.total_sequence_length), part_o.address,
      part_ml.address, (uint32_t)d.Hq, (uint32_t)d.Hkv, (uint32_t)d.S, (uint32_t)d.max_seq, t.pages.k_off,
      t.pages.v_off, (uint32_t)(groups_y / d.Hkv), scale, pr.softcap, (int32_t)pr.local_window_size};
  static_assert(sizeof(p) <= 128, "push constants");
  const Pipeline& pl = ctx.pipelines().get(std::string("gqa_decode_chunk_") + ty,
                                           {ctx.tuning().decode_chunk_threads, (uint32_t)d.D, (uint32_t)heads,
                                            std::clamp<uint32_t>(ctx.tuning().decode_chunk_unroll, 1, 16)});
  rec.dispatch(pl, &p, sizeof(p), nchunk, (uint32_t)groups_y, (uint32_t)rows,
               {q_rot, t.pages.table, t.k_cache.mem, t.v_cache.mem, t.seqlens_k.mem, t.total_sequence_length.mem},
               {part_o, part_ml});
  struct {
    uint64_t part_o, part_ml, seqlens, total, out;
    uint32_t Hq, D, S, max_seq, nchunk;
    int32_t window;
  } m{part_o.address, part_ml.address, addr(t.seqlens_k), addr(t.total_sequence_length), addr(t.output),
      (uint32_t)d.Hq, (uint32_t)d.D, (uint32_t)d.S, (uint32_t)d.max_seq, nchunk, (int32_t)pr.local_window_size};
  static_assert(sizeof(m) <= 128, "push constants");
  rec.dispatch(ctx.pipelines().get(std::string("gqa_merge_chunks_") + ty), &m, sizeof(m), (uint32_t)d.Hq,
               (uint32_t)rows, 1, {part_o, part_ml, t.seqlens_k.mem, t.total_sequence_length.mem}, {t.output.mem});
}

// Merges the nsplit partial results into the output (gqa_combine.comp).
void combine(CommandRecorder& rec, const Dims& d, const char* ty, const BufferSlice& partials, uint32_t nsplit,
             const TensorView& output) {
  struct {
    uint64_t partial, out;
    uint32_t Hq, D, nsplit;
  } p{partials.address, addr(output), (uint32_t)d.Hq, (uint32_t)d.D, nsplit};
  const Pipeline& pl = rec.context().pipelines().get(std::string("gqa_combine_") + ty);
  rec.dispatch(pl, &p, sizeof(p), (uint32_t)d.Hq, (uint32_t)(d.B * d.S), 1, {partials}, {output.mem});
}

// What a one-token decode dispatch reads: packed QKV, caches, lengths, rotary caches and positions when used.
std::vector<BufferSlice> decode_reads(const GqaParams& pr, const GqaTensors& t, bool pos) {
  BufferSlice none = t.query.mem;
  return {t.query.mem, t.pages.table, t.k_cache.mem, t.v_cache.mem, t.seqlens_k.mem, t.total_sequence_length.mem,
          pr.do_rotary ? t.cos_cache->mem : none, pr.do_rotary ? t.sin_cache->mem : none,
          pos ? t.position_ids->mem : none};
}

// gqa_decode_group.comp's limits (shared memory arrays sized for them).
bool group_decode_fits(const Context& ctx, const Dims& d) {
  int64_t G = d.Hq / d.Hkv, L = d.D / 8, T = ctx.tuning().decode_group_threads;
  // G <= L: the G * KP (head, key) scores of a pass fit the T threads; G * D <= 4 T: four outputs per thread.
  return d.D % 8 == 0 && d.D >= 32 && d.D <= 256 && G <= 8 && G <= L && G * d.D <= std::min<int64_t>(1024, 4 * T) &&
         T <= 256 && T >= L && T % L == 0 && ctx.info().max_shared_memory >= kGroupShared;
}

// gqa_decode_group.comp's subgroup loop (the _sg pipeline): L = D / 8 lanes per key within a subgroup, and the
// subgroups' outputs within its merge buffer.
bool group_subgroup_loop(const Context& ctx, const Dims& d) {
  const Tuning& tu = ctx.tuning();
  const int64_t sg = ctx.info().subgroup_size, L = d.D / 8, T = tu.decode_group_threads;
  const bool fits = ctx.info().features.subgroup_shuffle && sg >= L && sg % L == 0 && T % sg == 0 && T / sg <= 32 &&
                    (T / sg) * (d.Hq / d.Hkv) * d.D <= kGroupScratch;
  if (!fits || tu.decode_group_subgroup_loop == 0) return false;
  if (tu.decode_group_subgroup_loop == 1) return true;
  // auto (2): where the passes are slow (H200 kernel bench, tuning.cpp)
  return d.B * d.Hkv >= (int64_t)tu.decode_group_fill || T / L != sg;
}

// One new token with packed QKV in one dispatch (gqa_decode_group.comp): rotation, the cache write, attention of
// each KV head's query group split over the keys, and the merge by the last split.
// With `q_rot` (the few-rows form, gqa_decode_group.comp PREPARED): the d.S query rows of each sequence, rotated
// by gqa_prepare.comp into q_rot, their keys and values already in the caches; nsplit splits per row.
void decode_group(CommandRecorder& rec, const GqaParams& pr, const GqaTensors& t, GqaWorkspace& ws, const Dims& d,
                  const char* ty, bool pos, float scale, const BufferSlice* q_rot = nullptr, uint32_t nsplit = 0) {
  Context& ctx = rec.context();
  if (!q_rot) nsplit = (uint32_t)ws.group_nsplit;
  const int64_t rows = q_rot ? d.B * d.S : d.B;
  BufferSlice partials = ws.partials.slice().sub(0, rows * d.Hq * nsplit * (d.D + 2) * 4);
  BufferSlice counters = ws.counters.slice().sub(0, rows * d.Hkv * 4);
  OGX_CHECK(ws.partials.size() >= partials.size && ws.counters.size() >= counters.size,
            "GroupQueryAttention: workspace too small for ", d.S, " rows");
  Dims per_row = d;  // the subgroup-loop choice counts (row, KV head) pairs
  per_row.B = rows;
  // From decode_group_fill rows x KV heads on, one workgroup per (row, KV head) walks all its keys: the dispatch has
  // one split, not nsplit of which all but the first would return at once (at 16 rows of the 8B, 1,920 empty
  // workgroups a layer: ~18 us measured on the H200 per 2,048 of them).
  const uint32_t split_cap = rows * d.Hkv >= (int64_t)ctx.tuning().decode_group_fill ? 1u : nsplit;
  struct {
    uint64_t qkv, kv_table, seqlens, total, partial, counters, out, cos_c, sin_c, pos_ids;
    uint32_t Hkv, D, max_seq, q_row, flags, max_pos, k_off, v_off;
    float scale, softcap;
    int32_t window;
    uint32_t split_cap;  // most splits with work per (row, KV head): 1 from decode_group_fill rows x KV heads on
  } p{q_rot ? q_rot->address : addr(t.query), t.pages.table.address, addr(t.seqlens_k), addr(t.total_sequence_length),
      partials.address, counters.address, addr(t.output), pr.do_rotary ? addr(*t.cos_cache) : 0,
      pr.do_rotary ? addr(*t.sin_cache) : 0, pos ? addr(*t.position_ids) : 0, (uint32_t)d.Hkv, (uint32_t)d.D,
      (uint32_t)d.max_seq, q_rot ? (uint32_t)((d.Hq + 2 * d.Hkv) * d.D) : (uint32_t)t.query.shape[2],
      q_rot ? (uint32_t)d.S : rotary_flags(pr, t, d.D, pos),  // PREPARED: the rows per sequence
      pr.do_rotary ? (uint32_t)t.cos_cache->shape[0] : 0, t.pages.k_off, t.pages.v_off, scale, pr.softcap,
      (int32_t)pr.local_window_size, split_cap};
  static_assert(sizeof(p) <= 128, "push constants");
  const bool sg = group_subgroup_loop(ctx, per_row);
  const char* kernel = q_rot ? (sg ? "gqa_decode_group_rows_sg_" : "gqa_decode_group_rows_")
                             : (sg ? "gqa_decode_group_sg_" : "gqa_decode_group_");
  const Pipeline& pl = ctx.pipelines().get(std::string(kernel) + ty,
                                           {ctx.tuning().decode_group_threads, (uint32_t)(d.Hq / d.Hkv)});
  std::vector<BufferSlice> reads = decode_reads(pr, t, pos);
  if (q_rot) reads.push_back(*q_rot);
  rec.dispatch(pl, &p, sizeof(p), split_cap, (uint32_t)d.Hkv, (uint32_t)rows, reads,
               {partials, counters, t.output.mem, t.k_cache.mem, t.v_cache.mem});
}

// One new token with packed QKV: gqa_decode_group.comp when the shapes fit it, else the rotation, the cache write
// and the split attention in one dispatch (gqa_decode.comp with FUSED), then the combine.
void decode_fused(CommandRecorder& rec, const GqaParams& pr, const GqaTensors& t, GqaWorkspace& ws, const Dims& d,
                  const char* ty) {
  Context& ctx = rec.context();
  uint32_t nsplit = (uint32_t)ws.nsplit;
  BufferSlice partials = ws.partials.slice().sub(0, d.B * d.Hq * nsplit * (d.D + 2) * 4);
  bool pos = pr.do_rotary && t.position_ids;
  if (pos)
    OGX_CHECK(t.position_ids->dtype == DType::i64 && t.position_ids->numel() == d.B,
              "GroupQueryAttention: position_ids must be int64 [B, 1]");
  float scale = pr.scale != 0.0f ? pr.scale : 1.0f / std::sqrt((float)d.D);
  if (chunks_apply(ctx, d, ws)) {  // long caches (or many rows): rotation, key chunks, merge
    chunk_decode(rec, pr, t, ws, d, ty, prepare_rows(rec, pr, t, ws, d, ty), scale);
    return;
  }
  if (group_decode_fits(ctx, d)) {
    decode_group(rec, pr, t, ws, d, ty, pos, scale);
    return;
  }
  struct {
    uint64_t qkv, kv_table, seqlens, total, partial, cos_c, sin_c, pos_ids;
    uint32_t B, S, Hq, Hkv, D, max_seq, nsplit, q_row, flags, max_pos, k_off, v_off;
    float scale, softcap;
    int32_t window;
  } p{addr(t.query), t.pages.table.address, addr(t.seqlens_k), addr(t.total_sequence_length),
      partials.address, pr.do_rotary ? addr(*t.cos_cache) : 0, pr.do_rotary ? addr(*t.sin_cache) : 0,
      pos ? addr(*t.position_ids) : 0, (uint32_t)d.B, 1u, (uint32_t)d.Hq, (uint32_t)d.Hkv, (uint32_t)d.D,
      (uint32_t)d.max_seq, nsplit, (uint32_t)t.query.shape[2],
      rotary_flags(pr, t, d.D, pos),
      pr.do_rotary ? (uint32_t)t.cos_cache->shape[0] : 0, t.pages.k_off, t.pages.v_off, scale, pr.softcap,
      (int32_t)pr.local_window_size};
  static_assert(sizeof(p) <= 128, "push constants");
  const Pipeline& pl = ctx.pipelines().get(std::string("gqa_decode_fused_") + ty, {ctx.tuning().attention_threads});
  rec.dispatch(pl, &p, sizeof(p), nsplit, (uint32_t)d.Hq, (uint32_t)d.B,
               decode_reads(pr, t, pos),
               {partials, t.k_cache.mem, t.v_cache.mem});
  combine(rec, d, ty, partials, nsplit, t.output);
}

}  // namespace

KvPages contiguous_kv_pages(Context& ctx, const TensorView& k, const TensorView& v, DeviceBuffer& table_storage) {
  OGX_CHECK(k.shape.size() == 4 && v.shape == k.shape, "contiguous_kv_pages: caches must be [B, Hkv, max_seq, D]");
  const int64_t B = k.shape[0], H = k.shape[1], L = k.shape[2], D = k.shape[3];
  const int64_t nb = (L + kKvBlock - 1) / kKvBlock;
  const VkDeviceSize es = dtype_size(k.dtype);
  const VkDeviceAddress base = std::min(k.mem.address, v.mem.address);
  const VkDeviceSize span = std::max(k.mem.address, v.mem.address) - base;
  OGX_CHECK(span % es == 0 && span / es < (1ull << 31), "contiguous_kv_pages: the key and value caches lie too far "
            "apart");
  std::vector<uint64_t> table((size_t)(B * H * nb));
  for (int64_t r = 0; r < B * H; r++)
    for (int64_t blk = 0; blk < nb; blk++)
      table[(size_t)(r * nb + blk)] = base + (VkDeviceSize)((r * L + blk * kKvBlock) * D) * es;
  table_storage = ctx.memory().allocate("kv table", table.size() * 8);
  ctx.transfers().upload(table_storage.slice(), 0, table.data(), table.size() * 8);
  ctx.transfers().flush();
  KvPages pages;
  pages.table = table_storage.slice().sub(0, table.size() * 8);
  pages.k_off = (uint32_t)((k.mem.address - base) / es);
  pages.v_off = (uint32_t)((v.mem.address - base) / es);
  return pages;
}

void group_query_attention(CommandRecorder& rec, const GqaParams& pr, const GqaTensors& t, GqaWorkspace& ws) {
  Dims d = check(pr, t);
  const char* ty = storage_suffix(t.query.dtype, "GroupQueryAttention");
  if (d.S == 1 && !t.key) {
    decode_fused(rec, pr, t, ws, d, ty);
    return;
  }
  Context& ctx = rec.context();
  const BufferSlice q_rot = prepare_rows(rec, pr, t, ws, d, ty);
  float scale = pr.scale != 0.0f ? pr.scale : 1.0f / std::sqrt((float)d.D);
  int32_t window = (int32_t)pr.local_window_size;
  // A few query rows (a speculative verify pass, a short continued chunk): the split kernel spreads each row's keys
  // over workgroups, where the prompt kernels give each (block of rows, head) one workgroup over all the keys
  // (H200, 8B: a 5-row verify pass's attention over ~600 keys took 118 us a layer that way).
  const int64_t partial_rows = (int64_t)(ws.partials.size() / (VkDeviceSize)(d.B * d.Hq * (d.D + 2) * 4));
  const bool few_rows = d.S > 1 && d.S <= std::min<int64_t>(kFewQueryRows, ctx.tuning().few_rows_attention) &&
                        partial_rows >= 2 * d.S;
  bool coop = d.S > 1 && !few_rows && prefill_coop_applies(ctx, d, t);
  if (coop || (d.S > 1 && !few_rows && d.D <= kPrefillMaxHead && ctx.info().max_shared_memory >= kPrefillShared)) {
    struct {  // the Push of gqa_prefill.comp and gqa_prefill_coop.comp
      uint64_t q, kv_table, seqlens, total, out;
      uint32_t B, S, Hq, Hkv, D, max_seq, k_off, v_off;
      float scale, softcap;
      int32_t window;
    } p{q_rot.address, t.pages.table.address, addr(t.seqlens_k), addr(t.total_sequence_length),
        addr(t.output), (uint32_t)d.B, (uint32_t)d.S, (uint32_t)d.Hq, (uint32_t)d.Hkv, (uint32_t)d.D,
        (uint32_t)d.max_seq, t.pages.k_off, t.pages.v_off, scale, pr.softcap, window};
    const Pipeline& pl = coop ? ctx.pipelines().get(prefill_coop_pipeline(ctx, d.D), {(uint32_t)d.D})
                              : ctx.pipelines().get(std::string("gqa_prefill_") + ty);
    rec.dispatch(pl, &p, sizeof(p), div_up(d.S, coop ? kPrefillCoopRows : 16), (uint32_t)d.Hq, (uint32_t)d.B,
                 {q_rot, t.pages.table, t.k_cache.mem, t.v_cache.mem, t.seqlens_k.mem, t.total_sequence_length.mem},
                 {t.output.mem});
    return;
  }
  // One row or a few per sequence over a long cache: key chunks.
  if ((d.S == 1 || few_rows) && chunks_apply(ctx, d, ws)) {
    chunk_decode(rec, pr, t, ws, d, ty, q_rot, scale);
    return;
  }
  // Few rows through gqa_decode_group.comp (PREPARED): each KV head's query group in one workgroup per split (the
  // keys read once for the group), the merge by the last split, no combine dispatch (tuning few_rows_group).
  // (make_gqa_workspace sizes its split counters for kFewQueryRows rows; decode_group checks both buffers.)
  if (few_rows && ctx.tuning().few_rows_group != 0 && group_decode_fits(ctx, d)) {
    const uint32_t nsplit = (uint32_t)std::max<int64_t>(1, std::min<int64_t>(ws.group_nsplit, partial_rows / d.S));
    decode_group(rec, pr, t, ws, d, ty, false, scale, &q_rot, nsplit);
    return;
  }
  uint32_t nsplit = d.S == 1 ? (uint32_t)ws.nsplit
                   : few_rows ? (uint32_t)std::min<int64_t>(ws.nsplit, partial_rows / d.S)
                              : 1;
  BufferSlice partials = ws.partials.slice().sub(0, d.B * d.S * d.Hq * nsplit * (d.D + 2) * 4);
  OGX_CHECK(ws.partials.size() >= partials.size, "GroupQueryAttention: workspace too small for S = ", d.S);
  {
    struct {
      uint64_t q, kv_table, seqlens, total, partial;
      uint32_t B, S, Hq, Hkv, D, max_seq, nsplit, k_off, v_off;
      float scale, softcap;
      int32_t window;
    } p{q_rot.address, t.pages.table.address, addr(t.seqlens_k), addr(t.total_sequence_length),
        partials.address, (uint32_t)d.B, (uint32_t)d.S, (uint32_t)d.Hq, (uint32_t)d.Hkv, (uint32_t)d.D,
        (uint32_t)d.max_seq, nsplit, t.pages.k_off, t.pages.v_off, scale, pr.softcap, window};
    const Pipeline& pl = ctx.pipelines().get(std::string("gqa_decode_") + ty, {ctx.tuning().attention_threads});
    rec.dispatch(pl, &p, sizeof(p), nsplit, (uint32_t)d.Hq, (uint32_t)(d.B * d.S),
                 {q_rot, t.pages.table, t.k_cache.mem, t.v_cache.mem, t.seqlens_k.mem, t.total_sequence_length.mem},
                 {partials});
  }
  combine(rec, d, ty, partials, nsplit, t.output);
}

namespace {

// Dims as check() makes them (the table width in whole blocks) for the queries below.
Dims dims_of(int64_t B, int64_t S, int64_t Hq, int64_t Hkv, int64_t D, int64_t max_seq) {
  return Dims{B, S, Hq, Hkv, D, (max_seq + kKvBlock - 1) / kKvBlock * kKvBlock};
}

}  // namespace

bool takes_key_chunks(const Context& ctx, const GqaWorkspace& ws, int64_t B, int64_t S, int64_t Hq, int64_t Hkv,
                      int64_t D, int64_t max_seq) {
  return chunks_apply(ctx, dims_of(B, S, Hq, Hkv, D, max_seq), ws);
}

std::string describe_decode_attention(const Context& ctx, const GqaWorkspace& ws, int64_t B, int64_t Hq, int64_t Hkv,
                                      int64_t D, int64_t max_seq) {
  const Dims d = dims_of(B, 1, Hq, Hkv, D, max_seq);
  if (chunks_apply(ctx, d, ws)) return std::to_string(chunk_count(ctx, d, ws)) + " key chunks";
  return std::to_string(Hq / Hkv <= 8 ? ws.group_nsplit : ws.nsplit) + " splits";
}

}  // namespace ogx::vk::kernels
