// ogx serve MODEL_DIR: the OpenAI-compatible HTTP server (src/serve/server.h). Arguments by common/command_line.h (CLI11). SIGTERM and
// SIGINT shut it down gracefully: no new requests, in-flight ones finish (cancelled after --shutdown-grace s).
#include <pthread.h>
#include <signal.h>

#include <cstdio>
#include <thread>

#include "commands.h"
#include "common/error.h"
#include "genai/config.h"
#include "serve/server.h"

namespace ogx::cli {

namespace {
struct ServeArgs {
  std::string dir, provider;
  std::vector<std::string> provider_options;
  int threads = -1;
  int64_t max_body = 1 << 20;
  serve::ServerOptions o;
};
int run_serve(ServeArgs& a);
}  // namespace

Runner define_serve(Flags& flags) {
  static ServeArgs a;
  a = ServeArgs{};
  serve::ServerOptions& o = a.o;
  flags.description("OpenAI-compatible HTTP server over a model folder: GET /v1/models, POST /v1/completions, "
                    "POST /v1/chat/completions, GET /health, GET /metrics");
  flags.positional("MODEL_DIR", a.dir, "model folder (genai_config.json, model.onnx, tokenizer)").required();
  flags.option("--host", o.host, "address to listen on");
  flags.option("--port", o.port, "port to listen on (0: any free port)");
  flags.option("--provider", a.provider, "cpu, vulkan or dml (default: the folder's genai_config.json)");
  flags.repeatable("--provider-option", a.provider_options, "KEY=VALUE for the GPU provider (repeatable)");
  flags.option("--threads", a.threads, "CPU provider threads (0: all)");
  flags.option("--max-batch", o.max_batch, "requests decoding together (0: 16)");
  flags.option("--max-queue", o.max_queue, "requests waiting beyond --max-batch (more get 429)");
  flags.option("--api-key", o.api_key, "require 'Authorization: Bearer KEY' on /v1/*");
  flags.option("--model-name", o.model_name, "the model id /v1/models lists (default: the folder's name)");
  flags.option("--max-body", a.max_body, "largest request body in bytes (more: 413)");
  flags.option("--prefill-chunk", o.prefill_chunk, "prompt tokens run per engine step");
  flags.option("--shutdown-grace", o.shutdown_grace_s, "seconds in-flight requests may finish after SIGTERM");
  flags.option("--http-threads", o.threads, "HTTP worker threads (0: max-batch + max-queue + 8)");
  return [] { return run_serve(a); };
}

namespace {
int run_serve(ServeArgs& a) {
  if (a.max_body <= 0) throw UsageError("--max-body must be positive, got " + std::to_string(a.max_body));
  serve::ServerOptions& o = a.o;
  o.max_body_bytes = (size_t)a.max_body;
  const std::string& dir = a.dir;
  const std::string& provider = a.provider;
  const std::vector<std::string>& provider_options = a.provider_options;
  const int threads = a.threads;
  genai::Config config = genai::Config::load(dir);
  if (!provider.empty()) {
    genai::canonical_provider(provider);
    config.clear_providers();
    if (provider != "cpu") config.append_provider(provider);
  }
  for (const std::string& kv : provider_options) {
    auto eq = kv.find('=');
    OGX_CHECK(eq != std::string::npos && eq > 0, "--provider-option needs KEY=VALUE, got '", kv, "'");
    auto& ps = config.model.decoder.session.providers;
    OGX_CHECK(!ps.empty(), "--provider-option ", kv, " given, but no GPU provider is selected (use --provider vulkan)");
    config.set_provider_option(ps.front().name, kv.substr(0, eq), kv.substr(eq + 1));
  }
  if (threads >= 0) config.model.decoder.session.intra_op_num_threads = threads;

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
