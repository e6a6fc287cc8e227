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
           py::arg("json"), "Apply a partial genai_config.json (a JSON string) on top of this config.");

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
                             "'cpu' or 'gpu': where the model runs.");

  py::class_<ogx::GeneratorParams>(m, "GeneratorParams", "Search options for a Generator.")
      .def(py::init([](const ogx::Model& md) { return nogil([&] { return std::make_unique<ogx::GeneratorParams>(md); }); }),
           py::arg("model"))
      .def("set_search_options", &set_search_options,
           "Set search options by keyword: max_length, min_length, do_sample, top_k, top_p, temperature, "
           "repetition_penalty, random_seed, no_repeat_ngram_size, past_present_share_buffer, batch_size, ...");
}

}  // namespace ogx::py_module
