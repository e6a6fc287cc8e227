// Registration of the CPU provider's kernels, one function per op family (one file each).
#pragma once
#include "exec/kernel.h"

namespace ogx::cpu {

void register_elementwise(KernelRegistry& r);    // elementwise.cpp: Add, Sub, Mul, Div, Mod, Pow
void register_compare(KernelRegistry& r);        // elementwise_compare.cpp: Equal, Less..., And, Or, Xor
void register_variadic(KernelRegistry& r);       // elementwise_variadic.cpp: Min, Max, Sum, Mean, Where
void register_unary(KernelRegistry& r);          // unary.cpp: activations, math functions, Cast
void register_shape_ops(KernelRegistry& r);      // shape_ops.cpp: Shape, Reshape, Transpose, Slice, Concat...
void register_gather(KernelRegistry& r);         // gather.cpp: Gather, GatherElements, GatherND
void register_scatter(KernelRegistry& r);        // scatter.cpp: ScatterND
void register_pad(KernelRegistry& r);            // pad.cpp: Pad
void register_reduce(KernelRegistry& r);         // reduce.cpp: Reduce*, ArgMax/Min, Softmax, CumSum
void register_matmul(KernelRegistry& r);         // matmul.cpp: MatMul, Gemm
void register_matmul_nbits(KernelRegistry& r);   // matmul_nbits.cpp: com.microsoft MatMulNBits and
                                                 // (gather_block_quantized.cpp) GatherBlockQuantized
void register_norm(KernelRegistry& r);           // norm.cpp: (Skip)SimplifiedLayerNorm, (Skip)LayerNorm
void register_rotary(KernelRegistry& r);         // rotary.cpp: com.microsoft RotaryEmbedding
void register_attention(KernelRegistry& r);      // group_query_attention.cpp: com.microsoft GroupQueryAttention
void register_attention_mha(KernelRegistry& r);  // attention_mha.cpp: com.microsoft Attention (BERT / GPT-2)
void register_embed_layer_norm(KernelRegistry& r);  // embed_layer_norm.cpp: com.microsoft EmbedLayerNormalization
void register_control_flow(KernelRegistry& r);   // control_flow.cpp: If (subgraphs on the CPU kernels)

}  // namespace ogx::cpu
