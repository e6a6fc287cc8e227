// C API: named tensors (extra model inputs by name) and string-array construction.
#include "api/handles.h"
#include "api/tensor_util.h"

using namespace ogx::api;

namespace {

std::vector<std::pair<std::string, OgxTensor>>::iterator find(OgxNamedTensors& n, const std::string& name) {
  auto it = n.items.begin();
  while (it != n.items.end() && it->first != name) ++it;
  return it;
}

}  // namespace

extern "C" {

OgxResult* OgxCreateNamedTensors(OgxNamedTensors** out) {
  return guard([&] {
    need(out, "OgxCreateNamedTensors", "out");
    *out = make_handle(OgxNamedTensors{});
  });
}

void OgxDestroyNamedTensors(OgxNamedTensors* named_tensors) {
  destroy_handle(named_tensors, "OgxDestroyNamedTensors");
}

OgxResult* OgxNamedTensorsGet(const OgxNamedTensors* named_tensors, const char* name, OgxTensor** out) {
  return guard([&] {
    need(out, "OgxNamedTensorsGet", "out");
    *out = nullptr;
    auto& n = const_cast<OgxNamedTensors&>(live(named_tensors, "OgxNamedTensorsGet", "named_tensors"));
    need(name, "OgxNamedTensorsGet", "name");
    auto it = find(n, name);
    if (it == n.items.end())
      fail(OgxErrorCode_InvalidArgument, std::string("OgxNamedTensorsGet: no tensor named '") + name + "'");
    *out = make_handle(OgxTensor(it->second));
  });
}

OgxResult* OgxNamedTensorsSet(OgxNamedTensors* named_tensors, const char* name, const OgxTensor* tensor) {
  return guard([&] {
    auto& n = live(named_tensors, "OgxNamedTensorsSet", "named_tensors");
    need(name, "OgxNamedTensorsSet", "name");
    auto& t = live(tensor, "OgxNamedTensorsSet", "tensor");
    if (!*name) fail(OgxErrorCode_InvalidArgument, "OgxNamedTensorsSet: name is empty");
    auto it = find(n, name);
    if (it != n.items.end()) it->second = t;
    else n.items.emplace_back(name, t);
  });
}

OgxResult* OgxNamedTensorsDelete(OgxNamedTensors* named_tensors, const char* name) {
  return guard([&] {
    auto& n = live(named_tensors, "OgxNamedTensorsDelete", "named_tensors");
    need(name, "OgxNamedTensorsDelete", "name");
    auto it = find(n, name);
    if (it == n.items.end())
      fail(OgxErrorCode_InvalidArgument, std::string("OgxNamedTensorsDelete: no tensor named '") + name + "'");
    n.items.erase(it);
  });
}

OgxResult* OgxNamedTensorsCount(const OgxNamedTensors* named_tensors, size_t* out) {
  return guard([&] {
    auto& n = live(named_tensors, "OgxNamedTensorsCount", "named_tensors");
    need(out, "OgxNamedTensorsCount", "out");
    *out = n.items.size();
  });
}

OgxResult* OgxNamedTensorsGetNames(const OgxNamedTensors* named_tensors, OgxStringArray** out) {
  return guard([&] {
    need(out, "OgxNamedTensorsGetNames", "out");
    *out = nullptr;
    auto& n = live(named_tensors, "OgxNamedTensorsGetNames", "named_tensors");
    OgxStringArray names;
    for (auto& item : n.items) names.items.push_back(item.first);
    *out = make_handle(std::move(names));
  });
}

OgxResult* OgxCreateStringArray(OgxStringArray** out) {
  return guard([&] {
    need(out, "OgxCreateStringArray", "out");
    *out = make_handle(OgxStringArray{});
  });
}

OgxResult* OgxCreateStringArrayFromStrings(const char* const* strs, size_t count, OgxStringArray** out) {
  return guard([&] {
    need(out, "OgxCreateStringArrayFromStrings", "out");
    *out = nullptr;
    if (count > 0) need(strs, "OgxCreateStringArrayFromStrings", "strs");
    OgxStringArray a;
    for (size_t i = 0; i < count; i++) {
      if (!strs[i])
        fail(OgxErrorCode_InvalidArgument, "OgxCreateStringArrayFromStrings: strs[" + std::to_string(i) + "] is NULL");
      a.items.emplace_back(strs[i]);
    }
    *out = make_handle(std::move(a));
  });
}

OgxResult* OgxStringArrayAddString(OgxStringArray* array, const char* str) {
  return guard([&] {
    auto& a = live(array, "OgxStringArrayAddString", "array");
    need(str, "OgxStringArrayAddString", "str");
    a.items.emplace_back(str);
  });
}

}  // extern "C"
