// com.microsoft MatMulNBits: Y = A x dequant(B)^T (+ bias), B blockwise-quantized along K (4 or 8 bits).
//
// Two compute paths, chosen like ONNX Runtime's CPU provider (x86):
//  * int8 ("CompInt8", accuracy_level 4, constant B, block size 16..256, uint8 or absent zero points, no g_idx):
//    every row of A is quantized per block of block_size along K to int8 (MLAS QuantizeARow_CompInt8: amax over the
//    block, scale_a = amax / 127.f, q = round_half_even(a * (127.f / amax)), zero-padded past K); the integer
//    block dots are scaled by scale_a * scale_b (one fp32 product) and accumulated in fp32, the bias added last.
//    fp16 A is converted to fp32 first, the result back to fp16 (as ORT does).
//  * fp32 (every other case): weights dequantized as float(q - zp) * scale and accumulated in fp32 against A.
// The int8 path with 4-bit weights on a CPU with AVX2 uses weights repacked once at session creation and a
// register-tiled GEMM that performs exactly MLAS's fp32 operations in MLAS's order (AVX-512 VNNI, or its AVX2 twin
// with the same bits), so that results are bit-identical to ONNX Runtime's on an AVX-512 VNNI CPU
// (matmul_nbits_mlas.h) — except, by default, calls of many rows on a CPU with AMX-INT8: the CPU provider option
// `int4_gemm` = `auto` (default) runs calls of >= kAmxMinRows rows (prompts) on AMX tiles (matmul_nbits_amx.h: the
// same quantized math, blocks summed in block order, so not bit-identical to ONNX Runtime; decode rows keep the
// exact kernels); `mlas` keeps the MLAS-exact kernels for every call (bit-identical; the parity tests pin it).
// Every other case runs the kernels of this file on the
// unpacked weights (dots of q_b - zp, summed in their own order): columns are split over the thread pool, rows are
// tiled by 4 so one unpacked weight block serves up to 4 rows. AVX2 kernels with runtime dispatch, scalar twins for
// every path (the tests' reference).
#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <vector>

#include "common/half.h"
#include "providers/cpu/cpu_ops.h"
#include "common/mapped_file.h"
#include "providers/cpu/matmul_nbits_amx.h"
#include "providers/cpu/matmul_nbits_mlas.h"
#include "providers/cpu/matmul_nbits_packed.h"
#include "providers/cpu/simd.h"

