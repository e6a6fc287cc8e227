#include "serve/server.h"

#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>

#include "common/error.h"
#include "common/log.h"
#include "serve/api_error.h"
#include "serve/completion.h"
#include "serve/responses.h"
#include "serve/serve_context.h"
#include "serve/warmup.h"

namespace ogx::serve {

using json = nlohmann::json;

namespace {

void send_json(httplib::Response& res, int status, const json& body) {
  res.status = status;
  res.set_content(body.dump(-1, ' ', false, json::error_handler_t::replace), "application/json");
}

void send_error(httplib::Response& res, const ApiError& e) {
  if (e.status == 429) res.set_header("Retry-After", "1");
  send_json(res, e.status, error_body(e));
}

// The metrics label of a path (a fixed set, so that odd paths do not make new series).
std::string endpoint_label(const std::string& path) {
  for (const char* p : {"/v1/completions", "/v1/chat/completions", "/v1/models", "/health", "/metrics"})
    if (path == p) return p;
  if (path.rfind("/v1/models/", 0) == 0) return "/v1/models";
  return "other";
}

// Counts a completion response from its handler's start until it is written (ServeContext::active_responses).
struct ActiveResponse {
  ServeContext& ctx;
  explicit ActiveResponse(ServeContext& c) : ctx(c) { ctx.active_responses++; }
  ~ActiveResponse() { ctx.active_responses--; }
};

const char* status_type(int status) {
  switch (status) {
    case 401: return "authentication_error";
    case 404: return "not_found_error";
    case 413: return "invalid_request_error";
    case 429: return "rate_limit_error";
    default: return status >= 500 ? "server_error" : "invalid_request_error";
  }
}

std::string status_message(int status, const httplib::Request& req) {
  switch (status) {
    case 400: return "bad request (malformed HTTP or headers)";
    case 404: return "no such endpoint: " + req.method + " " + req.path;
    case 405: return "method not allowed: " + req.method + " " + req.path;
    case 413: return "the request body is too large";
    case 414: return "the request URI is too long";
    default: return "HTTP error " + std::to_string(status);
  }
}

}  // namespace

Server::Server(const genai::Config& config, ServerOptions options) : options_(std::move(options)) {
  OGX_CHECK(options_.max_batch >= 0 && options_.max_batch <= 1024, "--max-batch must be in [0, 1024], got ",
            options_.max_batch);
  OGX_CHECK(options_.max_queue >= 0 && options_.max_queue <= 100000, "--max-queue must be in [0, 100000], got ",
            options_.max_queue);
  OGX_CHECK(options_.port >= 0 && options_.port <= 65535, "--port must be in [0, 65535], got ", options_.port);
  ctx_ = std::make_unique<ServeContext>();
  ctx_->model = genai::Model::load(config);
  // Generators own their KV caches and decode together in one model run per step (genai/batch_step.h).
  if (options_.max_batch == 0) options_.max_batch = 16;
  try {
    ctx_->tokenizer = tok::Tokenizer::load(config.model_dir);
  } catch (const Error& e) {
    std::fprintf(stderr, "ogx serve: no tokenizer (%s): prompts must be token ids\n", e.what());
  }
  if (ctx_->tokenizer) {
    const genai::Config& c = ctx_->model->config();  // the key GeneratorParams::set_guidance looks it up by
    try {
      ctx_->vocabulary = genai::guidance::TokenTrie::for_model(c.model_dir, ctx_->model->io().vocab_size,
                                                               c.model.eos_token_ids);
    } catch (const Error& e) {  // response_format then fails per request, with this message
      std::fprintf(stderr, "ogx serve: no structured output (%s)\n", e.what());
    }
  }
  if (options_.warmup) warm_up(ctx_->model);
  genai::EngineOptions eo;
  eo.max_batch = options_.max_batch;
  eo.prefill_chunk = options_.prefill_chunk;
  ctx_->engine = std::make_unique<genai::Engine>(ctx_->model, eo);
  ctx_->max_batch = options_.max_batch;
  ctx_->max_queue = options_.max_queue;
  ctx_->model_name = options_.model_name;
  if (ctx_->model_name.empty()) {
    std::filesystem::path p = std::filesystem::path(config.model_dir).lexically_normal();
    if (p.filename().empty()) p = p.parent_path();
    ctx_->model_name = p.filename().string();
  }
  if (!options_.adapters.empty()) {
    ctx_->adapters = genai::Adapters::create(ctx_->model);
    for (const auto& [name, file] : options_.adapters) {
      OGX_CHECK(!name.empty(), "--adapter ", file, ": the adapter needs a name (NAME=FILE)");
      OGX_CHECK(name != ctx_->model_name, "--adapter ", name, "=", file, ": the name is the base model's (",
                ctx_->model_name, "); choose another");
      ctx_->adapters->load(file, name);  // throws naming the file (and a name given twice)
      ctx_->adapter_names.push_back(name);
    }
  }
  http_ = std::make_unique<httplib::Server>();
  const size_t threads =
      options_.threads > 0 ? (size_t)options_.threads : (size_t)(options_.max_batch + options_.max_queue + 8);
  http_->new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  http_->set_payload_max_length(options_.max_body_bytes);
  http_->set_read_timeout(30, 0);
  http_->set_write_timeout(30, 0);
  http_->set_keep_alive_timeout(5);
  http_->set_tcp_nodelay(true);
  routes();
  engine_thread_ = std::thread([this] { engine_loop(); });
}

Server::~Server() {
  shutdown();
  stop_engine_ = true;
  if (ctx_ && ctx_->engine) ctx_->engine->notify();
  if (engine_thread_.joinable()) engine_thread_.join();
  if (grace_thread_.joinable()) grace_thread_.join();
}

int Server::bind() {
  int port = options_.port;
  if (port == 0) {
    port = http_->bind_to_any_port(options_.host);
    OGX_CHECK(port > 0, "cannot listen on ", options_.host, " (any port)");
  } else {
    OGX_CHECK(http_->bind_to_port(options_.host, port), "cannot listen on ", options_.host, ":", port,
              " (in use, or not an address of this machine)");
  }
  return port;
}

void Server::run() {
  http_->listen_after_bind();  // returns after shutdown(), once the worker threads have finished their requests
  stop_engine_ = true;
  ctx_->engine->notify();
  if (engine_thread_.joinable()) engine_thread_.join();
}

void Server::shutdown() {
  if (shutting_down_.exchange(true)) return;
  ctx_->draining = true;  // new requests and /health get 503 from now on
  // cpp-httplib cuts chunked responses once it stops: it stops only after the in-flight responses were written
  // (or, past the grace time, cancelled and written).
  grace_thread_ = std::thread([this] {
    using namespace std::chrono;
    auto wait_idle = [this](steady_clock::time_point until) {
      while (steady_clock::now() < until && ctx_->active_responses > 0 && !stop_engine_)
        std::this_thread::sleep_for(milliseconds(20));
    };
    wait_idle(steady_clock::now() + seconds(options_.shutdown_grace_s));
    ctx_->cancel_all = true;  // what still runs ends now (finish_reason "cancelled")
    wait_idle(steady_clock::now() + seconds(2));
    std::this_thread::sleep_for(milliseconds(50));  // the last bytes of a response that just finished
    http_->stop();
  });
}

void Server::engine_loop() {
  genai::Engine& e = *ctx_->engine;
  while (!stop_engine_) {
    ctx_->metrics.sample_generated(e.stats().generated_tokens);
    if (!e.wait_for_pending(std::chrono::milliseconds(100))) continue;
    try {
      e.step();
    } catch (const std::exception& ex) {  // a request's own failure ends that request; this is the engine's
      std::fprintf(stderr, "ogx serve: engine step failed: %s\n", ex.what());
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
}

void Server::routes() {
  httplib::Server& s = *http_;
  ServeContext& ctx = *ctx_;
  const std::string key = options_.api_key;

  s.set_pre_routing_handler([key](const httplib::Request& req, httplib::Response& res) {
    if (key.empty() || req.path.rfind("/v1/", 0) != 0) return httplib::Server::HandlerResponse::Unhandled;
    if (req.get_header_value("Authorization") == "Bearer " + key) return httplib::Server::HandlerResponse::Unhandled;
    res.set_header("WWW-Authenticate", "Bearer");
    send_json(res, 401,
              error_body("missing or wrong API key: send the header 'Authorization: Bearer <key>'",
                         "authentication_error", "", 401));
    return httplib::Server::HandlerResponse::Handled;
  });
  s.set_error_handler([](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;
    send_json(res, res.status, error_body(status_message(res.status, req), status_type(res.status), "", res.status));
  });
  s.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
    std::string what = "internal error";
    try {
      std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      what = std::string("internal error: ") + e.what();
    } catch (...) {
    }
    send_json(res, 500, error_body(what, "server_error", "", 500));
  });
  s.set_logger([&ctx](const httplib::Request& req, const httplib::Response& res) {
    ctx.metrics.request_done(endpoint_label(req.path), res.status);
  });

  s.Get("/health", [&ctx](const httplib::Request&, httplib::Response& res) {
    if (ctx.draining) send_json(res, 503, {{"status", "shutting down"}});
    else send_json(res, 200, {{"status", "ok"}});
  });
  s.Get("/metrics", [&ctx](const httplib::Request&, httplib::Response& res) {
    res.set_content(ctx.metrics.prometheus(ctx.engine->stats(), (size_t)std::max(0, ctx.in_flight.load()),
                                           ctx.max_batch, ctx.max_queue),
                    "text/plain; version=0.0.4");
  });
  // The base model, then each adapter (its parent: the base model), as vLLM lists LoRA modules.
  auto model_json = [&ctx](const std::string& id) {
    json m = {{"id", id}, {"object", "model"}, {"created", 0}, {"owned_by", "ogx"}};
    m["parent"] = id == ctx.model_name ? json() : json(ctx.model_name);
    return m;
  };
  s.Get("/v1/models", [model_json, &ctx](const httplib::Request&, httplib::Response& res) {
    json data = json::array({model_json(ctx.model_name)});
    for (const std::string& a : ctx.adapter_names) data.push_back(model_json(a));
    send_json(res, 200, {{"object", "list"}, {"data", data}});
  });
  s.Get(R"(/v1/models/(.+))", [model_json, &ctx](const httplib::Request& req, httplib::Response& res) {
    const std::string id = req.matches[1];
    if (id == ctx.model_name || std::count(ctx.adapter_names.begin(), ctx.adapter_names.end(), id))
      return send_json(res, 200, model_json(id));
    send_error(res, ApiError(404, "no model '" + id + "' (this server has " + served_models(ctx) + ")",
                             "not_found_error", "model"));
  });

  auto complete = [&ctx](bool chat) {
    return [&ctx, chat](const httplib::Request& req, httplib::Response& res) {
      auto active = std::make_shared<ActiveResponse>(ctx);  // until the response is written (shutdown waits)
      std::shared_ptr<Completion> c;
      try {
        c = std::make_shared<Completion>(ctx, parse_completion_request(req.body, chat));
        c->start();
      } catch (const ApiError& e) {
        return send_error(res, e);
      }
      const std::string model = c->model_id();
      if (!c->request().stream) {
        std::vector<std::string> texts(c->choices()), deltas;
        std::vector<size_t> counts;
        while (!c->done()) {
          c->poll(std::chrono::milliseconds(100), deltas, counts);
          for (size_t i = 0; i < texts.size(); i++) texts[i] += deltas[i];
        }
        ctx.metrics.request_duration(c->seconds_since_start());
        ctx.metrics.tokens(model, c->prompt_tokens() * c->choices(), c->completion_tokens());
        for (size_t i = 0; i < c->choices(); i++)
          if (c->finish_reason(i) == "error")
            return send_json(res, 500, error_body("generation failed: " + c->error(i), "server_error", "", 500));
        return send_json(res, 200, full_response(*c, model, texts));
      }
      res.set_header("Cache-Control", "no-cache");
      res.set_header("X-Accel-Buffering", "no");  // nginx: pass events through as they come
      auto sent_first = std::make_shared<std::vector<bool>>(c->choices(), false);
      auto sent_finish = std::make_shared<std::vector<bool>>(c->choices(), false);
      res.set_chunked_content_provider(
          "text/event-stream",
          [c, model, sent_first, sent_finish, &ctx, active](size_t, httplib::DataSink& sink) {
            if (!sink.is_writable()) {
              c->cancel();  // the client went away: its requests leave the batch at the next step
              return false;
            }
            std::vector<std::string> deltas;
            std::vector<size_t> counts;  // new tokens: a chunk even when they add no text yet (or no tokenizer)
            c->poll(std::chrono::milliseconds(50), deltas, counts);
            std::string out;
            for (size_t i = 0; i < c->choices(); i++) {
              const std::string& fin = c->finish_reason(i);
              if (fin == "error" && !(*sent_finish)[i]) {
                out += sse(error_body("generation failed: " + c->error(i), "server_error", "", 500));
              }
              bool first = c->request().chat && !(*sent_first)[i];
              if (!deltas[i].empty() || counts[i] > 0 || first) {
                out += sse(stream_chunk(*c, model, i, deltas[i], "", first));
                (*sent_first)[i] = true;
              }
              if (!fin.empty() && !(*sent_finish)[i]) {
                out += sse(stream_chunk(*c, model, i, "", fin, false));
                (*sent_finish)[i] = true;
              }
            }
            const bool done = c->done();
            if (done) {
              if (c->request().include_usage) out += sse(usage_chunk(*c, model));
              out += "data: [DONE]\n\n";
            }
            if (!out.empty() && !sink.write(out.data(), out.size())) {
              c->cancel();
              return false;
            }
            if (done) {
              ctx.metrics.request_duration(c->seconds_since_start());
              ctx.metrics.tokens(c->model_id(), c->prompt_tokens() * c->choices(), c->completion_tokens());
              sink.done();
            }
            return true;
          },
          [c, active](bool) { c->cancel(); });
    };
  };
  s.Post("/v1/completions", complete(false));
  s.Post("/v1/chat/completions", complete(true));
}

}  // namespace ogx::serve
