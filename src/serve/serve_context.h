// What the HTTP handlers of `ogx serve` share: the model, its tokenizer, its adapters, the engine that one thread
// steps, the metrics and the admission count (--max-batch running + --max-queue waiting).
#pragma once
#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "genai/engine.h"
#include "genai/guidance/token_trie.h"
#include "genai/tokenizer/tokenizer.h"
#include "serve/metrics.h"

namespace ogx::serve {

struct ServeContext {
  std::shared_ptr<genai::Model> model;
  std::shared_ptr<tok::Tokenizer> tokenizer;  // null: the folder has none (token-id prompts only)
  // The vocabulary as structured output walks it, built once at start and held so that every response_format
  // compiles against it (TokenTrie::for_model caches it only while something holds it). Null without a tokenizer.
  std::shared_ptr<const genai::guidance::TokenTrie> vocabulary;
  std::unique_ptr<genai::Engine> engine;
  Metrics metrics;
  std::string model_name;  // the id /v1/models lists
  // LoRA adapters loaded at start (--adapter NAME=FILE): a request whose "model" is NAME runs with it.
  std::shared_ptr<genai::Adapters> adapters;  // null: none
  std::vector<std::string> adapter_names;     // in the order given
  int max_batch = 16, max_queue = 64;
  std::atomic<int> in_flight{0};  // engine requests admitted and not yet finished
  std::atomic<bool> draining{false};    // shutting down: new requests get 503
  std::atomic<bool> cancel_all{false};  // the shutdown grace ran out: running completions end now
  std::atomic<int> active_responses{0};  // completion responses not yet written (shutdown waits for them)
  int context_length() const { return model->config().model.context_length; }
};

}  // namespace ogx::serve
