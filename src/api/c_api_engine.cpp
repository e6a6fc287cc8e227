// C API: Engine and Request (continuous batching, genai/engine.h). Request handles are reference-counted: the
// handle OgxCreateRequest returns is the one OgxEngineStep returns again for that request.
#include <map>

#include "api/handles.h"
#include "genai/engine.h"

using namespace ogx::api;

struct OgxEngine {
  std::shared_ptr<SharedModel> shared;           // keeps the model and its run lock alive
  std::shared_ptr<ogx::genai::Engine> engine;
};

struct OgxRequest {
  std::shared_ptr<ogx::genai::Request> request;
  std::weak_ptr<ogx::genai::Engine> engine;  // the engine it was added to (a last release removes it there)
  int refs = 1;                              // under handles_mu()
};

namespace ogx::api {
template <> constexpr Kind kind_of<OgxEngine>() { return Kind::engine; }
template <> constexpr Kind kind_of<OgxRequest>() { return Kind::request; }
}  // namespace ogx::api

namespace {

// The request handles by request, for OgxEngineStep to hand out the caller's own handle again.
std::mutex& handles_mu() {
  static std::mutex mu;
  return mu;
}
std::map<const ogx::genai::Request*, OgxRequest*>& handles() {
  static std::map<const ogx::genai::Request*, OgxRequest*> m;
  return m;
}

std::vector<int32_t> one_sequence(const OgxSequences& s, const char* fn) {
  if (s.seqs.size() != 1)
    fail(OgxErrorCode_InvalidArgument, std::string(fn) + ": expected one sequence (a request holds one), got " +
                                           std::to_string(s.seqs.size()));
  return s.seqs[0];
}

}  // namespace

