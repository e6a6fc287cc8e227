// Data-movement kernels over any element type (copied as raw bits): the strided copy with padding behind
// Transpose / Slice / Split / Concat / Expand / Tile / Pad / ConstantOfShape, Gather along an axis, GatherND,
// ScatterND; and Softmax / LogSoftmax along an axis.
#pragma once
#include <vector>

#include "providers/vulkan/command_recorder.h"
#include "providers/vulkan/context.h"

namespace ogx::vk::kernels {

enum class PadMode { none = 0, constant = 1, edge = 2, reflect = 3, wrap = 4 };

// One strided copy: for each coordinate c of `dims` (rank <= 5 after merging),
//   mode none:   dst[dst_offset + sum c_d * dst_strides_d] = src[src_offset + sum c_d * src_strides_d]
//   other modes: s_d = c_d - begin_d mapped into [0, src_dims_d) by the mode (constant: pad_bits outside);
//                dst[dst_offset + i] = src[src_offset + sum s_d * src_strides_d] (contiguous output).
struct CopyPlan {
  Shape dims;                        // iteration space (output coordinates)
  std::vector<int64_t> src_strides;  // elements, signed; 0 broadcasts
  std::vector<int64_t> dst_strides;  // mode none; empty: contiguous
  std::vector<int64_t> begin;        // pad modes: elements padded before, per dim (negative: cropped)
  Shape src_dims;                    // pad modes
  PadMode mode = PadMode::none;
  uint64_t pad_bits = 0;             // the constant's raw bits (mode constant)
  int64_t src_offset = 0, dst_offset = 0;  // elements
};
void copy_strided(CommandRecorder& rec, const TensorView& src, const TensorView& dst, const CopyPlan& plan);

// Contiguous strides of a shape (elements).
std::vector<int64_t> contiguous_strides(const Shape& s);

// out[o, j, e] = data[o, idx[j], e]: data viewed as [outer, axis_len, inner]; idx int64 or int32 (any shape, J
// elements); out: [outer, J, inner] elements. Out-of-range indices give zeros.
void gather_axis(CommandRecorder& rec, const TensorView& data, const TensorView& idx, int64_t axis,
                 const TensorView& out);

// ai.onnx GatherND with batch_dims; indices int64.
void gather_nd(CommandRecorder& rec, const TensorView& data, const TensorView& idx, int64_t batch_dims,
               const TensorView& out);

// ai.onnx ScatterND: out = data, then updates scattered at the int64 index tuples; reduction 0 none, 1 add, 2 mul,
// 3 max, 4 min (float32, float16, int32, int64; bool: none only).
void scatter_nd(CommandRecorder& rec, const TensorView& data, const TensorView& idx, const TensorView& updates,
                int reduction, const TensorView& out);

// Each batch row's last real position of x [B, S, D] (float32 / float16) into y [B, 1, D]: position
// seqlens_k[b] - (total_sequence_length - S) clamped to [0, S), GroupQueryAttention's lengths (int32 [B] and [1], on
// the device: a recorded step replays with other lengths). S - 1 for every row but a right-padded prompt's.
void last_rows(CommandRecorder& rec, const TensorView& x, const TensorView& seqlens_k,
               const TensorView& total_sequence_length, const TensorView& y);

// Softmax (log_softmax: LogSoftmax) of float32 / float16 x along `axis` (>= 0).
void softmax(CommandRecorder& rec, const TensorView& x, int64_t axis, bool log_softmax, const TensorView& y);

}  // namespace ogx::vk::kernels
