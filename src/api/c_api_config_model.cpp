// C API: config (genai_config.json with provider edits) and model.
#include "api/handles.h"
#include "api/provider_env.h"

using namespace ogx::api;

namespace {

OgxModel* load_model(ogx::genai::Config config) {
  apply_provider_env(config);
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
    *out = owned_string(m.shared->model->device_type());
  });
}

}  // extern "C"
