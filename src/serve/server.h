// `ogx serve`: an OpenAI-compatible HTTP server over one model folder (cpp-httplib, Debian's libcpp-httplib-dev).
// Endpoints: GET /v1/models, POST /v1/completions, POST /v1/chat/completions (stream: true as server-sent events
// ending in `data: [DONE]`), GET /health, GET /metrics (Prometheus). One thread steps the engine (continuous
// batching, genai/engine.h); HTTP threads parse, enqueue and stream. Errors are OpenAI's
// {"error": {"message", "type", "param", "code"}}: 400 bad input, 401 without the API key, 404, 413 body too
// large, 429 (with Retry-After) when --max-batch + --max-queue requests are in flight, 503 while shutting down.
#pragma once
#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "genai/config.h"

namespace httplib {
class Server;
}

namespace ogx::serve {

struct ServeContext;

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;             // 0: any free port (printed)
  std::string model_name;      // the id /v1/models lists ("" : the folder's name)
  // LoRA adapters (.onnx_adapter files) loaded at start, as (name, file): a request selects one with "model": name
  // (vLLM's convention; /v1/models lists them after the base model). With adapters, an unknown "model" is a 404.
  std::vector<std::pair<std::string, std::string>> adapters;
  int max_batch = 0;           // requests decoding together (one batched model run per step); 0: 16
  int max_queue = 64;          // requests waiting beyond those (more: 429)
  std::string api_key;         // non-empty: /v1/* need `Authorization: Bearer KEY`
  size_t max_body_bytes = 1 << 20;
  int prefill_chunk = 256;     // prompt tokens per engine step
  int shutdown_grace_s = 10;   // after SIGTERM: in-flight requests may finish for this long, then are cancelled
  int threads = 0;             // HTTP worker threads (0: max_batch + max_queue + 8)
  bool warmup = true;          // before serving: one short request alone and two together (warmup.cpp)
};

class Server {
 public:
  // Loads the model (config already carries the provider choice) and its tokenizer.
  Server(const genai::Config& config, ServerOptions options);
  ~Server();
  // Binds host:port; returns the port (the chosen one for port 0). Throws naming host and port on failure.
  int bind();
  // Serves until shutdown() and until in-flight requests have finished (or were cancelled after the grace time).
  void run();
  // Stops accepting, lets in-flight requests finish for shutdown_grace_s, then cancels them. Thread-safe; not
  // async-signal-safe (call it from a thread that waited for the signal).
  void shutdown();

 private:
  void routes();
  void engine_loop();

  ServerOptions options_;
  std::unique_ptr<ServeContext> ctx_;
  std::unique_ptr<httplib::Server> http_;
  std::thread engine_thread_, grace_thread_;
  std::atomic<bool> stop_engine_{false};
  std::atomic<bool> shutting_down_{false};
};

}  // namespace ogx::serve
