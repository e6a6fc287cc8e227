// MatMul (numpy semantics, batched with broadcasting) and Gemm. Activations are widened to fp32, weights are read
// in their storage type (fp32/fp16/bf16) and accumulated in fp32 by gemm_f32acc (gemm_f32.cpp).
#include "providers/cpu/matmul.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "common/mapped_file.h"
#include "providers/cpu/broadcast.h"
#include "providers/cpu/cpu_ops.h"
#include "providers/cpu/simd.h"
#include "providers/cpu/type_dispatch.h"

namespace ogx::cpu {

namespace {

template <typename S>
void to_f32(const S* src, float* dst, int64_t n) {
  for (int64_t i = 0; i < n; i++) dst[i] = (float)load(src[i]);
}

void matmul_kernel(KernelContext& ctx) {
  const Tensor& A = ctx.input(0);
  const Tensor& B = ctx.input(1);
  OGX_CHECK(A.dtype() == B.dtype(), ctx.node().describe(), ": input types differ (", dtype_name(A.dtype()), ", ",
            dtype_name(B.dtype()), ")");
  OGX_CHECK(A.rank() >= 1 && B.rank() >= 1, ctx.node().describe(), ": scalar inputs");
  Shape as = A.shape(), bs = B.shape();
  bool a1 = as.size() == 1, b1 = bs.size() == 1;
  if (a1) as.insert(as.begin(), 1);
  if (b1) bs.push_back(1);
  int64_t M = as[as.size() - 2], K = as.back(), N = bs.back();
  OGX_CHECK(bs[bs.size() - 2] == K, ctx.node().describe(), ": inner dimensions differ: ", shape_str(A.shape()), " x ",
            shape_str(B.shape()));
  Shape abatch(as.begin(), as.end() - 2), bbatch(bs.begin(), bs.end() - 2);
  Shape batch = broadcast_shapes({&abatch, &bbatch}, ctx.node().describe());
  Shape out = batch;
  if (!a1) out.push_back(M);
  if (!b1) out.push_back(N);
  Tensor& Y = ctx.output(0, A.dtype(), out);
  int64_t nb = shape_numel(batch);
  auto ast = broadcast_strides(abatch, batch), bst = broadcast_strides(bbatch, batch);
  dispatch_float(A.dtype(), "MatMul", [&](auto tag) {
    using S = typename decltype(tag)::type;
    std::vector<float> af, yf;  // fp32 copies of A and Y for 16-bit types
    if constexpr (!std::is_same_v<S, float>) af.resize(M * K), yf.resize(M * N);
    for (int64_t bi = 0; bi < nb; bi++) {
      int64_t rem = bi, aoff = 0, boff = 0;
      for (int d = (int)batch.size() - 1; d >= 0; d--) {
        int64_t c = rem % batch[d];
        rem /= batch[d];
        aoff += c * ast[d];
        boff += c * bst[d];
      }
      const S* pa = A.data<S>() + aoff * M * K;
      const S* pb = B.data<S>() + boff * K * N;
      S* py = Y.data<S>() + bi * M * N;
      if constexpr (std::is_same_v<S, double>) {
        for (int64_t m = 0; m < M; m++)
          for (int64_t n = 0; n < N; n++) {
            double s = 0;
            for (int64_t k = 0; k < K; k++) s += pa[m * K + k] * pb[k * N + n];
            py[m * N + n] = s;
          }
      } else if constexpr (std::is_same_v<S, float>) {
        gemm_f32acc<S>(pa, pb, py, M, K, N, ctx.pool());  // fp32 in and out: no copies
      } else {
        to_f32(pa, af.data(), M * K);
        gemm_f32acc<S>(af.data(), pb, yf.data(), M, K, N, ctx.pool());
        for (int64_t i = 0; i < M * N; i++) py[i] = store<S>(yf[i]);
      }
    }
  });
}

// Y = alpha * op(A) op(B) + beta * C, computed through the MatMul path on transposed copies when needed.
void gemm_kernel(KernelContext& ctx) {
  const Tensor& A = ctx.input(0);
  const Tensor& B = ctx.input(1);
  OGX_CHECK(A.rank() == 2 && B.rank() == 2, ctx.node().describe(), ": A and B must be 2-D");
  bool ta = ctx.node().attr_int("transA", 0) != 0, tb = ctx.node().attr_int("transB", 0) != 0;
  float alpha = ctx.node().attr_float("alpha", 1.0f), beta = ctx.node().attr_float("beta", 1.0f);
  Tensor a = A.to_f32(), b = B.to_f32();
  int64_t M = ta ? A.dim(1) : A.dim(0), K = ta ? A.dim(0) : A.dim(1);
  int64_t KB = tb ? B.dim(1) : B.dim(0), N = tb ? B.dim(0) : B.dim(1);
  OGX_CHECK(K == KB, ctx.node().describe(), ": inner dimensions differ");
  std::vector<float> am(M * K), bm(K * N), y(M * N);
  for (int64_t m = 0; m < M; m++)
    for (int64_t k = 0; k < K; k++) am[m * K + k] = ta ? a.data<float>()[k * M + m] : a.data<float>()[m * K + k];
  for (int64_t k = 0; k < K; k++)
    for (int64_t n = 0; n < N; n++) bm[k * N + n] = tb ? b.data<float>()[n * K + k] : b.data<float>()[k * N + n];
  gemm_f32acc<float>(am.data(), bm.data(), y.data(), M, K, N, ctx.pool());
  Shape ys{M, N};
  std::vector<float> c(M * N, 0.0f);
  if (ctx.has_input(2)) {
    Tensor C = ctx.input(2).to_f32();
    std::array<std::vector<int64_t>, 1> st{broadcast_strides(C.shape(), ys)};
    for_each_broadcast<1>(ys, st, [&](int64_t i, const std::array<int64_t, 1>& o) { c[i] = C.data<float>()[o[0]]; });
  }
  Tensor& Y = ctx.output(0, A.dtype(), ys);
  dispatch_float(A.dtype(), "Gemm", [&](auto tag) {
    using S = typename decltype(tag)::type;
    for (int64_t i = 0; i < M * N; i++) Y.data<S>()[i] = store<S>((typename Compute<S>::type)(alpha * y[i] + beta * c[i]));
  });
}

// MatMul whose B is a constant matrix (every weight of a decoder): B repacked once into panels (gemm_packed_b.cpp),
// A's leading dimensions flattened into rows. Anything else takes matmul_kernel.
class ConstWeightMatMul : public Kernel {
 public:
  explicit ConstWeightMatMul(const KernelInfo& info) {
    const Tensor* b = info.constant_input(1);
    if (!b || b->rank() != 2) return;
    K_ = b->dim(0), N_ = b->dim(1), dt_ = b->dtype();
    switch (dt_) {
      case DType::f32: pack_b(b->data<float>(), K_, N_, f32_); break;
      case DType::f16: pack_b(b->data<f16_t>(), K_, N_, f16_); break;
      case DType::bf16: pack_b(b->data<bf16_t>(), K_, N_, bf16_); break;
      default: dt_ = DType::undefined;
    }
    // The packed copy is what runs read: the original's pages of a memory-mapped weight file leave the process, so
    // the weights do not count twice in memory (a read of the original, e.g. by another node, faults them back).
    if (dt_ != DType::undefined) MappedFile::release_if_mapped(b->raw(), b->bytes());
  }

