// ogx generate MODEL_DIR (--ids 1,2,3 | --prompt TEXT [--chat]) [--max-new-tokens N] [--min-new-tokens N]
//   [--greedy | --top-k K --top-p P --temperature T --seed S] [--repetition-penalty R] [--provider P]
//   [--provider-option K=V]... [--threads N] [--json] [--dump-logits FILE]
//   [--json-schema FILE | --regex R | --grammar FILE | --json-object]   (structured output: genai/guidance)
//   [--adapter FILE.onnx_adapter]   (a LoRA adapter active for the generation: genai/adapters.h)
#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <optional>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "common/log.h"
#include "genai/adapters.h"
#include "genai/generator.h"
#include "genai/tokenizer/tokenizer.h"
#include "model_options.h"

namespace ogx::cli {
namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

std::string read_text(const std::string& path, const char* flag) {
  std::ifstream f(path, std::ios::binary);
  OGX_CHECK(f, flag, ": cannot read '", path, "'");
  return std::string(std::istreambuf_iterator<char>(f), {});
}

std::shared_ptr<tok::Tokenizer> try_tokenizer(const std::string& dir, bool required) {
  try {
    return tok::Tokenizer::load(dir);
  } catch (const Error& e) {
    if (required) throw;
    return nullptr;
  }
}

struct GenerateOptions {
  std::string dir;                                   // MODEL_DIR
  std::optional<std::string> ids, prompt, system;    // --ids 1,2,3 | --prompt TEXT; --system TEXT (with --chat)
  bool chat = false, json = false;
  int max_new = 128, min_new = 0;                    // --max-new-tokens, --min-new-tokens
  SamplingOptions sampling;
  std::string dump_logits;                           // --dump-logits FILE: the prefill's last logits, float32
  std::optional<std::string> json_schema, regex, grammar;  // structured output (genai/guidance)
  bool json_object = false;
  std::string adapter;                               // --adapter FILE.onnx_adapter (genai/adapters.h)
  ModelOptions model;
};

int run_generate(const GenerateOptions& o);

}  // namespace

Runner define_generate(Flags& flags) {
  auto o = std::make_shared<GenerateOptions>();
  flags.positional("MODEL_DIR", o->dir, "model folder (genai_config.json, model.onnx)").required();
  flags.option("--ids", o->ids, "prompt token ids: 1,2,3");
  flags.option("--prompt", o->prompt, "prompt text (needs the folder's tokenizer)");
  flags.flag("--chat", o->chat, "wrap --prompt in the folder's chat template as a user message");
  flags.option("--system", o->system, "system message (with --chat)");
  flags.option("--max-new-tokens", o->max_new, "most new tokens");
  flags.option("--min-new-tokens", o->min_new, "suppress EOS for this many new tokens");
  add_sampling_options(flags, o->sampling);
  add_model_options(flags, o->model);
  flags.flag("--json", o->json, "print one JSON object: tokens, text, prefill_ms, decode_tok_s");
  flags.option("--json-schema", o->json_schema, "constrain the output to this JSON schema FILE");
  flags.option("--regex", o->regex, "constrain the output to this regular expression");
  flags.option("--grammar", o->grammar, "constrain the output to this Lark grammar FILE");
  flags.flag("--json-object", o->json_object, "constrain the output to one JSON object");
  flags.option("--adapter", o->adapter, "a LoRA adapter (.onnx_adapter) active for the generation");
  flags.option("--dump-logits", o->dump_logits, "write float32 logits to FILE: the prompt's last row, then one row per generated token");
  return [o] { return run_generate(*o); };
}

