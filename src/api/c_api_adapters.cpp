// C API: LoRA adapters (genai/adapters.h), as ort_genai_c.h's OgaCreateAdapters / OgaLoadAdapter /
// OgaUnloadAdapter / OgaSetActiveAdapter.
#include "api/generator_access.h"

using namespace ogx::api;

extern "C" {

OgxResult* OgxCreateAdapters(const OgxModel* model, OgxAdapters** out) {
  return guard([&] {
    need(out, "OgxCreateAdapters", "out");
    *out = nullptr;
    auto& m = live(model, "OgxCreateAdapters", "model");
    *out = make_handle(OgxAdapters{m.shared, ogx::genai::Adapters::create(m.shared->model)});
  });
}

void OgxDestroyAdapters(OgxAdapters* adapters) { destroy_handle(adapters, "OgxDestroyAdapters"); }

OgxResult* OgxLoadAdapter(OgxAdapters* adapters, const char* adapter_file_path, const char* adapter_name) {
  return guard([&] {
    auto& a = live(adapters, "OgxLoadAdapter", "adapters");
    need(adapter_file_path, "OgxLoadAdapter", "adapter_file_path");
    need(adapter_name, "OgxLoadAdapter", "adapter_name");
    a.adapters->load(adapter_file_path, adapter_name);
  });
}

OgxResult* OgxUnloadAdapter(OgxAdapters* adapters, const char* adapter_name) {
  return guard([&] {
    auto& a = live(adapters, "OgxUnloadAdapter", "adapters");
    need(adapter_name, "OgxUnloadAdapter", "adapter_name");
    a.adapters->unload(adapter_name);
  });
}

OgxResult* OgxSetActiveAdapter(OgxGenerator* generator, OgxAdapters* adapters, const char* adapter_name) {
  return guard([&] {
    auto& g = live(generator, "OgxSetActiveAdapter", "generator");
    auto& a = live(adapters, "OgxSetActiveAdapter", "adapters");
    need(adapter_name, "OgxSetActiveAdapter", "adapter_name");
    if (a.shared != g.shared)
      fail(OgxErrorCode_InvalidArgument, "OgxSetActiveAdapter: the adapters were created for another model");
    Locked l(g);
    l.gen.set_active_adapter(a.adapters, adapter_name);
  });
}

}  // extern "C"
