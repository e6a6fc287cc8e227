// Tiny flag parser for the ogx subcommands: --flag VALUE, --flag=VALUE, boolean --flag, repeated flags, and
// positional arguments. Unknown flags are errors that name the flag.
#pragma once
#include <map>
#include <set>
#include <string>
#include <vector>

#include "common/error.h"

namespace ogx::cli {

class Args {
 public:
  // value_flags take a value; bool_flags don't. Throws ogx::Error on unknown or malformed flags.
  Args(const std::vector<std::string>& argv, const std::set<std::string>& value_flags,
       const std::set<std::string>& bool_flags);
  bool has(const std::string& f) const { return values_.count(f) || bools_.count(f); }
  std::string get(const std::string& f, const std::string& dflt = "") const;
  std::vector<std::string> get_all(const std::string& f) const;
  int get_int(const std::string& f, int dflt) const;
  double get_double(const std::string& f, double dflt) const;
  const std::vector<std::string>& positional() const { return positional_; }

 private:
  std::multimap<std::string, std::string> values_;
  std::set<std::string> bools_;
  std::vector<std::string> positional_;
};

std::vector<int32_t> parse_id_list(const std::string& s);  // "1,2,3"

}  // namespace ogx::cli
