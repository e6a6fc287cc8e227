// Python's str.isupper / str.islower over all of Unicode (case_mapping.cpp; the case changes are declared in
// interp.h): at least one cased character, and none of the other case or titlecase.
#pragma once
#include <string>

namespace ogx::jinja {
bool py_isupper(const std::string& s);
bool py_islower(const std::string& s);
}  // namespace ogx::jinja
