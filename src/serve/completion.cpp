#include "serve/completion.h"

#include <algorithm>
#include <ctime>
#include <random>

#include "common/error.h"
#include "serve/api_error.h"

namespace ogx::serve {

namespace {

std::string random_id(const char* prefix) {
  static thread_local std::mt19937_64 rng(std::random_device{}());
  static const char* hex = "0123456789abcdef";
  std::string s = prefix;
  for (int i = 0; i < 24; i++) s += hex[rng() % 16];
  return s;
}

std::vector<int32_t> chat_prompt(const ServeContext& ctx, const CompletionRequest& r) {
  if (!ctx.tokenizer)
    throw ApiError(400, "the model folder has no tokenizer: /v1/chat/completions needs one", "invalid_request_error",
                   "messages");
  if (ctx.tokenizer->chat_template().empty())
    throw ApiError(400,
                   "the model folder has no chat template (tokenizer_config.json chat_template or chat_template.jinja): "
                   "use /v1/completions with a prompt",
                   "invalid_request_error", "messages");
  std::string text;
  try {
    text = ctx.tokenizer->apply_chat_template(r.messages.dump(), true);
  } catch (const Error& e) {
    throw ApiError(400, std::string("the chat template failed on these messages: ") + e.what(),
                   "invalid_request_error", "messages");
  }
  // A template that writes the BOS token itself gets no second one from the tokenizer.
  const std::string& bos = ctx.tokenizer->bos_token();
  bool has_bos = !bos.empty() && text.compare(0, bos.size(), bos) == 0;
  return ctx.tokenizer->encode(text, !has_bos);
}

// The adapter a request's "model" selects ("" : the base model). Without adapters any name is the base model (as
// before adapters: clients send all sorts of names); with them, a name that is neither is a 404.
std::string adapter_for(const ServeContext& ctx, const std::string& model) {
  if (!ctx.adapters || model.empty() || model == ctx.model_name) return "";
  if (std::count(ctx.adapter_names.begin(), ctx.adapter_names.end(), model)) return model;
  throw ApiError(404, "the model '" + model + "' does not exist (this server has " + served_models(ctx) + ")",
                 "invalid_request_error", "model");
}

}  // namespace

std::string served_models(const ServeContext& ctx) {
  std::string s = "the base model '" + ctx.model_name + "'";
  for (size_t i = 0; i < ctx.adapter_names.size(); i++)
    s += (i == 0 ? " and adapters '" : ", '") + ctx.adapter_names[i] + "'";
  return s;
}

Completion::Completion(ServeContext& ctx, CompletionRequest req)
    : ctx_(ctx), req_(std::move(req)), start_(std::chrono::steady_clock::now()) {
  id_ = random_id(req_.chat ? "chatcmpl-" : "cmpl-");
  created_ = (int64_t)std::time(nullptr);
  const std::string input = req_.chat ? "messages" : "prompt";
  adapter_ = adapter_for(ctx_, req_.model);
  if (req_.chat) {
    prompt_ = chat_prompt(ctx_, req_);
  } else if (!req_.prompt_ids.empty()) {
    const int vocab = ctx_.model->io().vocab_size;
    for (int32_t id : req_.prompt_ids)
      if (vocab > 0 && id >= vocab)
        throw ApiError(400, "prompt token id " + std::to_string(id) + " is outside the vocabulary (" +
                                std::to_string(vocab) + " tokens)",
                       "invalid_request_error", "prompt");
    prompt_ = req_.prompt_ids;
  } else {
    if (!ctx_.tokenizer)
      throw ApiError(400, "the model folder has no tokenizer: give the prompt as token ids", "invalid_request_error",
                     "prompt");
    prompt_ = ctx_.tokenizer->encode(req_.prompt, true);
  }
  if (prompt_.empty()) throw ApiError(400, "the " + input + " encode to no tokens", "invalid_request_error", input);
  genai::GeneratorParams probe(*ctx_.model);
  probe.search.max_length = 0;
  const int context = ctx_.engine->max_length_of(probe);
  if (prompt_.size() >= (size_t)context)
    throw ApiError(400, "the " + input + (req_.chat ? " need " : " needs ") + std::to_string(prompt_.size()) +
                            " tokens; the model's context is " + std::to_string(context) +
                            " tokens (with room for at least one generated token)",
                   "invalid_request_error", input);
  const int room = context - (int)prompt_.size();
  if (req_.max_tokens && *req_.max_tokens > room)
    throw ApiError(400, "max_tokens " + std::to_string(*req_.max_tokens) + " plus the " + std::to_string(prompt_.size()) +
                            " prompt tokens exceed the model's context of " + std::to_string(context) + " tokens",
                   "invalid_request_error", "max_tokens");
  max_tokens_ = req_.max_tokens ? *req_.max_tokens : room;
  if (!req_.guidance_type.empty()) {  // compiled once against the vocabulary; the n choices share it
    try {
      probe.set_guidance(req_.guidance_type, req_.guidance_data);
    } catch (const std::exception& e) {
      throw ApiError(400, std::string("response_format: ") + e.what(), "invalid_request_error", "response_format");
    }
    guidance_ = probe.guidance;
  }
}

Completion::~Completion() { cancel(); }

void Completion::start() {
  if (ctx_.draining) throw ApiError(503, "the server is shutting down", "server_error");
  const int n = req_.n, limit = ctx_.max_batch + ctx_.max_queue;
  if (n > limit)  // never admissible: not a matter of waiting
    throw ApiError(400, "n = " + std::to_string(n) + " is more than this server ever runs at once (--max-batch " +
                            std::to_string(ctx_.max_batch) + " + --max-queue " + std::to_string(ctx_.max_queue) + ")",
                   "invalid_request_error", "n");
  int cur = ctx_.in_flight.load();
  do {
    if (cur + n > limit)
      throw ApiError(429,
                     "the server is at capacity (" + std::to_string(cur) + " requests in flight, --max-batch " +
                         std::to_string(ctx_.max_batch) + " + --max-queue " + std::to_string(ctx_.max_queue) +
                         "): retry later",
                     "rate_limit_error");
  } while (!ctx_.in_flight.compare_exchange_weak(cur, cur + n));
  started_ = true;
  choices_.resize(n);
  for (Choice& c : choices_) c.counted = true;
  try {
    for (int i = 0; i < n; i++) {
      genai::GeneratorParams p(*ctx_.model);
      auto& s = p.search;
      s.do_sample = req_.temperature > 0;
      s.temperature = req_.temperature > 0 ? std::max(req_.temperature, genai::kMinTemperature) : 1.0;
      s.top_k = req_.top_k;
      s.top_p = req_.top_p;
      s.repetition_penalty = req_.repetition_penalty;
      s.presence_penalty = req_.presence_penalty;
      s.frequency_penalty = req_.frequency_penalty;
      s.random_seed = req_.seed ? *req_.seed + i : -1;
      s.max_length = (int)prompt_.size() + max_tokens_;
      s.min_length = 0;
      s.num_beams = 1;
      s.num_return_sequences = 1;
      s.batch_size = 1;
      s.no_repeat_ngram_size = 0;
      p.guidance = guidance_;
      p.guidance_type = req_.guidance_type;
      p.guidance_data = req_.guidance_data;
      Choice& c = choices_[i];
      c.stop = StopMatcher(req_.stop);
      if (ctx_.tokenizer) {
        c.stream = std::make_unique<tok::TokenizerStream>(ctx_.tokenizer, true);
        // The text continues the prompt: after its last token a SentencePiece word's leading space stays.
        c.stream->decode(prompt_.back());
      }
      c.request = std::make_shared<genai::Request>(p);
      if (!adapter_.empty()) c.request->set_active_adapter(ctx_.adapters, adapter_);
      c.request->add_tokens(prompt_);
    }
    std::vector<std::shared_ptr<genai::Request>> all;
    for (Choice& c : choices_) all.push_back(c.request);
    ctx_.engine->add_requests(all);  // the n choices start in the same step
  } catch (const Error& e) {
    cancel();
    throw ApiError(400, e.what(), "invalid_request_error", req_.chat ? "messages" : "prompt");
  }
}

void Completion::release(Choice& c) {
  if (c.request) {
    try {
      ctx_.engine->remove_request(c.request);
    } catch (...) {
    }
  }
  if (c.counted) {
    ctx_.in_flight--;
    c.counted = false;
  }
}

void Completion::finish(Choice& c, const std::string& reason, std::string& delta) {
  if (c.stream && !c.stop.stopped()) delta += c.stop.feed(c.stream->flush());
  delta += c.stop.flush();
  c.finish = reason;
  release(c);
}

bool Completion::poll(std::chrono::milliseconds timeout, std::vector<std::string>& deltas,
                      std::vector<size_t>& new_tokens) {
  deltas.assign(choices_.size(), std::string());
  new_tokens.assign(choices_.size(), 0);
  for (Choice& c : choices_)
    if (c.finish.empty()) {
      c.request->wait(timeout);  // the first running choice; the others are read as they are
      break;
    }
  bool changed = false;
  std::vector<int32_t> ids;
  for (size_t i = 0; i < choices_.size(); i++) {
    Choice& c = choices_[i];
    if (!c.finish.empty()) continue;
    if (ctx_.cancel_all) {
      finish(c, "cancelled", deltas[i]);
      changed = true;
      continue;
    }
    ids.clear();
    c.request->take_unseen_tokens(ids);
    for (int32_t id : ids) {
      c.tokens++;
      new_tokens[i]++;
      if (ttft_ < 0) {
        ttft_ = seconds_since_start();
        ctx_.metrics.time_to_first_token(ttft_);
      }
      if (c.stream) {
        deltas[i] += c.stop.feed(c.stream->decode(id));
      }
      if (c.stop.stopped()) break;
    }
    changed = changed || !ids.empty();
    if (c.stop.stopped()) {
      finish(c, "stop", deltas[i]);
      changed = true;
    } else if (c.request->is_turn_complete() && !c.request->has_unseen_tokens()) {
      switch (c.request->finish_reason()) {
        case genai::FinishReason::eos: finish(c, "stop", deltas[i]); break;
        case genai::FinishReason::length: finish(c, "length", deltas[i]); break;
        case genai::FinishReason::error:
          c.error = c.request->error();
          finish(c, "error", deltas[i]);
          break;
        default: finish(c, "cancelled", deltas[i]); break;
      }
      changed = true;
    }
  }
  return changed;
}

bool Completion::done() const {
  for (const Choice& c : choices_)
    if (c.finish.empty()) return false;
  return true;
}

void Completion::cancel() {
  std::string ignored;
  for (Choice& c : choices_)
    if (c.finish.empty()) finish(c, "cancelled", ignored);
}

size_t Completion::completion_tokens() const {
  size_t n = 0;
  for (const Choice& c : choices_) n += c.tokens;
  return n;
}

double Completion::seconds_since_start() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

}  // namespace ogx::serve
