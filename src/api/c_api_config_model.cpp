// C API: config (genai_config.json with provider edits) and model.
#include <cctype>
#include <filesystem>

#include "api/handles.h"
#include "api/provider_env.h"

using namespace ogx::api;

namespace {

// OgxSetCurrentGpuDeviceId: the vulkan provider's device_id when the config sets none.
void apply_current_gpu(ogx::genai::Config& config) {
  int id = current_gpu_device_id().load();
  if (id == 0) return;  // the default: the provider's own first device
  for (auto& entry : config.model.decoder.session.providers) {
    std::string canonical;
    try {
      canonical = ogx::genai::canonical_provider(entry.name);
    } catch (const ogx::Error&) {
      continue;  // reported when the model loads
    }
    if (canonical != "vulkan") continue;
    bool set = false;
    for (auto& kv : entry.options) set = set || kv.first == "device_id" || kv.first == "device_index";
    if (!set) config.set_provider_option(entry.name, "device_id", std::to_string(id));
  }
}

// The device a model runs on, as ONNX Runtime GenAI spells it (to_string(DeviceType)).
std::string device_type_name(const ogx::genai::Model& m) { return m.provider() == "cpu" ? "CPU" : "DirectML"; }

void set_filter(OgxConfig* config, const char* provider, const char* key, const std::string& value, const char* fn) {
  auto& c = live(config, fn, "config");
  need(provider, fn, "provider");
  if (!*provider) fail(OgxErrorCode_InvalidArgument, std::string(fn) + ": provider is empty");
  c.config.set_provider_option(provider, key, value);
}

void clear_filter(OgxConfig* config, const char* provider, const char* key, const char* fn) {
  auto& c = live(config, fn, "config");
  need(provider, fn, "provider");
  for (auto& entry : c.config.model.decoder.session.providers) {
    if (entry.name != provider) continue;
    auto& list = entry.device_filtering;
    for (auto it = list.begin(); it != list.end();)
      it = it->first == key ? list.erase(it) : it + 1;
  }
}

OgxModel* load_model(ogx::genai::Config config) {
  apply_provider_env(config);
  apply_current_gpu(config);
  auto shared = std::make_shared<SharedModel>();
  shared->model = ogx::genai::Model::load(config);
  return make_handle(OgxModel{std::move(shared)});
}

}  // namespace

