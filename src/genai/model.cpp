#include "genai/model.h"

#include <algorithm>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "common/json_limits.h"
#include "common/log.h"
#include "onnx/loader.h"

namespace ogx::genai {
std::string layer_name(const std::string& pattern, int i) {
  size_t p = pattern.find("%d");
  OGX_CHECK(p != std::string::npos, "genai_config.json: name template '", pattern, "' has no %d");
  return pattern.substr(0, p) + std::to_string(i) + pattern.substr(p + 2);
}

namespace {

// The combined GPT-2 layout: past_%d / present_%d of shape [2, B, Nkv, L, H].
DecoderIO inspect_combined_kv(const Graph& g, const DecoderConfig& d, DecoderIO io) {
  OGX_CHECK(!d.present_names.empty(), "genai_config.json: model.decoder.inputs.past_names is set but "
            "outputs.present_names is not");
  int layers = 0;
  while (g.input_info(layer_name(d.past_names, layers))) layers++;
  OGX_CHECK(layers > 0, "model has no input '", layer_name(d.past_names, 0), "' (model.decoder.inputs.past_names)");
  OGX_CHECK(d.num_hidden_layers == 0 || layers == d.num_hidden_layers, "genai_config.json says ",
            d.num_hidden_layers, " layers but the model has ", layers, " inputs named like '", d.past_names, "'");
  OGX_CHECK(g.output_info(layer_name(d.present_names, 0)), "model has no output '", layer_name(d.present_names, 0),
            "' (model.decoder.outputs.present_names)");
  const ValueInfo* p = g.input_info(layer_name(d.past_names, 0));
  io.combined_kv = true;
  io.num_layers = layers;
  io.kv_dtype = p->dtype;
  io.kv_heads = d.num_key_value_heads;
  io.head_size = d.head_size;
  if (p->has_shape && p->shape.size() == 5) {
    OGX_CHECK(p->shape[0].value <= 0 || p->shape[0].value == 2, "input '", p->name, "' must have shape [2, batch, "
              "heads, length, head_size] (key and value)");
    if (p->shape[2].value > 0) io.kv_heads = (int)p->shape[2].value;
    if (p->shape[4].value > 0) io.head_size = (int)p->shape[4].value;
  }
  OGX_CHECK(io.kv_heads > 0 && io.head_size > 0, "cannot tell the KV cache shape: set num_key_value_heads and "
            "head_size in genai_config.json");
  return io;
}

DecoderIO inspect_graph(const Graph& g, const DecoderConfig& d) {
  DecoderIO io;
  const ValueInfo* ids = g.input_info(d.input_ids);
  OGX_CHECK(ids, "model has no input '", d.input_ids, "' (genai_config.json model.decoder.inputs.input_ids)");
  OGX_CHECK(ids->dtype == DType::i64 || ids->dtype == DType::i32, "input '", d.input_ids, "' must be int32 or int64");
  io.input_ids_dtype = ids->dtype;
  if (auto m = g.input_info(d.attention_mask)) {
    io.has_attention_mask = true;
    io.mask_dtype = m->dtype;
  }
  if (auto p = g.input_info(d.position_ids)) {
    io.has_position_ids = true;
    io.position_dtype = p->dtype;
  }
  const ValueInfo* logits = g.output_info(d.logits);
  OGX_CHECK(logits, "model has no output '", d.logits, "' (model.decoder.outputs.logits)");
  if (logits->dtype != DType::undefined) io.logits_dtype = logits->dtype;
  io.pruned_logits = logits->has_shape && logits->shape.size() >= 2 && logits->shape[1].value == 1;
  if (!d.hidden_states_input.empty()) {
    const ValueInfo* h = g.input_info(d.hidden_states_input);
    OGX_CHECK(h, "model has no input '", d.hidden_states_input, "' (genai_config.json model.decoder.inputs.hidden_states)");
    io.hidden_states_dtype = h->dtype;
  }
  OGX_CHECK(d.hidden_states_output.empty() || g.output_info(d.hidden_states_output), "model has no output '",
            d.hidden_states_output, "' (genai_config.json model.decoder.outputs.hidden_states)");
  if (!d.past_names.empty()) return inspect_combined_kv(g, d, io);
  int layers = 0;
  while (g.input_info(layer_name(d.past_key_names, layers))) layers++;
  OGX_CHECK(d.num_hidden_layers == 0 || layers == d.num_hidden_layers, "genai_config.json says ",
            d.num_hidden_layers, " layers but the model has ", layers, " past_key inputs");
  io.num_layers = layers;
  if (layers > 0) {
    const ValueInfo* k = g.input_info(layer_name(d.past_key_names, 0));
    OGX_CHECK(g.input_info(layer_name(d.past_value_names, 0)), "model has no input '",
              layer_name(d.past_value_names, 0), "'");
    OGX_CHECK(g.output_info(layer_name(d.present_key_names, 0)) && g.output_info(layer_name(d.present_value_names, 0)),
              "model has no present outputs named like '", d.present_key_names, "'");
    io.kv_dtype = k->dtype;
    io.kv_heads = d.num_key_value_heads;
    io.head_size = d.head_size;
    if (k->has_shape && k->shape.size() == 4) {
      if (k->shape[1].value > 0) io.kv_heads = (int)k->shape[1].value;
      if (k->shape[3].value > 0) io.head_size = (int)k->shape[3].value;
    }
    OGX_CHECK(io.kv_heads > 0 && io.head_size > 0, "cannot tell the KV cache shape: set num_key_value_heads and "
              "head_size in genai_config.json");
  }
  return io;
}


// The draft's logits must cover the target's vocabulary: both graphs' declared last logits dimension (ONNX Runtime
// GenAI's wording, which its tests match).
void check_draft_vocab(const ogx::Model& target, const DecoderConfig& td, const ogx::Model& draft,
                       const DecoderConfig& dd) {
  auto vocab = [](const ogx::Model& m, const DecoderConfig& d, const char* role, const char* key) -> int64_t {
    const ValueInfo* v = m.graph.output_info(d.logits);
    OGX_CHECK(v, role, " logits output '", d.logits, "' was not found in the ONNX model (", key, " in ", d.filename,
              ")");
    return v->has_shape && !v->shape.empty() ? v->shape.back().value : -1;
  };
  const int64_t t = vocab(target, td, "Target", "model.decoder.outputs.logits");
  const int64_t d = vocab(draft, dd, "Draft", "model.draft.outputs.logits");
  OGX_CHECK(t <= 0 || d <= 0 || t == d, "target and draft logit dimensions don't match (Target vocab: ", t,
            ", Draft vocab: ", d, " in ", dd.filename, "): target and draft must share the same vocabulary");
}

// What a speculative round cannot rewind (ONNX Runtime GenAI refuses these models too, in the same words).
void check_rewindable(const DecoderConfig& d, const char* key) {
  OGX_CHECK(!d.slide_key_value_cache, "speculative decoding does not support physically sliding KV caches (", key,
            ".sliding_window.slide_key_value_cache): a round rewinds the KV cache");
  OGX_CHECK(d.layer_types.empty(), "speculative decoding does not support LFM2 (hybrid SSM/attention) models (", key,
            ".layer_types): their rolling convolution state cannot be rewound");
}

}  // namespace

void check_same_vocabulary(const std::string& target_dir, const std::string& draft_dir) {
  namespace fs = std::filesystem;
  auto bytes = [](const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  };
  auto refuse = [&](const fs::path& a, const fs::path& b) {
    throw_error("the draft model's tokenizer (", b.string(), ") has another vocabulary than the target's (", a.string(),
                "): speculative decoding needs a draft with the target's token ids");
  };
  const fs::path ja = fs::path(target_dir) / "tokenizer.json", jb = fs::path(draft_dir) / "tokenizer.json";
  if (fs::exists(ja) && fs::exists(jb)) {  // the vocabulary and the added tokens' ids; normalizers etc. may differ
    auto vocab = [&](const fs::path& p) {
      std::string text = bytes(p);
      check_json_depth(text, p.string());
      try {
        nlohmann::json j = nlohmann::json::parse(text);
        nlohmann::json out = nlohmann::json::object();
        if (j.contains("model") && j["model"].is_object() && j["model"].contains("vocab")) out["vocab"] = j["model"]["vocab"];
        if (j.contains("added_tokens") && j["added_tokens"].is_array()) {  // their ids (names may differ: unused)
          std::vector<int64_t> ids;
          for (const auto& t : j["added_tokens"])
            if (t.is_object() && t.contains("id") && t["id"].is_number_integer()) ids.push_back(t["id"].get<int64_t>());
          std::sort(ids.begin(), ids.end());
          out["added_ids"] = ids;
        }
        return out;
      } catch (const nlohmann::json::exception& e) {
        throw_error(p.string(), ": bad JSON: ", json_error_text(e));
      }
    };
    if (vocab(ja) != vocab(jb)) refuse(ja, jb);
    return;
  }
  const fs::path ma = fs::path(target_dir) / "tokenizer.model", mb = fs::path(draft_dir) / "tokenizer.model";
  if (fs::exists(ma) && fs::exists(mb) && bytes(ma) != bytes(mb)) refuse(ma, mb);  // SentencePiece models
}

std::shared_ptr<Model> Model::load(const Config& config) {
  // An unknown provider name is accepted by the config (as ONNX Runtime GenAI does) and reported here, before
  // the weights are read.
  if (!config.model.decoder.session.providers.empty()) canonical_provider(config.model.decoder.session.providers[0].name);
  if (config.model.draft) {  // before the weights are read
    check_rewindable(config.model.decoder, "model.decoder");
    check_rewindable(*config.model.draft, "model.draft");
  }
  std::string path = (std::filesystem::path(config.model_dir) / config.model.decoder.filename).string();
  auto graph = ogx::load_model(path, config.model_data);
  if (!config.model.draft) return load(config, graph);
  // The draft: the same config with model.draft as its decoder, on the target's provider (ONNX Runtime GenAI
  // requires the same execution provider; a draft block without session_options takes the decoder's).
  Config dc = config;
  dc.model.decoder = *config.model.draft;
  dc.model.draft.reset();
  if (dc.model.decoder.session.providers.empty()) dc.model.decoder.session = config.model.decoder.session;
  auto names = [](const SessionConfig& s) {
    std::vector<std::string> v;
    for (const ProviderEntry& p : s.providers) v.push_back(canonical_provider(p.name));
    return v;
  };
  OGX_CHECK(names(dc.model.decoder.session) == names(config.model.decoder.session),
            "target and draft must use the same execution provider (model.decoder and model.draft session_options)");
  std::string dpath = (std::filesystem::path(config.model_dir) / dc.model.decoder.filename).string();
  auto dgraph = ogx::load_model(dpath, config.model_data);
  check_draft_vocab(*graph, config.model.decoder, *dgraph, dc.model.decoder);
  auto draft = load(dc, dgraph);
  auto m = load(config, graph, &draft->session());  // one device for both (same provider options: shared)
  m->draft_ = std::move(draft);
  return m;
}

std::shared_ptr<Model> Model::load(const Config& config, std::shared_ptr<const ogx::Model> graph_model,
                                   const Session* share_device_with) {
  auto m = std::shared_ptr<Model>(new Model());
  m->config_ = config;
  const DecoderConfig& d = config.model.decoder;
  m->io_ = inspect_graph(graph_model->graph, d);
  m->io_.vocab_size = config.model.vocab_size;
  SessionOptions opts;
  if (d.session.intra_op_num_threads) opts.intra_op_num_threads = *d.session.intra_op_num_threads;
  m->provider_ = "cpu";
  if (!d.session.providers.empty()) {
    const ProviderEntry& p = d.session.providers.front();
    m->provider_ = canonical_provider(p.name);
    opts.provider_options = p.options;
    opts.device_filtering = p.device_filtering;
    if (d.session.providers.size() > 1)
      log_warning("genai_config.json lists " + std::to_string(d.session.providers.size()) +
                  " providers; ogx uses the first ('" + p.name + "')");
  }
  opts.provider = m->provider_;
  opts.last_position_output = d.logits;  // the generator reads the last position's logits only
  opts.share_device_with = share_device_with;
  m->session_ = create_provider_session(m->provider_, std::move(graph_model), opts);
  return m;
}

}  // namespace ogx::genai
