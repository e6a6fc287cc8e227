#include "builder/weight_source.h"

#include <set>
#include <sstream>

#include "builder/safetensors.h"
#include "common/error.h"

namespace ogx::builder {

namespace {

std::string shape_str(const std::vector<int64_t>& s) {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < s.size(); i++) os << (i ? ", " : "") << s[i];
  os << "]";
  return os.str();
}

class SafeTensorsProvider : public WeightProvider {
 public:
  explicit SafeTensorsProvider(std::shared_ptr<SafeTensors> st) : st_(std::move(st)) {}

  Source get(const std::string& name, const std::vector<int64_t>& shape) override {
    used_.insert(name);
    const StTensor& t = st_->get(name);
    if (t.shape != shape)
      throw_error("tensor ", name, " has shape ", shape_str(t.shape), ", expected ", shape_str(shape));
    Source s;
    s.name = name;
    s.rows = shape.size() == 1 ? 1 : shape[0];
    s.cols = shape.size() == 1 ? shape[0] : t.row_size();
    auto st = st_;
    const StTensor* tp = &t;
    bool one_d = shape.size() == 1;
    s.read = [st, tp, one_d](int64_t r0, int64_t n, float* out) {
      if (one_d) st->read_rows(*tp, 0, 1, out);  // a 1-D tensor is one row
      else st->read_rows(*tp, r0, n, out);
    };
    return s;
  }

  bool has_nonzero(const std::string& name, const std::vector<int64_t>& shape) override {
    used_.insert(name);
    if (!st_->has(name)) return false;
    for (float v : read_all(get(name, shape)))
      if (v != 0.0f) return true;
    return false;
  }

  std::vector<std::string> unused_nonzero() const override {
    std::vector<std::string> out;
    std::vector<float> row;
    for (const auto& [name, t] : st_->tensors()) {
      if (used_.count(name)) continue;
      const int64_t rows = t.shape.size() <= 1 ? 1 : t.shape[0], cols = t.row_size();
      row.resize(cols);
      bool nonzero = false;
      for (int64_t r = 0; r < rows && !nonzero; r++) {
        st_->read_rows(t, r, 1, row.data());
        for (float v : row) nonzero |= v != 0.0f;
      }
      if (nonzero) out.push_back(name);
    }
    return out;
  }

 private:
  std::shared_ptr<SafeTensors> st_;
  std::set<std::string> used_;
};

}  // namespace

std::unique_ptr<WeightProvider> make_safetensors_provider(std::shared_ptr<SafeTensors> st) {
  return std::make_unique<SafeTensorsProvider>(std::move(st));
}

Source concat_rows(const std::vector<Source>& parts, const std::string& name) {
  Source s;
  s.name = name;
  s.cols = parts.at(0).cols;
  for (const auto& p : parts) {
    if (p.cols != s.cols) throw_error("cannot concatenate ", p.name, " into ", name, ": column count differs");
    s.rows += p.rows;
  }
  s.read = [parts](int64_t r0, int64_t n, float* out) {
    int64_t base = 0;
    for (const auto& p : parts) {
      int64_t lo = std::max(r0, base), hi = std::min(r0 + n, base + p.rows);
      if (lo < hi) p.read(lo - base, hi - lo, out + (lo - r0) * p.cols);
      base += p.rows;
    }
  };
  return s;
}

Source concat_vectors(const std::vector<Source>& parts, const std::string& name) {
  Source s;
  s.name = name;
  s.rows = 1;
  for (const auto& p : parts) s.cols += p.cols;
  s.read = [parts](int64_t, int64_t, float* out) {
    for (const auto& p : parts) {
      p.read(0, 1, out);
      out += p.cols;
    }
  };
  return s;
}

Source slice_rows(const Source& src, int64_t row0, int64_t nrows, const std::string& name) {
  if (row0 + nrows > src.rows) throw_error("tensor ", src.name, " has ", src.rows, " rows, need ", row0 + nrows);
  Source s;
  s.name = name;
  s.rows = nrows;
  s.cols = src.cols;
  s.read = [src, row0](int64_t r0, int64_t n, float* out) { src.read(row0 + r0, n, out); };
  return s;
}

Source add_constant(const Source& src, float c) {
  Source s = src;
  s.read = [src, c](int64_t r0, int64_t n, float* out) {
    src.read(r0, n, out);
    for (int64_t i = 0; i < n * src.cols; i++) out[i] += c;
  };
  return s;
}

std::vector<float> read_all(const Source& s) {
  std::vector<float> v(s.rows * s.cols);
  s.read(0, s.rows, v.data());
  return v;
}

}  // namespace ogx::builder