  bool rows_independent() const override { return dt_ != DType::undefined; }

  void compute(KernelContext& ctx) override {
    const Tensor& A = ctx.input(0);
    if (dt_ == DType::undefined || A.dtype() != dt_ || A.rank() < 2 || A.dim(-1) != K_) return matmul_kernel(ctx);
    Shape out = A.shape();
    out.back() = N_;
    Tensor& Y = ctx.output(0, dt_, out);
    const int64_t M = A.numel() / K_;
    if (M == 0 || N_ == 0) return;
    if (dt_ == DType::f32) return gemm_packed_b(A.data<float>(), f32_, Y.data<float>(), M, ctx.pool());
    dispatch_float(dt_, "MatMul", [&](auto tag) {
      using S = typename decltype(tag)::type;
      if constexpr (std::is_same_v<S, f16_t> || std::is_same_v<S, bf16_t>) {
        std::vector<float> af((size_t)(M * K_)), yf((size_t)(M * N_));
        to_f32(A.data<S>(), af.data(), M * K_);
        if constexpr (std::is_same_v<S, f16_t>) gemm_packed_b(af.data(), f16_, yf.data(), M, ctx.pool());
        else gemm_packed_b(af.data(), bf16_, yf.data(), M, ctx.pool());
        for (int64_t i = 0; i < M * N_; i++) Y.data<S>()[i] = store<S>(yf[(size_t)i]);
      }
    });
  }

 private:
  int64_t K_ = 0, N_ = 0;
  DType dt_ = DType::undefined;
  PackedB<float> f32_;
  PackedB<f16_t> f16_;
  PackedB<bf16_t> bf16_;
};

}  // namespace

void register_matmul(KernelRegistry& r) {
  r.add("", "MatMul", [](const KernelInfo& info) { return std::make_unique<ConstWeightMatMul>(info); });
  r.add_fn("", "Gemm", gemm_kernel);
}

}  // namespace ogx::cpu
