// Shared helpers of the Python module: GIL release around library calls, token-id conversion from Python
// objects, numpy results.
#pragma once
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <span>
#include <string>
#include <vector>

#include "ogx/ogx.hpp"

namespace ogx::py_module {

namespace py = pybind11;

// Runs f without the GIL. Every call into the library goes through here: model runs take long, and the library's
// log callback takes the GIL while holding the log lock, so no thread may wait for the log lock while holding it.
template <typename F>
auto nogil(F&& f) -> decltype(f()) {
  py::gil_scoped_release release;
  return f();
}

// Token ids from a list/tuple of ints or a numpy integer array (1-D, or 2-D with one row for batch size 1).
// Raises TypeError for non-integer input and ValueError for ids that do not fit int32 or for other shapes.
std::vector<int32_t> token_ids(const py::handle& obj, const char* what);

// Rows of token ids from a 2-D integer array or a list of integer sequences (rows may differ in length).
std::vector<std::vector<int32_t>> token_rows(const py::handle& obj, const char* what);

inline py::array_t<int32_t> to_numpy(std::span<const int32_t> v) {
  py::array_t<int32_t> a(static_cast<py::ssize_t>(v.size()));
  std::copy(v.begin(), v.end(), a.mutable_data());
  return a;
}

// Text from the library as a Python str. Decoded text is valid UTF-8, but a stream chunk may split a character
// in rare cases: invalid bytes become U+FFFD rather than raising UnicodeDecodeError.
inline py::str utf8(const std::string& s) {
  PyObject* o = PyUnicode_DecodeUTF8(s.data(), static_cast<py::ssize_t>(s.size()), "replace");
  if (!o) throw py::error_already_set();
  return py::reinterpret_steal<py::str>(o);
}

// A path argument: str or os.PathLike. Raises ValueError for a NUL inside (the C API would cut the path there).
std::string path_arg(const py::handle& obj, const char* what);

// s unchanged, for a library call that takes NUL-terminated text: a NUL inside would silently cut the text there
// (encode('hello\0world') == encode('hello')), so it raises ValueError naming the argument, as Python's own
// os/open functions do ("embedded null character").
const std::string& c_text(const std::string& s, const char* what);

// A tensor holding a copy of a numpy array (or of another Tensor); numpy copy of a tensor.
std::unique_ptr<ogx::Tensor> to_tensor(const py::object& value);
py::array to_numpy(const ogx::Tensor& t);

void bind_tensor(py::module_& m);
void bind_unsupported(py::module_& m);
void bind_config_model(py::module_& m);
void bind_tokenizer(py::module_& m);
void bind_generator(py::module_& m);
void bind_adapters(py::module_& m);  // after bind_generator (adds Generator.set_active_adapter)
void bind_engine(py::module_& m);

}  // namespace ogx::py_module
