// ogx chat MODEL_DIR [--system TEXT] [--max-new-tokens N] [search flags] [--provider P] [--provider-option K=V]...
//   [--adapter FILE.onnx_adapter] [--json]
//
// A multi-turn conversation on stdin/stdout. Each turn renders the whole conversation through the folder's chat
// template and tokenizes it; the generator keeps its KV cache between turns, so only the tokens after the longest
// common prefix with what it already holds run through the model. When an earlier part changed (/undo, a template
// that renders earlier turns differently, a retokenized answer) the generator is rewound to that prefix first, as
// ONNX Runtime GenAI's model-chat.py `--rewind` rewinds to the system prompt. Answers stream as they are generated
// (TokenizerStream: UTF-8 safe). Ctrl-C stops the current answer, not the session; EOF or /exit ends it.
// --json prints one JSON object per answer (the context it was generated from, its tokens and text) instead.
#include <csignal>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <unistd.h>
#include <vector>

#include "commands.h"
#include "genai/adapters.h"
#include "genai/generator.h"
#include "genai/tokenizer/tokenizer.h"
#include "model_options.h"

namespace ogx::cli {
namespace {

// A plain transcript for folders without a chat template (base models such as ogx's default model).
const char* kPlainTemplate =
    "{{ bos_token }}{% for m in messages %}{% if m.role == 'system' %}{{ m.content }}\n\n"
    "{% elif m.role == 'user' %}User: {{ m.content }}\n{% else %}Assistant: {{ m.content }}{{ eos_token }}\n"
    "{% endif %}{% endfor %}{% if add_generation_prompt %}Assistant:{% endif %}";

volatile std::sig_atomic_t g_interrupted = 0;
extern "C" void on_sigint(int) { g_interrupted = 1; }

// SIGINT sets g_interrupted (no SA_RESTART: a read at the prompt returns) for the session's lifetime.
class InterruptScope {
 public:
  InterruptScope() {
    struct sigaction sa = {};
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_);
  }
  ~InterruptScope() { sigaction(SIGINT, &old_, nullptr); }

 private:
  struct sigaction old_ = {};
};

struct ChatOptions {
  std::string dir;                 // MODEL_DIR
  std::optional<std::string> system;  // --system TEXT
  std::string chat_template;       // --chat-template FILE (default: the folder's)
  int max_new = 512;               // --max-new-tokens per answer
  std::string adapter;             // --adapter FILE.onnx_adapter: a LoRA adapter active for the session
  bool json = false;
  SamplingOptions sampling;
  ModelOptions model;
};

// One line from stdin without its newline; nullopt at EOF. An interrupted read (Ctrl-C at the prompt) gives "".
std::optional<std::string> read_line() {
  std::string line;
  for (;;) {
    int c = std::fgetc(stdin);
    if (c == EOF) {
      if (g_interrupted && std::ferror(stdin)) {
        std::clearerr(stdin);
        return std::string();
      }
      if (line.empty()) return std::nullopt;
      return line;
    }
    if (c == '\n') return line;
    line.push_back((char)c);
  }
}

size_t common_prefix(const std::vector<int32_t>& a, const std::vector<int32_t>& b) {
  size_t n = 0;
  while (n < a.size() && n < b.size() && a[n] == b[n]) n++;
  return n;
}

class ChatSession {
 public:
  ChatSession(const ChatOptions& o, std::shared_ptr<genai::Model> model, std::shared_ptr<tok::Tokenizer> tokenizer)
      : o_(o), model_(std::move(model)), tok_(std::move(tokenizer)), params_(*model_) {
    const int64_t ctx = model_->config().model.context_length;
    const int64_t search_max = model_->config().search.max_length;
    params_.search.max_length = (int)(ctx > 0 ? ctx : search_max > 0 ? search_max : 4096);
    apply_sampling_options(params_, o.sampling, false);
    if (!o.chat_template.empty()) {
      template_ = read_text(o.chat_template);
    } else if (tok_->chat_template().empty()) {
      template_ = kPlainTemplate;
      if (!o.json)
        std::fprintf(stderr, "(%s has no chat template: a plain User:/Assistant: transcript is used)\n",
                     o.dir.c_str());
    }
    gen_ = std::make_unique<genai::Generator>(model_, params_);
    if (!o.adapter.empty()) {
      adapters_ = genai::Adapters::create(model_);
      adapters_->load(o.adapter, "adapter");  // throws naming the file and the parameter at fault
      gen_->set_active_adapter(adapters_, "adapter");
    }
    reset();
  }

  void reset() {
    messages_ = nlohmann::json::array();
    if (o_.system) messages_.push_back({{"role", "system"}, {"content", *o_.system}});
  }

  // Drops the last user message and its answer (the next turn rewinds the KV cache past them).
  bool undo() {
    while (!messages_.empty() && messages_.back()["role"] != "user") messages_.erase(messages_.size() - 1);
    if (messages_.empty()) return false;
    messages_.erase(messages_.size() - 1);
    return true;
  }

