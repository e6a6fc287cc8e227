// The end of the one-activation-row matvecs (matvec.comp, matvec_q4_wide.comp; included after matvec_common.glsl
// and their ROWS): each thread's partial dot products acc[0..ROWS) — and with NORM_PROLOGUE its sum of squares ss —
// are summed over the workgroup (subgroup sums, one barrier, shared memory), then thread tid writes (for outputs
// t = tid, tid + threads, ... < ROWS; < ROWS / 2 with EPILOGUE_SILU, over (gate, up) row pairs) output row m's columns n0 + t: scaled by 1 / rms with the
// norm prologue, plus the bias, or silu(gate) * up with each product rounded to the storage type first.
#ifndef FINISH_ROWS
#define FINISH_ROWS 8  // the most outputs per workgroup (ROWS) of the including shader
#endif
shared float partial[(FINISH_ROWS + 1) * 64];  // rows 0..ROWS-1: dot products per subgroup; row FINISH_ROWS: the
                                               // norm's sum of squares

// Output row m's column n0 + t: s plus the bias; with EPILOGUE_SILU, column n0 / 2 + t of silu(gate) * up with each
// rounded to the storage type first. (matvec_q4_wide.comp's multi-row end writes through these too.)
void store_plain(uint m, uint n0, uint t, float s) {
  if (p.has_bias != 0) s += float(p.bias.v[n0 + t]);
  p.y.v[m * p.N + n0 + t] = TO_STORE(s);
}

void store_silu(uint m, uint n0, uint t, float g, float u) {
  g = float(TO_STORE(g));
  u = float(TO_STORE(u));
  p.y.v[m * (p.N / 2) + n0 / 2 + t] = TO_STORE(g / (1.0 + exp(-g)) * u);
}

void matvec_finish(float acc[FINISH_ROWS], float ss, uint m, uint n0) {
  uint tid = gl_LocalInvocationID.x;
  for (uint r = 0; r < ROWS; r++) {
    float s = subgroupAdd(acc[r]);
    if (gl_SubgroupInvocationID == 0) partial[r * 64 + gl_SubgroupID] = s;
  }
  float inv = 1.0;  // 1 / rms of the normalized input
#if NORM_PROLOGUE
  ss = subgroupAdd(ss);
  if (gl_SubgroupInvocationID == 0) partial[FINISH_ROWS * 64 + gl_SubgroupID] = ss;
  barrier();
  float total = 0.0;
  for (uint i = 0; i < gl_NumSubgroups; i++) total += partial[FINISH_ROWS * 64 + i];
  inv = inversesqrt(total / float(p.K) + p.epsilon);
#else
  barrier();
#endif
  // (A workgroup may have fewer threads than outputs: a small K with many outputs.)
#if EPILOGUE_SILU
  for (uint t = tid; t < ROWS / 2 && n0 + 2 * t + 1 < p.N; t += gl_WorkGroupSize.x) {
    float g = 0.0, u = 0.0;
    for (uint i = 0; i < gl_NumSubgroups; i++) {
      g += partial[(2 * t) * 64 + i];
      u += partial[(2 * t + 1) * 64 + i];
    }
    store_silu(m, n0, t, g * inv, u * inv);
  }
#else
  for (uint t = tid; t < ROWS && n0 + t < p.N; t += gl_WorkGroupSize.x) {
    float s = 0.0;
    for (uint i = 0; i < gl_NumSubgroups; i++) s += partial[t * 64 + i];
    store_plain(m, n0, t, s * inv);
  }
#endif
}