namespace {

int run_generate(const GenerateOptions& o) {
  if (o.ids.has_value() == o.prompt.has_value()) throw UsageError("give exactly one of --ids and --prompt");
  auto model = [&] {
    ProgressBar bar(o.model.quiet || o.json);
    return genai::Model::load(model_config(o.dir, o.model));
  }();
  std::shared_ptr<tok::Tokenizer> tokenizer = try_tokenizer(o.dir, o.prompt.has_value());
  std::vector<int32_t> prompt;
  if (o.ids) {
    prompt = parse_id_list(*o.ids);
  } else {
    std::string text = *o.prompt;
    if (o.chat) {
      nlohmann::json msgs = nlohmann::json::array();
      if (o.system) msgs.push_back({{"role", "system"}, {"content", *o.system}});
      msgs.push_back({{"role", "user"}, {"content", text}});
      text = tokenizer->apply_chat_template(msgs.dump(), true);
      prompt = tokenizer->encode(text, false);
    } else {
      prompt = tokenizer->encode(text, true);
    }
  }
  genai::GeneratorParams params(*model);
  const int max_new = o.max_new, min_new = o.min_new;
  OGX_CHECK(max_new >= 0 && min_new >= 0, "--max-new-tokens and --min-new-tokens must be >= 0");
  // Lengths add in 64 bits and are clamped to the model's context (or int32): --max-new-tokens 2147483647 means
  // "until the context is full", never an overflowed length.
  const int64_t ctx = model->config().model.context_length > 0 ? model->config().model.context_length : INT32_MAX;
  const int64_t want = (int64_t)prompt.size() + max_new;
  if (want > ctx)
    log_warning("--max-new-tokens " + std::to_string(max_new) + ": the prompt's " + std::to_string(prompt.size()) +
                " tokens plus that many exceed the model's context of " + std::to_string(ctx) +
                " tokens; generation stops there");
  params.search.max_length = (int)std::min(want, ctx);
  if (min_new > 0) params.search.min_length = (int)std::min((int64_t)prompt.size() + min_new, ctx);
  apply_sampling_options(params, o.sampling, true);
  const int constraints = o.json_schema.has_value() + o.regex.has_value() + o.grammar.has_value() + o.json_object;
  if (constraints > 1) throw UsageError("give at most one of --json-schema, --regex, --grammar and --json-object");
  if (o.json_schema) params.set_guidance("json_schema", read_text(*o.json_schema, "--json-schema"));
  if (o.regex) params.set_guidance("regex", *o.regex);
  if (o.grammar) params.set_guidance("lark_grammar", read_text(*o.grammar, "--grammar"));
  if (o.json_object) params.set_guidance("json_object", "");
  const bool json = o.json;

  genai::Generator gen(model, params);
  std::shared_ptr<genai::Adapters> adapters;
  if (!o.adapter.empty()) {
    adapters = genai::Adapters::create(model);
    adapters->load(o.adapter, "adapter");  // throws naming the file and the parameter at fault
    gen.set_active_adapter(adapters, "adapter");
  }
  auto t0 = Clock::now();
  gen.append_tokens(prompt);
  double prefill_ms = ms_since(t0);
  // --dump-logits: float32 logits after the prompt, then after each generated token is fed back (one row each)
  std::ofstream dump;
  auto dump_logits = [&] {
    if (dump.is_open())
      dump.write((const char*)gen.logits().data(), (std::streamsize)(gen.logits().size() * sizeof(float)));
  };
  if (!o.dump_logits.empty()) {
    dump.open(o.dump_logits, std::ios::binary);
    OGX_CHECK(dump, "cannot write '", o.dump_logits, "'");
  }
  dump_logits();
  std::unique_ptr<tok::TokenizerStream> stream;
  if (tokenizer && !json) stream = std::make_unique<tok::TokenizerStream>(tokenizer, true);
  std::vector<int32_t> out;
  auto t1 = Clock::now();
  while (!gen.is_done() && (int)out.size() < max_new) {
    gen.generate_next_token();
    out.push_back(gen.last_token());
    if (dump.is_open() && !gen.is_done() && (int)out.size() < max_new) dump_logits();  // runs the token first
    if (stream) {
      std::cout << stream->decode(gen.last_token()) << std::flush;
    }
  }
  double decode_ms = ms_since(t1);
  if (stream) std::cout << stream->flush() << std::endl;
  // The first token comes from the prefill logits; decode speed counts the forward passes after it.
  double decode_tok_s = out.size() > 1 ? (double)(out.size() - 1) / (decode_ms / 1000.0) : 0.0;
  if (json) {
    nlohmann::json j;
    j["tokens"] = out;
    j["prompt_tokens"] = prompt.size();
    j["prefill_ms"] = prefill_ms;
    j["decode_ms"] = decode_ms;
    j["decode_tok_s"] = decode_tok_s;
    j["provider"] = model->provider();
    j["host_picks"] = gen.host_picks();  // steps picked on the host although the device could pick
    if (tokenizer) j["text"] = tokenizer->decode(out, true);
    std::cout << j.dump() << std::endl;
  } else if (!stream) {
    for (size_t i = 0; i < out.size(); i++) std::cout << (i ? "," : "") << out[i];
    std::cout << std::endl;
  }
  if (!json)
    std::fprintf(stderr, "[%zu prompt tokens, prefill %.1f ms, %zu new tokens, %.1f tokens/s, provider %s]\n",
                 prompt.size(), prefill_ms, out.size(), decode_tok_s, model->provider().c_str());
  return 0;
}

}  // namespace

}  // namespace ogx::cli