namespace ogx::cpu {

void register_gather_block_quantized(KernelRegistry& r);  // gather_block_quantized.cpp

namespace nbits {

// Test hook: forces the scalar kernels of this file; returns the previous setting.
std::atomic<bool> g_force_scalar{false};
bool set_force_scalar(bool on) { return g_force_scalar.exchange(on); }
static bool use_avx2() { return cpu_has_avx2() && simd_enabled() && !g_force_scalar.load(std::memory_order_relaxed); }

// Quantizes one row (K values, padded with zeros to nb * bs) the way MLAS QuantizeARow_CompInt8 does
// (matmul_nbits_quantize.cpp).
void quantize_row_int8(const float* a, int64_t K, int64_t bs, int64_t nb, int8_t* q, float* scale);

// One weight column: packed data, per-block fp32 scales and per-block zero points (uint8 unpacked, or float).
struct Col {
  const uint8_t* b;     // nb * blob bytes
  const float* scale;   // nb
  const uint8_t* zp;    // nb (int8 path and uint8 zero points)
  const float* zpf;     // nb (float zero points) or nullptr
};

// ---- scalar kernels ----

// out[r] = sum_blk (sa[r][blk] * sb[blk]) * sum_k qa[r][k] * (qb[k] - zp[blk])
void int8_cols_scalar(int R, const int8_t* const* qa, const float* const* sa, int64_t nb, int64_t bs, int bits,
                      const Col& c, float* out) {
  const int64_t blob = bs * bits / 8;
  for (int r = 0; r < R; r++) {
    float acc = 0.f;
    for (int64_t blk = 0; blk < nb; blk++) {
      const uint8_t* w = c.b + blk * blob;
      const int8_t* a = qa[r] + blk * bs;
      const int z = c.zp[blk];
      int32_t d = 0;
      if (bits == 4) {
        for (int64_t j = 0; j < bs / 2; j++)
          d += a[2 * j] * ((w[j] & 15) - z) + a[2 * j + 1] * ((w[j] >> 4) - z);
      } else {
        for (int64_t j = 0; j < bs; j++) d += a[j] * (w[j] - z);
      }
      const float cs = sa[r][blk] * c.scale[blk];
      acc += (float)d * cs;
    }
    out[r] = acc;
  }
}

static inline int q_at(const uint8_t* w, int64_t j, int bits) {
  return bits == 4 ? ((w[j >> 1] >> ((j & 1) * 4)) & 15) : w[j];
}

// out[r] = sum_k a[r][k] * (float(q - zp) * scale); a rows are fp32 padded to nb * bs.
void f32_cols_scalar(int R, const float* const* a, int64_t nb, int64_t bs, int bits, const Col& c, float* out) {
  const int64_t blob = bs * bits / 8;
  for (int r = 0; r < R; r++) out[r] = 0.f;
  for (int64_t blk = 0; blk < nb; blk++) {
    const uint8_t* w = c.b + blk * blob;
    const float s = c.scale[blk];
    for (int64_t j = 0; j < bs; j++) {
      const int q = q_at(w, j, bits);
      const float wv = c.zpf ? ((float)q - c.zpf[blk]) * s : (float)(q - (int)c.zp[blk]) * s;
      for (int r = 0; r < R; r++) out[r] += wv * a[r][blk * bs + j];
    }
  }
}

// ---- AVX2 kernels ----
#define OGX_AVX2 __attribute__((target("avx2,fma,f16c")))

OGX_AVX2 static inline float hsum8(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

// 16 bytes of packed nibbles -> 32 values in natural order (low nibble first).
OGX_AVX2 static inline __m256i unpack32(const uint8_t* p) {
  const __m128i raw = _mm_loadu_si128((const __m128i*)p);
  const __m128i m = _mm_set1_epi8(15);
  const __m128i lo = _mm_and_si128(raw, m), hi = _mm_and_si128(_mm_srli_epi16(raw, 4), m);
  return _mm256_set_m128i(_mm_unpackhi_epi8(lo, hi), _mm_unpacklo_epi8(lo, hi));
}

// sum of w (signed, |w| <= 15) * a (int8, > -128) in 8 int32 lanes.
OGX_AVX2 static inline __m256i dot_i8(__m256i w, __m256i a) {
  const __m256i p = _mm256_maddubs_epi16(_mm256_sign_epi8(w, w), _mm256_sign_epi8(a, w));
  return _mm256_madd_epi16(p, _mm256_set1_epi16(1));
}

template <int R>
OGX_AVX2 void int8_q4_cols_avx2(const int8_t* const* qa, const float* const* sa, int64_t nb, int64_t bs,
                                const Col& c, float* out) {
  __m256 acc[R];
  for (int r = 0; r < R; r++) acc[r] = _mm256_setzero_ps();
  __m128 acc4[R];
  for (int r = 0; r < R; r++) acc4[r] = _mm_setzero_ps();
  if (bs >= 32) {
    const int64_t blob = bs / 2;
    for (int64_t blk = 0; blk < nb; blk++) {
      const __m256i zpv = _mm256_set1_epi8((char)c.zp[blk]);
      __m256i dot[R];
      for (int r = 0; r < R; r++) dot[r] = _mm256_setzero_si256();
      for (int64_t k = 0; k < bs; k += 32) {
        const __m256i w = _mm256_sub_epi8(unpack32(c.b + blk * blob + k / 2), zpv);
        for (int r = 0; r < R; r++)
          dot[r] = _mm256_add_epi32(dot[r], dot_i8(w, _mm256_loadu_si256((const __m256i*)(qa[r] + blk * bs + k))));
      }
      for (int r = 0; r < R; r++) {
        const float cs = sa[r][blk] * c.scale[blk];
        acc[r] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot[r]), _mm256_set1_ps(cs), acc[r]);
      }
    }
  } else {  // bs == 16: two blocks per 256-bit step (lanes 0-3 first block, 4-7 second)
    int64_t blk = 0;
    for (; blk + 2 <= nb; blk += 2) {
      const __m256i zpv = _mm256_set_m128i(_mm_set1_epi8((char)c.zp[blk + 1]), _mm_set1_epi8((char)c.zp[blk]));
      const __m256i w = _mm256_sub_epi8(unpack32(c.b + blk * 8), zpv);
      for (int r = 0; r < R; r++) {
        const __m256i d = dot_i8(w, _mm256_loadu_si256((const __m256i*)(qa[r] + blk * 16)));
        const __m256 cs = _mm256_set_m128(_mm_set1_ps(sa[r][blk + 1] * c.scale[blk + 1]),
                                          _mm_set1_ps(sa[r][blk] * c.scale[blk]));
        acc[r] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(d), cs, acc[r]);
      }
    }
    if (blk < nb) {  // odd tail block
      const __m128i raw = _mm_loadl_epi64((const __m128i*)(c.b + blk * 8));
      const __m128i m = _mm_set1_epi8(15);
      const __m128i lo = _mm_and_si128(raw, m), hi = _mm_and_si128(_mm_srli_epi16(raw, 4), m);
      const __m128i w = _mm_sub_epi8(_mm_unpacklo_epi8(lo, hi), _mm_set1_epi8((char)c.zp[blk]));
      for (int r = 0; r < R; r++) {
        const __m128i a = _mm_loadu_si128((const __m128i*)(qa[r] + blk * 16));
        const __m128i p = _mm_maddubs_epi16(_mm_sign_epi8(w, w), _mm_sign_epi8(a, w));
        const __m128i d = _mm_madd_epi16(p, _mm_set1_epi16(1));
        acc4[r] = _mm_fmadd_ps(_mm_cvtepi32_ps(d), _mm_set1_ps(sa[r][blk] * c.scale[blk]), acc4[r]);
      }
    }
  }
  for (int r = 0; r < R; r++) {
    __m128 s = _mm_add_ps(acc4[r], _mm_movehl_ps(acc4[r], acc4[r]));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    out[r] = hsum8(acc[r]) + _mm_cvtss_f32(s);
  }
}

