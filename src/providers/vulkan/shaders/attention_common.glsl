// Sequence bookkeeping shared by the GroupQueryAttention kernels (com.microsoft semantics):
//   kv_len(b) = seqlens_k[b] + 1 keys are valid; the first prompt (total_sequence_length == S) starts at 0,
//   later steps at past(b) = kv_len(b) - S. Query s sits at position past(b) + s and sees key j when
//   j <= position, j < kv_len(b) and (window <= 0 or position - j < window: the window counts the current token).
// seqlens_k and total_sequence_length live in device buffers so a recorded step replays with new lengths.

int kv_len_of(I32Buf seqlens, uint b) { return seqlens.v[b] + 1; }

int past_of(I32Buf seqlens, I32Buf total, uint b, uint S) {
  return total.v[0] == int(S) ? 0 : kv_len_of(seqlens, b) - int(S);
}

// The paged KV cache (graph/kv_pool.h): position j of KV head kvh of row b lies in block j / KV_BLOCK of that
// (row, head), whose device address is table[(b * Hkv + kvh) * max_blocks + j / KV_BLOCK]; a block holds one head's
// keys and values of every layer, a layer's keys (values) `off` elements in, as [KV_BLOCK, D]. kv_row: the address of
// element 0 of (b, kvh, j) for elements of `es` bytes (uvec2 addresses, low and high word: no shaderInt64 needed).
// The table is a step value, written before each submission, so a recorded step replays whatever blocks rows hold.
#define KV_BLOCK 16u
layout(buffer_reference, std430, buffer_reference_align = 8) buffer KvTable { uvec2 v[]; };

uvec2 kv_row(KvTable table, uint max_blocks, uint Hkv, uint b, uint kvh, uint j, uint off, uint D, uint es) {
  uvec2 base = table.v[(b * Hkv + kvh) * max_blocks + j / KV_BLOCK];
  uint carry;
  uint lo = uaddCarry(base.x, (off + (j % KV_BLOCK) * D) * es, carry);
  return uvec2(lo, base.y + carry);
}

float softcapped(float score, float softcap) { return softcap > 0.0 ? softcap * tanh(score / softcap) : score; }

// Key/value rows in 16-byte pieces (the decode kernels): v[0..8) from a raw load of 8 elements of the cache type
// (fp16: one uvec4; fp32: two vec4) at element lane8 of the row at `row`.
#if STORE_F16
#define RawKv uvec4
void unpack8(RawKv q, out float v[8]) {
  vec2 a = unpackHalf2x16(q.x), b = unpackHalf2x16(q.y), c = unpackHalf2x16(q.z), d = unpackHalf2x16(q.w);
  v = float[8](a.x, a.y, b.x, b.y, c.x, c.y, d.x, d.y);
}
RawKv load_raw(uvec2 row, uint lane8) { return U32x4Buf(row).v[lane8 / 8]; }
const RawKv kRawZero = uvec4(0);
#else
#define RawKv mat2x4
void unpack8(RawKv q, out float v[8]) {
  v = float[8](q[0].x, q[0].y, q[0].z, q[0].w, q[1].x, q[1].y, q[1].z, q[1].w);
}
RawKv load_raw(uvec2 row, uint lane8) { return RawKv(F32x4Buf(row).v[lane8 / 4], F32x4Buf(row).v[lane8 / 4 + 1]); }
const RawKv kRawZero = RawKv(0.0);
#endif

// The keys query row s of sequence b sees: [lo, hi) (the causal limit, the cache length and the window).
void query_keys(I32Buf seqlens, I32Buf total, uint b, uint s, uint S, uint max_seq, int window, out int lo,
                out int hi) {
  int kv_len = min(kv_len_of(seqlens, b), int(max_seq));
  int position = past_of(seqlens, total, b, S) + int(s);
  hi = min(kv_len, position + 1);
  lo = window > 0 ? max(0, position - window + 1) : 0;
}

// A row's `range` keys in nchunk chunks of `per` keys (a multiple of KV_BLOCK): the first `used` chunks hold them
// (gqa_decode_chunk.comp and gqa_merge_chunks.comp agree on this split; 0 chunks when there is no key).
void chunk_split(int range, uint nchunk, out int per, out int used) {
  per = (range + int(nchunk) - 1) / int(nchunk);
  per = (per + int(KV_BLOCK) - 1) / int(KV_BLOCK) * int(KV_BLOCK);
  used = per > 0 ? (range + per - 1) / per : 0;
}
