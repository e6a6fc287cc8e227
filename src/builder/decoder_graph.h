// The decoder-only transformer graph in the reference builder's conventions (names, op order, attributes).
#pragma once
#include "builder/builder.h"
#include "builder/graph_writer.h"
#include "builder/hf_config.h"
#include "builder/lora.h"
#include "builder/weight_source.h"

namespace ogx::builder {

struct GraphSettings {
  Precision precision;
  Provider provider;
  int block_size;
  bool symmetric;
  // With an adapter: its LoRA branches as graph inputs (lora.h); each one made is appended to lora_inputs.
  PeftAdapter* lora = nullptr;
  struct LoraInput {
    std::string a_name, b_name;  // graph inputs: A' [in, lora_r], B' [lora_r, out]
    LoraWeights weights;
  };
  std::vector<LoraInput>* lora_inputs = nullptr;
  // The reference builder's include_hidden_states: the final norm's output is also graph output "hidden_states"
  // [batch_size, sequence_length, hidden_size] (e.g. to feed an MTP head).
  bool include_hidden_states = false;
  int io_dtype() const;       // FLOAT or FLOAT16
  bool fused_rope() const { return provider == Provider::cpu; }  // GQA do_rotary vs RotaryEmbedding
};

// Adds inputs, outputs, nodes and initializers of the whole model to `g`.
void build_decoder_graph(const HfConfig& c, const GraphSettings& s, WeightProvider& w, GraphWriter& g);

}  // namespace ogx::builder