template <int R>
OGX_AVX2 void int8_q8_cols_avx2(const int8_t* const* qa, const float* const* sa, int64_t nb, int64_t bs,
                                const Col& c, float* out) {
  __m256 acc[R];
  for (int r = 0; r < R; r++) acc[r] = _mm256_setzero_ps();
  for (int64_t blk = 0; blk < nb; blk++) {
    const __m256i zpv = _mm256_set1_epi16((short)c.zp[blk]);
    __m256i dot[R];
    for (int r = 0; r < R; r++) dot[r] = _mm256_setzero_si256();
    for (int64_t k = 0; k < bs; k += 16) {
      const __m256i w =
          _mm256_sub_epi16(_mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i*)(c.b + blk * bs + k))), zpv);
      for (int r = 0; r < R; r++) {
        const __m256i a = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i*)(qa[r] + blk * bs + k)));
        dot[r] = _mm256_add_epi32(dot[r], _mm256_madd_epi16(w, a));
      }
    }
    for (int r = 0; r < R; r++)
      acc[r] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot[r]), _mm256_set1_ps(sa[r][blk] * c.scale[blk]), acc[r]);
  }
  for (int r = 0; r < R; r++) out[r] = hsum8(acc[r]);
}

// 8 weights (uint8 values in the low bytes of q8) -> float(q - zp) * s.
OGX_AVX2 static inline __m256 dequant8(__m128i q8, __m256i zp, __m256 zpf, bool use_zpf, __m256 s) {
  __m256i qi = _mm256_cvtepu8_epi32(q8);
  if (use_zpf) return _mm256_mul_ps(_mm256_sub_ps(_mm256_cvtepi32_ps(qi), zpf), s);
  return _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(qi, zp)), s);
}

