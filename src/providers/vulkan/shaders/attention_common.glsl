// Sequence bookkeeping shared by the GroupQueryAttention kernels (com.microsoft semantics):
//   kv_len(b) = seqlens_k[b] + 1 keys are valid; the first prompt (total_sequence_length == S) starts at 0,
//   later steps at past(b) = kv_len(b) - S. Query s sits at position past(b) + s and sees key j when
//   j <= position, j < kv_len(b) and (window <= 0 or position - j < window: the window counts the current token).
// seqlens_k and total_sequence_length live in device buffers so a recorded step replays with new lengths.

int kv_len_of(I32Buf seqlens, uint b) { return seqlens.v[b] + 1; }

int past_of(I32Buf seqlens, I32Buf total, uint b, uint S) {
  return total.v[0] == int(S) ? 0 : kv_len_of(seqlens, b) - int(S);
}

float softcapped(float score, float softcap) { return softcap > 0.0 ? softcap * tanh(score / softcap) : score; }
