// Graph rewrites the Vulkan session applies to its private copy of a decoder graph before placing nodes, so a
// decode step needs fewer dispatches. Each rewrite keeps the ONNX semantics exactly:
//  - q/k/v projections of one input (MatMul or MatMulNBits, constant weights, same attributes) become one projection
//    with concatenated weights feeding GroupQueryAttention as packed QKV; RotaryEmbedding nodes on q and k (same
//    position_ids and caches) fold into the attention's rotary with those position_ids (input 9); bias Adds after
//    the three projections (Qwen2) become the packed projection's bias.
//  - gate/up projections of one input followed by Sigmoid·Mul·Mul (SiLU(gate) * up) become ogx.GateUpSiLU: one
//    projection whose weight rows alternate gate/up, with SiLU·Mul in the decode matvec's epilogue.
//  - a (Skip)SimplifiedLayerNormalization whose normalized output feeds only one projection (MatMul, MatMulNBits or
//    the GateUpSiLU above) becomes ogx.NormProjection: the decode matvec computes the norm as its prologue (each
//    thread sums s^2 over the inputs it reads anyway; the rms scales the dot products at the end), so the norm
//    costs no dispatch. (A first prologue, commit 21bb308, staged the normalized row through shared memory with two
//    extra passes and was slower; see the git history of bench/.)
#pragma once
#include <functional>
#include <map>

#include "onnx/graph.h"

namespace ogx::vk::graph {

struct FusionCounts {
  int qkv = 0;       // attention inputs packed
  int rotary = 0;    // RotaryEmbedding pairs folded into attention
  int gate_up = 0;   // MLP gate/up pairs fused with SiLU·Mul
  int norm = 0;      // norms folded into the next projection
};

// Constants the rewrites create (concatenated weights), made on demand: value id -> builder.
using LazyConstants = std::map<int, std::function<Tensor()>>;

// How a rewrite's MatMul weight [K, N] is assembled from original weights: column c of `value` ([K, N_i]) becomes
// column offset + c * stride (packed QKV: offsets 0, Nq, Nq + Nk, stride 1; gate/up: offsets 0 and 1, stride 2).
// A session can place the parts on the device directly instead of building the weight on the host.
struct WeightPart {
  int value;
  int64_t offset, stride;
};
using WeightLayouts = std::map<int, std::vector<WeightPart>>;

// With `lazy`, new constants are registered there instead of being built into the graph (so a session can build,
// upload and drop them one at a time); without, they are built at once. With `layouts`, the new MatMul weights'
// assembly is recorded there too.
// matmul_bias: q/k/v MatMuls with bias Adds (Qwen2) fold their biases into the packed projection's input 5, which
// only the Vulkan MatMul reads (false when MatMul runs on the CPU: provider option cpu_ops); MatMulNBits biases are
// that op's own input.
FusionCounts fuse_decoder_patterns(Graph& g, LazyConstants* lazy = nullptr, WeightLayouts* layouts = nullptr,
                                   bool matmul_bias = true);

}  // namespace ogx::vk::graph
