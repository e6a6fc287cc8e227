#include "genai/model.h"

#include <filesystem>

#include "common/log.h"
#include "onnx/loader.h"

namespace ogx::genai {
std::string layer_name(const std::string& pattern, int i) {
  size_t p = pattern.find("%d");
  OGX_CHECK(p != std::string::npos, "genai_config.json: name template '", pattern, "' has no %d");
  return pattern.substr(0, p) + std::to_string(i) + pattern.substr(p + 2);
}

namespace {

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

}  // namespace

std::shared_ptr<Model> Model::load(const Config& config) {
  std::string path = (std::filesystem::path(config.model_dir) / config.model.decoder.filename).string();
  return load(config, ogx::load_model(path));
}

std::shared_ptr<Model> Model::load(const Config& config, std::shared_ptr<const ogx::Model> graph_model) {
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
  m->session_ = create_provider_session(m->provider_, std::move(graph_model), opts);
  return m;
}

}  // namespace ogx::genai