template <int R>
OGX_AVX2 void f32_cols_avx2(const float* const* a, int64_t nb, int64_t bs, int bits, const Col& c, float* out) {
  __m256 acc[R];
  for (int r = 0; r < R; r++) acc[r] = _mm256_setzero_ps();
  const int64_t blob = bs * bits / 8;
  const bool use_zpf = c.zpf != nullptr;
  for (int64_t blk = 0; blk < nb; blk++) {
    const __m256 s = _mm256_set1_ps(c.scale[blk]);
    const __m256i zp = _mm256_set1_epi32(use_zpf ? 0 : c.zp[blk]);
    const __m256 zpf = _mm256_set1_ps(use_zpf ? c.zpf[blk] : 0.f);
    const uint8_t* wb = c.b + blk * blob;
    for (int64_t k = 0; k < bs; k += 16) {
      __m128i q;
      if (bits == 4) {
        const __m128i raw = _mm_loadl_epi64((const __m128i*)(wb + k / 2));
        const __m128i m = _mm_set1_epi8(15);
        q = _mm_unpacklo_epi8(_mm_and_si128(raw, m), _mm_and_si128(_mm_srli_epi16(raw, 4), m));
      } else {
        q = _mm_loadu_si128((const __m128i*)(wb + k));
      }
      const __m256 w0 = dequant8(q, zp, zpf, use_zpf, s);
      const __m256 w1 = dequant8(_mm_srli_si128(q, 8), zp, zpf, use_zpf, s);
      const int64_t off = blk * bs + k;
      for (int r = 0; r < R; r++) {
        acc[r] = _mm256_fmadd_ps(w0, _mm256_loadu_ps(a[r] + off), acc[r]);
        acc[r] = _mm256_fmadd_ps(w1, _mm256_loadu_ps(a[r] + off + 8), acc[r]);
      }
    }
  }
  for (int r = 0; r < R; r++) out[r] = hsum8(acc[r]);
}

void int8_cols(int R, const int8_t* const* qa, const float* const* sa, int64_t nb, int64_t bs, int bits,
               const Col& c, float* out, bool avx2) {
  if (!avx2) return int8_cols_scalar(R, qa, sa, nb, bs, bits, c, out);
  if (bits == 4) {
    switch (R) {
      case 4: return int8_q4_cols_avx2<4>(qa, sa, nb, bs, c, out);
      case 3: return int8_q4_cols_avx2<3>(qa, sa, nb, bs, c, out);
      case 2: return int8_q4_cols_avx2<2>(qa, sa, nb, bs, c, out);
      default: return int8_q4_cols_avx2<1>(qa, sa, nb, bs, c, out);
    }
  }
  switch (R) {
    case 4: return int8_q8_cols_avx2<4>(qa, sa, nb, bs, c, out);
    case 3: return int8_q8_cols_avx2<3>(qa, sa, nb, bs, c, out);
    case 2: return int8_q8_cols_avx2<2>(qa, sa, nb, bs, c, out);
    default: return int8_q8_cols_avx2<1>(qa, sa, nb, bs, c, out);
  }
}

void f32_cols(int R, const float* const* a, int64_t nb, int64_t bs, int bits, const Col& c, float* out, bool avx2) {
  if (!avx2) return f32_cols_scalar(R, a, nb, bs, bits, c, out);
  switch (R) {
    case 4: return f32_cols_avx2<4>(a, nb, bs, bits, c, out);
    case 3: return f32_cols_avx2<3>(a, nb, bs, bits, c, out);
    case 2: return f32_cols_avx2<2>(a, nb, bs, bits, c, out);
    default: return f32_cols_avx2<1>(a, nb, bs, bits, c, out);
  }
}

}  // namespace nbits

namespace {

using nbits::Col;

float to_f32_at(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DType::f32: return t.data<float>()[i];
    case DType::f16: return f16_to_f32(t.data<uint16_t>()[i]);
    case DType::bf16: return bf16_to_f32(t.data<uint16_t>()[i]);
    default: return (float)t.get_f64(i);
  }
}

std::vector<float> to_f32_vec(const Tensor& t) {
  std::vector<float> v((size_t)t.numel());
  if (t.dtype() == DType::f32) {
    std::memcpy(v.data(), t.data<float>(), v.size() * 4);
  } else {
    for (int64_t i = 0; i < t.numel(); i++) v[(size_t)i] = to_f32_at(t, i);
  }
  return v;
}

