// ogx serve MODEL_DIR: the OpenAI-compatible HTTP server (src/serve/server.h). Arguments by common/command_line.h (CLI11). SIGTERM and
// SIGINT shut it down gracefully: no new requests, in-flight ones finish (cancelled after --shutdown-grace s).
#include <pthread.h>
#include <signal.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <thread>

#include "commands.h"
#include "model_options.h"
#include "common/error.h"
#include "genai/config.h"
#include "serve/server.h"

namespace ogx::cli {

namespace {
struct ServeArgs {
  std::string dir;
  ModelOptions model;  // --provider, --provider-option, --threads, --quiet (model_options.h)
  int64_t max_body = 1 << 20;
  std::vector<std::string> adapters;  // --adapter NAME=FILE (or FILE: named by its stem)
  serve::ServerOptions o;
  bool no_warmup = false;
};
int run_serve(ServeArgs& a);
}  // namespace

Runner define_serve(Flags& flags) {
  auto args = std::make_shared<ServeArgs>();
  ServeArgs& a = *args;
  serve::ServerOptions& o = a.o;
  flags.description("OpenAI-compatible HTTP server over a model folder: GET /v1/models, POST /v1/completions, "
                    "POST /v1/chat/completions, GET /health, GET /metrics");
  flags.positional("MODEL_DIR", a.dir, "model folder (genai_config.json, model.onnx, tokenizer)").required();
  flags.option("--host", o.host, "address to listen on");
  flags.option("--port", o.port, "port to listen on (0: any free port)");
  add_model_options(flags, a.model);
  flags.option("--max-batch", o.max_batch, "requests decoding together (0: 16)");
  flags.option("--max-queue", o.max_queue, "requests waiting beyond --max-batch (more get 429)");
  flags.option("--api-key", o.api_key, "require 'Authorization: Bearer KEY' on /v1/*");
  flags.option("--model-name", o.model_name, "the model id /v1/models lists (default: the folder's name)");
  flags.repeatable("--adapter", a.adapters,
                   "NAME=FILE.onnx_adapter: a LoRA adapter a request selects with \"model\": NAME (repeatable; FILE "
                   "alone: named by its stem)");
  flags.option("--max-body", a.max_body, "largest request body in bytes (more: 413)");
  flags.option("--prefill-chunk", o.prefill_chunk, "prompt tokens run per engine step");
  flags.option("--shutdown-grace", o.shutdown_grace_s, "seconds in-flight requests may finish after SIGTERM");
  flags.option("--http-threads", o.threads, "HTTP worker threads (0: max-batch + max-queue + 8)");
  flags.flag("--no-warmup", a.no_warmup, "listen at once (by default a few throwaway steps run first, so the first "
                                         "request does not pay for the device's first use of its kernels)");
  return [args] { return run_serve(*args); };
}

namespace {
int run_serve(ServeArgs& a) {
  if (a.max_body <= 0) throw UsageError("--max-body must be positive, got " + std::to_string(a.max_body));
  serve::ServerOptions& o = a.o;
  o.max_body_bytes = (size_t)a.max_body;
  o.warmup = !a.no_warmup;
  for (const std::string& spec : a.adapters) {
    const size_t eq = spec.find('=');
    std::string name = eq == std::string::npos ? std::filesystem::path(spec).stem().string() : spec.substr(0, eq);
    std::string file = eq == std::string::npos ? spec : spec.substr(eq + 1);
    if (name.empty() || file.empty()) throw UsageError("--adapter expects NAME=FILE.onnx_adapter, got '" + spec + "'");
    o.adapters.emplace_back(std::move(name), std::move(file));
  }
  genai::Config config = model_config(a.dir, a.model);

  // Signals go to one waiting thread (every other thread blocks them), which shuts the server down.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGUSR1);  // ends the waiting thread after a shutdown that came another way
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  signal(SIGPIPE, SIG_IGN);  // a client gone mid-write is an error return, not the end of the process

  serve::Server server(config, o);
  const int port = server.bind();
  std::thread watcher([&] {
    int sig = 0;
    sigwait(&set, &sig);
    if (sig != SIGUSR1) {
      std::fprintf(stderr, "ogx serve: %s: shutting down (in-flight requests finish)\n",
                   sig == SIGTERM ? "SIGTERM" : "SIGINT");
      server.shutdown();
    }
  });
  std::printf("listening on http://%s:%d\n", o.host.c_str(), port);
  std::fflush(stdout);
  server.run();
  pthread_kill(watcher.native_handle(), SIGUSR1);
  watcher.join();
  std::fprintf(stderr, "ogx serve: stopped\n");
  return 0;
}
}  // namespace

}  // namespace ogx::cli
