// Elementwise kernels: binary ops with ONNX broadcasting, unary activations, fused SiLU*Mul, embedding Gather.
#pragma once
#include "providers/vulkan/command_recorder.h"
#include "providers/vulkan/context.h"

namespace ogx::vk::kernels {

enum class BinaryOp : uint32_t { add = 0, sub = 1, mul = 2, div = 3 };
enum class UnaryOp : uint32_t { sigmoid = 10, silu = 11, neg = 12, tanh = 13, gelu_tanh = 14 };

// out = a OP b with numpy broadcasting (rank <= 6); out's shape must be the broadcast shape.
void binary(CommandRecorder& rec, BinaryOp op, const TensorView& a, const TensorView& b, const TensorView& out);
void unary(CommandRecorder& rec, UnaryOp op, const TensorView& a, const TensorView& out);

// out[r, c] = silu(gate[r, c]) * up[r, c]. gate/up: [rows, cols] views; when `fused` holds [rows, 2*cols]
// (gate first) pass it as both gate and up with fused = true.
void silu_mul(CommandRecorder& rec, const TensorView& gate, const TensorView& up, const TensorView& out, bool fused);

// out[r, c] = silu(gu[r, 2c]) * gu[r, 2c + 1]: gate/up pairs interleaved along the last axis of gu [rows, 2 * cols].
void silu_mul_interleaved(CommandRecorder& rec, const TensorView& gate_up, const TensorView& out);

// out[i, :] = table[ids[i], :]. table: [V, D] f32/f16; ids: int64 [..]; out: [.., D].
void gather_rows(CommandRecorder& rec, const TensorView& table, const TensorView& ids, const TensorView& out);

// Cast between float32 and float16 (same element count).
void cast(CommandRecorder& rec, const TensorView& in, const TensorView& out);

// Numpy broadcast of two shapes; ogx::Error naming both when incompatible.
Shape broadcast_shapes(const Shape& a, const Shape& b);

}  // namespace ogx::vk::kernels
