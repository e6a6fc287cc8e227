// ogx serve MODEL_DIR: the OpenAI-compatible HTTP server (src/serve/server.h). Arguments by CLI11. SIGTERM and
// SIGINT shut it down gracefully: no new requests, in-flight ones finish (cancelled after --shutdown-grace s).
#include <pthread.h>
#include <signal.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <thread>

#include "commands.h"
#include "common/error.h"
#include "genai/config.h"
#include "serve/server.h"

namespace ogx::cli {

int cmd_serve(const std::vector<std::string>& args) {
  CLI::App app{"OpenAI-compatible HTTP server over a model folder: GET /v1/models, POST /v1/completions, "
               "POST /v1/chat/completions, GET /health, GET /metrics",
               "ogx serve"};
  std::string dir, provider;
  std::vector<std::string> provider_options;
  int threads = -1;
  serve::ServerOptions o;
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);  // a later --port wins
  app.add_option("MODEL_DIR", dir, "model folder (genai_config.json, model.onnx, tokenizer)")->required();
  app.add_option("--host", o.host, "address to listen on")->capture_default_str();
  app.add_option("--port", o.port, "port to listen on (0: any free port)")->capture_default_str();
  app.add_option("--provider", provider, "cpu, vulkan or dml (default: the folder's genai_config.json)");
  app.add_option("--provider-option", provider_options, "KEY=VALUE for the GPU provider (repeatable)")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.add_option("--threads", threads, "CPU provider threads (0: all)");
  app.add_option("--max-batch", o.max_batch,
                 "requests decoding together (0: 16, or 1 where the provider keeps one sequence's KV cache)")
      ->capture_default_str();
  app.add_option("--max-queue", o.max_queue, "requests waiting beyond --max-batch (more get 429)")
      ->capture_default_str();
  app.add_option("--api-key", o.api_key, "require 'Authorization: Bearer KEY' on /v1/*");
  app.add_option("--model-name", o.model_name, "the model id /v1/models lists (default: the folder's name)");
  app.add_option("--max-body", o.max_body_bytes, "largest request body in bytes (more: 413)")->capture_default_str();
  app.add_option("--prefill-chunk", o.prefill_chunk, "prompt tokens run per engine step")->capture_default_str();
  app.add_option("--shutdown-grace", o.shutdown_grace_s, "seconds in-flight requests may finish after SIGTERM")
      ->capture_default_str();
  app.add_option("--http-threads", o.threads, "HTTP worker threads (0: max-batch + max-queue + 8)");
  try {
    std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 takes its vector last-first
    app.parse(reversed);
  } catch (const CLI::CallForHelp&) {
    std::printf("%s", app.help().c_str());
    return 0;
  } catch (const CLI::ParseError& e) {
    throw_error(e.what(), " (ogx serve --help)");
  }

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

}  // namespace ogx::cli