extern "C" {

OgxResult* OgxCreateConfig(const char* config_path, OgxConfig** out) {
  return guard([&] {
    need(out, "OgxCreateConfig", "out");
    *out = nullptr;
    need(config_path, "OgxCreateConfig", "config_path");
    *out = make_handle(OgxConfig{ogx::genai::Config::load(config_path)});
  });
}

OgxResult* OgxCreateConfigFromPackageEp(const char* config_path, const char* ep, OgxConfig** out) {
  return guard([&] {
    need(out, "OgxCreateConfigFromPackageEp", "out");
    *out = nullptr;
    need(config_path, "OgxCreateConfigFromPackageEp", "config_path");
    (void)ep;  // the variant's execution provider: no variant is ever selected
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::path root(config_path);
    const bool package = fs::is_directory(root, ec) && fs::is_regular_file(root / "manifest.json", ec) &&
                         !fs::exists(root / "genai_config.json", ec);
    if (!package)  // upstream's words
      fail(OgxErrorCode_InvalidArgument, std::string("\"") + config_path +
                                             "\" is not a model package. Use OgxCreateConfig for a flat model directory.");
    fail(OgxErrorCode_InvalidArgument,
         std::string("OgxCreateConfigFromPackageEp: \"") + config_path + "\" is an ONNX Runtime model package "
         "(manifest.json with one variant folder per execution provider); ogx does not read model packages: pass "
         "the folder of the variant to run (the one holding genai_config.json) to OgxCreateConfig");
  });
}

void OgxDestroyConfig(OgxConfig* config) { destroy_handle(config, "OgxDestroyConfig"); }

OgxResult* OgxConfigClearProviders(OgxConfig* config) {
  return guard([&] { live(config, "OgxConfigClearProviders", "config").config.clear_providers(); });
}

OgxResult* OgxConfigAppendProvider(OgxConfig* config, const char* provider) {
  return guard([&] {
    auto& c = live(config, "OgxConfigAppendProvider", "config");
    need(provider, "OgxConfigAppendProvider", "provider");
    c.config.append_provider(provider);
  });
}

OgxResult* OgxConfigSetProviderOption(OgxConfig* config, const char* provider, const char* key, const char* value) {
  return guard([&] {
    auto& c = live(config, "OgxConfigSetProviderOption", "config");
    need(provider, "OgxConfigSetProviderOption", "provider");
    need(key, "OgxConfigSetProviderOption", "key");
    need(value, "OgxConfigSetProviderOption", "value");
    if (!*key) fail(OgxErrorCode_InvalidArgument, "OgxConfigSetProviderOption: key is empty");
    c.config.set_provider_option(provider, key, value);
  });
}

OgxResult* OgxConfigOverlay(OgxConfig* config, const char* json) {
  return guard([&] {
    auto& c = live(config, "OgxConfigOverlay", "config");
    need(json, "OgxConfigOverlay", "json");
    // Applied to a copy: a failing overlay leaves the config as it was.
    ogx::genai::Config copy = c.config;
    copy.overlay(json);
    c.config = std::move(copy);
  });
}

OgxResult* OgxConfigAddModelData(OgxConfig* config, const char* model_filename, const void* model_data,
                                 size_t model_data_length) {
  return guard([&] {
    auto& c = live(config, "OgxConfigAddModelData", "config");
    need(model_filename, "OgxConfigAddModelData", "model_filename");
    if (!*model_filename) fail(OgxErrorCode_InvalidArgument, "OgxConfigAddModelData: model_filename is empty");
    if (model_data_length > 0) need(model_data, "OgxConfigAddModelData", "model_data");
    if (model_data_length == 0)
      fail(OgxErrorCode_InvalidArgument, std::string("OgxConfigAddModelData: '") + model_filename + "' has no bytes");
    const auto* p = static_cast<const uint8_t*>(model_data);
    c.config.model_data[model_filename] = std::make_shared<const std::vector<uint8_t>>(p, p + model_data_length);
  });
}

OgxResult* OgxConfigRemoveModelData(OgxConfig* config, const char* model_filename) {
  return guard([&] {
    auto& c = live(config, "OgxConfigRemoveModelData", "config");
    need(model_filename, "OgxConfigRemoveModelData", "model_filename");
    if (c.config.model_data.erase(model_filename) == 0)
      fail(OgxErrorCode_InvalidArgument, std::string("OgxConfigRemoveModelData: no model data named '") +
                                             model_filename + "' was added");
  });
}

OgxResult* OgxConfigSetDecoderProviderOptionsHardwareDeviceType(OgxConfig* config, const char* provider,
                                                              const char* hardware_device_type) {
  return guard([&] {
    const char* fn = "OgxConfigSetDecoderProviderOptionsHardwareDeviceType";
    need(hardware_device_type, fn, "hardware_device_type");
    std::string v = hardware_device_type;
    for (auto& ch : v) ch = (char)std::tolower((unsigned char)ch);
    if (v != "gpu" && v != "cpu" && v != "npu")
      fail(OgxErrorCode_InvalidArgument, std::string(fn) + ": hardware_device_type '" + hardware_device_type +
                                             "' is not one of CPU, GPU, NPU");
    set_filter(config, provider, "hardware_device_type", v, fn);
  });
}

OgxResult* OgxConfigSetDecoderProviderOptionsHardwareDeviceId(OgxConfig* config, const char* provider,
                                                            uint32_t hardware_device_id) {
  return guard([&] {
    set_filter(config, provider, "hardware_device_id", std::to_string(hardware_device_id),
               "OgxConfigSetDecoderProviderOptionsHardwareDeviceId");
  });
}

OgxResult* OgxConfigSetDecoderProviderOptionsHardwareVendorId(OgxConfig* config, const char* provider,
                                                            uint32_t hardware_vendor_id) {
  return guard([&] {
    set_filter(config, provider, "hardware_vendor_id", std::to_string(hardware_vendor_id),
               "OgxConfigSetDecoderProviderOptionsHardwareVendorId");
  });
}

OgxResult* OgxConfigClearDecoderProviderOptionsHardwareDeviceType(OgxConfig* config, const char* provider) {
  return guard([&] {
    clear_filter(config, provider, "hardware_device_type", "OgxConfigClearDecoderProviderOptionsHardwareDeviceType");
  });
}

OgxResult* OgxConfigClearDecoderProviderOptionsHardwareDeviceId(OgxConfig* config, const char* provider) {
  return guard([&] {
    clear_filter(config, provider, "hardware_device_id", "OgxConfigClearDecoderProviderOptionsHardwareDeviceId");
  });
}

OgxResult* OgxConfigClearDecoderProviderOptionsHardwareVendorId(OgxConfig* config, const char* provider) {
  return guard([&] {
    clear_filter(config, provider, "hardware_vendor_id", "OgxConfigClearDecoderProviderOptionsHardwareVendorId");
  });
}

OgxResult* OgxCreateModel(const char* config_path, OgxModel** out) {
  return guard([&] {
    need(out, "OgxCreateModel", "out");
    *out = nullptr;
    need(config_path, "OgxCreateModel", "config_path");
    *out = load_model(ogx::genai::Config::load(config_path));
  });
}

OgxResult* OgxCreateModelFromConfig(const OgxConfig* config, OgxModel** out) {
  return guard([&] {
    need(out, "OgxCreateModelFromConfig", "out");
    *out = nullptr;
    *out = load_model(live(config, "OgxCreateModelFromConfig", "config").config);
  });
}

void OgxDestroyModel(OgxModel* model) { destroy_handle(model, "OgxDestroyModel"); }

OgxResult* OgxCreateRuntimeSettings(OgxRuntimeSettings** out) {
  return guard([&] {
    need(out, "OgxCreateRuntimeSettings", "out");
    *out = make_handle(OgxRuntimeSettings{});
  });
}

void OgxDestroyRuntimeSettings(OgxRuntimeSettings* settings) {
  destroy_handle(settings, "OgxDestroyRuntimeSettings");
}

OgxResult* OgxRuntimeSettingsSetHandle(OgxRuntimeSettings* settings, const char* handle_name, void* handle) {
  return guard([&] {
    auto& s = live(settings, "OgxRuntimeSettingsSetHandle", "settings");
    need(handle_name, "OgxRuntimeSettingsSetHandle", "handle_name");
    if (handle) s.handles[handle_name] = handle;
    else s.handles.erase(handle_name);
  });
}

OgxResult* OgxCreateModelWithRuntimeSettings(const char* config_path, const OgxRuntimeSettings* settings,
                                             OgxModel** out) {
  return guard([&] {
    need(out, "OgxCreateModelWithRuntimeSettings", "out");
    *out = nullptr;
    need(config_path, "OgxCreateModelWithRuntimeSettings", "config_path");
    if (settings) {  // NULL: no settings, as OgxCreateModel
      auto& s = live(settings, "OgxCreateModelWithRuntimeSettings", "settings");
      if (s.handles.count("dawnProcTable")) {
        std::string have;
        for (const std::string& p : ogx::genai::available_providers()) have += (have.empty() ? "" : ", ") + p;
        fail(OgxErrorCode_InvalidArgument, "runtime setting 'dawnProcTable' configures ONNX Runtime's WebGPU "
             "provider, which ogx does not have (ogx has: " + have + ")");
      }
    }
    *out = load_model(ogx::genai::Config::load(config_path));
  });
}

OgxResult* OgxModelGetType(const OgxModel* model, const char** out) {
  return guard([&] {
    auto& m = live(model, "OgxModelGetType", "model");
    need(out, "OgxModelGetType", "out");
    *out = owned_string(m.shared->model->type());
  });
}

OgxResult* OgxModelGetDeviceType(const OgxModel* model, const char** out) {
  return guard([&] {
    auto& m = live(model, "OgxModelGetDeviceType", "model");
    need(out, "OgxModelGetDeviceType", "out");
    *out = owned_string(device_type_name(*m.shared->model));
  });
}

}  // extern "C"
