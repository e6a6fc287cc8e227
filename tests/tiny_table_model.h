// Tiny model folders whose next token is a function of the current one, for exact speculative-decoding counters
// (the controlled models of ONNX Runtime GenAI's n-gram tests, written here without Python): a decoder with no
// layers whose logits at each position are row input_id of a [V, V] table (Gather), so every position of a verify
// pass has its own row and the KV cache is empty.
#pragma once
#include <onnx/onnx_pb.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "temp_folder.h"

namespace ogx::test {

// Row t has 20 at (t + 1) % (V - 1) and -20 elsewhere, except the rows `transitions` names (source -> target). The
// last token, V - 1, is the EOS: only a transition reaches it.
inline std::vector<float> transition_table(const std::map<int, int>& transitions, int V = 10) {
  std::vector<float> t((size_t)V * V, -20.0f);
  for (int s = 0; s < V; s++) t[(size_t)s * V + (size_t)((s + 1) % (V - 1))] = 20.0f;
  for (auto [s, to] : transitions) {
    std::fill(t.begin() + (ptrdiff_t)s * V, t.begin() + (ptrdiff_t)(s + 1) * V, -20.0f);
    t[(size_t)s * V + (size_t)to] = 20.0f;
  }
  return t;
}

// Writes `file` (model.onnx by default): logits [batch, sequence, V] = table[input_ids]; prune: [batch, 1, V], the
// last position only (a model exported with last-token-only logits).
inline void write_table_onnx(const std::string& path, const std::vector<float>& table, int V, bool prune = false) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  onnx::GraphProto& g = *m.mutable_graph();
  g.set_name("tiny_table");
  auto value = [](onnx::ValueInfoProto* v, const char* name, int type, std::vector<std::string> dims, int last = 0) {
    v->set_name(name);
    auto* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(type);
    for (auto& d : dims) t->mutable_shape()->add_dim()->set_dim_param(d);
    if (last) t->mutable_shape()->add_dim()->set_dim_value(last);
  };
  value(g.add_input(), "input_ids", onnx::TensorProto::INT32, {"batch", "sequence"});
  value(g.add_input(), "attention_mask", onnx::TensorProto::INT32, {"batch", "total_sequence"});
  onnx::ValueInfoProto* out = g.add_output();
  value(out, "logits", onnx::TensorProto::FLOAT, {"batch"});
  auto* shape = out->mutable_type()->mutable_tensor_type()->mutable_shape();
  if (prune) shape->add_dim()->set_dim_value(1);
  else shape->add_dim()->set_dim_param("sequence");
  shape->add_dim()->set_dim_value(V);
  onnx::TensorProto* w = g.add_initializer();
  w->set_name("logits_table");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(V);
  w->add_dims(V);
  for (float x : table) w->add_float_data(x);
  auto node = [&](const char* op, std::vector<std::string> in, const char* o, int axis = -1) {
    onnx::NodeProto* n = g.add_node();
    n->set_op_type(op);
    n->set_name(o);
    for (auto& i : in) n->add_input(i);
    n->add_output(o);
    if (axis >= 0) {
      onnx::AttributeProto* a = n->add_attribute();
      a->set_name("axis");
      a->set_type(onnx::AttributeProto::INT);
      a->set_i(axis);
    }
  };
  node("Gather", {"logits_table", "input_ids"}, prune ? "all_logits" : "logits", 0);
  if (prune) {
    onnx::TensorProto* last = g.add_initializer();
    last->set_name("last_index");
    last->set_data_type(onnx::TensorProto::INT64);
    last->add_dims(1);
    last->add_int64_data(-1);
    node("Gather", {"all_logits", "last_index"}, "logits", 1);
  }
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  m.SerializeToOstream(&f);
}

inline nlohmann::json table_decoder_config(const std::string& filename = "model.onnx") {
  return {{"filename", filename},
          {"head_size", 1},
          {"hidden_size", 1},
          {"num_attention_heads", 1},
          {"num_key_value_heads", 1},
          {"num_hidden_layers", 0},
          {"inputs",
           {{"input_ids", "input_ids"},
            {"attention_mask", "attention_mask"},
            {"past_key_names", "past_key_values.%d.key"},
            {"past_value_names", "past_key_values.%d.value"}}},
          {"outputs",
           {{"logits", "logits"},
            {"present_key_names", "present.%d.key"},
            {"present_value_names", "present.%d.value"}}}};
}

// A model folder under the temporary directory: model.onnx from `table` and genai_config.json (EOS V - 1, context
// 64). decoder_extra: keys merged into model.decoder; draft: a model.draft block (its file written by the caller).
inline std::string write_table_model(const std::string& name, const std::vector<float>& table, int V = 10,
                                     bool prune = false, const nlohmann::json& decoder_extra = nullptr,
                                     const nlohmann::json& draft = nullptr) {
  const std::filesystem::path dir = temp_folder("ogx_tiny_" + name);
  write_table_onnx((dir / "model.onnx").string(), table, V, prune);
  nlohmann::json decoder = table_decoder_config();
  if (decoder_extra.is_object()) decoder.update(decoder_extra);
  nlohmann::json model = {{"type", "llama"}, {"vocab_size", V}, {"context_length", 64}, {"bos_token_id", 0},
                          {"eos_token_id", {V - 1}}, {"pad_token_id", 0}, {"decoder", decoder}};
  if (!draft.is_null()) model["draft"] = draft;
  std::ofstream((dir / "genai_config.json").string()) << nlohmann::json{{"model", model},
                                                                        {"search", {{"max_length", 64}}}}.dump(2);
  return dir.string();
}

}  // namespace ogx::test
