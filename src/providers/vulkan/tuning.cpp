#include "providers/vulkan/tuning.h"

#include <algorithm>
#include <cstdlib>
#include <iterator>

#include "common/error.h"

namespace ogx::vk {

namespace {

struct Row {
  const char* name;
  uint32_t vendor_id;  // 0: any
  DeviceType type;     // DeviceType::other: any
  Tuning values;
};

// Ordered: the first matching row wins. Values are workgroup/tile shapes only; every row computes the same result.
// nvidia: 4 matvec rows per workgroup (was 8): the H200's 1B decode GPU step 1237 -> 1138 us fp16, 1318 -> 1202 us
// int4 (commit 7ee2118).
// skinny_max_m / skinny_rows / skinny_unroll: M <= 16 rows of a batched decode step read each
// weight once in the skinny kernel; 4 weight rows x 16 activation rows keep 64 accumulators per thread; 2 units of K
// loaded together where registers allow. Not yet measured per vendor (qualcomm: half, as its matvec rows).
// nvidia's matrix-unit skinny matmul (coop_skinny_*: max m, threads, unroll, cols): 2 column tiles per workgroup,
// H200 `ogx_vulkan_bench --matmul-only --m 16|32|64 [--shape-8b] --coop-cols 1|2|4` (2026-12-02): fp16 projections of
// one 8B layer at M = 16 268 us (1 tile 322), M = 32 335 (479; the prompt kernel 578); int4 at M = 16 keeps 1 tile
// (1B 126 vs 144 us). Direct weight fragments (coop_skinny_direct_w = 1) were slower everywhere: off.
// q4_wide_rows / q4_wide_unroll / q4_wide_min_dim: the int4 decode matvec with 16-byte nibble
// loads (matvec_q4_wide.comp); the rows of vendors where it was not measured (amd, intel, qualcomm) and the generic
// row keep matvec.comp, cpu-driver (lavapipe) takes it, so the tests run both. nvidia, H200 (ddf56f8, alternated
// runs, decode tok/s 8B / 1B int4): matvec.comp 209 / 884; wide rows 4 unroll 2 on the 8B only 222 / 884, everywhere
// 222 / 840; unroll 1 everywhere with rows 1 / 2 / 4 / 8: 209 / 863, 241 / 991, 293 / 1138, 232 / 801 -> rows 4,
// unroll 1, every matrix.
// Rows name their fields (designated initializers, in Tuning's declaration order): a field added to Tuning takes its
// default in every row instead of shifting the values after it (ed9d5d3 inserted decode_group_fill before
// q4_wide_rows while the rows were positional, so the nvidia row ran with decode_group_fill 4, q4_wide_rows 1 and
// q4_wide_unroll 0 until 2026-12-03). Unnamed fields keep Tuning's defaults.
// nvidia's prompt matmul tiles (coop_*_tile, coop_big_tile_min_groups): H200 kernel bench, M = 512 (2026-12-03): the
// 1B's qkv (96 big tiles) 45.6 us with 128 x 128 against 63.6 with 64 x 64; its o / down (64 big tiles) stay small;
// the small tile 128 x 64 (8 subgroups of 32 x 32) against 64 x 64: int4 qkv/o/gate-up/down 71/36/277/134 us vs
// 85/43/325/163, fp16 2-4% faster. int4's big tile 256 x 64 (8 subgroups of 64 x 32: each weight piece dequantized
// for 256 rows instead of 128) ran the 8B's qkv/o/gate-up/down in 203/100/711/362 us against 216/110/780/403 at
// 128 x 128 in the kernel bench; its tile test (test_matmul_coop.cpp) passed on the H200 (2026-12-03).
// nvidia's decode choices of 2026-12-03 (H200, same-run A/B of option sets, bench/vulkan-kernels.md): q4_wide_half 1
// (int4 products in packed fp16) 8B int4 293.5 -> 333.7 tok/s, 1B int4 1,142 -> 1,235; decode_group_subgroup_loop 2
// with decode_group_fill 128 (rows x KV heads from which a step's attention is not split: 16 rows of 8 KV heads)
// 8B fp16 --batch 16 1,523 -> 1,592 tok/s; kernel bench, us per layer (passes -> subgroup loop): 16 rows of 192 keys
// D 128 54.7 -> 38.9 (unsplit), of 1,024 keys 203 -> 124, D 64 95.9 -> 79.8; one row D 128 over 8k keys 96.5 ->
// 81.4, 32k 307 -> 224; one row D 64 stays with the passes (8k 33.8 against 37.6). q4_wide_max_m 8 (2..8 rows of
// a batched int4 step in one matvec_q4_wide workgroup, the weights loaded once, instead of the skinny / matrix-unit
// kernels): 8B int4 --batch 4 262.6 / 262.9 -> 483.4 / 483.0 tok/s, 1B int4 --batch 4 1,382 -> 2,113, 8B --batch 8
// 494 (max_m 4) -> 530 (2026-12-03, same-run option sets). q4_wide_half_acc 4 (a 32-value chunk's products summed
// in packed fp16, 16 per lane, before fp32; 2 = two words): 8B int4 330.4 / 330.4 -> 335.1 / 335.3 (2) -> 340.6 /
// 340.3 tok/s (4), GPU step 3,013 -> 2,924 us; 1B int4 1,248 / 1,249 -> 1,276 / 1,275; 8B --batch 4 568 -> 571
// (2026-12-03, same-run option sets with the kernel of the commit that added the field). decode_group_max_splits 32
// (one-token attention over long caches: fewer, longer splits, a shorter merge): kernel bench, one row (D 64 / D 128,
// us): 8k keys 34.0 / 81.0 -> 33.9 / 58.9, 32k 123.1 / 223.0 -> 113.1 / 182.2, 1k-2k unchanged (32 already); 1B fp16
// at prompt 32,768 325.9 -> 355.9 tok/s, 8B 81.0 -> 94.5 (2026-12-03 session 19, same-run option sets).
// decode_group_max_splits_d128 16: D 128 heads (the subgroup loop) faster with 16 splits than 32 at every length of
// the same sweep (1k 23.2 -> 15.6 us, 2k 28.0 -> 20.7, 8k 58.9 -> 51.6, 32k 182.2 -> 175.2); end to end, 8B fp16
// against 32 (2026-12-04 session 20, same-run option sets): prompt 1k 182.1 -> 193.3 tok/s, 8k 149.1 -> 156.4, 32k
// 94.7 -> 97.5.
// decode_chunk_min_keys 2048, decode_chunk_groups 256 (one-token attention in key chunks, gqa_decode_chunk.comp,
// from 2,048 rows x table positions): kernel bench, one layer, us (D 64 / D 128; the one-dispatch kernel before):
// one row of 2k keys 14.1 / 20.7 -> 13.9 / 16.7, 8k 33.9 / 51.7 -> 17.8 / 23.7, 32k 113.2 / 175.4 -> 34.4 / 57.4;
// 16 rows of 1,024 keys 45.8 / 89.7 -> 24.1 / 36.8, of 192 keys 14.2 / 22.1 -> 16.5 / 19.9; one row of 1,024 keys
// stays with the one-dispatch kernel (10.9 / 15.7 against 13.3 / 16.5 in chunks). Aiming at 128 / 512 / 1,024
// workgroups: 32k 89.5 / 63.9 / 74.1 us (D 128); 256 threads or 16 rows per round slower (2026-12-04 session 21).
const Row kRows[] = {
    {"nvidia", 4318, DeviceType::other,
     {.matvec_threads = 256, .matvec_rows = 4, .matvec_threads_q4 = 256, .matmul_tile = 128, .reduce_threads = 256,
      .attention_split = 32, .attention_threads = 64, .decode_group_threads = 256, .coop_big_tile_min_groups = 96,
      .skinny_max_m = 16, .skinny_rows = 4, .skinny_unroll = 2, .coop_skinny_max_m = 64, .coop_skinny_threads = 256,
      .coop_skinny_unroll = 4, .coop_skinny_cols = 2, .coop_skinny_direct_w = 0, .coop_tiled_min_groups = 128,
      .decode_group_max_splits = 32, .decode_group_max_splits_d128 = 16, .decode_group_fill = 128,
      .decode_group_subgroup_loop = 2, .q4_wide_rows = 4, .q4_wide_unroll = 1, .q4_wide_half = 1, .q4_wide_half_acc = 4, .q4_wide_max_m = 8, .q4_wide_min_dim = 0,
      .decode_chunk_min_keys = 2048, .decode_chunk_groups = 256,
      .coop_big_tile_q4 = {4, 2, 4, 2, 64, 1}, .coop_small_tile = {4, 2, 2, 2, 64, 1}}},
    {"amd", 4098, DeviceType::other,
     {.matvec_threads = 256, .matvec_rows = 8, .matvec_threads_q4 = 256, .matmul_tile = 128, .reduce_threads = 256,
      .attention_split = 256, .attention_threads = 256, .decode_group_threads = 256, .coop_big_tile_min_groups = 128,
      .skinny_max_m = 16, .skinny_rows = 4, .skinny_unroll = 2}},
    {"intel", 32902, DeviceType::other,
     {.matvec_threads = 128, .matvec_rows = 4, .matvec_threads_q4 = 128, .matmul_tile = 64, .reduce_threads = 256,
      .attention_split = 128, .attention_threads = 128, .decode_group_threads = 256, .coop_big_tile_min_groups = 128,
      .skinny_max_m = 16, .skinny_rows = 4, .skinny_unroll = 2}},
    {"qualcomm", 20803, DeviceType::other,
     {.matvec_threads = 128, .matvec_rows = 2, .matvec_threads_q4 = 128, .matmul_tile = 64, .reduce_threads = 128,
      .attention_split = 128, .attention_threads = 128, .decode_group_threads = 256, .coop_big_tile_min_groups = 128,
      .skinny_max_m = 8, .skinny_rows = 2, .skinny_unroll = 1}},
    {"cpu-driver", 0, DeviceType::cpu,
     {.matvec_threads = 64, .matvec_rows = 4, .matvec_threads_q4 = 64, .matmul_tile = 128, .reduce_threads = 128,
      .attention_split = 64, .attention_threads = 64, .decode_group_threads = 64, .coop_big_tile_min_groups = 128,
      .skinny_max_m = 16, .skinny_rows = 4, .skinny_unroll = 2, .coop_skinny_max_m = 64, .coop_skinny_threads = 256,
      .coop_skinny_unroll = 4, .coop_skinny_cols = 1, .coop_skinny_direct_w = 0, .coop_tiled_min_groups = 128,
      .decode_group_max_splits = 128, .decode_group_subgroup_loop = 1, .q4_wide_rows = 2, .q4_wide_unroll = 2,
      .q4_wide_half = 1, .q4_wide_max_m = 16}},
};

const Tuning kGeneric{.matvec_threads = 128, .matvec_rows = 4, .matvec_threads_q4 = 128, .matmul_tile = 64,
                      .reduce_threads = 256, .attention_split = 256, .attention_threads = 128,
                      .decode_group_threads = 256, .coop_big_tile_min_groups = 128, .skinny_max_m = 16,
                      .skinny_rows = 4, .skinny_unroll = 2};

Tuning clamp_to(Tuning t, const DeviceInfo& device) {
  uint32_t limit = device.max_workgroup_invocations ? device.max_workgroup_invocations : 128;
  while (t.matvec_threads > limit) t.matvec_threads /= 2;
  while (t.matvec_threads_q4 > limit) t.matvec_threads_q4 /= 2;
  while (t.reduce_threads > limit) t.reduce_threads /= 2;
  while (t.attention_threads > limit) t.attention_threads /= 2;
  while (t.decode_group_threads > limit) t.decode_group_threads /= 2;
  while (t.coop_skinny_threads > limit) t.coop_skinny_threads /= 2;
  while (t.decode_chunk_threads > limit) t.decode_chunk_threads /= 2;
  return t;
}

}  // namespace

Tuning tuning_for(const DeviceInfo& device, bool portable_only) {
  Tuning t = kGeneric;
  t.row = "generic";
  if (portable_only) return clamp_to(t, device);
  for (const Row& r : kRows) {
    if (r.vendor_id && r.vendor_id != device.vendor_id) continue;
    if (r.type != DeviceType::other && r.type != device.type) continue;
    t = r.values;
    t.row = r.name;
    t.vendor_tuned = true;
    break;
  }
  return clamp_to(t, device);
}

namespace {

// Tuning's scalar fields by name: the one list apply_tuning_overrides reads.
const std::pair<const char*, uint32_t Tuning::*> kFields[] = {
    {"matvec_threads", &Tuning::matvec_threads},
    {"matvec_rows", &Tuning::matvec_rows},
    {"matvec_threads_q4", &Tuning::matvec_threads_q4},
    {"matmul_tile", &Tuning::matmul_tile},
    {"reduce_threads", &Tuning::reduce_threads},
    {"attention_split", &Tuning::attention_split},
    {"attention_threads", &Tuning::attention_threads},
    {"decode_group_threads", &Tuning::decode_group_threads},
    {"coop_big_tile_min_groups", &Tuning::coop_big_tile_min_groups},
    {"skinny_max_m", &Tuning::skinny_max_m},
    {"skinny_rows", &Tuning::skinny_rows},
    {"skinny_unroll", &Tuning::skinny_unroll},
    {"coop_skinny_max_m", &Tuning::coop_skinny_max_m},
    {"coop_skinny_threads", &Tuning::coop_skinny_threads},
    {"coop_skinny_unroll", &Tuning::coop_skinny_unroll},
    {"coop_skinny_cols", &Tuning::coop_skinny_cols},
    {"coop_skinny_direct_w", &Tuning::coop_skinny_direct_w},
    {"coop_tiled_min_groups", &Tuning::coop_tiled_min_groups},
    {"decode_group_max_splits", &Tuning::decode_group_max_splits},
    {"decode_group_max_splits_d128", &Tuning::decode_group_max_splits_d128},
    {"decode_group_fill", &Tuning::decode_group_fill},
    {"decode_group_subgroup_loop", &Tuning::decode_group_subgroup_loop},
    {"few_rows_attention", &Tuning::few_rows_attention},
    {"few_rows_group", &Tuning::few_rows_group},
    {"q4_wide_rows", &Tuning::q4_wide_rows},
    {"q4_wide_unroll", &Tuning::q4_wide_unroll},
    {"q4_wide_half", &Tuning::q4_wide_half},
    {"q4_wide_half_acc", &Tuning::q4_wide_half_acc},
    {"q4_wide_max_m", &Tuning::q4_wide_max_m},
    {"q4_wide_rows_batch", &Tuning::q4_wide_rows_batch},
    {"q4_wide_groups", &Tuning::q4_wide_groups},
    {"q4_wide_min_dim", &Tuning::q4_wide_min_dim},
    {"q4_norm_prologue", &Tuning::q4_norm_prologue},
    {"decode_chunk_min_keys", &Tuning::decode_chunk_min_keys},
    {"decode_chunk_groups", &Tuning::decode_chunk_groups},
    {"decode_chunk_min", &Tuning::decode_chunk_min},
    {"decode_chunk_threads", &Tuning::decode_chunk_threads},
    {"decode_chunk_unroll", &Tuning::decode_chunk_unroll},
};

}  // namespace

void apply_tuning_overrides(Tuning& t, const std::string& overrides) {
  if (overrides.empty()) return;
  auto field_names = [] {
    std::string all;
    for (const auto& f : kFields) all += std::string(all.empty() ? "" : ", ") + f.first;
    return all;
  };
  std::string applied;
  size_t at = 0;
  while (at <= overrides.size()) {
    size_t end = overrides.find(',', at);
    if (end == std::string::npos) end = overrides.size();
    std::string item = overrides.substr(at, end - at);
    size_t colon = item.find('=');
    std::string name = item.substr(0, colon), value = colon == std::string::npos ? "" : item.substr(colon + 1);
    const auto* field = std::find_if(std::begin(kFields), std::end(kFields),
                                     [&](const auto& f) { return name == f.first; });
    if (field == std::end(kFields))
      throw_error("provider option tuning: '", name, "' is not a tuning field (fields: ", field_names(), ")");
    char* stop = nullptr;
    unsigned long v = std::strtoul(value.c_str(), &stop, 10);
    if (value.empty() || *stop != 0 || v > (1ul << 30))
      throw_error("provider option tuning: '", value, "' for ", name, " is not a number in 0..2^30");
    t.*(field->second) = (uint32_t)v;
    applied += std::string(applied.empty() ? "" : ",") + name + "=" + value;
    at = end + 1;
  }
  t.row += " + " + applied;
}

std::vector<Tuning> tuning_rows(const DeviceInfo& device) {
  std::vector<Tuning> rows;
  Tuning g = kGeneric;
  g.row = "generic";
  rows.push_back(clamp_to(g, device));
  for (const Row& r : kRows) {
    Tuning t = r.values;
    t.row = r.name;
    t.vendor_tuned = true;
    rows.push_back(clamp_to(t, device));
  }
  return rows;
}

}  // namespace ogx::vk
