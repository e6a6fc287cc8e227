// Elementwise kernels: the ops of kernels/elementwise_ops.table (ONNX broadcasting, float / int / bool), fused
// SiLU*Mul, embedding Gather, float casts.
#pragma once
#include <string>
#include <vector>

#include "providers/vulkan/command_recorder.h"
#include "providers/vulkan/context.h"

namespace ogx::vk::kernels {

// One row of kernels/elementwise_ops.table (see its header for the columns); code = its position.
struct ElementwiseRow {
  std::string kind;     // "unary", "binary", "compare", "select"
  std::string domain;   // "" (ai.onnx) or "com.microsoft"
  std::string op_type;  // e.g. "Gelu"
  std::string types;    // type classes: "float", "int", "bool", space-separated
  std::string spec;     // parameters and flags, e.g. "a=alpha:0.01", "bias@1", "variadic"
  uint32_t code = 0;
  bool allows(DType t) const;  // t's type class is among `types`
};
const std::vector<ElementwiseRow>& elementwise_rows();
// The first row for (domain, op_type); ogx::Error when there is none.
const ElementwiseRow& elementwise_row(const std::string& domain, const std::string& op_type);

// out = row(ins...) with numpy broadcasting: 1 input (unary), 2 (binary, compare) or 3 (select: bool condition,
// then two of out's dtype). Every input must broadcast to out's shape (rank <= 5 after merging dims). a, b: the
// row's float parameters. Storage: float32, float16, int32, int64 (devices with shaderInt64), bool.
void elementwise(CommandRecorder& rec, const ElementwiseRow& row, const std::vector<const TensorView*>& ins,
                 const TensorView& out, float a = 0.0f, float b = 0.0f);

// Shorthands over the table for the kernels' own users (tests, benchmarks).
enum class BinaryOp { add, sub, mul, div };
enum class UnaryOp { sigmoid, silu, neg, tanh, gelu_tanh };
void binary(CommandRecorder& rec, BinaryOp op, const TensorView& a, const TensorView& b, const TensorView& out);
void unary(CommandRecorder& rec, UnaryOp op, const TensorView& a, const TensorView& out);

// out[r, c] = silu(gate[r, c]) * up[r, c]. gate/up: [rows, cols] views; when `fused` holds [rows, 2*cols]
// (gate first) pass it as both gate and up with fused = true.
void silu_mul(CommandRecorder& rec, const TensorView& gate, const TensorView& up, const TensorView& out, bool fused);

// out[r, c] = silu(gu[r, 2c]) * gu[r, 2c + 1]: gate/up pairs interleaved along the last axis of gu [rows, 2 * cols].
void silu_mul_interleaved(CommandRecorder& rec, const TensorView& gate_up, const TensorView& out);

// out[i, :] = table[ids[i], :]. table: [V, D] f32/f16; ids: int64 [..]; out: [.., D].
void gather_rows(CommandRecorder& rec, const TensorView& table, const TensorView& ids, const TensorView& out);
// GatherBlockQuantized with 4-bit values (gather_q4.comp): out[i, k] = float(q - zp) * scale of row ids[i] of data,
// uint8 [V, K / 2] (low nibble first); scales [V, K / block_size] f32/f16 (out's dtype); zero_points (null: 8) uint8
// [V, ceil(K / block_size / 2)] packed alike; ids int64; out [.., K]. The CPU kernel's values exactly.
void gather_block_quantized(CommandRecorder& rec, const TensorView& data, const TensorView& scales,
                            const TensorView* zero_points, int64_t block_size, const TensorView& ids,
                            const TensorView& out);

// Cast between float32 and float16 (same element count).
void cast(CommandRecorder& rec, const TensorView& in, const TensorView& out);

// Numpy broadcast of two shapes; ogx::Error naming both when incompatible.
Shape broadcast_shapes(const Shape& a, const Shape& b);

}  // namespace ogx::vk::kernels
