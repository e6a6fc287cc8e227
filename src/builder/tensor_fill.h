// Producers of initializer bytes from weight sources: float/fp16 (optionally transposed to ONNX MatMul's
// [in, out] layout), int4 MatMulNBits triples, and rotary cos/sin caches. All work in row chunks, in parallel.
#pragma once
#include "builder/graph_writer.h"
#include "builder/quantize.h"
#include "builder/weight_source.h"

namespace ogx::builder {

// dtype FLOAT or FLOAT16; transpose: src [N, K] -> dst [K, N].
FillFn fill_float(Source src, int dtype, bool transpose);
// dsts: Q4 [N, blocks, block/2], scales [N, blocks], zero points [N * ceil(blocks/2)] (asymmetric only).
JointFillFn fill_int4(Source src, Int4Layout layout);

}  // namespace ogx::builder
