// Python: the multimodal names of onnxruntime_genai (Images, Audios, MultiModalProcessor). ogx runs text models
// only; the names exist so that code importing or annotating with them loads, and using them raises one clear
// error.
#include "py_util.h"

namespace ogx::py_module {

namespace {

struct Images {};
struct Audios {};
struct MultiModalProcessor {};

[[noreturn]] void unsupported(const char* what) {
  throw ogx::Exception(OgxErrorCode_InvalidArgument,
                       std::string(what) + ": multimodal models are not supported by ogx (it runs text models)");
}

}  // namespace

void bind_unsupported(py::module_& m) {
  py::class_<Images>(m, "Images", "Not supported: ogx runs text models. Images.open raises.")
      .def_static("open", [](py::args) -> Images { unsupported("Images.open"); })
      .def_static("open_bytes", [](py::args) -> Images { unsupported("Images.open_bytes"); });
  py::class_<Audios>(m, "Audios", "Not supported: ogx runs text models. Audios.open raises.")
      .def_static("open", [](py::args) -> Audios { unsupported("Audios.open"); })
      .def_static("open_bytes", [](py::args) -> Audios { unsupported("Audios.open_bytes"); });
  py::class_<MultiModalProcessor>(m, "MultiModalProcessor",
                                  "Not supported: ogx runs text models. Model.create_multimodal_processor raises.");
}

}  // namespace ogx::py_module
