// The Python module `ogx`: the onnxruntime_genai API over ogx's C API, so that code written for
// onnxruntime_genai runs after `import ogx as og`. Errors raise ogx.OgxError (a RuntimeError) carrying the message
// and the C error code; the GIL is released while the library works.
#include "py_util.h"

namespace ogx::py_module {
namespace {

// The installed Python log callback (owned; replaced or cleared under the GIL).
py::object* g_log_callback = nullptr;

void log_trampoline(void* user_data, OgxLogLevel level, const char* message) {
  if (!Py_IsInitialized()) return;
  py::gil_scoped_acquire gil;
  auto* fn = static_cast<py::object*>(user_data);
  try {
    (*fn)(std::string(message));
  } catch (py::error_already_set& e) {
    e.discard_as_unraisable("ogx log callback");
  }
  (void)level;
}

void set_log_callback(const py::object& callback) {
  if (!callback.is_none() && !PyCallable_Check(callback.ptr()))
    throw py::type_error("set_log_callback: expected a callable taking one str, or None");
  py::object* next = callback.is_none() ? nullptr : new py::object(callback);
  try {
    nogil([&] { ogx::SetLogCallback(next ? &log_trampoline : nullptr, next); });
  } catch (...) {
    delete next;
    throw;
  }
  // No thread is inside the old callback any more (the C side swaps it under its log lock).
  delete g_log_callback;
  g_log_callback = next;
}

void set_log_level(const std::string& level) {
  OgxLogLevel l;
  if (level == "info") l = OgxLogLevel_Info;
  else if (level == "warning") l = OgxLogLevel_Warning;
  else if (level == "error") l = OgxLogLevel_Error;
  else throw py::value_error("set_log_level: expected 'info', 'warning' or 'error', got '" + level + "'");
  nogil([&] { ogx::SetLogLevel(l); });
}

py::list available_devices() {
  std::string json = nogil([] { return ogx::GetAvailableDevices(); });
  py::dict doc = py::module_::import("json").attr("loads")(json);
  return doc["devices"];
}

bool provider_available(const char* name) {
  return nogil([&] { return ogx::IsProviderAvailable(name); });
}

}  // namespace
}  // namespace ogx::py_module

PYBIND11_MODULE(ogx, m) {
  namespace py = pybind11;
  using namespace ogx::py_module;
  m.doc() = "ogx: run ONNX Runtime GenAI model folders; the onnxruntime_genai API (import ogx as og).";
  m.attr("__version__") = ogx::Version();

  static py::handle error_type = py::exception<ogx::Exception>(m, "OgxError", PyExc_RuntimeError).release();
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const ogx::Exception& e) {
      py::object err = py::reinterpret_borrow<py::object>(error_type)(e.what());
      err.attr("code") = static_cast<int>(e.code());
      PyErr_SetObject(error_type.ptr(), err.ptr());
    }
  });

  bind_config_model(m);
  bind_tokenizer(m);
  bind_generator(m);

  m.def("get_available_devices", &available_devices,
        "The Vulkan devices as a list of dicts (name, vendor_id, device_id, type, usable, selected, memory_heaps, "
        "features, ...); empty when there is no Vulkan device.");
  m.def("is_vulkan_available", [] { return provider_available("vulkan"); },
        "Whether this build runs models on the vulkan provider.");
  m.def("is_dml_available", [] { return provider_available("dml"); },
        "Whether the 'dml' provider name works: it is the vulkan provider.");
  for (const char* name : {"is_cuda_available", "is_rocm_available", "is_openvino_available", "is_qnn_available",
                           "is_webgpu_available"})
    m.def(name, [] { return false; }, "Always False: ogx has no such provider (use 'dml' / 'vulkan' or 'cpu').");
  m.def("set_log_callback", &set_log_callback, py::arg("callback"),
        "Receive log messages: callback(message: str), or None for stderr. The callback must not call ogx.");
  m.def("set_log_level", &set_log_level, py::arg("level"), "'info', 'warning' or 'error'.");

  // A Python callback must not be called once the interpreter is finalizing.
  py::module_::import("atexit").attr("register")(py::cpp_function([] {
    if (g_log_callback) set_log_callback(py::none());
  }));
}
