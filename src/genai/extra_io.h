// What a caller adds to a generator's model runs beyond the inputs the generator makes itself (ONNX Runtime
// GenAI's Generator::SetModelInput / SetInputs / GetInput / GetOutput): extra inputs fed on every run, and the
// inputs and outputs of the latest run kept for reading back.
#pragma once
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "genai/model.h"

namespace ogx::genai {

class ExtraIO {
 public:
  // On the CPU provider every graph output other than the KV cache is kept from each run (they are computed
  // anyway); on other providers the logits, the hidden states output (config outputs.hidden_states, else one named
  // hidden_states), and outputs asked for with want_output.
  explicit ExtraIO(const Model& model);

  // Feeds `t` as graph input `name` on every following run. Throws for names the graph lacks, for the inputs the
  // generator sets itself (input_ids, attention_mask, position_ids, the KV cache), and for a dtype other than the
  // graph's.
  void set_input(const std::string& name, const Tensor& t);
  // The model's hidden_states input (genai_config model.decoder.inputs.hidden_states; ONNX Runtime GenAI's
  // SetHiddenStates): `t` ([rows, tokens, hidden_size] of the input's dtype, copied) on the following runs. A model
  // without that input: nothing happens, as upstream.
  void set_hidden_states(const Tensor& t);
  bool takes_hidden_states() const;  // the config names a hidden_states input
  // Before a run of `rows` x `tokens`: the hidden states are set and hold that many positions (else an error
  // naming the input and the shape the run needs). Nothing to check for a model without the input.
  void check_hidden_states(int64_t rows, int64_t tokens) const;
  // Appends the extra inputs (and the preset ones a builder adds, such as num_logits_to_keep, and the hidden
  // states) to a run's inputs.
  void add_inputs(std::vector<NamedTensor>& inputs) const;
  // Appends the outputs to keep (other than logits, which the generator binds) to a run's outputs.
  void add_outputs(std::vector<NamedTensor>& outputs) const;
  // Keeps the inputs and the non-KV outputs of a run that just finished.
  void keep(const std::vector<NamedTensor>& inputs, const std::vector<NamedTensor>& outputs);

  // The latest run's input / output of that name (shares its storage), or null when none was kept.
  const Tensor* input(const std::string& name) const;
  const Tensor* output(const std::string& name) const;
  // Whether the graph has an output of that name that is not part of the KV cache.
  bool is_graph_output(const std::string& name) const;
  // Keeps output `name` from the next run on.
  void want_output(const std::string& name) { wanted_.insert(name); }
  // Multi-token runs return every position's logits from now on (by default a session may compute the last
  // position's only, which is all the generator needs).
  void want_full_logits() { full_logits_ = true; }
  bool full_logits() const { return full_logits_; }

 private:
  bool is_generator_input(const std::string& name) const;
  bool is_kv_output(const std::string& name) const;
  const Model& model_;
  std::vector<NamedTensor> extra_;           // inputs set by the caller, in order of first setting
  std::vector<NamedTensor> preset_;          // inputs the generator fills with fixed values (num_logits_to_keep)
  std::optional<Tensor> hidden_states_;      // set_hidden_states' tensor
  std::set<std::string> wanted_;             // outputs (other than logits) bound on every run
  bool full_logits_ = false;
  std::map<std::string, Tensor> last_in_;    // the latest run's inputs
  std::map<std::string, Tensor> last_out_;   // the latest run's kept outputs (logits included)
};

}  // namespace ogx::genai
