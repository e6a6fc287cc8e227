// CPU reference for com.microsoft GroupQueryAttention with a shared KV cache (float64), used by the attention and
// replay tests. Mirrors attention_common.glsl: kv_len = seqlens_k + 1, past = 0 on the first prompt
// (total == S) else kv_len - S, query s at past + s sees keys j <= position, j < kv_len, position - j < window (window > 0).
#pragma once
#include <cmath>
#include <vector>

namespace ogx::vk::test {

struct GqaReference {
  int64_t B, S, Hq, Hkv, D, max_seq;
  float scale, softcap;
  int64_t window;
  bool rotary, interleaved;
  std::vector<float> cos_c, sin_c;  // [max_pos, R/2]
  int64_t rot_dim = 0;              // R: dims that rotate (partial rotary: R < D; the rest pass through); 0: D
};

inline void rotate_head(const GqaReference& r, const float* in, int64_t position, bool rot, double* out) {
  const int64_t R = r.rot_dim ? r.rot_dim : r.D, half = R / 2;
  for (int64_t j = 0; j < r.D; j++) {
    if (!rot || j >= R) { out[j] = in[j]; continue; }
    bool first;
    int64_t idx, pair;
    if (r.interleaved) idx = j / 2, first = j % 2 == 0, pair = first ? j + 1 : j - 1;
    else first = j < half, idx = first ? j : j - half, pair = first ? j + half : j - half;
    double c = r.cos_c[position * half + idx], s = r.sin_c[position * half + idx];
    out[j] = first ? in[j] * c - in[pair] * s : in[j] * c + in[pair] * s;
  }
}

// q: [B,S,Hq*D]; k, v: [B,S,Hkv*D]; caches [B,Hkv,max_seq,D] are updated (values rounded by `round`);
// returns output [B,S,Hq*D].
template <typename Round>
std::vector<double> gqa_reference(const GqaReference& r, const std::vector<float>& q, const std::vector<float>& k,
                                  const std::vector<float>& v, std::vector<float>& kc, std::vector<float>& vc,
                                  const std::vector<int>& seqlens, int total, Round round) {
  std::vector<double> out(r.B * r.S * r.Hq * r.D), tmp(r.D);
  for (int64_t b = 0; b < r.B; b++) {
    int64_t kv_len = seqlens[b] + 1, past = total == r.S ? 0 : kv_len - r.S;
    for (int64_t s = 0; s < r.S; s++)
      for (int64_t h = 0; h < r.Hkv; h++) {
        int64_t pos = past + s;
        if (pos < 0 || pos >= r.max_seq) continue;
        rotate_head(r, &k[((b * r.S + s) * r.Hkv + h) * r.D], pos, r.rotary, tmp.data());
        for (int64_t d = 0; d < r.D; d++) {
          kc[((b * r.Hkv + h) * r.max_seq + pos) * r.D + d] = round((float)tmp[d]);
          vc[((b * r.Hkv + h) * r.max_seq + pos) * r.D + d] = v[((b * r.S + s) * r.Hkv + h) * r.D + d];
        }
      }
    for (int64_t s = 0; s < r.S; s++)
      for (int64_t h = 0; h < r.Hq; h++) {
        int64_t pos = past + s, kvh = h / (r.Hq / r.Hkv);
        rotate_head(r, &q[((b * r.S + s) * r.Hq + h) * r.D], pos, r.rotary, tmp.data());
        int64_t hi = std::min(std::min(kv_len, r.max_seq), pos + 1);
        int64_t lo = r.window > 0 ? std::max<int64_t>(0, pos - r.window + 1) : 0;
        std::vector<double> sc;
        double mx = -INFINITY;
        for (int64_t j = lo; j < hi; j++) {
          double dot = 0;
          for (int64_t d = 0; d < r.D; d++) dot += tmp[d] * kc[((b * r.Hkv + kvh) * r.max_seq + j) * r.D + d];
          dot *= r.scale;
          if (r.softcap > 0) dot = r.softcap * std::tanh(dot / r.softcap);
          sc.push_back(dot);
          mx = std::max(mx, dot);
        }
        double sum = 0;
        for (auto& x : sc) sum += (x = std::exp(x - mx));
        for (int64_t d = 0; d < r.D; d++) {
          double acc = 0;
          for (int64_t j = lo; j < hi; j++) acc += sc[j - lo] * vc[((b * r.Hkv + kvh) * r.max_seq + j) * r.D + d];
          out[((b * r.S + s) * r.Hq + h) * r.D + d] = sc.empty() ? 0 : acc / sum;
        }
      }
  }
  return out;
}

inline void rope_caches(int64_t max_pos, int64_t D, std::vector<float>& cos_c, std::vector<float>& sin_c) {
  int64_t half = D / 2;
  cos_c.resize(max_pos * half), sin_c.resize(max_pos * half);
  for (int64_t p = 0; p < max_pos; p++)
    for (int64_t i = 0; i < half; i++) {
      double a = p * std::pow(10000.0, -2.0 * i / D);
      cos_c[p * half + i] = (float)std::cos(a), sin_c[p * half + i] = (float)std::sin(a);
    }
}

}  // namespace ogx::vk::test
