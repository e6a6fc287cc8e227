// Helpers for OgxTensor: element sizes, checked construction, integer reads.
#pragma once
#include <vector>

#include "api/handles.h"

namespace ogx::api {

size_t element_size(OgxElementType t);  // 0 for unsupported types
size_t element_size_of(int type_bits);   // the same for a raw value from a C caller
// A tensor description (no data yet) with the type (raw value, checked) and every dimension checked; errors
// name `fn`.
OgxTensor make_tensor(int type_bits, std::vector<int64_t> shape, const char* fn);
// Elements [begin, begin + count) of an int32 or int64 tensor, widened to int64.
std::vector<int64_t> read_integers(const OgxTensor& t, size_t begin, size_t count, const char* fn);
// An engine tensor holding a copy of the data.
Tensor to_engine_tensor(const OgxTensor& t, const char* fn);
// An owning C tensor holding a copy of an engine tensor.
OgxTensor from_engine_tensor(const Tensor& t, const char* fn);

}  // namespace ogx::api
