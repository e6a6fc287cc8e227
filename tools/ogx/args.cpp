#include "args.h"

#include <cstdlib>

namespace ogx::cli {

Args::Args(const std::vector<std::string>& argv, const std::set<std::string>& value_flags,
           const std::set<std::string>& bool_flags) {
  for (size_t i = 0; i < argv.size(); i++) {
    const std::string& a = argv[i];
    if (a.size() < 3 || a.compare(0, 2, "--") != 0) {
      positional_.push_back(a);
      continue;
    }
    std::string name = a.substr(2), value;
    bool inline_value = false;
    if (auto eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      inline_value = true;
    }
    if (bool_flags.count(name)) {
      OGX_CHECK(!inline_value, "flag --", name, " takes no value");
      bools_.insert(name);
    } else if (value_flags.count(name)) {
      if (!inline_value) {
        OGX_CHECK(i + 1 < argv.size(), "flag --", name, " needs a value");
        value = argv[++i];
      }
      values_.emplace(name, value);
    } else {
      throw_error("unknown flag --", name);
    }
  }
}

std::string Args::get(const std::string& f, const std::string& dflt) const {
  auto it = values_.find(f);
  return it == values_.end() ? dflt : it->second;
}

std::vector<std::string> Args::get_all(const std::string& f) const {
  std::vector<std::string> out;
  for (auto [it, end] = values_.equal_range(f); it != end; ++it) out.push_back(it->second);
  return out;
}

int Args::get_int(const std::string& f, int dflt) const {
  if (!values_.count(f)) return dflt;
  std::string v = get(f);
  char* end = nullptr;
  long x = std::strtol(v.c_str(), &end, 10);
  OGX_CHECK(!v.empty() && *end == 0 && x >= INT32_MIN && x <= INT32_MAX, "--", f, " must be an integer, got '", v, "'");
  return (int)x;
}

double Args::get_double(const std::string& f, double dflt) const {
  if (!values_.count(f)) return dflt;
  std::string v = get(f);
  char* end = nullptr;
  double x = std::strtod(v.c_str(), &end);
  OGX_CHECK(!v.empty() && *end == 0, "--", f, " must be a number, got '", v, "'");
  return x;
}

std::vector<int32_t> parse_id_list(const std::string& s) {
  std::vector<int32_t> ids;
  size_t p = 0;
  while (p <= s.size()) {
    size_t q = s.find(',', p);
    if (q == std::string::npos) q = s.size();
    std::string t = s.substr(p, q - p);
    char* end = nullptr;
    long long v = std::strtoll(t.c_str(), &end, 10);
    OGX_CHECK(!t.empty() && *end == 0 && v >= INT32_MIN && v <= INT32_MAX, "--ids: '", t, "' is not a token id");
    ids.push_back((int32_t)v);
    p = q + 1;
  }
  return ids;
}

}  // namespace ogx::cli
