#include "genai/extra_io.h"

#include <algorithm>

namespace ogx::genai {

namespace {

bool matches_layer_pattern(const std::string& name, const std::string& pattern) {
  size_t p = pattern.find("%d");
  if (p == std::string::npos) return name == pattern;
  const std::string head = pattern.substr(0, p), tail = pattern.substr(p + 2);
  if (name.size() <= head.size() + tail.size() || name.compare(0, head.size(), head) != 0 ||
      name.compare(name.size() - tail.size(), tail.size(), tail) != 0)
    return false;
  const std::string mid = name.substr(head.size(), name.size() - head.size() - tail.size());
  return std::all_of(mid.begin(), mid.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

ExtraIO::ExtraIO(const Model& model) : model_(model) {
  const Graph& g = model.session().graph();
  const DecoderConfig& d = model.config().model.decoder;
  // num_logits_to_keep (a scalar int64 some exports take): 0 keeps every position's logits, which the generator
  // then reads as it reads a graph without the input.
  for (const char* name : {"num_logits_to_keep", "logits_to_keep"})
    if (const ValueInfo* v = g.input_info(name); v && (v->dtype == DType::i64 || v->dtype == DType::i32)) {
      Tensor t(v->dtype, v->has_shape ? Shape(v->shape.size(), 1) : Shape{});
      if (v->dtype == DType::i64) t.data<int64_t>()[0] = 0;
      else t.data<int32_t>()[0] = 0;
      preset_.emplace_back(name, t);
    }
  if (model.provider() == "cpu")
    for (const ValueInfo& o : g.outputs)
      if (o.name != d.logits && !is_kv_output(o.name)) wanted_.insert(o.name);
  // The last hidden state (config outputs.hidden_states, else an output named hidden_states, as the reference
  // builder's include_hidden_states writes it) is kept on every provider, as upstream keeps it: get_output reads it
  // after any run. (A generator that keeps it steps alone in the Engine: wanted outputs are per generator.)
  const std::string h = d.hidden_states_output.empty() ? "hidden_states" : d.hidden_states_output;
  if (g.output_info(h)) wanted_.insert(h);
}

bool ExtraIO::is_generator_input(const std::string& name) const {
  const DecoderConfig& d = model_.config().model.decoder;
  return name == d.input_ids || name == d.attention_mask || name == d.position_ids ||
         (!d.hidden_states_input.empty() && name == d.hidden_states_input) ||  // set_hidden_states
         matches_layer_pattern(name, d.past_key_names) || matches_layer_pattern(name, d.past_value_names) ||
         (!d.past_names.empty() && matches_layer_pattern(name, d.past_names));
}

bool ExtraIO::is_kv_output(const std::string& name) const {
  const DecoderConfig& d = model_.config().model.decoder;
  return matches_layer_pattern(name, d.present_key_names) || matches_layer_pattern(name, d.present_value_names) ||
         (!d.present_names.empty() && matches_layer_pattern(name, d.present_names));
}

bool ExtraIO::is_graph_output(const std::string& name) const {
  return model_.session().graph().output_info(name) != nullptr && !is_kv_output(name);
}

void ExtraIO::set_input(const std::string& name, const Tensor& t) {
  const ValueInfo* v = model_.session().graph().input_info(name);
  if (!v) {
    std::string names;
    for (const ValueInfo& i : model_.session().graph().inputs)
      if (!is_generator_input(i.name)) names += (names.empty() ? "" : ", ") + i.name;
    throw_error("the model has no input '", name, "' (inputs the caller may set: ",
                names.empty() ? std::string("none") : names, ")");
  }
  OGX_CHECK(!is_generator_input(name), "input '", name, "' is set by the generator itself");
  OGX_CHECK(!t.empty(), "input '", name, "': the tensor has no data");
  OGX_CHECK(v->dtype == DType::undefined || v->dtype == t.dtype(), "input '", name, "' is ", dtype_name(v->dtype),
            " in the model, got ", dtype_name(t.dtype()));
  for (auto& [n, old] : extra_)
    if (n == name) {
      old = t;
      return;
    }
  for (auto it = preset_.begin(); it != preset_.end(); ++it)
    if (it->first == name) {
      preset_.erase(it);
      break;
    }
  extra_.emplace_back(name, t);
}

void ExtraIO::add_inputs(std::vector<NamedTensor>& inputs) const {
  inputs.insert(inputs.end(), preset_.begin(), preset_.end());
  inputs.insert(inputs.end(), extra_.begin(), extra_.end());
  if (hidden_states_) inputs.emplace_back(model_.config().model.decoder.hidden_states_input, *hidden_states_);
}

bool ExtraIO::takes_hidden_states() const { return !model_.config().model.decoder.hidden_states_input.empty(); }

void ExtraIO::set_hidden_states(const Tensor& t) {
  if (!takes_hidden_states()) return;  // as upstream: no hidden_states input, nothing to feed
  const std::string& name = model_.config().model.decoder.hidden_states_input;
  const DType want = model_.io().hidden_states_dtype;
  OGX_CHECK(want == DType::undefined || t.dtype() == want, "set_hidden_states: the model's input '", name, "' is ",
            dtype_name(want), ", got ", dtype_name(t.dtype()));
  OGX_CHECK(t.numel() > 0, "set_hidden_states: the tensor is empty");
  hidden_states_ = t.clone();
}

void ExtraIO::check_hidden_states(int64_t rows, int64_t tokens) const {
  if (!takes_hidden_states()) return;
  const DecoderConfig& d = model_.config().model.decoder;
  OGX_CHECK(hidden_states_, "the model's input '", d.hidden_states_input, "' (model.decoder.inputs.hidden_states) ",
            "is fed by set_hidden_states before each run: it was not set");
  const int64_t H = d.hidden_size, want = rows * tokens * H;
  OGX_CHECK(H <= 0 || (hidden_states_->numel() == want && hidden_states_->rank() == 3 &&
                       hidden_states_->dim(0) == rows && hidden_states_->dim(1) == tokens),
            "set_hidden_states: the tensor is ", shape_str(hidden_states_->shape()), "; this run needs [", rows, ", ",
            tokens, ", ", H, "]");
}

void ExtraIO::add_outputs(std::vector<NamedTensor>& outputs) const {
  for (const std::string& name : wanted_) {
    bool bound = false;
    for (auto& o : outputs) bound = bound || o.first == name;
    if (!bound) outputs.emplace_back(name, Tensor());
  }
}

void ExtraIO::keep(const std::vector<NamedTensor>& inputs, const std::vector<NamedTensor>& outputs) {
  last_in_.clear();
  last_out_.clear();
  const DecoderConfig& d = model_.config().model.decoder;
  for (auto& [name, t] : inputs)
    if (!is_generator_input(name) || name == d.input_ids || name == d.attention_mask || name == d.position_ids ||
        name == d.hidden_states_input)
      last_in_[name] = t;
  for (auto& [name, t] : outputs)
    if (!t.empty() && !is_kv_output(name)) last_out_[name] = t;
}

const Tensor* ExtraIO::input(const std::string& name) const {
  auto it = last_in_.find(name);
  if (it != last_in_.end()) return &it->second;
  for (auto& [n, t] : extra_)
    if (n == name) return &t;
  return nullptr;
}

const Tensor* ExtraIO::output(const std::string& name) const {
  auto it = last_out_.find(name);
  return it == last_out_.end() ? nullptr : &it->second;
}

}  // namespace ogx::genai