extern "C" {

OgxResult* OgxCreateEngine(const OgxModel* model, OgxEngine** out) {
  return guard([&] {
    need(out, "OgxCreateEngine", "out");
    *out = nullptr;
    auto& m = live(model, "OgxCreateEngine", "model");
    ogx::genai::EngineOptions options;
    options.model_lock = &m.shared->run_mu;  // serialized with the other generators of the model
    OgxEngine e{m.shared, std::make_shared<ogx::genai::Engine>(m.shared->model, options)};
    *out = make_handle(std::move(e));
  });
}

void OgxDestroyEngine(OgxEngine* engine) { destroy_handle(engine, "OgxDestroyEngine"); }

OgxResult* OgxEngineStep(OgxEngine* engine, OgxRequest** request) {
  return guard([&] {
    need(request, "OgxEngineStep", "request");
    *request = nullptr;
    auto& e = live(engine, "OgxEngineStep", "engine");
    while (auto r = e.engine->step()) {
      std::lock_guard<std::mutex> lk(handles_mu());
      auto it = handles().find(r.get());
      if (it == handles().end()) continue;  // its last handle went meanwhile (and removed it)
      it->second->refs++;
      *request = it->second;
      return;
    }
  });
}

OgxResult* OgxEngineHasPendingRequests(OgxEngine* engine, bool* out) {
  return guard([&] {
    need(out, "OgxEngineHasPendingRequests", "out");
    *out = live(engine, "OgxEngineHasPendingRequests", "engine").engine->has_pending_requests();
  });
}

OgxResult* OgxEngineAddRequest(OgxEngine* engine, OgxRequest* request) {
  return guard([&] {
    auto& e = live(engine, "OgxEngineAddRequest", "engine");
    auto& r = live(request, "OgxEngineAddRequest", "request");
    e.engine->add_request(r.request);
    std::lock_guard<std::mutex> lk(handles_mu());
    r.engine = e.engine;
  });
}

OgxResult* OgxEngineRemoveRequest(OgxEngine* engine, OgxRequest* request) {
  return guard([&] {
    auto& e = live(engine, "OgxEngineRemoveRequest", "engine");
    auto& r = live(request, "OgxEngineRemoveRequest", "request");
    e.engine->remove_request(r.request);
  });
}

OgxResult* OgxCreateRequest(const OgxGeneratorParams* params, OgxRequest** out) {
  return guard([&] {
    need(out, "OgxCreateRequest", "out");
    *out = nullptr;
    auto& p = live(params, "OgxCreateRequest", "params");
    auto req = std::make_shared<ogx::genai::Request>(p.params);
    std::lock_guard<std::mutex> lk(handles_mu());
    OgxRequest* h = make_handle(OgxRequest{req, {}, 1});
    handles()[req.get()] = h;
    *out = h;
  });
}

OgxResult* OgxRequestAddTokens(OgxRequest* request, const OgxSequences* tokens) {
  return guard([&] {
    auto& r = live(request, "OgxRequestAddTokens", "request");
    auto& s = live(tokens, "OgxRequestAddTokens", "tokens");
    r.request->add_tokens(one_sequence(s, "OgxRequestAddTokens"));
  });
}

OgxResult* OgxRequestContinue(OgxRequest* request, const OgxSequences* tokens) {
  return guard([&] {
    auto& r = live(request, "OgxRequestContinue", "request");
    auto& s = live(tokens, "OgxRequestContinue", "tokens");
    r.request->continue_with(one_sequence(s, "OgxRequestContinue"));
  });
}

void OgxDestroyRequest(OgxRequest* request) {
  if (!request) return;
  std::shared_ptr<ogx::genai::Engine> engine;
  std::shared_ptr<ogx::genai::Request> req;
  {
    std::lock_guard<std::mutex> lk(handles_mu());
    if (!is_live(request, Kind::request, "OgxDestroyRequest")) return;
    if (--request->refs > 0) return;
    handles().erase(request->request.get());
    engine = request->engine.lock();
    req = request->request;
    destroy_handle(request, "OgxDestroyRequest");
  }
  // The last reference: a request still in its engine is abandoned and removed there.
  if (engine && req->status() != ogx::genai::RequestStatus::closed) {
    try {
      engine->remove_request(req);
    } catch (...) {
    }
  }
}

OgxResult* OgxRequestSetActiveAdapter(OgxRequest* request, OgxAdapters* adapters, const char* adapter_name) {
  return guard([&] {
    auto& r = live(request, "OgxRequestSetActiveAdapter", "request");
    auto& a = live(adapters, "OgxRequestSetActiveAdapter", "adapters");
    need(adapter_name, "OgxRequestSetActiveAdapter", "adapter_name");
    r.request->set_active_adapter(a.adapters, adapter_name);
  });
}

OgxResult* OgxRequestSetOpaqueData(OgxRequest* request, void* opaque_data) {
  return guard([&] { live(request, "OgxRequestSetOpaqueData", "request").request->set_opaque_data(opaque_data); });
}

OgxResult* OgxRequestGetOpaqueData(OgxRequest* request, void** opaque_data) {
  return guard([&] {
    need(opaque_data, "OgxRequestGetOpaqueData", "opaque_data");
    *opaque_data = live(request, "OgxRequestGetOpaqueData", "request").request->opaque_data();
  });
}

OgxResult* OgxRequestHasUnseenTokens(const OgxRequest* request, bool* out) {
  return guard([&] {
    need(out, "OgxRequestHasUnseenTokens", "out");
    *out = live(request, "OgxRequestHasUnseenTokens", "request").request->has_unseen_tokens();
  });
}

OgxResult* OgxRequestGetUnseenToken(OgxRequest* request, int32_t* out) {
  return guard([&] {
    need(out, "OgxRequestGetUnseenToken", "out");
    auto& r = live(request, "OgxRequestGetUnseenToken", "request");
    if (!r.request->has_unseen_tokens())
      fail(OgxErrorCode_InvalidArgument, "OgxRequestGetUnseenToken: the request has no unseen tokens");
    *out = r.request->get_unseen_token();
  });
}

OgxResult* OgxRequestIsTurnComplete(const OgxRequest* request, bool* out) {
  return guard([&] {
    need(out, "OgxRequestIsTurnComplete", "out");
    *out = live(request, "OgxRequestIsTurnComplete", "request").request->is_turn_complete();
  });
}

OgxResult* OgxRequestGetFinishReason(const OgxRequest* request, const char** out) {
  return guard([&] {
    need(out, "OgxRequestGetFinishReason", "out");
    *out = ogx::genai::finish_reason_name(live(request, "OgxRequestGetFinishReason", "request").request->finish_reason());
  });
}

}  // extern "C"