class MatMulNBitsKernel : public Kernel {
 public:
  explicit MatMulNBitsKernel(const KernelInfo& info) : node_(info.node) {
    const Node& n = info.node;
    K_ = n.attr_int("K", -1);
    N_ = n.attr_int("N", -1);
    bits_ = (int)n.attr_int("bits", 4);
    bs_ = n.attr_int("block_size", -1);
    level_ = n.attr_int("accuracy_level", 0);
    const std::string gemm = info.option("int4_gemm", "auto");
    OGX_CHECK(gemm == "auto" || gemm == "mlas", n.describe(), ": int4_gemm must be 'auto' or 'mlas', got '", gemm, "'");
    amx_allowed_ = gemm == "auto";
    OGX_CHECK(K_ > 0 && N_ > 0, n.describe(), ": attributes K and N must be positive (got K=", K_, ", N=", N_, ")");
    OGX_CHECK(bits_ == 4 || bits_ == 8, n.describe(), ": bits=", bits_, " is not supported (4 or 8)");
    OGX_CHECK(bs_ >= 16 && (bs_ & (bs_ - 1)) == 0, n.describe(), ": block_size must be a power of two >= 16, got ",
              bs_);
    nb_ = (K_ + bs_ - 1) / bs_;
    blob_ = bs_ * bits_ / 8;
    zp_bytes_ = (nb_ * bits_ + 7) / 8;
    // ORT takes the int8 path only when it could pre-pack B (a constant); g_idx and float zero points fall back.
    b_const_ = info.constant_input(1) != nullptr;
    if (const Tensor* s = info.constant_input(2)) {
      check_scales(*s);
      scales_ = to_f32_vec(*s);
      scales_cached_ = true;
    }
    const bool zp_given = n.inputs.size() > 3 && n.inputs[3] >= 0;
    if (!zp_given) {
      zp_.assign((size_t)(N_ * nb_), (uint8_t)(1 << (bits_ - 1)));
      zp_cached_ = zp_default_ = true;
    } else if (const Tensor* z = info.constant_input(3)) {
      unpack_zp(*z, zp_, zpf_);
      zp_cached_ = true;
    }
    has_g_idx_ = n.inputs.size() > 4 && n.inputs[4] >= 0;
    consts_only_ = true;
    for (int k = 4; k < (int)n.inputs.size(); k++) consts_only_ = consts_only_ && (n.inputs[k] < 0 || info.constant_input(k));
    if (const Tensor* g = info.constant_input(4)) check_g_idx(*g);
    maybe_pack(info.constant_input(1), info.num_threads);
  }

  // Rows of A are independent when B, scales, zero points, g_idx and bias are constants (a decoder's weights), and
  // each row's sum does not depend on its place: MLAS sums the odd last row of blocks >= 64 apart, and calls of
  // kAmxMinRows rows or more take the AMX kernel (its own block order).
  bool rows_independent() const override {
    return b_const_ && scales_cached_ && zp_cached_ && consts_only_ && bs_ < 64;
  }
  int64_t max_rows_together() const override {
    return amx_allowed_ && nbits::amx_int8_available() ? nbits::kAmxMinRows - 1 : INT64_MAX;
  }

