// C API: reading search options back, and the generator's model I/O beyond tokens — extra inputs
// (SetModelInput, SetInputs), the latest run's inputs and outputs (GetInput, GetOutput), runtime options.
#include <cstring>

#include "api/generator_access.h"
#include "api/log_options.h"
#include "api/tensor_util.h"

using namespace ogx::api;

namespace {

std::string describe(const std::vector<std::pair<std::string, const ogx::Tensor*>>& tensors) {
  std::string out;
  for (auto& [name, t] : tensors)
    out += (out.empty() ? "" : ", ") + name + " " + ogx::dtype_name(t->dtype()) + ogx::shape_str(t->shape());
  return out;
}

const ogx::genai::SearchConfig& search_of(const OgxGeneratorParams& p) { return p.params.search; }

// GetOutput("logits") after a multi-token run whose session computed the last position's logits only: from now on
// such runs return every position's, and the latest one runs again (rewound, same tokens) when nothing happened
// since (no token picked after it), so the caller gets [rows, tokens, vocab] as ONNX Runtime GenAI returns.
void full_logits_of_latest_run(ogx::genai::Generator& gen) {
  auto& io = gen.extra_io();
  const auto& d = gen.model().config().model.decoder;
  const ogx::Tensor* logits = io.output(d.logits);
  const ogx::Tensor* ids = io.input(d.input_ids);
  const ogx::Tensor* mask = io.input(d.attention_mask);
  if (!logits || !ids || logits->rank() != 3 || ids->rank() != 2 || logits->dim(1) == ids->dim(1)) return;
  io.want_full_logits();
  const int64_t S = ids->dim(1), total = mask && mask->rank() == 2 ? mask->dim(1) : -1;
  if (total != (int64_t)gen.token_count() || gen.num_beams() > 1) return;  // a token was picked since, or beams
  const int64_t start = total - S;
  if (gen.batch_size() > 1 && start != 0) return;  // batches rewind only to 0
  std::vector<int64_t> v = ids->to_i64_vector();
  std::vector<int32_t> again(v.begin(), v.end());
  gen.rewind_to((size_t)start);
  gen.append_tokens(again);
}

}  // namespace

namespace ogx::api {

void check_not_terminated(const OgxGenerator& g, const char* fn) {
  if (g.terminated)
    fail(OgxErrorCode_Runtime, std::string(fn) + ": session terminated (runtime option terminate_session is set; "
                                                 "set it to \"0\" to continue)");
}

void log_run(const ogx::genai::Generator& gen) {
  const auto& io = gen.extra_io();
  const auto& d = gen.model().config().model.decoder;
  if (log_topic_on(LogTopic::model_input_values)) {
    std::vector<std::pair<std::string, const ogx::Tensor*>> ins;
    for (const std::string& n : {d.input_ids, d.attention_mask, d.position_ids})
      if (auto* t = io.input(n)) ins.emplace_back(n, t);
    log_topic(LogTopic::model_input_values, describe(ins));
  }
  if (log_topic_on(LogTopic::model_output_values) || log_topic_on(LogTopic::model_logits))
    if (auto* t = io.output(d.logits)) {
      log_topic(LogTopic::model_output_values, describe({{d.logits, t}}));
      log_topic(LogTopic::model_logits, describe({{d.logits, t}}));
    }
}

}  // namespace ogx::api

