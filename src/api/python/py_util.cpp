#include "py_util.h"

#include <limits>

namespace ogx::py_module {

namespace {

py::array as_array(const py::handle& obj, const char* what) {
  if (py::isinstance<py::str>(obj) || py::isinstance<py::bytes>(obj))
    throw py::type_error(std::string(what) + ": expected token ids (a list of ints or an integer numpy array), got " +
                         std::string(py::str(py::type::of(obj).attr("__name__"))));
  try {
    return py::module_::import("numpy").attr("asarray")(obj);
  } catch (py::error_already_set& e) {
    // e.g. ragged nested lists under numpy's strict asarray
    throw py::type_error(std::string(what) + ": cannot read token ids: " + e.what());
  }
}

std::vector<int32_t> integers(const py::array& a, const char* what) {
  if (a.size() == 0) return {};
  char kind = a.dtype().kind();
  if (kind != 'i' && kind != 'u')
    throw py::type_error(std::string(what) + ": expected integer token ids, got an array of " +
                         std::string(py::str(a.dtype())));
  auto wide = py::array_t<int64_t, py::array::c_style | py::array::forcecast>::ensure(a);
  if (kind == 'u' && a.dtype().itemsize() == 8) {
    // uint64 values above int64's range would wrap in the cast: check them first.
    auto u = py::array_t<uint64_t, py::array::c_style | py::array::forcecast>::ensure(a);
    for (py::ssize_t i = 0; i < u.size(); i++)
      if (u.data()[i] > (uint64_t)std::numeric_limits<int32_t>::max())
        throw py::value_error(std::string(what) + ": token id " + std::to_string(u.data()[i]) + " does not fit int32");
  }
  std::vector<int32_t> out(static_cast<size_t>(wide.size()));
  for (py::ssize_t i = 0; i < wide.size(); i++) {
    int64_t v = wide.data()[i];
    if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max())
      throw py::value_error(std::string(what) + ": token id " + std::to_string(v) + " does not fit int32");
    out[static_cast<size_t>(i)] = static_cast<int32_t>(v);
  }
  return out;
}

}  // namespace

std::vector<int32_t> token_ids(const py::handle& obj, const char* what) {
  py::array a = as_array(obj, what);
  if (a.ndim() == 0) throw py::value_error(std::string(what) + ": expected a sequence of token ids, got a scalar");
  if (a.ndim() > 2 || (a.ndim() == 2 && a.shape(0) != 1))
    throw py::value_error(std::string(what) + ": expected a 1-D sequence of token ids (batch size 1), got shape " +
                          std::string(py::str(a.attr("shape"))));
  return integers(a, what);
}

std::vector<std::vector<int32_t>> token_rows(const py::handle& obj, const char* what) {
  std::vector<std::vector<int32_t>> rows;
  if (py::isinstance<py::array>(obj)) {
    py::array a = py::reinterpret_borrow<py::array>(obj);
    if (a.ndim() != 2) throw py::value_error(std::string(what) + ": expected a 2-D array of token ids");
    for (py::ssize_t r = 0; r < a.shape(0); r++) rows.push_back(integers(py::array(a[py::int_(r)]), what));
    return rows;
  }
  if (py::isinstance<py::str>(obj) || !py::isinstance<py::sequence>(obj))
    throw py::type_error(std::string(what) + ": expected a 2-D array or a list of token-id sequences");
  for (py::handle row : obj) rows.push_back(token_ids(row, what));
  return rows;
}

const std::string& c_text(const std::string& s, const char* what) {
  if (s.find('\0') != std::string::npos) throw py::value_error(std::string(what) + ": embedded null character");
  return s;
}

std::string path_arg(const py::handle& obj, const char* what) {
  if (py::isinstance<py::str>(obj)) return c_text(obj.cast<std::string>(), what);
  if (py::hasattr(obj, "__fspath__")) {
    py::object p = py::module_::import("os").attr("fspath")(obj);
    if (py::isinstance<py::str>(p)) return c_text(p.cast<std::string>(), what);
  }
  throw py::type_error(std::string(what) + ": expected a path (str or os.PathLike), got " +
                       std::string(py::str(py::type::of(obj).attr("__name__"))));
}

}  // namespace ogx::py_module