  void compute(KernelContext& ctx) override {
    const Tensor& A = ctx.input(0);
    const Tensor& B = ctx.input(1);
    OGX_CHECK(A.dtype() == DType::f32 || A.dtype() == DType::f16 || A.dtype() == DType::bf16, node_.describe(),
              ": A must be float32 or float16, got ", dtype_name(A.dtype()));
    OGX_CHECK(A.rank() >= 1 && A.dim(-1) == K_, node_.describe(), ": A ", shape_str(A.shape()),
              " must end with K=", K_);
    OGX_CHECK(B.dtype() == DType::u8 && B.numel() == N_ * nb_ * blob_, node_.describe(), ": B must be uint8 [N=", N_,
              ", ", nb_, ", ", blob_, "], got ", dtype_name(B.dtype()), " ", shape_str(B.shape()));
    if (const Tensor* g = ctx.input_or_null(4)) check_g_idx(*g);

    // The packed path has its own copy of scales and zero points (the ones here were released after packing).
    const bool packed = mlas_ok_ && nbits::use_avx2() && nbits::q4_packed_available();
    std::vector<float> scales_local;
    const float* scales = scales_.data();
    if (!scales_cached_ && !packed) {
      const Tensor& s = ctx.input(2);
      check_scales(s);
      if (s.dtype() == DType::f32) {
        scales = s.data<float>();
      } else {
        scales_local = to_f32_vec(s);
        scales = scales_local.data();
      }
    }
    std::vector<uint8_t> zp_local;
    std::vector<float> zpf_local;
    const uint8_t* zp = zp_.data();
    const float* zpf = zpf_.empty() ? nullptr : zpf_.data();
    if (packed) {
    } else if (zp_default_ && zp_.empty()) {  // released after packing
      zp_local.assign((size_t)(N_ * nb_), (uint8_t)(1 << (bits_ - 1)));
      zp = zp_local.data();
    } else if (!zp_cached_) {
      unpack_zp(ctx.input(3), zp_local, zpf_local);
      zp = zp_local.empty() ? nullptr : zp_local.data();
      zpf = zpf_local.empty() ? nullptr : zpf_local.data();
    }
    std::vector<float> bias;
    if (const Tensor* bt = ctx.input_or_null(5)) {
      OGX_CHECK(bt->numel() == N_ && is_float(bt->dtype()), node_.describe(), ": bias must have N=", N_,
                " float values, got ", dtype_name(bt->dtype()), " ", shape_str(bt->shape()));
      bias = to_f32_vec(*bt);
    }

    Shape out_shape = A.shape();
    out_shape.back() = N_;
    Tensor& Y = ctx.output(0, A.dtype(), out_shape);
    const int64_t M = A.numel() / K_;
    if (M == 0) return;

    // fp32 result: written in place when Y is fp32, else into scratch and converted.
    std::vector<float> y_scratch;
    float* y = nullptr;
    if (A.dtype() == DType::f32) {
      y = Y.data<float>();
    } else {
      y_scratch.resize((size_t)(M * N_));
      y = y_scratch.data();
    }

    const int64_t kp = nb_ * bs_;  // padded K
    // MLAS's int8 path exists for block sizes 16..256 only; ORT computes larger blocks in fp32.
    const bool int8_path = level_ == 4 && b_const_ && zpf == nullptr && !has_g_idx_ && nbits::mlas_block_supported(bs_);
    const bool avx2 = nbits::use_avx2();
    const uint8_t* bdata = B.data<uint8_t>();
    ThreadPool& pool = ctx.pool();

    // A as fp32 rows padded with zeros to kp (A itself when it already is).
    std::vector<float> af_local;
    const float* af = nullptr;
    if (A.dtype() == DType::f32 && kp == K_) {
      af = A.data<float>();
    } else {
      af_local.assign((size_t)(M * kp), 0.f);
      for (int64_t m = 0; m < M; m++) {
        float* row = &af_local[(size_t)(m * kp)];
        if (A.dtype() == DType::f32) {
          std::memcpy(row, A.data<float>() + m * K_, K_ * sizeof(float));
        } else {
          for (int64_t k = 0; k < K_; k++) row[k] = to_f32_at(A, m * K_ + k);
        }
      }
      af = af_local.data();
    }

    if (packed)
      return run_mlas(af, M, bias.empty() ? nullptr : bias.data(), y, pool, A.dtype(), Y);

    std::vector<int8_t> qa;
    std::vector<float> sa;
    if (int8_path) {
      qa.resize((size_t)(M * kp));
      sa.resize((size_t)(M * nb_));
      auto quant = [&](int64_t m0, int64_t m1) {
        for (int64_t m = m0; m < m1; m++)
          nbits::quantize_row_int8(af + m * kp, K_, bs_, nb_, &qa[(size_t)(m * kp)], &sa[(size_t)(m * nb_)]);
      };
      if (M > 1) pool.parallel_for(M, 1, quant);
      else quant(0, 1);
    }

    const int64_t row_block = 64;
    auto work = [&](int64_t n0, int64_t n1) {
      for (int64_t rb = 0; rb < M; rb += row_block) {
        const int64_t rend = std::min(M, rb + row_block);
        for (int64_t n = n0; n < n1; n++) {
          Col c{bdata + n * nb_ * blob_, scales + n * nb_, zp ? zp + n * nb_ : nullptr, zpf ? zpf + n * nb_ : nullptr};
          for (int64_t r0 = rb; r0 < rend; r0 += 4) {
            const int R = (int)std::min<int64_t>(4, rend - r0);
            float out[4];
            if (int8_path) {
              const int8_t* qrows[4];
              const float* srows[4];
              for (int r = 0; r < R; r++) {
                qrows[r] = &qa[(size_t)((r0 + r) * kp)];
                srows[r] = &sa[(size_t)((r0 + r) * nb_)];
              }
              nbits::int8_cols(R, qrows, srows, nb_, bs_, bits_, c, out, avx2);
            } else {
              const float* arows[4];
              for (int r = 0; r < R; r++) arows[r] = af + (r0 + r) * kp;
              nbits::f32_cols(R, arows, nb_, bs_, bits_, c, out, avx2);
            }
            for (int r = 0; r < R; r++) y[(r0 + r) * N_ + n] = out[r] + (bias.empty() ? 0.f : bias[(size_t)n]);
          }
        }
      }
    };
    if (M * N_ * K_ < kInlineWork) work(0, N_);
    else pool.parallel_for(N_, 16, work);
    store_result(y, M, A.dtype(), Y);
  }

