// Python: Tensor and NamedTensors (extra model inputs), with numpy conversion both ways.
#include <algorithm>
#include <cstring>

#include "py_util.h"

namespace ogx::py_module {

namespace {

OgxElementType element_type(const py::dtype& dt) {
  const char kind = dt.kind();
  const auto size = dt.itemsize();
  if (kind == 'b') return OgxElementType_bool;
  if (kind == 'f' && size == 2) return OgxElementType_float16;
  if (kind == 'f' && size == 4) return OgxElementType_float32;
  if (kind == 'f' && size == 8) return OgxElementType_float64;
  if (kind == 'i' && size == 1) return OgxElementType_int8;
  if (kind == 'i' && size == 2) return OgxElementType_int16;
  if (kind == 'i' && size == 4) return OgxElementType_int32;
  if (kind == 'i' && size == 8) return OgxElementType_int64;
  if (kind == 'u' && size == 1) return OgxElementType_uint8;
  if (kind == 'u' && size == 2) return OgxElementType_uint16;
  if (kind == 'u' && size == 4) return OgxElementType_uint32;
  if (kind == 'u' && size == 8) return OgxElementType_uint64;
  throw py::type_error("Tensor: unsupported numpy dtype " + std::string(py::str(static_cast<const py::handle&>(dt))));
}

const char* numpy_dtype(OgxElementType t) {
  switch (t) {
    case OgxElementType_bool: return "bool";
    case OgxElementType_float16: return "float16";
    case OgxElementType_float32: return "float32";
    case OgxElementType_float64: return "float64";
    case OgxElementType_int8: return "int8";
    case OgxElementType_int16: return "int16";
    case OgxElementType_int32: return "int32";
    case OgxElementType_int64: return "int64";
    case OgxElementType_uint8: return "uint8";
    case OgxElementType_uint16: return "uint16";
    case OgxElementType_uint32: return "uint32";
    case OgxElementType_uint64: return "uint64";
    default: throw py::type_error("Tensor: element type " + std::to_string((int)t) + " has no numpy dtype");
  }
}

}  // namespace

std::unique_ptr<ogx::Tensor> to_tensor(const py::object& value) {
  if (py::isinstance<ogx::Tensor>(value)) return to_tensor(to_numpy(value.cast<const ogx::Tensor&>()));
  py::array a = py::module_::import("numpy").attr("ascontiguousarray")(value);
  OgxElementType type = element_type(a.dtype());
  std::vector<int64_t> shape(a.shape(), a.shape() + a.ndim());
  auto t = ogx::Tensor::Create(nullptr, shape, type);  // owned, zeroed
  if (a.nbytes()) std::memcpy(t->Data(), a.data(), static_cast<size_t>(a.nbytes()));
  return t;
}

py::array to_numpy(const ogx::Tensor& t) {
  std::vector<int64_t> shape = t.Shape();
  std::vector<py::ssize_t> dims(shape.begin(), shape.end());
  py::array a(py::dtype(numpy_dtype(t.Type())), dims);
  if (a.nbytes()) std::memcpy(a.mutable_data(), t.Data(), static_cast<size_t>(a.nbytes()));
  return a;
}

void bind_tensor(py::module_& m) {
  py::class_<ogx::Tensor>(m, "Tensor", "A tensor holding a copy of a numpy array's data.")
      .def(py::init([](const py::object& array) { return to_tensor(array); }), py::arg("array"))
      .def("shape", [](const ogx::Tensor& t) { return t.Shape(); }, "The dimensions, a list of ints.")
      .def("type", [](const ogx::Tensor& t) { return static_cast<int>(t.Type()); },
           "The element type (ONNX Runtime GenAI's OgaElementType value: 1 float32, 6 int32, 7 int64, 10 float16).")
      .def("data", [](const ogx::Tensor& t) { return reinterpret_cast<uintptr_t>(t.Data()); },
           "The address of the data (valid while the tensor lives).")
      .def("as_numpy", [](const ogx::Tensor& t) { return to_numpy(t); }, "A numpy copy of the data.");

  py::class_<ogx::NamedTensors>(m, "NamedTensors", "Tensors by name, e.g. extra model inputs for Generator.set_inputs.")
      .def(py::init([] { return std::make_unique<ogx::NamedTensors>(); }))
      .def("__getitem__",
           [](const ogx::NamedTensors& n, const std::string& name) {
             std::vector<std::string> names = n.GetNames();
             if (std::find(names.begin(), names.end(), name) == names.end()) throw py::key_error(name);
             return n.Get(name.c_str());
           })
      .def("__setitem__",
           [](ogx::NamedTensors& n, const std::string& name, const py::object& value) {
             n.Set(name.c_str(), *to_tensor(value));
           })
      .def("__contains__",
           [](const ogx::NamedTensors& n, const std::string& name) {
             std::vector<std::string> names = n.GetNames();
             return std::find(names.begin(), names.end(), name) != names.end();
           })
      .def("__delitem__",
           [](ogx::NamedTensors& n, const std::string& name) {
             std::vector<std::string> names = n.GetNames();
             if (std::find(names.begin(), names.end(), name) == names.end()) throw py::key_error(name);
             n.Delete(name.c_str());
           })
      .def("__len__", [](const ogx::NamedTensors& n) { return n.Count(); })
      .def("keys", [](const ogx::NamedTensors& n) { return n.GetNames(); }, "The names, in insertion order.");
}

}  // namespace ogx::py_module
