#include "model_options.h"

#include <cstdlib>

namespace ogx::cli {

void add_model_options(Flags& flags, ModelOptions& o) {
  flags.option("--provider", o.provider, "execution provider: cpu, vulkan or dml (default: the folder's config)");
  flags.repeatable("--provider-option", o.provider_options, "KEY=VALUE for the provider (repeatable; cpu: int4_gemm=auto|mlas)");
  flags.option("--threads", o.threads, "CPU threads (0: all cores)");
  flags.flag("-q,--quiet", o.quiet, "no progress bar (it is drawn only when stderr is a terminal)");
}

void add_sampling_options(Flags& flags, SamplingOptions& o) {
  flags.flag("--greedy", o.greedy, "greedy decoding (the default without sampling flags)");
  flags.flag("--sample", o.sample, "sample with the folder's search options");
  flags.option("--top-k", o.top_k, "sample from the K most likely tokens");
  flags.option("--top-p", o.top_p, "sample from the smallest set of tokens with probability P");
  flags.option("--temperature", o.temperature, "sampling temperature");
  flags.option("--seed", o.seed, "random seed for sampling");
  flags.option("--repetition-penalty", o.repetition_penalty, "penalty for tokens already present");
  flags.option("--presence-penalty", o.presence_penalty, "OpenAI's presence penalty on generated tokens, [-2, 2]");
  flags.option("--frequency-penalty", o.frequency_penalty, "OpenAI's frequency penalty on generated tokens, [-2, 2]");
}

void apply_sampling_options(genai::GeneratorParams& params, const SamplingOptions& o, bool default_greedy) {
  bool sample = o.sample || o.top_k || o.top_p || o.temperature || o.seed;
  if (!sample && !default_greedy) sample = params.search.do_sample;
  if (o.greedy) sample = false;
  params.search.do_sample = sample;
  if (o.top_k) params.set_search_option("top_k", *o.top_k);
  if (o.top_p) params.set_search_option("top_p", *o.top_p);
  if (o.temperature) params.set_search_option("temperature", *o.temperature);
  if (o.seed) params.set_search_option("random_seed", *o.seed);
  if (o.repetition_penalty) params.set_search_option("repetition_penalty", *o.repetition_penalty);
  if (o.presence_penalty) params.set_search_option("presence_penalty", *o.presence_penalty);
  if (o.frequency_penalty) params.set_search_option("frequency_penalty", *o.frequency_penalty);
}

genai::Config model_config(const std::string& dir, const ModelOptions& o) {
  genai::Config c = genai::Config::load(dir);
  apply_model_options(c, o);
  return c;
}

void apply_model_options(genai::Config& c, const ModelOptions& o) {
  if (!o.provider.empty()) {
    std::string provider = o.provider;
    genai::canonical_provider(provider);
    c.clear_providers();
    if (provider != "cpu") c.append_provider(provider);
  }
  for (const std::string& kv : o.provider_options) {
    auto eq = kv.find('=');
    OGX_CHECK(eq != std::string::npos && eq > 0, "--provider-option needs KEY=VALUE, got '", kv, "'");
    auto& ps = c.model.decoder.session.providers;  // none: the CPU provider (its options go to a "cpu" entry)
    c.set_provider_option(ps.empty() ? "cpu" : ps.front().name, kv.substr(0, eq), kv.substr(eq + 1));
  }
  if (o.threads) {
    OGX_CHECK(*o.threads >= 0, "--threads must be >= 0");
    c.model.decoder.session.intra_op_num_threads = *o.threads;
  }
}

std::vector<int32_t> parse_id_list(const std::string& s, const std::string& flag) {
  std::vector<int32_t> ids;
  size_t p = 0;
  while (p <= s.size()) {
    size_t q = s.find(',', p);
    if (q == std::string::npos) q = s.size();
    std::string t = s.substr(p, q - p);
    char* end = nullptr;
    long long v = std::strtoll(t.c_str(), &end, 10);
    OGX_CHECK(!t.empty() && *end == 0 && v >= INT32_MIN && v <= INT32_MAX, flag, ": '", t, "' is not a token id");
    ids.push_back((int32_t)v);
    p = q + 1;
  }
  return ids;
}

}  // namespace ogx::cli
