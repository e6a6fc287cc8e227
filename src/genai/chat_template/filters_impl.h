// Internal: filter registry shared by filters.cpp (scalars, strings) and filters_seq.cpp (sequences).
#pragma once
#include <string>
#include <unordered_map>

#include "genai/chat_template/interp.h"

namespace ogx::jinja {

using FilterFn = Value (*)(Interp&, const Value&, CallArgs&);
using FilterMap = std::unordered_map<std::string, FilterFn>;

void register_scalar_filters(FilterMap& m);
void register_sequence_filters(FilterMap& m);

}  // namespace ogx::jinja
