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
