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

// set_log_options(**kwargs): bools and strings by name, as onnxruntime_genai.
void set_log_options(const py::kwargs& kw) {
  for (auto item : kw) {
    std::string name = item.first.cast<std::string>();
    if (py::isinstance<py::bool_>(item.second)) {
      bool b = item.second.cast<bool>();
      nogil([&] { ogx::SetLogBool(name.c_str(), b); });
    } else if (py::isinstance<py::str>(item.second)) {
      std::string v = item.second.cast<std::string>();
      nogil([&] { ogx::SetLogString(name.c_str(), v.c_str()); });
    } else {
      throw py::type_error("set_log_options: '" + name + "' must be a bool or a str");
    }
  }
}

[[noreturn]] void provider_library(const std::string& name, const char* path) {
  // The C functions only log (they return void, as in ort_genai_c.h); Python raises with the same text.
  std::string msg = "execution provider library '" + name + "'" + (path ? std::string(" (") + path + ")" : std::string()) +
        " cannot be " + (path ? "registered" : "unregistered") +
        ": ogx does not run on ONNX Runtime and loads no provider libraries; its providers are built in: cpu, "
        "vulkan (alias dml)";
  throw ogx::Exception(OgxErrorCode_InvalidArgument, msg);
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

  bind_tensor(m);
  bind_unsupported(m);
  bind_config_model(m);
  bind_tokenizer(m);
  bind_generator(m);
  bind_adapters(m);
  bind_engine(m);

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
  m.def("set_log_options", &set_log_options,
        "Log options by keyword, as onnxruntime_genai: enabled, generate_next_token, append_next_tokens, "
        "model_input_values, model_output_values, model_logits, hit_eos (bools: log those events), filename (str: "
        "write the log to this file; '' restores), ansi_tags, warning, ort_lib, value_stats (accepted).");
  m.def("enable_telemetry_events", [] { OgxSetTelemetryEnabled(true); }, "No effect: ogx sends no telemetry.");
  m.def("disable_telemetry_events", [] { OgxSetTelemetryEnabled(false); }, "No effect: ogx sends no telemetry.");
  m.def("set_current_gpu_device_id", [](int id) { nogil([&] { ogx::SetCurrentGpuDeviceId(id); }); },
        py::arg("device_id"), "The vulkan (dml) provider's device_id for models whose config sets none.");
  m.def("get_current_gpu_device_id", [] { return nogil([] { return ogx::GetCurrentGpuDeviceId(); }); });
  m.def("register_execution_provider_library",
        [](const std::string& name, const std::string& path) { provider_library(name, path.c_str()); },
        py::arg("provider_name"), py::arg("path"),
        "Raises: ogx loads no ONNX Runtime provider libraries (its providers are built in).");
  m.def("unregister_execution_provider_library", [](const std::string& name) { provider_library(name, nullptr); },
        py::arg("provider_name"), "Raises: ogx loads no ONNX Runtime provider libraries.");

  // A Python callback must not be called once the interpreter is finalizing.
  py::module_::import("atexit").attr("register")(py::cpp_function([] {
    if (g_log_callback) set_log_callback(py::none());
  }));
}