  // One turn: the user's text in, the answer streamed out. Returns false when the context is full.
  bool turn(const std::string& text) {
    nlohmann::json next = messages_;
    next.push_back({{"role", "user"}, {"content", text}});
    std::string rendered = tok_->apply_chat_template(next.dump(), true, "", template_);
    std::vector<int32_t> ids = tok_->encode(rendered, false);
    const size_t limit = (size_t)gen_->max_length();
    if (ids.size() + 1 > limit) {
      std::fprintf(stderr, "[context full: the conversation would be %zu tokens, the model holds %zu; /reset starts "
                   "over, /undo drops the last exchange]\n", ids.size(), limit);
      return false;
    }
    const std::vector<int32_t>& held = gen_->sequence(0);
    size_t reuse = common_prefix(held, ids);
    if (reuse == ids.size()) reuse--;  // at least one token runs (its logits pick the first answer token)
    if (reuse < held.size()) gen_->rewind_to(reuse);
    auto t0 = std::chrono::steady_clock::now();
    gen_->append_tokens(std::vector<int32_t>(ids.begin() + (std::ptrdiff_t)reuse, ids.end()));
    double prefill_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();

    tok::TokenizerStream stream(tok_, true);
    std::vector<int32_t> answer;
    bool stopped = false;  // (g_interrupted was cleared before the line was read: Ctrl-C in the prefill counts)
    auto t1 = std::chrono::steady_clock::now();
    while (!gen_->is_done() && (int)answer.size() < o_.max_new) {
      if (g_interrupted) {
        stopped = true;
        break;
      }
      gen_->generate_next_token();
      int32_t id = gen_->last_token();
      answer.push_back(id);
      if (!o_.json) std::cout << stream.decode(id) << std::flush;
    }
    double decode_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
    if (!o_.json) std::cout << stream.flush() << std::endl;
    const bool full = gen_->token_count() >= limit;
    std::string answer_text = tok_->decode(answer, true);
    next.push_back({{"role", "assistant"}, {"content", answer_text}});
    messages_ = next;
    double tok_s = answer.size() > 1 ? (double)(answer.size() - 1) / decode_s : 0.0;
    if (o_.json) {
      nlohmann::json j = {{"context", ids},          {"tokens", answer},          {"text", answer_text},
                          {"reused_tokens", reuse},  {"new_tokens", ids.size() - reuse},
                          {"prefill_ms", prefill_ms}, {"decode_tok_s", tok_s}, {"stopped", stopped},
                          {"context_full", full}};
      std::cout << j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << std::endl;
    } else {
      std::fprintf(stderr, "[%zu tokens, %.1f tokens/s; prompt: %zu new tokens (%zu reused) in %.0f ms; context %zu/%zu%s]\n",
                   answer.size(), tok_s, ids.size() - reuse, reuse, prefill_ms, gen_->token_count(), limit,
                   stopped ? "; stopped" : "");
      if (full) std::fprintf(stderr, "[context full: /reset starts over, /undo drops the last exchange]\n");
    }
    return true;
  }

 private:
  static std::string read_text(const std::string& path) {
    FILE* f = std::fopen(path.c_str(), "rb");
    OGX_CHECK(f, "--chat-template: cannot read '", path, "'");
    std::string s;
    char buf[4096];
    for (size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) s.append(buf, n);
    std::fclose(f);
    return s;
  }

  const ChatOptions& o_;
  std::shared_ptr<genai::Model> model_;
  std::shared_ptr<tok::Tokenizer> tok_;
  genai::GeneratorParams params_;
  std::shared_ptr<genai::Adapters> adapters_;  // --adapter (held while the generator uses it)
  std::unique_ptr<genai::Generator> gen_;
  std::string template_;            // "" : the folder's
  nlohmann::json messages_;         // the conversation so far: [{role, content}]
};

int run_chat(const ChatOptions& o) {
  auto model = [&] {
    ProgressBar bar(o.model.quiet || o.json);
    return genai::Model::load(model_config(o.dir, o.model));
  }();
  auto tokenizer = tok::Tokenizer::load(o.dir);
  ChatSession chat(o, model, tokenizer);
  InterruptScope sigint;
  const bool tty = isatty(0) && !o.json;
  if (tty)
    std::fprintf(stderr, "(%s on %s: /reset starts over, /undo drops the last exchange, /exit or Ctrl-D ends; Ctrl-C "
                 "stops an answer)\n", o.dir.c_str(), model->provider().c_str());
  for (;;) {
    if (tty) std::fputs("> ", stdout), std::fflush(stdout);
    g_interrupted = 0;
    std::optional<std::string> line = read_line();
    if (!line) break;
    if (g_interrupted && tty) std::fputs("\n", stdout);  // Ctrl-C at the prompt: a fresh one
    if (line->empty()) continue;
    if (*line == "/exit" || *line == "/quit") break;
    if (*line == "/reset") {
      chat.reset();
      if (!o.json) std::fprintf(stderr, "[conversation reset]\n");
      continue;
    }
    if (*line == "/undo") {
      bool dropped = chat.undo();
      if (!o.json) std::fprintf(stderr, dropped ? "[last exchange dropped]\n" : "[nothing to undo]\n");
      continue;
    }
    if ((*line)[0] == '/' && line->find(' ') == std::string::npos) {
      std::fprintf(stderr, "[unknown command %s: /reset, /undo, /exit]\n", line->c_str());
      continue;
    }
    try {
      chat.turn(*line);
    } catch (const Error& e) {  // e.g. a template that rejects the conversation: the session goes on
      std::fprintf(stderr, "[error: %s]\n", e.what());
    }
  }
  if (tty) std::fputs("\n", stdout);
  return 0;
}

}  // namespace

Runner define_chat(Flags& flags) {
  auto o = std::make_shared<ChatOptions>();
  flags.positional("MODEL_DIR", o->dir, "model folder with a tokenizer").required();
  flags.option("--system", o->system, "system message opening the conversation");
  flags.option("--chat-template", o->chat_template, "a Jinja chat template file instead of the folder's");
  flags.option("--max-new-tokens", o->max_new, "most tokens per answer");
  flags.option("--adapter", o->adapter, "a LoRA adapter (.onnx_adapter) active for the whole session");
  add_sampling_options(flags, o->sampling);
  add_model_options(flags, o->model);
  flags.flag("--json", o->json, "one JSON object per answer (context, tokens, text) instead of streamed text");
  return [o] { return run_chat(*o); };
}

}  // namespace ogx::cli