 private:
  // Below this many multiply-adds a node runs on the calling thread: a hand-off costs more than the work.
  static constexpr int64_t kInlineWork = 1 << 18;

  // The int8 path on weights repacked once (matmul_nbits_mlas.h), when the CPU has AVX-512 VNNI.
  void maybe_pack(const Tensor* b, int threads) {
    if (!(level_ == 4 && bits_ == 4 && b && scales_cached_ && zp_cached_ && zpf_.empty() && !has_g_idx_ &&
          nbits::mlas_block_supported(bs_)))
      return;
    if (b->dtype() != DType::u8 || b->numel() != N_ * nb_ * blob_ || !nbits::q4_packed_available()) return;
    nbits::pack_q4_mlas(b->data<uint8_t>(), scales_.data(), zp_.data(), K_, N_, bs_, threads, mlas_);
    mlas_ok_ = true;
    // The packed copy holds the scales and zero points: the unpacked kernels (tests forcing them) read them again
    // from the inputs, so they are not kept twice (fp32 scales are a quarter of a 4-bit weight's bytes at block 32).
    std::vector<float>().swap(scales_);
    std::vector<uint8_t>().swap(zp_);
    scales_cached_ = false;
    if (!zp_default_) zp_cached_ = false;
    // The original bytes are not read again here: their pages of the weight file leave the process (a tied
    // embedding's lookup reads its few rows back from the file), so the weights do not count twice in memory.
    MappedFile::release_if_mapped(b->raw(), b->bytes());
  }

  // af: [M][nb * bs] fp32 rows; y: [M][N].
  void run_mlas(const float* af, int64_t M, const float* bias, float* y, ThreadPool& pool, DType adt, Tensor& Y) {
    const nbits::MlasQ4Packed& p = mlas_;
    const int64_t kp = nb_ * bs_;
    if (amx_allowed_ && M >= nbits::kAmxMinRows && nbits::amx_int8_available()) {
      nbits::run_q4_amx(p, af, K_, M, bias, y, pool);
      return store_result(y, M, adt, Y);
    }
    // Scratch shared by every MatMulNBits run on this thread (nodes run one at a time): a prompt's activations are
    // held once, not once per node (a 512-token prompt of a 1B model: 2.7 MB per projection, ~350 MB in all).
    // (References: the lambdas below run on the pool's threads and must use the caller's thread_local objects.)
    thread_local std::vector<int8_t> tl_qa;  // quantized activations [M][nb * bs]
    thread_local std::vector<float> tl_sa;   // their block scales [M][nb]
    thread_local nbits::MlasActs tl_act;
    std::vector<int8_t>& qa_ = tl_qa;
    std::vector<float>& sa_ = tl_sa;
    nbits::MlasActs& mlas_act_ = tl_act;
    qa_.resize((size_t)(M * kp));
    sa_.resize((size_t)(M * nb_));
    nbits::resize_acts(p, M, mlas_act_);
    auto quant = [&](int64_t m0, int64_t m1) {
      for (int64_t m = m0; m < m1; m++)
        nbits::quantize_row_int8(af + m * kp, K_, bs_, nb_, &qa_[(size_t)(m * kp)], &sa_[(size_t)(m * nb_)]);
      nbits::pack_acts_mlas(p, qa_.data(), sa_.data(), m0, m1, mlas_act_);
    };
    if (M > 1 && M * K_ >= kInlineWork) pool.parallel_for(M, 1, quant);
    else quant(0, M);
    auto work = [&](int64_t t0, int64_t t1) { nbits::q4_gemm_mlas(p, mlas_act_, M, t0, t1, bias, y); };
    // Threads take whole quads of tiles (one sequential stream of weights each).
    if (M * N_ * K_ < kInlineWork) work(0, p.tiles());
    else pool.parallel_for(p.quads(), 1, [&](int64_t q0, int64_t q1) { work(q0 * 4, std::min(q1 * 4, p.tiles())); });
    store_result(y, M, adt, Y);
  }

