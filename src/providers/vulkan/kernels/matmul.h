// MatMul [.., M, K] x [K, N] and MatMulNBits (int4) on the Vulkan provider: matvec for decode (M = 1), the skinny
// matmul for batched decode (2 <= M <= 16), tiled matmul for prompts; fp32/fp16 storage, fp32 accumulation.
#pragma once
#include <functional>
#include <optional>
#include <vector>

#include "providers/vulkan/command_recorder.h"
#include "providers/vulkan/context.h"

namespace ogx::vk::kernels {

// A weight resident on the device, laid out for the kernels.
struct MatMulWeight {
  DType dtype = DType::undefined;  // storage of activations/scales: f32 or f16
  bool int4 = false;
  int64_t K = 0, N = 0;
  int64_t block_size = 0, nblocks = 0;  // int4 only
  DeviceBuffer data;         // fp: [N, K] (ONNX [K, N] transposed at upload); int4: [N, nblocks, bs/2] uint8
  DeviceBuffer scales;       // int4: [N, nblocks] of dtype
  DeviceBuffer zero_points;  // int4, optional: [N, ceil(nblocks/2)] uint8 packed 4-bit
  bool has_zero_points = false;
};

// Uploads an ONNX MatMul weight B [K, N] (f32/f16), transposing it to [N, K] chunk by chunk through the upload heap.
MatMulWeight upload_matmul_weight(Context& ctx, const std::string& name, const Tensor& b);
// A weight assembled from parts on the device: column c of part.w ([K, N_i]) becomes column offset + c * stride of
// the [K, N] weight (row offset + c * stride of the uploaded [N, K]). Every column must be covered exactly once.
struct WeightColumns {
  const Tensor* w;
  int64_t offset, stride;
};
MatMulWeight upload_matmul_weight_parts(Context& ctx, const std::string& name, const std::vector<WeightColumns>& parts,
                                        int64_t N);

// Uploads MatMulNBits (bits = 4) inputs: b [N, nblocks, bs/2] uint8, scales [N * nblocks] f32/f16, optional
// zero_points [N * ceil(nblocks/2)] uint8. With `uploaded`, the weight takes views of the caller's device copies of
// input i (0 b, 1 scales, 2 zero_points) instead (shared with other nodes reading them).
MatMulWeight upload_matmul_nbits(Context& ctx, const std::string& name, const Tensor& b, const Tensor& scales,
                                 const Tensor* zero_points, int64_t K, int64_t N, int64_t block_size,
                                 const std::function<TensorView(int)>& uploaded = nullptr);

// What a projection of a by w (+ bias) reads, for the recorder's hazard tracking: a, the weight data, the int4
// scales and zero points when present, the bias when given.
std::vector<BufferSlice> projection_reads(const TensorView& a, const MatMulWeight& w, const TensorView* bias);

// The most activation rows the decode projections (matvec_fused) serve: 1 row runs matvec.comp, 2..this many
// matvec_skinny.comp (each weight read once for all rows); tuning's skinny_max_m, at least 2, at most 16.
int64_t decode_rows_max(const Context& ctx);

// Whether matvec_fused serves M rows (with silu_pairs: the serving kernel's rows per workgroup must be even).
bool matvec_fused_applies(const Context& ctx, int64_t M, bool silu_pairs);

// c[.., M, N] = a[.., M, K] x w (+ bias [N]). Picks matvec_fused for M <= decode_rows_max rows in total, the tiled
// (or matrix-unit) matmul otherwise.
void matmul(CommandRecorder& rec, const TensorView& a, const MatMulWeight& w, const TensorView* bias,
            const TensorView& c);

// A (Skip)SimplifiedLayerNormalization folded into the next decode projection (matvec_fused): the projection reads
// s = x (+ skip) (+ bias) and multiplies (s * gamma) / sqrt(mean(s^2) + epsilon); residual (optional) receives s.
struct NormPrologue {
  const TensorView* skip = nullptr;      // [M, K]
  const TensorView* bias = nullptr;      // [K]
  const TensorView* gamma = nullptr;     // [K], required
  float epsilon = 1e-5f;
  const TensorView* residual = nullptr;  // [M, K]
};

// Decode projection (M <= decode_rows_max rows) with optional fused parts: `norm` as its prologue, and with `silu_pairs` the
// gate/up epilogue of matvec_gate_up_silu (y [M, N/2]); else y = x' w (+ bias) [M, N]. One dispatch.
void matvec_fused(CommandRecorder& rec, const TensorView& x, const MatMulWeight& w, const TensorView* bias,
                  const NormPrologue* norm, bool silu_pairs, const TensorView& y);

// Decode projection with (gate, up) weight rows interleaved (w.N = 2I): y[m, j] = silu(x w[2j]) * (x w[2j + 1]),
// y [M, I], M <= decode_rows_max; one dispatch for the MLP's gate/up projection and SiLU·Mul.
void matvec_gate_up_silu(CommandRecorder& rec, const TensorView& x, const MatMulWeight& w, const TensorView& y);

// MatMulNBits accuracy_level 4 activation quantization (fp32): y = x rounded per block of block_size along the
// last axis to int8 levels of amax/127, as ONNX Runtime's CPU int8 path quantizes A. x, y: [.., K] f32.
void quantize_int8_blocks(CommandRecorder& rec, const TensorView& x, int64_t block_size, const TensorView& y);

// Batched product of two device tensors: c[b, M, N] = a[b, M, K] x bmat[b or 1, K, N].
void matmul_batched(CommandRecorder& rec, const TensorView& a, const TensorView& bmat, const TensorView& c);

}  // namespace ogx::vk::kernels
