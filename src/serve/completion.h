// One completion request being served: its prompt tokens, one engine request per choice (n), and each choice's
// text as it streams (detokenized, stop strings cut). HTTP threads drive it: start(), then poll() until done().
#pragma once
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "serve/openai_request.h"
#include "serve/serve_context.h"
#include "serve/stop_matcher.h"

namespace ogx::serve {
// "the base model 'NAME' and adapters 'A', 'B'": for messages.
std::string served_models(const ServeContext& ctx);
}  // namespace ogx::serve

namespace ogx::serve {

class Completion {
 public:
  // Tokenizes the prompt (chat: through the folder's chat template), checks it against the context and compiles
  // response_format's constraint; throws ApiError 400 for a folder without a chat template or tokenizer, a prompt
  // too long, max_tokens past the context, a schema the structured-output engine refuses (naming the problem);
  // 404 for a "model" that is neither the base model nor an adapter, when the server has adapters.
  Completion(ServeContext& ctx, CompletionRequest req);
  ~Completion();  // removes any unfinished engine request
  Completion(const Completion&) = delete;
  Completion& operator=(const Completion&) = delete;

  // Admits the n engine requests; throws ApiError 429 when --max-batch + --max-queue requests are in flight, 503
  // while shutting down.
  void start();
  // Waits up to `timeout` for news; appends each choice's new text to deltas[i] and its count of new tokens to
  // new_tokens[i] (both resized to n). Returns true when something changed (tokens or a choice finished).
  bool poll(std::chrono::milliseconds timeout, std::vector<std::string>& deltas, std::vector<size_t>& new_tokens);
  bool done() const;
  // Ends every unfinished choice now (a client went away): frees its engine request.
  void cancel();

  const CompletionRequest& request() const { return req_; }
  size_t choices() const { return choices_.size(); }
  const std::string& finish_reason(size_t i) const { return choices_[i].finish; }  // "" while running
  const std::string& error(size_t i) const { return choices_[i].error; }
  size_t prompt_tokens() const { return prompt_.size(); }
  size_t completion_tokens() const;
  const std::string& id() const { return id_; }
  // The model id the response names: the adapter the request selected, else the base model's.
  const std::string& model_id() const { return adapter_.empty() ? ctx_.model_name : adapter_; }
  int64_t created() const { return created_; }
  double seconds_to_first_token() const { return ttft_; }  // < 0 until the first token
  double seconds_since_start() const;

 private:
  struct Choice {
    std::shared_ptr<genai::Request> request;
    std::unique_ptr<tok::TokenizerStream> stream;  // null without a tokenizer
    StopMatcher stop;
    size_t tokens = 0;
    std::string finish, error;
    bool counted = false;  // released from ctx_.in_flight
  };
  void finish(Choice& c, const std::string& reason, std::string& delta);
  void release(Choice& c);

  ServeContext& ctx_;
  CompletionRequest req_;
  std::vector<int32_t> prompt_;
  int max_tokens_ = 0;
  std::shared_ptr<genai::guidance::CompiledGrammar> guidance_;  // response_format's constraint (null: text)
  std::string adapter_;  // the adapter "model" selected ("" : the base model)
  std::vector<Choice> choices_;
  std::string id_;
  int64_t created_ = 0;
  std::chrono::steady_clock::time_point start_;
  double ttft_ = -1;
  bool started_ = false;
};

}  // namespace ogx::serve