  // fp16 / bf16 outputs: y was computed in fp32 scratch.
  void store_result(const float* y, int64_t M, DType adt, Tensor& Y) const {
    if (adt == DType::f16) {
      uint16_t* o = Y.data<uint16_t>();
      for (int64_t i = 0; i < M * N_; i++) o[i] = f32_to_f16(y[i]);
    } else if (adt == DType::bf16) {
      uint16_t* o = Y.data<uint16_t>();
      for (int64_t i = 0; i < M * N_; i++) o[i] = f32_to_bf16(y[i]);
    }
  }

  void check_scales(const Tensor& s) const {
    OGX_CHECK(is_float(s.dtype()) && s.numel() == N_ * nb_, node_.describe(), ": scales must hold N*n_blocks = ",
              N_ * nb_, " float values, got ", dtype_name(s.dtype()), " ", shape_str(s.shape()));
  }

  // uint8 zero points (bits-wide, packed per row of N) -> one byte per block; float ones -> fp32 per block.
  void unpack_zp(const Tensor& z, std::vector<uint8_t>& out, std::vector<float>& outf) const {
    out.clear();
    outf.clear();
    if (z.dtype() == DType::u8) {
      OGX_CHECK(z.numel() == N_ * zp_bytes_, node_.describe(), ": uint8 zero_points must hold N*ceil(n_blocks*bits/8) = ",
                N_ * zp_bytes_, " bytes, got ", shape_str(z.shape()));
      const uint8_t* p = z.data<uint8_t>();
      out.resize((size_t)(N_ * nb_));
      for (int64_t n = 0; n < N_; n++)
        for (int64_t b = 0; b < nb_; b++) {
          const uint8_t* row = p + n * zp_bytes_;
          out[(size_t)(n * nb_ + b)] = bits_ == 8 ? row[b] : (uint8_t)((row[b / 2] >> ((b & 1) * 4)) & 15);
        }
    } else {
      OGX_CHECK(is_float(z.dtype()) && z.numel() == N_ * nb_, node_.describe(),
                ": zero_points must be uint8 or hold N*n_blocks = ", N_ * nb_, " float values, got ",
                dtype_name(z.dtype()), " ", shape_str(z.shape()));
      outf = to_f32_vec(z);
    }
  }

  void check_g_idx(const Tensor& g) const {
    OGX_CHECK(g.numel() == K_, node_.describe(), ": g_idx must have K=", K_, " entries, got ", shape_str(g.shape()));
    for (int64_t i = 0; i < K_; i++)
      OGX_CHECK(g.get_i64(i) == i / bs_, node_.describe(), ": g_idx that reorders blocks is not supported (g_idx[",
                i, "] = ", g.get_i64(i), ")");
  }

  const Node& node_;
  int64_t K_, N_, bs_, nb_, blob_, zp_bytes_, level_;
  int bits_;
  bool b_const_ = false, scales_cached_ = false, zp_cached_ = false, has_g_idx_ = false, consts_only_ = false;
  bool zp_default_ = false;  // no zero-point input: every zero point is 2^(bits - 1)
  bool amx_allowed_ = true;  // int4_gemm=auto: prompts may take the AMX kernel
  std::vector<float> scales_;
  std::vector<uint8_t> zp_;
  std::vector<float> zpf_;
  nbits::MlasQ4Packed mlas_;  // the int8 path's weights, packed for the MLAS-exact kernel
  bool mlas_ok_ = false;
};

}  // namespace

void register_matmul_nbits(KernelRegistry& r) {
  r.add("com.microsoft", "MatMulNBits",
        [](const KernelInfo& info) { return std::make_unique<MatMulNBitsKernel>(info); });
  register_gather_block_quantized(r);
}

}  // namespace ogx::cpu
