// Python: Engine and Request (continuous batching), as onnxruntime_genai's og.Engine / og.Request. The engine keeps
// the Python Request objects it holds, so step() returns the very object that was added (with its opaque data).
#include <map>

#include "py_util.h"

namespace ogx::py_module {

namespace {

struct PyRequest {
  std::unique_ptr<ogx::Request> request;
  py::object opaque = py::none();  // set_opaque_data's object (a reference is held)
};

struct PyEngine {
  std::unique_ptr<ogx::Engine> engine;
  std::map<OgxRequest*, py::object> requests;  // the added Request objects until remove_request (GIL held)
};

void add_request(PyEngine& e, const py::object& obj) {
  auto& r = obj.cast<PyRequest&>();
  nogil([&] { e.engine->Add(*r.request); });
  e.requests[r.request->get()] = obj;
}

void remove_request(PyEngine& e, const py::object& obj) {
  auto& r = obj.cast<PyRequest&>();
  nogil([&] { e.engine->Remove(*r.request); });
  e.requests.erase(r.request->get());
}

py::object step(PyEngine& e) {
  for (;;) {
    std::unique_ptr<ogx::Request> r = nogil([&] { return e.engine->Step(); });
    if (!r) return py::none();
    auto it = e.requests.find(r->get());
    py::object out = it == e.requests.end() ? py::object() : it->second;
    nogil([&] { r.reset(); });  // the step's own reference
    if (out) return out;        // else: a request added through another API object; not this engine's caller's
  }
}

}  // namespace

void bind_engine(py::module_& m) {
  py::class_<PyRequest>(m, "Request", "One sequence served by an Engine, with its own GeneratorParams.")
      .def(py::init([](const ogx::GeneratorParams& params) {
             auto r = std::make_unique<PyRequest>();
             r->request = nogil([&] { return ogx::Request::Create(params); });
             return r;
           }),
           py::arg("params"))
      .def(
          "add_tokens",
          [](PyRequest& r, const py::object& tokens) {
            auto ids = token_ids(tokens, "add_tokens");
            nogil([&] { r.request->AddTokens(ids); });
          },
          py::arg("tokens"), "The prompt's token ids, before the request is added to an engine.")
      .def(
          "continue_with",
          [](PyRequest& r, const py::object& tokens) {
            auto ids = token_ids(tokens, "continue_with");
            nogil([&] { r.request->Continue(ids); });
          },
          py::arg("tokens"), "Another turn's token ids after is_turn_complete().")
      .def("has_unseen_tokens", [](const PyRequest& r) { return r.request->HasUnseenTokens(); })
      .def("get_unseen_token", [](PyRequest& r) { return r.request->GetUnseenToken(); })
      .def("is_turn_complete", [](const PyRequest& r) { return r.request->IsTurnComplete(); },
           "Whether the current generation turn is complete.")
      .def("get_finish_reason", [](const PyRequest& r) { return r.request->GetFinishReason(); },
           "'none' (running), 'eos', 'length', 'error' or 'removed'.")
      .def("set_active_adapter",
           [](PyRequest& r, ogx::Adapters& a, const std::string& name) {
             nogil([&] { r.request->SetActiveAdapter(a, name.c_str()); });
           },
           py::arg("adapters"), py::arg("adapter_name"),
           "ogx: runs the request with a loaded adapter (before Engine.add_request).")
      .def("set_opaque_data", [](PyRequest& r, const py::object& data) { r.opaque = data; }, py::arg("data"))
      .def("get_opaque_data", [](const PyRequest& r) { return r.opaque; });

  py::class_<PyEngine>(m, "Engine", "Continuous batching: serves many Requests over one Model.")
      .def(py::init([](const ogx::Model& model) {
             auto e = std::make_unique<PyEngine>();
             e->engine = nogil([&] { return ogx::Engine::Create(model); });
             return e;
           }),
           py::arg("model"))
      .def("add_request", &add_request, py::arg("request"),
           "Submit a request. The engine holds it until remove_request(), including after its turn completes.")
      .def("remove_request", &remove_request, py::arg("request"),
           "Remove a request and free its state. Repeated calls after it is closed do nothing.")
      .def("step", &step, "Run the model for the pending requests; returns a Request with news, or None.")
      .def("has_pending_requests",
           [](PyEngine& e) { return nogil([&] { return e.engine->HasPendingRequests(); }); });
}

}  // namespace ogx::py_module
