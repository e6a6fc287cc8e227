// ogx generate MODEL_DIR (--ids 1,2,3 | --prompt TEXT [--chat]) [--max-new-tokens N] [--min-new-tokens N]
//   [--greedy | --top-k K --top-p P --temperature T --seed S] [--repetition-penalty R] [--provider P]
//   [--provider-option K=V]... [--threads N] [--json] [--dump-logits FILE]
#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "common/log.h"
#include "genai/generator.h"
#include "genai/tokenizer/tokenizer.h"
#include "model_options.h"

namespace ogx::cli {
namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

std::shared_ptr<tok::Tokenizer> try_tokenizer(const std::string& dir, bool required) {
  try {
    return tok::Tokenizer::load(dir);
  } catch (const Error& e) {
    if (required) throw;
    return nullptr;
  }
}

}  // namespace

int cmd_generate(const std::vector<std::string>& argv) {
  std::set<std::string> vals = kModelValueFlags;
  vals.insert({"ids", "prompt", "max-new-tokens", "min-new-tokens", "top-k", "top-p", "temperature", "seed",
               "repetition-penalty", "dump-logits", "system"});
  Args a(argv, vals, {"greedy", "json", "chat", "sample"});
  OGX_CHECK(a.positional().size() == 1, "usage: ogx generate MODEL_DIR (--ids 1,2,3 | --prompt TEXT) [options]");
  const std::string dir = a.positional()[0];
  OGX_CHECK(a.has("ids") != a.has("prompt"), "give exactly one of --ids and --prompt");
  auto model = genai::Model::load(model_config(dir, a));
  std::shared_ptr<tok::Tokenizer> tokenizer = try_tokenizer(dir, a.has("prompt"));
  std::vector<int32_t> prompt;
  if (a.has("ids")) {
    prompt = parse_id_list(a.get("ids"));
  } else {
    std::string text = a.get("prompt");
    if (a.has("chat")) {
      nlohmann::json msgs = nlohmann::json::array();
      if (a.has("system")) msgs.push_back({{"role", "system"}, {"content", a.get("system")}});
      msgs.push_back({{"role", "user"}, {"content", text}});
      text = tokenizer->apply_chat_template(msgs.dump(), true);
      prompt = tokenizer->encode(text, false);
    } else {
      prompt = tokenizer->encode(text, true);
    }
  }
  genai::GeneratorParams params(*model);
  int max_new = a.get_int("max-new-tokens", 128);
  int min_new = a.get_int("min-new-tokens", 0);
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
  bool sample = a.has("sample") || a.has("top-k") || a.has("top-p") || a.has("temperature") || a.has("seed");
  if (a.has("greedy")) sample = false;
  params.search.do_sample = sample;
  if (a.has("top-k")) params.set_search_option("top_k", a.get_int("top-k", 50));
  if (a.has("top-p")) params.set_search_option("top_p", a.get_double("top-p", 1.0));
  if (a.has("temperature")) params.set_search_option("temperature", a.get_double("temperature", 1.0));
  if (a.has("seed")) params.set_search_option("random_seed", a.get_int("seed", 0));
  if (a.has("repetition-penalty")) params.set_search_option("repetition_penalty", a.get_double("repetition-penalty", 1));
  bool json = a.has("json");

  genai::Generator gen(model, params);
  auto t0 = Clock::now();
  gen.append_tokens(prompt);
  double prefill_ms = ms_since(t0);
  // --dump-logits: float32 logits after the prompt, then after each generated token is fed back (one row each)
  std::ofstream dump;
  auto dump_logits = [&] {
    if (dump.is_open())
      dump.write((const char*)gen.logits().data(), (std::streamsize)(gen.logits().size() * sizeof(float)));
  };
  if (a.has("dump-logits")) {
    dump.open(a.get("dump-logits"), std::ios::binary);
    OGX_CHECK(dump, "cannot write '", a.get("dump-logits"), "'");
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

}  // namespace ogx::cli
