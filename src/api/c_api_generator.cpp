// C API: generator params and generator.
#include <cmath>
#include <cstring>

#include "api/handles.h"
#include "api/generator_access.h"
#include "api/log_options.h"
#include "api/tensor_util.h"

using namespace ogx::api;

namespace {

bool is_bool_option(const std::string& name) {
  return name == "do_sample" || name == "past_present_share_buffer" || name == "early_stopping";
}

void set_option(OgxGeneratorParams& p, const std::string& name, double value) {
  // On a copy, so a rejected value leaves the params unchanged.
  ogx::genai::GeneratorParams copy = p.params;
  copy.set_search_option(name, value);
  p.params = std::move(copy);
}

std::string ids_text(const std::vector<int32_t>& ids) {
  std::string out = "[";
  for (size_t i = 0; i < ids.size(); i++) out += (i ? ", " : "") + std::to_string(ids[i]);
  return out + "]";
}

}  // namespace

extern "C" {

OgxResult* OgxCreateGeneratorParams(const OgxModel* model, OgxGeneratorParams** out) {
  return guard([&] {
    need(out, "OgxCreateGeneratorParams", "out");
    *out = nullptr;
    auto& m = live(model, "OgxCreateGeneratorParams", "model");
    *out = make_handle(OgxGeneratorParams{ogx::genai::GeneratorParams(*m.shared->model),
                                          m.shared->model->config().model.context_length});
  });
}

void OgxDestroyGeneratorParams(OgxGeneratorParams* params) { destroy_handle(params, "OgxDestroyGeneratorParams"); }

OgxResult* OgxGeneratorParamsSetSearchNumber(OgxGeneratorParams* params, const char* name, double value) {
  return guard([&] {
    auto& p = live(params, "OgxGeneratorParamsSetSearchNumber", "params");
    need(name, "OgxGeneratorParamsSetSearchNumber", "name");
    if (!std::isfinite(value))
      fail(OgxErrorCode_InvalidArgument, std::string("search option '") + name + "' must be a finite number");
    if (is_bool_option(name) && value != 0 && value != 1)
      fail(OgxErrorCode_InvalidArgument, std::string("search option '") + name + "' is a boolean: use SetSearchBool");
    set_option(p, name, value);
  });
}

OgxResult* OgxGeneratorParamsSetSearchBool(OgxGeneratorParams* params, const char* name, bool value) {
  return guard([&] {
    auto& p = live(params, "OgxGeneratorParamsSetSearchBool", "params");
    need(name, "OgxGeneratorParamsSetSearchBool", "name");
    if (!is_bool_option(name))
      fail(OgxErrorCode_InvalidArgument, std::string("search option '") + name +
                                             "' is not a boolean (boolean options: do_sample, "
                                             "past_present_share_buffer, early_stopping)");
    set_option(p, name, value ? 1.0 : 0.0);
  });
}

OgxResult* OgxGeneratorParamsSetGuidance(OgxGeneratorParams* params, const char* type, const char* data,
                                         bool enable_ff_tokens) {
  return guard([&] {
    auto& p = live(params, "OgxGeneratorParamsSetGuidance", "params");
    need(type, "OgxGeneratorParamsSetGuidance", "type");
    std::string text = data ? data : "";
    if (!data && std::strcmp(type, "json_object") != 0 && type[0] != 0)
      fail(OgxErrorCode_InvalidArgument, "OgxGeneratorParamsSetGuidance: data is NULL");
    try {
      p.params.set_guidance(type, text, enable_ff_tokens);
    } catch (const ogx::Error& e) {
      fail(OgxErrorCode_InvalidArgument, std::string("set_guidance: ") + e.what());
    }
  });
}

OgxResult* OgxCreateGenerator(const OgxModel* model, const OgxGeneratorParams* params, OgxGenerator** out) {
  return guard([&] {
    need(out, "OgxCreateGenerator", "out");
    *out = nullptr;
    auto& m = live(model, "OgxCreateGenerator", "model");
    auto& p = live(params, "OgxCreateGenerator", "params");
    auto g = std::make_unique<OgxGenerator>();
    g->shared = m.shared;
    {
      // A new generator sets the session's device sampling up: under the model's lock, like forward passes.
      std::lock_guard<std::mutex> lk(m.shared->run_mu);
      g->gen = std::make_unique<ogx::genai::Generator>(m.shared->model, p.params);
    }
    OgxGenerator* raw = g.release();
    register_handle(raw, Kind::generator);
    *out = raw;
  });
}

void OgxDestroyGenerator(OgxGenerator* generator) {
  if (!generator || !unregister_handle(generator, kind_of<OgxGenerator>(), "OgxDestroyGenerator")) return;
  {
    // The generator may leave a queued decode step and the model's shared KV cache: under the model's lock.
    std::lock_guard<std::mutex> lk(generator->shared->run_mu);
    generator->gen.reset();
  }
  delete generator;
}

bool OgxGenerator_IsDone(const OgxGenerator* generator) {
  if (!is_live(generator, Kind::generator, "OgxGenerator_IsDone")) return true;
  Locked l(*generator);
  return generator->terminated || l.gen.is_done();
}

OgxResult* OgxGenerator_AppendTokens(OgxGenerator* generator, const int32_t* input_ids, size_t count) {
  return guard([&] {
    auto& g = live(generator, "OgxGenerator_AppendTokens", "generator");
    if (count > 0) need(input_ids, "OgxGenerator_AppendTokens", "input_ids");
    std::vector<int32_t> ids(input_ids, input_ids + count);
    Locked l(g);
    check_not_terminated(g, "OgxGenerator_AppendTokens");
    log_topic(LogTopic::append_next_tokens, ids_text(ids));
    run_model(g, [&] { l.gen.append_tokens(ids); });
    log_run(l.gen);
  });
}

OgxResult* OgxGenerator_AppendTokenSequences(OgxGenerator* generator, const OgxSequences* sequences) {
  return guard([&] {
    auto& g = live(generator, "OgxGenerator_AppendTokenSequences", "generator");
    auto& s = live(sequences, "OgxGenerator_AppendTokenSequences", "sequences");
    Locked l(g);
    if (s.seqs.size() != (size_t)l.gen.batch_size())
      fail(OgxErrorCode_InvalidArgument, "OgxGenerator_AppendTokenSequences: expected " +
                                             std::to_string(l.gen.batch_size()) +
                                             (l.gen.batch_size() == 1 ? " sequence" : " sequences") +
                                             " (batch_size), got " + std::to_string(s.seqs.size()));
    check_not_terminated(g, "OgxGenerator_AppendTokenSequences");
    for (auto& seq : s.seqs) log_topic(LogTopic::append_next_tokens, ids_text(seq));
    run_model(g, [&] { l.gen.append_token_sequences(s.seqs); });
    log_run(l.gen);
  });
}

OgxResult* OgxGenerator_GenerateNextToken(OgxGenerator* generator) {
  return guard([&] {
    auto& g = live(generator, "OgxGenerator_GenerateNextToken", "generator");
    Locked l(g);
    check_not_terminated(g, "OgxGenerator_GenerateNextToken");
    run_model(g, [&] { l.gen.generate_next_token(); });
    log_run(l.gen);
    if (log_topic_on(LogTopic::generate_next_token)) log_topic(LogTopic::generate_next_token, ids_text(l.gen.next_tokens()));
    if (log_topic_on(LogTopic::hit_eos) && l.gen.is_done()) log_topic(LogTopic::hit_eos, "the generator is done");
  });
}

OgxResult* OgxGenerator_GetNextTokens(const OgxGenerator* generator, const int32_t** out, size_t* count) {
  return guard([&] {
    auto& g = live(generator, "OgxGenerator_GetNextTokens", "generator");
    need(out, "OgxGenerator_GetNextTokens", "out");
    need(count, "OgxGenerator_GetNextTokens", "count");
    Locked l(g);
    g.next_tokens = l.gen.next_tokens();
    *out = g.next_tokens.data();
    *count = g.next_tokens.size();
  });
}

size_t OgxGenerator_GetSequenceCount(const OgxGenerator* generator, size_t index) {
  if (!is_live(generator, Kind::generator, "OgxGenerator_GetSequenceCount")) return 0;
  Locked l(*generator);
  return index < l.gen.sequence_count() ? l.gen.sequence(index).size() : 0;
}

const int32_t* OgxGenerator_GetSequenceData(const OgxGenerator* generator, size_t index) {
  if (!is_live(generator, Kind::generator, "OgxGenerator_GetSequenceData")) return nullptr;
  Locked l(*generator);
  static const int32_t empty = 0;  // a valid pointer for a valid index, even with no tokens
  if (index >= l.gen.sequence_count()) return nullptr;
  const std::vector<int32_t>& s = l.gen.sequence(index);
  return s.empty() ? &empty : s.data();
}

size_t OgxGenerator_TokenCount(const OgxGenerator* generator) {
  if (!is_live(generator, Kind::generator, "OgxGenerator_TokenCount")) return 0;
  Locked l(*generator);
  return l.gen.token_count();
}

OgxResult* OgxGenerator_GetLogits(OgxGenerator* generator, OgxTensor** out) {
  return guard([&] {
    need(out, "OgxGenerator_GetLogits", "out");
    *out = nullptr;
    auto& g = live(generator, "OgxGenerator_GetLogits", "generator");
    Locked l(g);
    if (l.gen.token_count() == 0) fail(OgxErrorCode_InvalidArgument, "OgxGenerator_GetLogits: no logits yet: append tokens first");
    std::vector<float> logits;
    // May run the model: the tokens GenerateNextToken picked, or a KV cache another generator used.
    run_model(g, [&] { logits = l.gen.logits(); });
    const int64_t rows = l.gen.rows();
    OgxTensor t = make_tensor(OgxElementType_float32, {rows, 1, (int64_t)logits.size() / rows}, "OgxGenerator_GetLogits");
    t.owned.resize(t.byte_size());
    std::memcpy(t.owned.data(), logits.data(), t.owned.size());
    t.data = t.owned.data();
    *out = make_handle(std::move(t));
  });
}

OgxResult* OgxGenerator_SetLogits(OgxGenerator* generator, const OgxTensor* logits) {
  return guard([&] {
    auto& g = live(generator, "OgxGenerator_SetLogits", "generator");
    auto& t = live(logits, "OgxGenerator_SetLogits", "logits");
    if (t.type != OgxElementType_float32)
      fail(OgxErrorCode_InvalidArgument, "OgxGenerator_SetLogits: logits must be a float32 tensor");
    Locked l(g);
    if (l.gen.token_count() == 0) fail(OgxErrorCode_InvalidArgument, "OgxGenerator_SetLogits: append tokens first");
    size_t n = 0;
    run_model(g, [&] { n = l.gen.logits().size(); });
    if (t.element_count() != n)
      fail(OgxErrorCode_InvalidArgument, "OgxGenerator_SetLogits: expected " + std::to_string(n) + " values (" +
                                             std::to_string(l.gen.rows()) + " rows x vocabulary), got " +
                                             std::to_string(t.element_count()));
    const float* p = static_cast<const float*>(t.data);
    run_model(g, [&] { l.gen.set_logits(std::vector<float>(p, p + n)); });
  });
}

OgxResult* OgxGenerator_RewindTo(OgxGenerator* generator, size_t new_length) {
  return guard([&] {
    auto& g = live(generator, "OgxGenerator_RewindTo", "generator");
    Locked l(g);
    run_model(g, [&] { l.gen.rewind_to(new_length); });  // drops a queued decode step
  });
}

}  // extern "C"