extern "C" {

OgxResult* OgxGeneratorParamsGetSearchNumber(const OgxGeneratorParams* params, const char* name, double* out) {
  return guard([&] {
    auto& p = live(params, "OgxGeneratorParamsGetSearchNumber", "params");
    need(name, "OgxGeneratorParamsGetSearchNumber", "name");
    need(out, "OgxGeneratorParamsGetSearchNumber", "out");
    const auto& s = search_of(p);
    std::string n = name;
    if (n == "max_length") *out = s.max_length > 0 ? s.max_length : p.context_length;
    else if (n == "min_length") *out = s.min_length;
    else if (n == "top_k") *out = s.top_k;
    else if (n == "top_p") *out = s.top_p;
    else if (n == "temperature") *out = s.temperature;
    else if (n == "repetition_penalty") *out = s.repetition_penalty;
    else if (n == "presence_penalty") *out = s.presence_penalty;
    else if (n == "frequency_penalty") *out = s.frequency_penalty;
    else if (n == "random_seed") *out = (double)s.random_seed;
    else if (n == "no_repeat_ngram_size") *out = s.no_repeat_ngram_size;
    else if (n == "num_beams") *out = s.num_beams;
    else if (n == "num_return_sequences") *out = s.num_return_sequences;
    else if (n == "length_penalty") *out = s.length_penalty;
    else if (n == "diversity_penalty") *out = s.diversity_penalty;
    else if (n == "batch_size") *out = s.batch_size;
    else if (n == "chunk_size") *out = 0;  // ogx runs a prompt in one pass
    else
      fail(OgxErrorCode_InvalidArgument, "OgxGeneratorParamsGetSearchNumber: unknown numeric search option '" + n +
                                             "' (known: batch_size, chunk_size, diversity_penalty, frequency_penalty, "
                                             "length_penalty, max_length, min_length, no_repeat_ngram_size, "
                                             "num_beams, num_return_sequences, presence_penalty, random_seed, "
                                             "repetition_penalty, temperature, top_k, top_p)");
  });
}

OgxResult* OgxGeneratorParamsGetSearchBool(const OgxGeneratorParams* params, const char* name, bool* out) {
  return guard([&] {
    auto& p = live(params, "OgxGeneratorParamsGetSearchBool", "params");
    need(name, "OgxGeneratorParamsGetSearchBool", "name");
    need(out, "OgxGeneratorParamsGetSearchBool", "out");
    const auto& s = search_of(p);
    std::string n = name;
    if (n == "do_sample") *out = s.do_sample;
    else if (n == "early_stopping") *out = s.early_stopping;
    else if (n == "past_present_share_buffer") *out = s.past_present_share_buffer;
    else
      fail(OgxErrorCode_InvalidArgument, "OgxGeneratorParamsGetSearchBool: unknown boolean search option '" + n +
                                             "' (known: do_sample, early_stopping, past_present_share_buffer)");
  });
}

OgxResult* OgxGenerator_AppendTokensFromTensor(OgxGenerator* generator, const OgxTensor* tokens) {
  return guard([&] {
    auto& t = live(tokens, "OgxGenerator_AppendTokensFromTensor", "tokens");
    if (t.type != OgxElementType_int32)
      fail(OgxErrorCode_InvalidArgument, "OgxGenerator_AppendTokensFromTensor: tokens must be an int32 tensor");
    if (t.shape.empty() || t.shape.size() > 2)
      fail(OgxErrorCode_InvalidArgument, "OgxGenerator_AppendTokensFromTensor: expected a tensor [n] or "
                                         "[batch_size, n], got rank " + std::to_string(t.shape.size()));
    OgxResult* r = OgxGenerator_AppendTokens(generator, static_cast<const int32_t*>(t.data), t.element_count());
    if (r) {
      ApiError e{OgxResultGetCode(r), OgxResultGetError(r)};
      OgxDestroyResult(r);
      throw e;
    }
  });
}

OgxResult* OgxGenerator_SetModelInput(OgxGenerator* generator, const char* name, const OgxTensor* tensor) {
  return guard([&] {
    auto& g = live(generator, "OgxGenerator_SetModelInput", "generator");
    need(name, "OgxGenerator_SetModelInput", "name");
    auto& t = live(tensor, "OgxGenerator_SetModelInput", "tensor");
    ogx::Tensor copy = to_engine_tensor(t, "OgxGenerator_SetModelInput");
    Locked l(g);
    l.gen.extra_io().set_input(name, copy);
  });
}

OgxResult* OgxGenerator_SnapshotState(OgxGenerator* generator) {
  return guard([&] {
    auto& g = live(generator, "OgxGenerator_SnapshotState", "generator");
    check_not_terminated(g, "OgxGenerator_SnapshotState");
    Locked l(g);
    l.gen.snapshot_state();
  });
}

OgxResult* OgxGenerator_SetHiddenStates(OgxGenerator* generator, const OgxTensor* hidden_states) {
  return guard([&] {
    auto& g = live(generator, "OgxGenerator_SetHiddenStates", "generator");
    check_not_terminated(g, "OgxGenerator_SetHiddenStates");
    auto& t = live(hidden_states, "OgxGenerator_SetHiddenStates", "hidden_states");
    ogx::Tensor copy = to_engine_tensor(t, "OgxGenerator_SetHiddenStates");
    Locked l(g);
    run_model(g, [&] { l.gen.set_hidden_states(copy); });  // drops a queued step (waits on the device)
  });
}

OgxResult* OgxGenerator_SetInputs(OgxGenerator* generator, const OgxNamedTensors* named_tensors) {
  return guard([&] {
    auto& g = live(generator, "OgxGenerator_SetInputs", "generator");
    auto& n = live(named_tensors, "OgxGenerator_SetInputs", "named_tensors");
    std::vector<std::pair<std::string, ogx::Tensor>> copies;
    for (auto& [name, t] : n.items) copies.emplace_back(name, to_engine_tensor(t, "OgxGenerator_SetInputs"));
    Locked l(g);
    // Checked first, so that a bad name leaves the generator's inputs unchanged.
    ogx::genai::ExtraIO trial = l.gen.extra_io();
    for (auto& [name, t] : copies) trial.set_input(name, t);
    for (auto& [name, t] : copies) l.gen.extra_io().set_input(name, t);
  });
}

OgxResult* OgxGenerator_GetInput(const OgxGenerator* generator, const char* name, OgxTensor** out) {
  return guard([&] {
    need(out, "OgxGenerator_GetInput", "out");
    *out = nullptr;
    auto& g = live(generator, "OgxGenerator_GetInput", "generator");
    need(name, "OgxGenerator_GetInput", "name");
    Locked l(g);
    const ogx::Tensor* t = l.gen.extra_io().input(name);
    if (!t)
      fail(OgxErrorCode_InvalidArgument, std::string("OgxGenerator_GetInput: no input '") + name +
                                             "' in the latest model run (none yet, or the model has no such input)");
    *out = make_handle(from_engine_tensor(*t, "OgxGenerator_GetInput"));
  });
}

OgxResult* OgxGenerator_GetOutput(const OgxGenerator* generator, const char* name, OgxTensor** out) {
  return guard([&] {
    need(out, "OgxGenerator_GetOutput", "out");
    *out = nullptr;
    auto& g = live(generator, "OgxGenerator_GetOutput", "generator");
    need(name, "OgxGenerator_GetOutput", "name");
    Locked l(g);
    auto& io = l.gen.extra_io();
    const std::string logits_name = l.gen.model().config().model.decoder.logits;
    const std::string n = std::string(name) == "logits" ? logits_name : name;
    if (n == logits_name) run_model(g, [&] { full_logits_of_latest_run(l.gen); });
    if (const ogx::Tensor* t = io.output(n)) {
      *out = make_handle(from_engine_tensor(*t, "OgxGenerator_GetOutput"));
      return;
    }
    if (n == logits_name) {  // the latest run left its logits on the device: the last position's
      if (l.gen.token_count() == 0) fail(OgxErrorCode_InvalidArgument, "OgxGenerator_GetOutput: no model run yet");
      std::vector<float> logits;
      run_model(g, [&] { logits = l.gen.logits(); });
      const int64_t rows = l.gen.rows();
      OgxTensor t = make_tensor(OgxElementType_float32, {rows, 1, (int64_t)logits.size() / rows}, "OgxGenerator_GetOutput");
      t.owned.resize(t.byte_size());
      std::memcpy(t.owned.data(), logits.data(), t.owned.size());
      t.data = t.owned.data();
      *out = make_handle(std::move(t));
      return;
    }
    if (!io.is_graph_output(n))
      fail(OgxErrorCode_InvalidArgument, "OgxGenerator_GetOutput: the model has no output '" + n +
                                             "' (KV cache outputs are not readable)");
    io.want_output(n);
    fail(OgxErrorCode_InvalidArgument, "OgxGenerator_GetOutput: output '" + n + "' was not kept from the latest run "
                                       "on this provider; it is kept from the next run on");
  });
}

OgxResult* OgxGenerator_SetRuntimeOption(OgxGenerator* generator, const char* key, const char* value) {
  return guard([&] {
    auto& g = live(generator, "OgxGenerator_SetRuntimeOption", "generator");
    need(key, "OgxGenerator_SetRuntimeOption", "key");
    need(value, "OgxGenerator_SetRuntimeOption", "value");
    std::string k = key, v = value;
    if (k != "terminate_session")
      fail(OgxErrorCode_InvalidArgument, "OgxGenerator_SetRuntimeOption: unknown runtime option '" + k +
                                             "' (known: terminate_session)");
    if (v != "0" && v != "1")
      fail(OgxErrorCode_InvalidArgument, "OgxGenerator_SetRuntimeOption: terminate_session must be \"0\" or \"1\", "
                                         "got \"" + v + "\"");
    // Not under the generator's lock: a call may be running on another thread; it sees the flag at its next call.
    g.terminated = v == "1";
  });
}

bool OgxGenerator_IsSessionTerminated(const OgxGenerator* generator) {
  if (!is_live(generator, Kind::generator, "OgxGenerator_IsSessionTerminated")) return false;
  return generator->terminated;
}

}  // extern "C"
