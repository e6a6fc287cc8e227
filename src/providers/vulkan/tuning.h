// Per-device kernel parameters (workgroup and tile sizes). tuning.cpp holds the ONE table of per-vendor choices;
// kernels receive these as specialization constants and never branch on the vendor themselves.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "providers/vulkan/device_list.h"

namespace ogx::vk {

struct Tuning {
  uint32_t matvec_threads = 128;      // threads per workgroup of the matvec kernels
  uint32_t matvec_rows = 4;           // output columns (weight rows) per matvec workgroup
  uint32_t matvec_threads_q4 = 128;   // threads per workgroup of the int4 matvec (fewer: more words per thread)
  uint32_t matmul_tile = 64;          // largest output tile edge of the tiled matmul (64 or 128; matmul.cpp)
  uint32_t reduce_threads = 256;      // threads of row-reduction kernels (norms, softmax, argmax)
  uint32_t attention_split = 256;     // KV positions per workgroup in flash-decoding
  uint32_t attention_threads = 128;   // threads per attention workgroup
  uint32_t decode_group_threads = 256;  // threads of the one-dispatch decode attention (gqa_decode_group.comp)
  uint32_t coop_big_tile_min_groups = 128;  // cooperative-matrix matmul: 128x128 tiles when they give this many
                                            // workgroups, else 64x64 (enough workgroups to fill the GPU)
  uint32_t skinny_max_m = 16;         // largest M (activation rows) the skinny matmul serves (matvec_skinny.comp,
                                      // 2..16; 1 = off): above, the tiled / matrix-unit matmul
  uint32_t skinny_rows = 4;           // weight rows per skinny workgroup (<= 8; registers: rows x M accumulators)
  uint32_t skinny_unroll = 2;         // most units of K a skinny thread loads per iteration (1, 2, 4; matmul.cpp)
  uint32_t coop_skinny_max_m = 64;    // largest M the matrix-unit skinny matmul serves (matvec_coop.comp, 2..64;
                                      // devices with fp16 cooperative matrices; above: the prompt matmuls)
  uint32_t coop_skinny_threads = 256; // its threads per workgroup (subgroups of 32 splitting K)
  uint32_t coop_skinny_unroll = 4;    // its K steps of 16 staged per load round (halved while shared memory > 48 KiB)
  uint32_t coop_skinny_cols = 1;      // its 16-column weight tiles per workgroup (x fragments reused across them;
                                      // int4 at M <= 16: 1)
  uint32_t coop_skinny_direct_w = 0;  // 1: its fp16 weight fragments loaded straight from memory (no shared staging)
  uint32_t coop_tiled_min_groups = 128;  // M > 32: the prompt matmul (64 x 64 tiles) instead when it has this many
                                         // workgroups (wide N fills the GPU; narrow N leaves it idle)
  uint32_t decode_group_max_splits = 128;  // most workgroups per KV head of the one-dispatch decode attention (long
                                          // caches; kernels/attention.cpp decode_group_splits)
  uint32_t decode_group_max_splits_d128 = 0;  // the same for heads of D >= 128 (0: decode_group_max_splits)
  uint32_t decode_group_fill = 256;  // rows x KV heads that fill the GPU for that attention: from this many on, a
                                     // step gives each (row, KV head) one workgroup (no split, no merge). H200: 1B
                                     // at 64 rows (512) +3%; a cap of 2 splits at 8B x 16 rows (128) was -1.5%
  uint32_t decode_group_subgroup_loop = 0;  // that attention's key loop (gqa_decode_group.comp), where the device
                                           // has subgroup shuffles and the shape fits: 1 the barrier-free subgroup
                                           // loop, 0 passes, 2 the subgroup loop where passes are slow — unsplit
                                           // steps (rows x KV heads >= decode_group_fill) and heads whose pass-loop
                                           // reductions are not subgroup operations (T / (D / 8) != subgroup size)
  uint32_t few_rows_attention = 16;   // 2..this many query rows of a prompt step (a speculative verify pass) take the
                                      // split attention kernel (gqa_decode.comp), more the prompt kernels; 0: never.
                                      // H200 8B int4, 2-row n-gram verify pass: 9.6 ms (0) -> 3.7 ms
  uint32_t few_rows_group = 1;        // ... 1: those rows through the one-token kernel's multi-row form
                                      // (gqa_decode_group.comp PREPARED: a KV head's query group per workgroup, the
                                      // merge in the same dispatch) where its shapes fit; 0: gqa_decode.comp + combine
  uint32_t q4_wide_rows = 0;          // int4 decode matvec with blocks >= 32 and K % 32 == 0: outputs per workgroup
                                      // of matvec_q4_wide.comp (1..8; 0 = matvec.comp everywhere)
  uint32_t q4_wide_unroll = 2;        // most 32-value chunks a thread of it loads at once (1, 2, 4); its threads
                                      // grow (up to matvec_threads_q4) until K fits in one round of loads
  uint32_t q4_wide_half = 0;          // 1: its products in packed fp16 for fp16 activations (devices with fp16
                                      // arithmetic; matvec_q4_wide.comp HALF_DOT), 0: fp32
  uint32_t q4_wide_half_acc = 1;      // ... with q4_wide_half: 32-bit words of products (8 per half pair, 4 per lane)
                                      // summed in packed fp16 before each fp32 addition (1, 2 or 4 = a whole
                                      // chunk): fewer conversions, longer fp16 sums
  uint32_t q4_wide_max_m = 1;         // steps of up to this many activation rows (2..16; no norm prologue) take it
                                      // too, up to 8 rows per workgroup with the weights loaded once (batched
                                      // steps, speculative verify passes); 1: the skinny / matrix-unit kernels
  uint32_t q4_wide_rows_batch = 0;    // its outputs per workgroup for 2..q4_wide_max_m activation rows (1..8; 0: as
                                      // q4_wide_rows). H200 8B int4 --batch 4: 4 (0) 556, 8 396, 2 527 tok/s
  uint32_t q4_wide_groups = 1;        // ... one activation row: groups of q4_wide_rows outputs per workgroup (1..4,
                                      // at most 16 outputs), each group's weights loaded while the previous
                                      // group multiplies; the activations (and norm prologue) serve all of them
  uint32_t q4_wide_min_dim = 0;       // ... and only where K and N are both at least this (smaller matrices stay
                                      // with matvec.comp)
  uint32_t q4_norm_prologue = 1;      // a norm feeding an int4 projection, one row: 1 the norm in the matvec's
                                      // prologue (no extra dispatch; every workgroup re-reads x and gamma and
                                      // sums x's squares), 0 the norm once into scratch, then the plain matvec
  uint32_t decode_chunk_min_keys = 0;  // attention of one new token (or a few rows) per sequence goes in key chunks
                                       // (flash decoding: gqa_prepare.comp, gqa_decode_chunk.comp over chunks of
                                       // every row's keys, gqa_merge_chunks.comp) from this many query rows x
                                       // block-table positions on (one long row or many shorter ones); 0: never
                                       // (gqa_decode_group.comp, split by the last workgroup)
  uint32_t decode_chunk_groups = 1024;  // ... the workgroups it aims at per dispatch (rows x KV heads x chunks)
  uint32_t decode_chunk_min = 128;      // ... the fewest keys a chunk gets at the table's width (chunks <= 256)
  uint32_t decode_chunk_threads = 128;  // ... threads of a chunk's workgroup
  uint32_t decode_chunk_unroll = 8;     // ... key rows a thread of it loads per round (4, 8 or 16; two rounds in flight)
  // Output tile of the prompt matmul on the matrix units (matmul_coop.comp): subgroups along M and N, 16 x 16
  // fragments per subgroup along M and N, K per step (32 / 64) and shared buffers (1 / 2). The big tile where it
  // gives coop_big_tile_min_groups workgroups and its shared memory fits, else the small one (kernels/matmul_coop.cpp).
  struct CoopTile {
    uint32_t warps_m, warps_n, frags_m, frags_n, k_step, stages;
  };
  CoopTile coop_big_tile{2, 4, 4, 2, 64, 1};    // 128 x 128, 8 subgroups of 64 x 32
  CoopTile coop_big_tile_q4{2, 4, 4, 2, 64, 1}; // the big tile for int4 weights (dequantized once per BM rows)
  CoopTile coop_small_tile{2, 2, 2, 2, 64, 1};  // 64 x 64, 4 subgroups of 32 x 32
  bool vendor_tuned = false;          // a vendor row below was applied (false with disable_metacommands)
  std::string row;                    // which table row applied, for logs and `ogx devices`
};

// `overrides` ("field=value,field=value", the provider option `tuning`) applied to t: the scalar fields by their
// names in this header. Throws ogx::Error naming the field or value that is not one (and listing the fields).
void apply_tuning_overrides(Tuning& t, const std::string& overrides);

// portable_only (disable_metacommands): the generic row only.
Tuning tuning_for(const DeviceInfo& device, bool portable_only);

// Every row of the table (the generic row first), clamped to `device`'s limits: tests run the kernels with each.
std::vector<Tuning> tuning_rows(const DeviceInfo& device);

}  // namespace ogx::vk
