// Python: Config, Model, GeneratorParams.
#include "py_util.h"

namespace ogx::py_module {

namespace {

void set_search_options(ogx::GeneratorParams& p, const py::kwargs& kw) {
  for (auto item : kw) {
    std::string name = c_text(item.first.cast<std::string>(), "set_search_options");
    py::handle v = item.second;
    // bool first: Python's bool is an int.
    if (py::isinstance<py::bool_>(v) || py::isinstance(v, py::module_::import("numpy").attr("bool_"))) {
      bool b = v.cast<bool>();
      nogil([&] { p.SetSearchOptionBool(name.c_str(), b); });
    } else if (py::isinstance<py::int_>(v) || py::isinstance<py::float_>(v) || py::hasattr(v, "__index__") ||
               (py::hasattr(v, "__float__") && !py::isinstance<py::str>(v))) {
      double d = py::float_(py::reinterpret_borrow<py::object>(v)).cast<double>();
      nogil([&] { p.SetSearchOption(name.c_str(), d); });
    } else {
      throw py::type_error("set_search_options: '" + name + "' must be a bool, int or float, got " +
                           std::string(py::str(py::type::of(v).attr("__name__"))));
    }
  }
}

py::dict get_search_options(const ogx::GeneratorParams& p) {
  py::dict d;
  for (const char* n : {"batch_size", "chunk_size", "diversity_penalty", "frequency_penalty", "length_penalty",
                        "max_length", "min_length", "no_repeat_ngram_size", "num_beams", "num_return_sequences",
                        "presence_penalty", "random_seed", "repetition_penalty", "temperature", "top_k", "top_p"})
    d[n] = p.GetSearchNumber(n);
  for (const char* n : {"do_sample", "early_stopping", "past_present_share_buffer"}) d[n] = p.GetSearchBool(n);
  return d;
}

void set_speculative_options(ogx::GeneratorParams& p, const py::kwargs& kw) {
  for (auto item : kw) {
    std::string name = item.first.cast<std::string>();
    py::handle v = item.second;
    if (py::isinstance<py::bool_>(v)) {
      bool b = v.cast<bool>();
      nogil([&] { p.SetSpeculativeBool(name.c_str(), b); });
    } else if (py::isinstance<py::int_>(v) || py::isinstance<py::float_>(v)) {
      double d = py::float_(py::reinterpret_borrow<py::object>(v)).cast<double>();
      nogil([&] { p.SetSpeculativeNumber(name.c_str(), d); });
    } else {
      throw py::type_error("set_speculative_options: '" + name + "' must be a bool, int or float");
    }
  }
}

py::dict get_speculative_options(const ogx::GeneratorParams& p) {
  py::dict d;
  for (const char* n : {"max_draft_tokens", "ngram_size", "min_adaptive_k"}) d[n] = (int64_t)p.GetSpeculativeNumber(n);
  for (const char* n : {"ngram_chained_lookup", "cooldown"}) d[n] = p.GetSpeculativeBool(n);
  return d;
}

void add_model_data(ogx::Config& c, const std::string& name, const py::object& data) {
  if (py::isinstance<py::bytes>(data)) {
    char* p = nullptr;
    Py_ssize_t n = 0;
    if (PyBytes_AsStringAndSize(data.ptr(), &p, &n) != 0) throw py::error_already_set();
    nogil([&] { c.AddModelData(name.c_str(), p, static_cast<size_t>(n)); });
    return;
  }
  if (!PyObject_CheckBuffer(data.ptr()))
    throw py::type_error("add_model_data: expected bytes, bytearray or a 1-D uint8 buffer, got " +
                         std::string(py::str(py::type::of(data).attr("__name__"))));
  py::buffer_info info = data.cast<py::buffer>().request();
  if (info.ndim != 1 || info.itemsize != 1)
    throw py::type_error("add_model_data: expected a 1-D buffer of bytes (uint8)");
  if (info.strides.size() == 1 && info.strides[0] != 1)
    throw py::type_error("add_model_data: the buffer must be contiguous");
  nogil([&] { c.AddModelData(name.c_str(), info.ptr, static_cast<size_t>(info.size)); });
}

}  // namespace

void bind_config_model(py::module_& m) {
  py::class_<ogx::Config>(m, "Config", "A model folder's genai_config.json, editable before creating the Model.")
      .def(py::init([](const py::object& path) {
             std::string p = path_arg(path, "Config(path)");
             return nogil([&] { return std::make_unique<ogx::Config>(p.c_str()); });
           }),
           py::arg("path"))
      .def("clear_providers", [](ogx::Config& c) { nogil([&] { c.ClearProviders(); }); },
           "Empty the provider list: the model runs on the CPU.")
      .def("append_provider",
           [](ogx::Config& c, const std::string& provider) { c_text(provider, "append_provider");
             nogil([&] { c.AppendProvider(provider.c_str()); }); },
           py::arg("provider"), "Add a provider ('cpu', 'vulkan', 'dml'); the first listed one is used.")
      .def("set_provider_option",
           [](ogx::Config& c, const std::string& provider, const std::string& key, const std::string& value) {
             for (const std::string* s : {&provider, &key, &value}) c_text(*s, "set_provider_option");
             nogil([&] { c.SetProviderOption(provider.c_str(), key.c_str(), value.c_str()); });
           },
           py::arg("provider"), py::arg("key"), py::arg("value"),
           "Set a provider option, e.g. ('dml', 'device_id', '0') or ('dml', 'hardware_device_type', 'cpu').")
      .def("overlay",
           [](ogx::Config& c, const std::string& json) {
             c_text(json, "overlay");
             nogil([&] { c.Overlay(json.c_str()); });
           },
           py::arg("json"), "Apply a partial genai_config.json (a JSON string) on top of this config.")
      .def("add_model_data", &add_model_data, py::arg("model_filename"), py::arg("model_data"),
           "Hold a model file in memory (bytes, bytearray or a 1-D uint8 buffer such as memoryview): the model "
           "reads `model_filename` (e.g. 'model.onnx', or its 'model.onnx.data') from it. The bytes are copied.")
      .def("remove_model_data",
           [](ogx::Config& c, const std::string& name) { nogil([&] { c.RemoveModelData(name.c_str()); }); },
           py::arg("model_filename"))
      .def("set_decoder_provider_options_hardware_device_type",
           [](ogx::Config& c, const std::string& provider, const std::string& type) {
             nogil([&] { c.SetDecoderProviderOptionsHardwareDeviceType(provider.c_str(), type.c_str()); });
           },
           py::arg("provider"), py::arg("hardware_device_type"))
      .def("set_decoder_provider_options_hardware_device_id",
           [](ogx::Config& c, const std::string& provider, uint32_t id) {
             nogil([&] { c.SetDecoderProviderOptionsHardwareDeviceId(provider.c_str(), id); });
           },
           py::arg("provider"), py::arg("hardware_device_id"))
      .def("set_decoder_provider_options_hardware_vendor_id",
           [](ogx::Config& c, const std::string& provider, uint32_t id) {
             nogil([&] { c.SetDecoderProviderOptionsHardwareVendorId(provider.c_str(), id); });
           },
           py::arg("provider"), py::arg("hardware_vendor_id"))
      .def("clear_decoder_provider_options_hardware_device_type",
           [](ogx::Config& c, const std::string& provider) {
             nogil([&] { c.ClearDecoderProviderOptionsHardwareDeviceType(provider.c_str()); });
           },
           py::arg("provider"))
      .def("clear_decoder_provider_options_hardware_device_id",
           [](ogx::Config& c, const std::string& provider) {
             nogil([&] { c.ClearDecoderProviderOptionsHardwareDeviceId(provider.c_str()); });
           },
           py::arg("provider"))
      .def("clear_decoder_provider_options_hardware_vendor_id",
           [](ogx::Config& c, const std::string& provider) {
             nogil([&] { c.ClearDecoderProviderOptionsHardwareVendorId(provider.c_str()); });
           },
           py::arg("provider"));

  py::class_<ogx::Model>(m, "Model", "A loaded model. Model(config) or Model(path).")
      .def(py::init([](const py::object& arg) {
             if (py::isinstance<ogx::Config>(arg)) {
               const ogx::Config& c = arg.cast<const ogx::Config&>();
               return nogil([&] { return std::make_unique<ogx::Model>(c); });
             }
             std::string p = path_arg(arg, "Model(config_or_path)");
             return nogil([&] { return std::make_unique<ogx::Model>(p.c_str()); });
           }),
           py::arg("config_or_path"))
      .def_property_readonly("type", [](const ogx::Model& md) { return nogil([&] { return md.GetType(); }); },
                             "genai_config.json model.type, e.g. 'llama'.")
      .def_property_readonly("device_type",
                             [](const ogx::Model& md) { return nogil([&] { return md.GetDeviceType(); }); },
                             "Where the model runs, as onnxruntime_genai spells it: 'CPU', or 'DirectML' for the "
                             "vulkan (dml) provider.")
      .def("create_multimodal_processor", [](const ogx::Model&) -> py::object {
        throw ogx::Exception(OgxErrorCode_InvalidArgument, "create_multimodal_processor: multimodal models are not "
                                                           "supported by ogx (it runs text models)");
      })
      .def("create_streaming_processor", [](const ogx::Model&) -> py::object {
        throw ogx::Exception(OgxErrorCode_InvalidArgument, "create_streaming_processor: streaming audio processors "
                                                           "are for speech models; multimodal models are not "
                                                           "supported by ogx (it runs text models)");
      });

  py::class_<ogx::GeneratorParams>(m, "GeneratorParams", "Search options for a Generator.")
      .def(py::init([](const ogx::Model& md) { return nogil([&] { return std::make_unique<ogx::GeneratorParams>(md); }); }),
           py::arg("model"))
      .def("set_search_options", &set_search_options,
           "Set search options by keyword: max_length, min_length, do_sample, top_k, top_p, temperature, "
           "repetition_penalty, presence_penalty, frequency_penalty, random_seed, no_repeat_ngram_size, "
           "past_present_share_buffer, batch_size, ...")
      .def("set_guidance",
           [](ogx::GeneratorParams& p, const std::string& type, const std::string& data, bool enable_ff_tokens) {
             nogil([&] { p.SetGuidance(c_text(type, "set_guidance").c_str(), c_text(data, "set_guidance").c_str(), enable_ff_tokens); });
           },
           py::arg("type"), py::arg("data"), py::arg("enable_ff_tokens") = false,
           "Structured output: type 'json_schema', 'regex', 'lark_grammar' or 'json_object'; data the schema, "
           "regex or grammar. Invalid constraints raise OgxError naming the problem.")
      .def("get_search_options", &get_search_options,
           "The search options as a dict (the keys onnxruntime_genai returns).")
      .def("set_speculative_options", &set_speculative_options,
           "Speculative decoding by keyword: ngram_size (n-gram drafting; 0: off), max_draft_tokens (1-16), "
           "min_adaptive_k (0), ngram_chained_lookup (False), cooldown (False). A model whose genai_config has "
           "model.draft drafts with that model. Greedy output equals plain decoding; sampling keeps the model's "
           "distribution.")
      .def("get_speculative_options", &get_speculative_options, "The speculative options as a dict.");
}

}  // namespace ogx::py_module
