// Python: Adapters (LoRA adapter files loaded for a model) and Generator.set_active_adapter, as onnxruntime_genai.
#include "py_util.h"

namespace ogx::py_module {

void bind_adapters(py::module_& m) {
  py::class_<ogx::Adapters>(m, "Adapters", "LoRA adapters (.onnx_adapter files) loaded for a model, by name.")
      .def(py::init([](const ogx::Model& model) { return nogil([&] { return std::make_unique<ogx::Adapters>(model); }); }),
           py::arg("model"))
      .def("load",
           [](ogx::Adapters& a, const std::string& path, const std::string& name) {
             nogil([&] { a.LoadAdapter(path.c_str(), name.c_str()); });
           },
           py::arg("file"), py::arg("name"), "Loads an adapter file under a name (checked against the model).")
      .def("unload", [](ogx::Adapters& a, const std::string& name) { nogil([&] { a.UnloadAdapter(name.c_str()); }); },
           py::arg("name"), "Unloads an adapter; an error while a generator uses it.");
  // Generator is bound in py_generator.cpp; its adapter method lives with the adapters.
  auto generator = py::reinterpret_borrow<py::class_<ogx::Generator>>(m.attr("Generator"));
  generator.def(
      "set_active_adapter",
      [](ogx::Generator& g, ogx::Adapters& a, const std::string& name) {
        nogil([&] { g.SetActiveAdapter(a, name.c_str()); });
      },
      py::arg("adapters"), py::arg("adapter_name"), "Activates a loaded adapter for this generator's later runs.");
}

}  // namespace ogx::py_module
